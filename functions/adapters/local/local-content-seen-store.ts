/**
 * ContentSeenStore over the embedded crawler's SQLite state, committing each claim at once.
 */
import type { ContentSeenStore } from '../../ports.ts';
import type { CrawlDb } from './crawl-db.ts';

/** Exact body hashes in the `content` table; the first URL to register a hash owns it. */
export class LocalContentSeenStore implements ContentSeenStore {
  readonly #db: CrawlDb;

  constructor(db: CrawlDb) {
    this.#db = db;
  }

  async claim(hash: string, url: string): Promise<string | undefined> {
    const first = this.#db.claimContent(hash, url);
    return first === url ? undefined : first;
  }
}
