/**
 * RobotsCache over the embedded crawler's SQLite state (entries are stored as JSON, so values
 * are copied in and out like across a network).
 */
import type { RobotsCache, RobotsEntry } from '../../ports.ts';
import type { CrawlDb } from './crawl-db.ts';

/** One row per origin in the `robots` table. */
export class LocalRobotsCache implements RobotsCache {
  readonly #db: CrawlDb;

  constructor(db: CrawlDb) {
    this.#db = db;
  }

  async get(origin: string): Promise<RobotsEntry | undefined> {
    return this.#db.robots(origin);
  }

  async put(origin: string, entry: RobotsEntry): Promise<void> {
    this.#db.putRobots(origin, entry);
  }
}
