/**
 * Which URLs were being processed when the crawl process died. A page that kills the process
 * (out of memory, a native crash, an OOM killer) would otherwise be fetched again on every
 * resume, and the crawl could never finish: each step writes `+fp` to this log when it starts and
 * `-fp` when it commits, so the next run knows what was in flight and counts it as a crash of
 * that URL. The writes are not synced: a `kill -9` keeps them (the kernel has them), a power cut
 * may lose the last few, which costs one more attempt at most.
 */
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { Fingerprint } from '../core/types.ts';

/** The log is rewritten with just the running steps once it grows past this. */
const COMPACT_BYTES = 64 * 1024;

export class InflightLog {
  readonly #fd: number;
  readonly #running = new Set<Fingerprint>();
  #size = 0;

  /**
   * Opens the log at `path`; `previous` holds the URLs in flight when the last run ended without
   * committing them (empty after an orderly end, which empties the log).
   */
  static open(path: string): { log: InflightLog; previous: Set<Fingerprint> } {
    const previous = new Set<Fingerprint>();
    if (existsSync(path)) {
      for (const line of readFileSync(path, 'latin1').split('\n')) {
        const fp = line.slice(1);
        if (line.startsWith('+')) previous.add(fp);
        else if (line.startsWith('-')) previous.delete(fp);
      }
    }
    return { log: new InflightLog(path), previous };
  }

  private constructor(path: string) {
    this.#fd = openSync(path, 'w');
  }

  /** A step of this URL starts. */
  started(fp: Fingerprint): void {
    this.#running.add(fp);
    this.#write(`+${fp}\n`);
  }

  /** The step of this URL committed (done or to retry later): it is no longer in flight. */
  finished(fp: Fingerprint): void {
    if (!this.#running.delete(fp)) return;
    if (this.#size >= COMPACT_BYTES) this.#compact();
    else this.#write(`-${fp}\n`);
  }

  /** Empties the log (an orderly end: nothing is in flight) and closes it. */
  close(): void {
    this.#running.clear();
    ftruncateSync(this.#fd, 0);
    closeSync(this.#fd);
  }

  #write(text: string): void {
    this.#size += writeSync(this.#fd, text, this.#size, 'latin1');
  }

  #compact(): void {
    ftruncateSync(this.#fd, 0);
    this.#size = 0;
    if (this.#running.size > 0) this.#write([...this.#running].map((fp) => `+${fp}\n`).join(''));
  }
}
