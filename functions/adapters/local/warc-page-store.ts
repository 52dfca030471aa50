/**
 * The local PageStore: captures go into gzip-per-record WARC/1.1 files under the crawl's
 * out/warc folder, with a pywb-style CDXJ index beside them.
 */
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import packageJson from '../../../package.json' with { type: 'json' };
import { PermanentError } from '../../core/permanent-error.ts';
import type { Capture, Clock, PageStore } from '../../core/ports.ts';
import type { StoredRef } from '../../core/types.ts';
import { captureToWarcRecords } from '../../core/warc/capture-records.ts';
import { cdxjLine } from '../../core/warc/cdxj.ts';
import { DEFAULT_WARC_GZIP_LEVEL, gzipMember } from '../../core/warc/gzip-member.ts';
import { cdxTimestamp, warcDate } from '../../core/warc/warc-date.ts';
import { warcinfoRecord } from '../../core/warc/warcinfo-record.ts';
import { listWarcFiles, readWarcinfoId, warcFileName, writeAllSync } from './warc-files.ts';

/**
 * Where the store stands, for the caller's checkpoint: the current WARC file (relative to the
 * store's folder; '' before the first capture), its committed byte size, and the byte size of
 * index.cdxj. Saved in the same transaction that records the pages, it lets `open` cut away
 * whatever an interrupted crawl wrote after its last checkpoint.
 */
export interface WarcPosition {
  file: string;
  size: number;
  indexSize: number;
}

/** Options of `LocalWarcPageStore.open`. */
export interface LocalWarcPageStoreOptions {
  /** Resume after an interruption: truncate to this position, delete later files, append there. */
  resumeAt?: WarcPosition;
  /** A new file is started when the next record pair would grow the current one past this. Default 1 GiB. */
  maxFileBytes?: number;
  /** gzip level 1-9 of each record; default `DEFAULT_WARC_GZIP_LEVEL`. */
  gzipLevel?: number;
  /** Extra fields of each file's warcinfo record (a summary of the crawl configuration). */
  warcinfo?: Record<string, string>;
  /** File name prefix; letters, digits, `.`, `_`, `-`. Default 'crawlstack'. */
  prefix?: string;
  /** warcinfo `software`; default `crawlstack/<package version>`. */
  software?: string;
  /** Names and dates new files; without it a file takes the time of its first capture. */
  clock?: Clock;
  /** UUID source for WARC-Record-IDs; default `crypto.randomUUID`. */
  newId?: () => string;
  /** Make `flush` fsync the WARC file and the index (default false: writes already survive kill -9). */
  fsync?: boolean;
}

/** Stable codes of `WarcStoreError`. */
export type WarcStoreErrorCode = 'STORE_CLOSED' | 'INVALID_OPTION' | 'RESUME_MISMATCH';

/** The store cannot do what was asked. None of these is helped by retrying the same call. */
export class WarcStoreError extends PermanentError<WarcStoreErrorCode> {
  override readonly name = 'WarcStoreError';
}

/** Name of the CDXJ index inside the store's folder. */
export const WARC_INDEX_FILE = 'index.cdxj';

const DEFAULT_MAX_FILE_BYTES = 1024 ** 3;

/**
 * Writes each capture as a WARC request record and response record, each its own gzip member,
 * appended to `<prefix>-<timestamp>-<seq>.warc.gz` files that rotate by size and each open with a
 * warcinfo record; one CDXJ line per response goes to index.cdxj. Writes are synchronous
 * (`pwritev`, one call per record pair), so a record is in the file (the OS's page cache) when
 * `put` resolves and survives the process being killed; `flush` adds fsync when asked to.
 * Single writer: one store per folder.
 */
export class LocalWarcPageStore implements PageStore {
  readonly #dir: string;
  readonly #prefix: string;
  readonly #maxFileBytes: number;
  readonly #gzipLevel: number;
  readonly #software: string;
  readonly #warcinfoFields: Record<string, string>;
  readonly #clock: Clock | undefined;
  readonly #newId: () => string;
  readonly #fsync: boolean;
  readonly #indexFd: number;
  #indexSize: number;
  #fd = -1;
  #file = '';
  #size = 0;
  /** Sequence number of the current file, or of the next one when no file is open. */
  #seq: number;
  #warcinfoId = '';
  /** The current file holds at least one capture (so a pair that does not fit starts a new file). */
  #hasCaptures = false;
  #closed = false;

