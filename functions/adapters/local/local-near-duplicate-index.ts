/**
 * The embedded crawler's near-duplicate index in SQLite (node:sqlite): band key -> pages, so a
 * lookup reads a few rows by primary key instead of every page's SimHash. It can live in the
 * crawl's own state.sqlite (pass the open DatabaseSync) or in a file of its own (pass a path).
 *
 * Tables (created if missing):
 * - `simhash_layout`: the one (k, blocks) the band keys were made with; opening with another is an
 *   error, since the keys would no longer find the pages filed before.
 * - `simhash_page (seq, fp, url, simhash)`: one row per page in the order added; `fp` is the URL's
 *   64-bit fingerprint, unique, so an add is idempotent per URL without a second copy of the URL
 *   text in an index.
 * - `simhash_band (band, seq, hi, lo)`, WITHOUT ROWID, primary key (band, seq): each page under each
 *   of its band keys, with both halves of its SimHash so a lookup computes distances from the key
 *   rows alone and reads one URL, the winner's. Deviation from a `(band, simhash, url)` table: the
 *   URL is stored once, not k + 1 times (URLs are most of a row's bytes).
 *
 * Adds wait in memory and are merged in band-key order, `batchSize` at a time (like the seen set
 * in crawl-db.ts): band keys are random, so filing each page at once dirtied k + 2 random B-tree
 * pages per add and rewrote them to the WAL. Measured per add on a file: 80 to 120 µs one at a
 * time; in batches of 4,096: 29 µs up to 100,000 pages, 110 µs at 1 million; of 16,384: 29 µs and
 * 61 µs. Lookups see the waiting adds. A crash loses them; the embedded crawler adds them again
 * when it resumes, from the SimHashes its committed steps recorded (embedded/step-quality.ts).
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  type BandLayout,
  bandKeys,
  bandLayout,
  checkDistance,
  DEFAULT_MAX_PER_BAND,
  DEFAULT_NEAR_DISTANCE,
  type NearDuplicateIndex,
  type NearDuplicateIndexOptions,
  type NearDuplicateStats,
  type NearMatch,
  positiveInteger,
} from '../../core/quality/near-duplicate.ts';
import { popcount32, type Simhash, simhashFromHalves, simhashHalves } from '../../core/quality/simhash.ts';
import { fingerprint, fingerprintToInt64 } from '../../core/url/fingerprint.ts';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS simhash_layout (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    k INTEGER NOT NULL,
    blocks INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS simhash_page (
    seq INTEGER PRIMARY KEY,
    fp INTEGER NOT NULL UNIQUE,
    url TEXT NOT NULL,
    simhash TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS simhash_band (
    band TEXT NOT NULL,
    seq INTEGER NOT NULL,
    hi INTEGER NOT NULL,
    lo INTEGER NOT NULL,
    PRIMARY KEY (band, seq)
  ) WITHOUT ROWID;
`;

/** Adds merged into the tables at once, by default. */
export const DEFAULT_BATCH_SIZE = 16_384;

/** Options of {@link LocalNearDuplicateIndex}. */
export interface LocalNearDuplicateIndexOptions extends NearDuplicateIndexOptions {
  /** Adds kept in memory before they are merged into the tables (default 16,384; 1 writes each at once). */
  batchSize?: number;
}

/** The index in the database was built with another (k, blocks) than the one asked for. */
export class NearDuplicateLayoutError extends Error {
  override readonly name = 'NearDuplicateLayoutError';
  readonly code = 'NEAR_DUPLICATE_LAYOUT';
}

interface Pending {
  seq: number;
  fp: bigint;
  url: string;
  simhash: Simhash;
  hi: number;
  lo: number;
  keys: string[];
}

type Statements = Record<
  'band' | 'url' | 'seqOfFp' | 'addPage' | 'addBand' | 'count' | 'maxSeq',
  StatementSync
>;

