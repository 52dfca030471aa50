/**
 * Frontier over the embedded crawler's SQLite state: per-host queues in the `frontier` table,
 * committed at once. Tasks come out with `CrawlDb.head(host)`, in the order they were queued.
 */
import type { CrawlTask } from '../../core/types.ts';
import type { Frontier } from '../../ports.ts';
import type { CrawlDb } from './crawl-db.ts';

/** A task already queued (same fingerprint) keeps its place: queueing is idempotent per URL. */
export class LocalFrontier implements Frontier {
  readonly #db: CrawlDb;

  constructor(db: CrawlDb) {
    this.#db = db;
  }

  async enqueue(tasks: readonly CrawlTask[]): Promise<void> {
    this.#db.enqueue(tasks);
  }
}
