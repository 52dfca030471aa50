/**
 * The state of an embedded archive's recrawls, in `<out>/recrawl.sqlite`: each known URL's
 * {@link ArchivedPage} and the rounds run so far. A round's outcome is folded in by `mergeRound`
 * in one transaction that also marks the round merged, so a crash before or during it leaves the
 * round to merge again, and never merges it twice.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { RevisitLookup } from '../../core/ports.ts';
import { type ArchivedPage, previousFetch } from '../../core/recrawl/archived-page.ts';
import type { PreviousFetch } from '../../core/recrawl/revisit-verdict.ts';
import { openSqlite } from './open-sqlite.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rounds (n INTEGER PRIMARY KEY, merged INTEGER NOT NULL DEFAULT 0, summary TEXT);
`;

/** One round of the archive: 0 is the first crawl, then one per recrawl. */
export interface RoundRow {
  n: number;
  merged: boolean;
  summary?: unknown;
}

export class RecrawlArchive implements RevisitLookup {
  readonly #db: DatabaseSync;
  readonly #get;
  readonly #put;

  constructor(path: string) {
    this.#db = openSqlite(path, SCHEMA);
    this.#get = this.#db.prepare('SELECT state FROM pages WHERE url = ?');
    this.#put = this.#db.prepare('INSERT OR REPLACE INTO pages (url, state) VALUES (?, ?)');
  }

  /** The URL's state, or undefined when the archive does not hold it. */
  page(url: string): ArchivedPage | undefined {
    const row = this.#get.get(url) as { state: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.state) as ArchivedPage);
  }

  async previous(url: string): Promise<PreviousFetch | undefined> {
    const page = this.page(url);
    return page === undefined ? undefined : previousFetch(page);
  }

  /** Every known URL's state, in URL order. */
  *pages(): Generator<ArchivedPage> {
    for (const row of this.#db.prepare('SELECT state FROM pages ORDER BY url').iterate()) {
      yield JSON.parse((row as { state: string }).state) as ArchivedPage;
    }
  }

  /** The last round started, if any. */
  lastRound(): RoundRow | undefined {
    const row = this.#db.prepare('SELECT n, merged, summary FROM rounds ORDER BY n DESC LIMIT 1').get() as
      | { n: number; merged: number; summary: string | null }
      | undefined;
    if (row === undefined) return undefined;
    const round: RoundRow = { n: row.n, merged: row.merged === 1 };
    if (row.summary !== null) round.summary = JSON.parse(row.summary);
    return round;
  }

  /** Records that round `n` started (idempotent). */
  startRound(n: number): void {
    this.#db.prepare('INSERT OR IGNORE INTO rounds (n) VALUES (?)').run(n);
  }

  /** Writes the round's new page states and marks it merged, with its summary, in one transaction. */
  mergeRound(n: number, pages: Iterable<ArchivedPage>, summary: unknown): void {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      for (const page of pages) this.#put.run(page.url, JSON.stringify(page));
      this.#db
        .prepare('INSERT OR REPLACE INTO rounds (n, merged, summary) VALUES (?, 1, ?)')
        .run(n, JSON.stringify(summary));
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  close(): void {
    this.#db.close();
  }
}