  private constructor(
    dir: string,
    options: LocalWarcPageStoreOptions,
    prefix: string,
    indexFd: number,
    indexSize: number,
    seq: number,
  ) {
    this.#dir = dir;
    this.#prefix = prefix;
    this.#maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.#gzipLevel = options.gzipLevel ?? DEFAULT_WARC_GZIP_LEVEL;
    this.#software = options.software ?? `crawlstack/${packageJson.version}`;
    this.#warcinfoFields = { ...options.warcinfo };
    this.#clock = options.clock;
    this.#newId = options.newId ?? randomUUID;
    this.#fsync = options.fsync ?? false;
    this.#indexFd = indexFd;
    this.#indexSize = indexSize;
    this.#seq = seq;
  }

  /**
   * Opens (or resumes) the store in `dir` (created if missing). Without `resumeAt`, existing files
   * are left alone: new files continue the sequence and index lines are appended. With `resumeAt`,
   * the named file is truncated to `size`, files later in the sequence are deleted, index.cdxj is
   * truncated to `indexSize`, and writing continues in the named file. Throws
   * `WarcStoreError('RESUME_MISMATCH')`, before changing anything, when the files on disk are
   * shorter than the position or the named file is missing.
   */
  static open(dir: string, options: LocalWarcPageStoreOptions = {}): LocalWarcPageStore {
    const prefix = options.prefix ?? 'crawlstack';
    if (!/^[A-Za-z0-9._-]+$/.test(prefix)) {
      throw new WarcStoreError(
        'INVALID_OPTION',
        `prefix must be letters, digits, '.', '_' or '-': ${prefix}`,
      );
    }
    const level = options.gzipLevel ?? DEFAULT_WARC_GZIP_LEVEL;
    if (!Number.isInteger(level) || level < 0 || level > 9) {
      throw new WarcStoreError('INVALID_OPTION', `gzipLevel must be an integer 0-9: ${level}`);
    }
    mkdirSync(dir, { recursive: true });
    const files = listWarcFiles(dir, prefix);
    const indexFd = openSync(join(dir, WARC_INDEX_FILE), constants.O_RDWR | constants.O_CREAT, 0o644);
    try {
      const indexLength = fstatSync(indexFd).size;
      const resumeAt = options.resumeAt;
      if (!resumeAt) {
        const last = files.at(-1);
        return new LocalWarcPageStore(dir, options, prefix, indexFd, indexLength, last ? last.seq + 1 : 0);
      }
      if (indexLength < resumeAt.indexSize) {
        throw new WarcStoreError(
          'RESUME_MISMATCH',
          `${WARC_INDEX_FILE} has ${indexLength} bytes, the checkpoint expects ${resumeAt.indexSize}`,
        );
      }
      if (resumeAt.file === '') {
        // Nothing was committed: every file of this prefix holds only uncommitted captures.
        for (const file of files) unlinkSync(join(dir, file.name));
        ftruncateSync(indexFd, resumeAt.indexSize);
        return new LocalWarcPageStore(dir, options, prefix, indexFd, resumeAt.indexSize, files[0]?.seq ?? 0);
      }
      const current = files.find((file) => file.name === resumeAt.file);
      if (!current) {
        throw new WarcStoreError(
          'RESUME_MISMATCH',
          `the checkpoint's WARC file is missing: ${resumeAt.file}`,
        );
      }
      const store = new LocalWarcPageStore(dir, options, prefix, indexFd, resumeAt.indexSize, current.seq);
      store.#resume(current.name, resumeAt.size);
      for (const file of files) if (file.seq > current.seq) unlinkSync(join(dir, file.name));
      ftruncateSync(indexFd, resumeAt.indexSize);
      return store;
    } catch (error) {
      closeSync(indexFd);
      throw error;
    }
  }

