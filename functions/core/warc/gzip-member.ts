import { gzipSync } from 'node:zlib';

/**
 * Default gzip level for WARC records. Compression is the largest CPU cost of storing a page: on
 * the PostgreSQL docs (14 KB pages, quiet machine) level 1 takes 133 us per page for 27.1% of the
 * size, level 2 148 us for 26.4%, level 6 about twice level 1 (numbers in docs/warc.md).
 */
export const DEFAULT_WARC_GZIP_LEVEL = 1;

/**
 * Compresses one record as its own gzip member, so that a reader can seek to the member's offset
 * and inflate exactly `length` bytes to get that record alone; concatenated members are still one
 * valid .gz file.
 */
export function gzipMember(record: Uint8Array, level: number = DEFAULT_WARC_GZIP_LEVEL): Buffer {
  return gzipSync(record, { level });
}
