import { closeSync, existsSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';

/**
 * An append-only JSON Lines file whose committed size is checkpointed with the crawl state: on
 * resume it is cut back to that size, so lines written by a step that never committed disappear.
 */
export class JsonlFile {
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

  append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    const buffer = Buffer.from(`${lines.join('\n')}\n`);
    let written = 0;
    try {
      while (written < buffer.length) written += writeSync(this.#fd, buffer, written);
    } catch (error) {
      // A write by descriptor names no file; say which (bytes written so far are past the
      // committed size, and are cut off when the crawl resumes).
      if (error instanceof Error && !('path' in error)) Object.assign(error, { path: this.path });
      throw error;
    }
    this.#size += buffer.length;
  }

  close(): void {
    closeSync(this.#fd);
  }
}