  async put(capture: Capture): Promise<StoredRef> {
    if (this.#closed) throw new WarcStoreError('STORE_CLOSED', 'put after close');
    if (this.#fd < 0) this.#startFile(capture);
    let request = this.#encode(capture);
    if (this.#hasCaptures && this.#size + request.bytes > this.#maxFileBytes) {
      this.#endFile();
      this.#startFile(capture);
      request = this.#encode(capture);
    }
    const { records, bytes, responseOffset, responseLength, line } = request;
    const indexLine = Buffer.from(line(this.#file, this.#size + responseOffset), 'utf8');
    withPath(join(this.#dir, this.#file), () => writeAllSync(this.#fd, records, this.#size));
    withPath(join(this.#dir, WARC_INDEX_FILE), () =>
      writeAllSync(this.#indexFd, [indexLine], this.#indexSize),
    );
    const ref: StoredRef = { file: this.#file, offset: this.#size + responseOffset, length: responseLength };
    this.#size += bytes;
    this.#indexSize += indexLine.length;
    this.#hasCaptures = true;
    return ref;
  }

  async flush(): Promise<void> {
    if (this.#closed || !this.#fsync) return;
    if (this.#fd >= 0) fsyncSync(this.#fd);
    fsyncSync(this.#indexFd);
  }

  /** The position after the last completed `put`, for the caller's checkpoint. */
  position(): WarcPosition {
    return { file: this.#file, size: this.#size, indexSize: this.#indexSize };
  }

  /** Closes the files. Idempotent; `put` afterwards throws `WarcStoreError('STORE_CLOSED')`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#endFile();
    closeSync(this.#indexFd);
  }

  #resume(name: string, size: number): void {
    const fd = openSync(join(this.#dir, name), 'r+');
    try {
      const length = fstatSync(fd).size;
      if (length < size) {
        throw new WarcStoreError(
          'RESUME_MISMATCH',
          `${name} has ${length} bytes, the checkpoint expects ${size}`,
        );
      }
      const warcinfoId = readWarcinfoId(fd, size);
      if (!warcinfoId)
        throw new WarcStoreError('RESUME_MISMATCH', `${name} does not start with a warcinfo record`);
      ftruncateSync(fd, size);
      this.#fd = fd;
      this.#file = name;
      this.#size = size;
      this.#warcinfoId = warcinfoId;
      this.#hasCaptures = true;
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  #startFile(capture: Capture): void {
    const date = warcDate(this.#clock ? new Date(this.#clock.now()).toISOString() : capture.fetchedAt);
    const name = warcFileName(this.#prefix, cdxTimestamp(date), this.#seq);
    const { record, id } = warcinfoRecord({
      uuid: this.#newId(),
      date,
      filename: name,
      software: this.#software,
      fields: this.#warcinfoFields,
    });
    const info = gzipMember(record, this.#gzipLevel);
    // 'wx': never overwrite a file a previous run left behind.
    const fd = openSync(join(this.#dir, name), 'wx', 0o644);
    try {
      writeAllSync(fd, [info], 0);
    } catch (error) {
      closeSync(fd);
      unlinkSync(join(this.#dir, name));
      throw error;
    }
    this.#fd = fd;
    this.#file = name;
    this.#size = info.length;
    this.#warcinfoId = id;
    this.#hasCaptures = false;
  }

  #endFile(): void {
    if (this.#fd < 0) return;
    // A put that failed between its two writes may have left bytes past the last record.
    ftruncateSync(this.#fd, this.#size);
    closeSync(this.#fd);
    this.#fd = -1;
    this.#seq += 1;
  }

  #encode(capture: Capture) {
    const records = captureToWarcRecords(capture, {
      requestUuid: this.#newId(),
      responseUuid: this.#newId(),
      warcinfoId: this.#warcinfoId,
    });
    const request = gzipMember(records.request, this.#gzipLevel);
    const response = gzipMember(records.response, this.#gzipLevel);
    return {
      records: [request, response],
      bytes: request.length + response.length,
      responseOffset: request.length,
      responseLength: response.length,
      line: (filename: string, offset: number) =>
        cdxjLine({
          url: capture.url,
          date: records.date,
          mime: records.mime,
          status: capture.response.status,
          payloadDigest: records.payloadDigest,
          offset,
          length: response.length,
          filename,
        }),
    };
  }
}

/** Runs a write by descriptor; a failure names the file (a write by descriptor names none). */
function withPath<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (error instanceof Error && !('path' in error)) Object.assign(error, { path });
    throw error;
  }
}
