import { closeSync, existsSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';

/**
 * An append-only file whose committed size is checkpointed with the crawl state: on resume it is
 * cut back to that size, so what a step wrote without committing disappears.
 */
export class AppendOnlyFile {
  readonly path: string;
  #fd: number;
  #size: number;

  constructor(path: string, resumeSize?: number) {
    this.path = path;
    if (resumeSize !== undefined && existsSync(path) && statSync(path).size > resumeSize) {
      truncateSync(path, resumeSize);
    }
    this.#fd = openSync(path, 'a');
    this.#size = statSync(path).size;
  }

  /** Committed bytes so far (after the last append). */
  get size(): number {
    return this.#size;
  }

  appendBytes(bytes: Uint8Array): void {
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(this.#fd, bytes, written);
    } catch (error) {
      // A write by descriptor names no file; say which (bytes written so far are past the
      // committed size, and are cut off when the crawl resumes).
      if (error instanceof Error && !('path' in error)) Object.assign(error, { path: this.path });
      throw error;
    }
    this.#size += bytes.length;
  }

  close(): void {
    closeSync(this.#fd);
  }
}
