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
    while (written < bytes.length) written += writeSync(this.#fd, bytes, written);
    this.#size += bytes.length;
  }

  close(): void {
    closeSync(this.#fd);
  }
}
