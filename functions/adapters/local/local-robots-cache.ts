/**
 * RobotsCache over the embedded crawler's SQLite state, with the recent entries kept in memory.
 * Entries are stored as JSON, so values are copied in and out like across a network; the warm
 * map holds the stored objects, because parsed rules are memoized per entry object.
 */
import { LRUCache } from 'lru-cache';
import type { RobotsCache, RobotsEntry } from '../../core/ports.ts';
import type { CrawlDb } from './crawl-db.ts';

/** Origins whose entries stay in memory (each holds its parsed rules once used). */
const WARM_ENTRIES = 1024;

/** One row per origin in the `robots` table, written at once; the recent ones answered from memory. */
export class LocalRobotsCache implements RobotsCache {
  readonly #db: CrawlDb;
  readonly #recent = new LRUCache<string, RobotsEntry>({ max: WARM_ENTRIES });

  constructor(db: CrawlDb) {
    this.#db = db;
  }

  async get(origin: string): Promise<RobotsEntry | undefined> {
    let entry = this.#recent.get(origin);
    if (entry === undefined) {
      entry = this.#db.robots(origin);
      if (entry !== undefined) this.#recent.set(origin, entry);
    }
    return entry;
  }

  async put(origin: string, entry: RobotsEntry): Promise<void> {
    this.#db.putRobots(origin, entry);
    this.#recent.set(origin, entry);
  }

  /** Keeps in memory an entry a step's commit stored (see StepUnit.robotsEntries). */
  remember(origin: string, entry: RobotsEntry): void {
    this.#recent.set(origin, entry);
  }

  /** The entry held in memory for an origin, if any (reports; no database read). */
  peek(origin: string): RobotsEntry | undefined {
    return this.#recent.peek(origin);
  }
}
