import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';

/** Bytes read per read(2): the reader holds this plus at most one line of TAIL_MAX_LINE_BYTES. */
export const TAIL_CHUNK_BYTES = 1 << 20;
/** A line longer than this is damaged (a crash mid-write, a hole): skipped, not carried. */
export const TAIL_MAX_LINE_BYTES = 8 << 20;

/** Options of {@link JsonlTail}. */
export interface JsonlTailOptions {
  /** Bytes per read (default {@link TAIL_CHUNK_BYTES}). */
  chunkBytes?: number;
  /** Longest line carried (default {@link TAIL_MAX_LINE_BYTES}); longer ones are skipped. */
  maxLineBytes?: number;
}

/**
 * Follows a growing JSON Lines file with bounded memory whatever its size: each call reads what
 * was appended since the last one, in fixed-size chunks, and hands over whole lines only; the
 * partial last line is carried to the next chunk (or the next call, while it is being written).
 * A file shorter than the last offset was cut back (a resumed crawl): `read` says so and starts
 * again from its beginning. Holds at most one chunk and one carried line: `peakHeldBytes` says how
 * much it held, for tests and the bench.
 */
export class JsonlTail {
  readonly path: string;
  readonly #chunk: Buffer;
  readonly #maxLine: number;
  #offset = 0;
  /** Pieces of the line being read, oldest first. */
  #carry: Buffer[] = [];
  #carried = 0;
  /** Inside a line longer than the limit: drop bytes until its newline. */
  #skipping = false;
  #peak = 0;

  constructor(path: string, options: JsonlTailOptions = {}) {
    this.path = path;
    const chunkBytes = options.chunkBytes ?? TAIL_CHUNK_BYTES;
    if (!Number.isInteger(chunkBytes) || chunkBytes < 1)
      throw new RangeError(`chunkBytes must be a positive integer, got ${chunkBytes}`);
    this.#chunk = Buffer.allocUnsafe(chunkBytes);
    this.#maxLine = options.maxLineBytes ?? TAIL_MAX_LINE_BYTES;
  }

  /** Bytes of the file consumed so far (whole lines and the carried partial one). */
  get offset(): number {
    return this.#offset;
  }

  /** The most bytes held at once: the chunk plus the carried line. */
  get peakHeldBytes(): number {
    return this.#peak;
  }

  /**
   * Calls `onLine` with each whole, non-empty line appended since the last call (decoded as UTF-8
   * only once whole, so a character split across chunks stays whole). `reset`: the file was cut
   * back and read again from its start (`onReset` runs first, so the caller drops what it had
   * counted); `damaged`: lines skipped for their length.
   */
  read(onLine: (line: string) => void, onReset: () => void = () => {}): { reset: boolean; damaged: number } {
    let damaged = 0;
    if (!existsSync(this.path)) return { reset: false, damaged };
    const size = statSync(this.path).size;
    let reset = false;
    if (size < this.#offset) {
      this.#offset = 0;
      this.#carry = [];
      this.#carried = 0;
      this.#skipping = false;
      reset = true;
      onReset();
    }
    if (size === this.#offset) return { reset, damaged };
    const fd = openSync(this.path, 'r');
    try {
      while (this.#offset < size) {
        const n = readSync(
          fd,
          this.#chunk,
          0,
          Math.min(this.#chunk.length, size - this.#offset),
          this.#offset,
        );
        if (n === 0) break;
        this.#offset += n;
        damaged += this.#split(this.#chunk.subarray(0, n), onLine);
      }
    } finally {
      closeSync(fd);
    }
    return { reset, damaged };
  }

  /** Hands over the whole lines of one chunk; carries (or skips) its unfinished last line. */
  #split(data: Buffer, onLine: (line: string) => void): number {
    let damaged = 0;
    let start = 0;
    for (;;) {
      const end = data.indexOf(0x0a, start);
      if (end < 0) break;
      if (this.#skipping) {
        this.#skipping = false;
      } else if (this.#carried + end - start > this.#maxLine) {
        damaged++;
      } else {
        const piece = data.subarray(start, end);
        const line =
          this.#carried === 0
            ? piece.toString('utf8')
            : Buffer.concat([...this.#carry, piece], this.#carried + piece.length).toString('utf8');
        this.#note(this.#carried + piece.length);
        if (line !== '') onLine(line);
      }
      this.#carry = [];
      this.#carried = 0;
      start = end + 1;
    }
    if (start < data.length && !this.#skipping) {
      if (this.#carried + data.length - start > this.#maxLine) {
        // No newline within the limit: a damaged line; drop it up to its end.
        this.#carry = [];
        this.#carried = 0;
        this.#skipping = true;
        damaged++;
      } else {
        // A copy: the chunk buffer is reused by the next read.
        this.#carry.push(Buffer.from(data.subarray(start)));
        this.#carried += data.length - start;
        this.#note(this.#carried);
      }
    }
    return damaged;
  }

  #note(carried: number): void {
    this.#peak = Math.max(this.#peak, this.#chunk.length + carried);
  }
}
