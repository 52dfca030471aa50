/**
 * The embedded crawl's typed failures: its output folder cannot be used (exit 1: choose another,
 * or wait), or local storage failed mid-crawl (exit 2: fix the cause, run the same command again).
 * Expected outcomes of pages are values (PageRecord reasons), not errors.
 */
import { join } from 'node:path';
import { PermanentError } from '../core/permanent-error.ts';

/** The `--out` folder cannot hold this crawl: a file, busy with another crawl, not writable. */
export class CrawlFolderError extends PermanentError<
  | 'CRAWL_FOLDER_BUSY'
  | 'CRAWL_FOLDER_NOT_A_FOLDER'
  | 'CRAWL_FOLDER_UNUSABLE'
  /** `recrawl` was pointed at a folder that holds no finished crawl. */
  | 'CRAWL_FOLDER_NOT_A_CRAWL'
> {
  override readonly name = 'CrawlFolderError';
}

/**
 * Writing or reading the crawl's own files failed (disk full, I/O error, read-only): the crawl
 * stopped without committing the pages in progress; they are fetched again on resume.
 */
export class CrawlStorageError extends Error {
  override readonly name = 'CrawlStorageError';
  readonly code: 'CRAWL_STORAGE_FULL' | 'CRAWL_STORAGE_FAILED';
  /** Run again once the cause is gone: nothing was lost. */
  readonly retryable = true;

  constructor(code: CrawlStorageError['code'], message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** File system error codes that mean the disk or the folder failed, not the program. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
const IO_CODES = new Set(['EIO', 'EROFS', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'ENXIO', 'ENODEV']);
/** SQLite primary result codes (errcode & 0xff) of a storage failure. */
const SQLITE_FULL = 13;
const SQLITE_STORAGE = new Set([
  8 /* READONLY */, 10 /* IOERR */, 11 /* CORRUPT */, 14 /* CANTOPEN */, 26 /* NOTADB */,
]);

interface SystemError {
  code?: unknown;
  errcode?: unknown;
  errstr?: unknown;
  path?: unknown;
  message?: unknown;
}

/**
 * The storage failure `error` stands for, with one message saying what failed and what to do,
 * or undefined when it is not one (a bug, which the crawl records against the page instead).
 */
export function storageFailure(error: unknown, outDir: string): CrawlStorageError | undefined {
  if (error instanceof CrawlStorageError) return error;
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as SystemError;
  const where = typeof e.path === 'string' ? ` writing ${e.path}` : '';
  const resume = 'then run the same command again to resume (the pages in progress were not recorded)';
  if (e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    const primary = e.errcode & 0xff;
    const detail = `${String(e.errstr ?? e.message)}, in ${join(outDir, 'state.sqlite')}`;
    if (primary === SQLITE_FULL) {
      return new CrawlStorageError(
        'CRAWL_STORAGE_FULL',
        `no space left for the crawl state (${detail}); free some space, ${resume}`,
        {
          cause: error,
        },
      );
    }
    if (SQLITE_STORAGE.has(primary)) {
      return new CrawlStorageError(
        'CRAWL_STORAGE_FAILED',
        `the crawl state could not be written (${detail}); ${resume}`,
        {
          cause: error,
        },
      );
    }
    return undefined;
  }
  if (typeof e.code !== 'string') return undefined;
  if (FULL_CODES.has(e.code)) {
    return new CrawlStorageError(
      'CRAWL_STORAGE_FULL',
      `no space left on the device of ${outDir} (${e.code}${where}); free some space, ${resume}`,
      { cause: error },
    );
  }
  if (IO_CODES.has(e.code)) {
    return new CrawlStorageError(
      'CRAWL_STORAGE_FAILED',
      `the crawl's files in ${outDir} could not be written (${e.code}${where}); ${resume}`,
      { cause: error },
    );
  }
  return undefined;
}