/** A {@link NearDuplicateIndex} over SQLite; see the module comment for the tables. */
export class LocalNearDuplicateIndex implements NearDuplicateIndex {
  readonly layout: BandLayout;
  readonly maxPerBand: number;
  readonly batchSize: number;
  readonly stats: NearDuplicateStats = { lookups: 0, candidates: 0, adds: 0, keysAtCap: 0 };
  readonly #db: DatabaseSync;
  readonly #ownsDb: boolean;
  readonly #stmt: Statements;
  readonly #pending: Pending[] = [];
  readonly #pendingByKey = new Map<string, Pending[]>();
  readonly #pendingByUrl = new Map<string, Pending>();
  #nextSeq: number;

  /**
   * @param db an open database (the crawl's state.sqlite: the tables are added beside the
   *   crawl's own, and `close` leaves it open) or a file path (opened in WAL mode, closed by `close`).
   * @throws NearDuplicateLayoutError when the database's index was built with another k or blocks.
   */
  constructor(db: DatabaseSync | string, options: LocalNearDuplicateIndexOptions = {}) {
    this.layout = bandLayout(options.k ?? DEFAULT_NEAR_DISTANCE, options.blocks);
    this.maxPerBand = positiveInteger('maxPerBand', options.maxPerBand ?? DEFAULT_MAX_PER_BAND);
    this.batchSize = positiveInteger('batchSize', options.batchSize ?? DEFAULT_BATCH_SIZE);
    this.#ownsDb = typeof db === 'string';
    this.#db = typeof db === 'string' ? new DatabaseSync(db) : db;
    if (this.#ownsDb) this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
    this.#db.exec(SCHEMA);
    this.#checkLayout();
    const prepare = (sql: string) => this.#db.prepare(sql);
    this.#stmt = {
      // the limit written into the SQL: bound as a parameter it made each lookup 5x slower
      band: prepare(
        `SELECT seq, hi, lo FROM simhash_band WHERE band = ? ORDER BY seq LIMIT ${this.maxPerBand}`,
      ),
      url: prepare('SELECT url FROM simhash_page WHERE seq = ?'),
      seqOfFp: prepare('SELECT seq FROM simhash_page WHERE fp = ?'),
      addPage: prepare('INSERT OR IGNORE INTO simhash_page (seq, fp, url, simhash) VALUES (?, ?, ?, ?)'),
      addBand: prepare('INSERT OR IGNORE INTO simhash_band (band, seq, hi, lo) VALUES (?, ?, ?, ?)'),
      count: prepare('SELECT count(*) AS n FROM simhash_page'),
      maxSeq: prepare('SELECT coalesce(max(seq), 0) AS n FROM simhash_page'),
    };
    this.#nextSeq = (this.#stmt.maxSeq.get() as { n: number }).n + 1;
  }

