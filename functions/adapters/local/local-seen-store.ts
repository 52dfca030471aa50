/**
 * SeenStore over the embedded crawler's SQLite state, committing each claim at once (the
 * embedded runtime itself buffers claims per step in StepUnit, with the same semantics).
 */
import type { Fingerprint } from '../../core/types.ts';
import type { SeenStore } from '../../ports.ts';
import type { CrawlDb } from './crawl-db.ts';

/** `claim` is one SQLite transaction; `true` for new fingerprints and for the same owner's repeats. */
export class LocalSeenStore implements SeenStore {
  readonly #db: CrawlDb;

  constructor(db: CrawlDb) {
    this.#db = db;
  }

  async claim(fps: readonly Fingerprint[], owner: Fingerprint): Promise<boolean[]> {
    return this.#db.claimSeen(fps, owner);
  }

  async has(fp: Fingerprint): Promise<boolean> {
    return this.#db.seenHas(fp);
  }
}
