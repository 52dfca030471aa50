/**
 * File-level helpers of the local WARC store: naming, listing, positional writes, and reading the
 * warcinfo record id back from a file being resumed.
 */
import { readdirSync, readSync, writeSync, writevSync } from 'node:fs';
import { constants, gunzipSync } from 'node:zlib';

/** A WARC file of the store, with the sequence number parsed from its name. */
export interface WarcFileEntry {
  name: string;
  seq: number;
}

/** `<prefix>-<YYYYMMDDhhmmss>-<seq, 5+ digits>.warc.gz` */
export function warcFileName(prefix: string, timestamp: string, seq: number): string {
  return `${prefix}-${timestamp}-${String(seq).padStart(5, '0')}.warc.gz`;
}

/** The store's WARC files in `dir` (those named by `warcFileName` with this prefix), by sequence. */
export function listWarcFiles(dir: string, prefix: string): WarcFileEntry[] {
  const pattern = new RegExp(`^${prefix.replace(/[.]/g, '\\.')}-\\d{14}-(\\d{5,})\\.warc\\.gz$`);
  const out: WarcFileEntry[] = [];
  for (const name of readdirSync(dir)) {
    const match = pattern.exec(name);
    if (match) out.push({ name, seq: Number(match[1]) });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/**
 * Writes all of `buffers` at `position` (pwrite, so a retried write after a failure lands at the
 * same place), normally in one writev call; loops only on the rare short write.
 */
export function writeAllSync(fd: number, buffers: readonly Buffer[], position: number): number {
  let total = 0;
  for (const buffer of buffers) total += buffer.length;
  const written = writevSync(fd, buffers as Buffer[], position);
  if (written < total) {
    const rest = Buffer.concat(buffers as Buffer[]).subarray(written);
    let done = 0;
    while (done < rest.length) {
      done += writeSync(fd, rest, done, rest.length - done, position + written + done);
    }
  }
  return total;
}

/**
 * The WARC-Record-ID of the warcinfo record that opens a file, or undefined when the file does not
 * start with one. Only the head of the first gzip member is inflated.
 */
export function readWarcinfoId(fd: number, size: number): string | undefined {
  const head = Buffer.alloc(Math.min(size, 8192));
  const read = readSync(fd, head, 0, head.length, 0);
  let text: string;
  try {
    // SYNC_FLUSH: inflate what the partial input holds instead of failing on the cut-off end.
    text = gunzipSync(head.subarray(0, read), { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
  } catch {
    return undefined;
  }
  const end = text.indexOf('\r\n\r\n');
  const header = end >= 0 ? text.slice(0, end) : text;
  if (!/^WARC-Type: warcinfo\r?$/m.test(header)) return undefined;
  return /^WARC-Record-ID: (<[^>\r\n]+>)\r?$/m.exec(header)?.[1];
}