  /** Pages filed (merged or waiting). */
  get size(): number {
    return (this.#stmt.count.get() as { n: number }).n + this.#pending.length;
  }

  async findNear(simhash: Simhash, k: number = this.layout.k, self?: string): Promise<NearMatch | undefined> {
    checkDistance(k, this.layout);
    const [hi, lo] = simhashHalves(simhash);
    const selfSeq = self === undefined ? undefined : this.#seqOf(self);
    this.stats.lookups++;
    let bestSeq = -1;
    let bestDistance = 0;
    let bestHi = 0;
    let bestLo = 0;
    const consider = (seq: number, rowHi: number, rowLo: number): void => {
      const d = popcount32(rowHi ^ hi) + popcount32(rowLo ^ lo);
      if (d > k || seq === selfSeq) return;
      if (bestSeq < 0 || d < bestDistance || (d === bestDistance && seq < bestSeq)) {
        bestSeq = seq;
        bestDistance = d;
        bestHi = rowHi;
        bestLo = rowLo;
      }
    };
    for (const key of bandKeys(simhash, this.layout.k, this.layout.blocks)) {
      const rows = this.#stmt.band.all(key) as { seq: number; hi: number; lo: number }[];
      for (const row of rows) consider(row.seq, row.hi, row.lo);
      // waiting adds come after every merged one: they fill what the cap leaves
      const waiting = this.#pendingByKey.get(key);
      const more = waiting === undefined ? 0 : Math.min(waiting.length, this.maxPerBand - rows.length);
      for (let i = 0; i < more; i++) consider(waiting![i]!.seq, waiting![i]!.hi, waiting![i]!.lo);
      this.stats.candidates += rows.length + more;
      if (rows.length + (waiting?.length ?? 0) >= this.maxPerBand) this.stats.keysAtCap++;
    }
    if (bestSeq < 0) return undefined;
    const url = bestSeq >= this.#firstPendingSeq() ? this.#pendingUrl(bestSeq) : this.#mergedUrl(bestSeq);
    return { url, simhash: simhashFromHalves(bestHi, bestLo), distance: bestDistance };
  }

  async add(simhash: Simhash, url: string): Promise<void> {
    const [hi, lo] = simhashHalves(simhash);
    if (this.#pendingByUrl.has(url)) return;
    const fp = fingerprintToInt64(fingerprint(url));
    if (this.#stmt.seqOfFp.get(fp) !== undefined) return;
    const entry: Pending = {
      seq: this.#nextSeq++,
      fp,
      url,
      simhash,
      hi,
      lo,
      keys: bandKeys(simhash, this.layout.k, this.layout.blocks),
    };
    this.#pending.push(entry);
    this.#pendingByUrl.set(url, entry);
    for (const key of entry.keys) {
      const list = this.#pendingByKey.get(key);
      if (list === undefined) this.#pendingByKey.set(key, [entry]);
      else list.push(entry);
    }
    this.stats.adds++;
    if (this.#pending.length >= this.batchSize) this.flush();
  }

  /** Merges the waiting adds into the tables, in band-key order, in one savepoint. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const bands: [key: string, entry: Pending][] = [];
    for (const entry of this.#pending) for (const key of entry.keys) bands.push([key, entry]);
    bands.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1].seq - b[1].seq));
    // a savepoint nests inside a transaction the crawl may have open on the same connection
    this.#db.exec('SAVEPOINT near_duplicate_flush');
    try {
      // a URL filed meanwhile through another connection keeps its first row, without new bands
      const skipped = new Set<Pending>();
      for (const e of this.#pending) {
        if (this.#stmt.addPage.run(e.seq, e.fp, e.url, e.simhash).changes === 0) skipped.add(e);
      }
      for (const [key, e] of bands) if (!skipped.has(e)) this.#stmt.addBand.run(key, e.seq, e.hi, e.lo);
      this.#db.exec('RELEASE near_duplicate_flush');
    } catch (error) {
      this.#db.exec('ROLLBACK TO near_duplicate_flush; RELEASE near_duplicate_flush');
      throw error;
    }
    this.#pending.length = 0;
    this.#pendingByKey.clear();
    this.#pendingByUrl.clear();
  }

  /** Merges the waiting adds, then closes the database if this index opened it. */
  close(): void {
    this.flush();
    if (this.#ownsDb) this.#db.close();
  }

  #firstPendingSeq(): number {
    return this.#pending[0]?.seq ?? Number.POSITIVE_INFINITY;
  }

  #pendingUrl(seq: number): string {
    return this.#pending[seq - this.#firstPendingSeq()]!.url;
  }

  #mergedUrl(seq: number): string {
    return (this.#stmt.url.get(seq) as { url: string }).url;
  }

  #seqOf(url: string): number | undefined {
    const waiting = this.#pendingByUrl.get(url);
    if (waiting !== undefined) return waiting.seq;
    const row = this.#stmt.seqOfFp.get(fingerprintToInt64(fingerprint(url))) as { seq: number } | undefined;
    return row?.seq;
  }

  #checkLayout(): void {
    const row = this.#db.prepare('SELECT k, blocks FROM simhash_layout WHERE id = 0').get() as
      | { k: number; blocks: number }
      | undefined;
    const { k, blocks } = this.layout;
    if (row === undefined) {
      this.#db.prepare('INSERT INTO simhash_layout (id, k, blocks) VALUES (0, ?, ?)').run(k, blocks);
    } else if (row.k !== k || row.blocks !== blocks) {
      if (this.#ownsDb) this.#db.close();
      throw new NearDuplicateLayoutError(
        `the near-duplicate index was built with k=${row.k}, blocks=${row.blocks}; asked for k=${k}, blocks=${blocks}`,
      );
    }
  }
}
