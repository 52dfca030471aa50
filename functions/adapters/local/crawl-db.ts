/**
 * The embedded crawler's durable state in one SQLite file (node:sqlite, no native addon):
 * the URL-seen set (8-byte fingerprints), the frontier, content hashes, robots.txt entries and
 * checkpoints. Memory stays flat as the crawl grows: rows live on disk, SQLite caches pages.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { SEED_OWNER } from '../../core/crawl-page.ts';
import type { CrawlTask, Fingerprint } from '../../core/types.ts';
import type { RobotsEntry } from '../../ports.ts';

/** Fingerprint (16 hex chars) as the signed 64-bit integer SQLite stores in 8 bytes. */
export function fpToInt(fp: Fingerprint): bigint {
  return BigInt.asIntN(64, BigInt(`0x${fp}`));
}

/** A frontier row plus its position within its host's queue. */
export interface QueuedTask extends CrawlTask {
  seq: number;
}

/** Everything one finished step changes, written in one transaction. */
export interface StepWrite {
  /** Fingerprints newly claimed by the step (they enter the seen set). */
  claimed: Fingerprint[];
  /** New tasks for the frontier. */
  enqueue: CrawlTask[];
  /** Redirect targets and other tasks that go to the front of their host's queue. */
  front?: boolean;
  /** Content hashes first seen by the step. */
  contentHashes: { hash: string; url: string }[];
  /** The task leaves the frontier (done) or is rewritten (retry). */
  finished?: Fingerprint;
  retried?: CrawlTask;
  /** Host whose page budget the step used (a page request was made). */
  hostFetched?: string;
  /** Owner recorded with `claimed` (the page whose links they are; SeenStore semantics). */
  claimOwner?: Fingerprint;
  /** Checkpoint written with the step (output file sizes, counters). */
  checkpoint: unknown;
}

const SCHEMA = `
  PRAGMA journal_mode = WAL;
  PRAGMA synchronous = NORMAL;
  PRAGMA temp_store = MEMORY;
  PRAGMA cache_size = -4000;
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS seen (fp INTEGER PRIMARY KEY, owner INTEGER);
  CREATE TABLE IF NOT EXISTS frontier (
    fp TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    seq INTEGER NOT NULL,
    task TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS frontier_by_host ON frontier (host, seq);
  CREATE TABLE IF NOT EXISTS content (hash TEXT PRIMARY KEY, url TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS robots (origin TEXT PRIMARY KEY, entry TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, fetched INTEGER NOT NULL) WITHOUT ROWID;
`;

export class CrawlDb {
  readonly #db: DatabaseSync;
  readonly #stmt: Record<string, StatementSync>;
  #seq: number;
  #frontSeq: number;

  constructor(path: string) {
    this.#db = new DatabaseSync(path);
    this.#db.exec(SCHEMA);
    // State files from before claims recorded their owner.
    const columns = this.#db.prepare('PRAGMA table_info(seen)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'owner')) this.#db.exec('ALTER TABLE seen ADD COLUMN owner INTEGER');
    const prepare = (sql: string) => this.#db.prepare(sql);
    this.#stmt = {
      getMeta: prepare('SELECT value FROM meta WHERE key = ?'),
      setMeta: prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      seenHas: prepare('SELECT 1 AS x FROM seen WHERE fp = ?'),
      seenAdd: prepare('INSERT OR IGNORE INTO seen (fp, owner) VALUES (?, ?)'),
      seenOwner: prepare('SELECT owner FROM seen WHERE fp = ?'),
      seenCount: prepare('SELECT count(*) AS n FROM seen'),
      push: prepare('INSERT OR IGNORE INTO frontier (fp, host, seq, task) VALUES (?, ?, ?, ?)'),
      head: prepare('SELECT seq, task FROM frontier WHERE host = ? ORDER BY seq LIMIT 1'),
      remove: prepare('DELETE FROM frontier WHERE fp = ?'),
      rewrite: prepare('UPDATE frontier SET task = ? WHERE fp = ?'),
      hostCounts: prepare('SELECT host, count(*) AS n FROM frontier GROUP BY host'),
      frontierCount: prepare('SELECT count(*) AS n FROM frontier'),
      seqBounds: prepare('SELECT coalesce(max(seq), 0) AS hi, coalesce(min(seq), 0) AS lo FROM frontier'),
      contentGet: prepare('SELECT url FROM content WHERE hash = ?'),
      contentAdd: prepare('INSERT OR IGNORE INTO content (hash, url) VALUES (?, ?)'),
      hostFetched: prepare(
        'INSERT INTO hosts (host, fetched) VALUES (?, 1) ON CONFLICT (host) DO UPDATE SET fetched = fetched + 1',
      ),
      hostsFetched: prepare('SELECT host, fetched FROM hosts'),
      robotsGet: prepare('SELECT entry FROM robots WHERE origin = ?'),
      robotsPut: prepare(
        'INSERT INTO robots (origin, entry) VALUES (?, ?) ON CONFLICT (origin) DO UPDATE SET entry = excluded.entry',
      ),
    };
    // Owners are full 64-bit values: read them as bigint, not as a lossy number.
    this.#stmt.seenOwner!.setReadBigInts(true);
    const bounds = this.#stmt.seqBounds!.get() as { hi: number; lo: number };
    this.#seq = bounds.hi;
    this.#frontSeq = Math.min(0, bounds.lo);
  }

  getMeta<T>(key: string): T | undefined {
    const row = this.#stmt.getMeta!.get(key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  setMeta(key: string, value: unknown): void {
    this.#stmt.setMeta!.run(key, JSON.stringify(value));
  }

  seenHas(fp: Fingerprint): boolean {
    return this.#stmt.seenHas!.get(fpToInt(fp)) !== undefined;
  }

  /**
   * The owner recorded with a seen fingerprint: its fingerprint, `null` for rows written without
   * one, `undefined` when the fingerprint is not seen.
   */
  seenOwner(fp: Fingerprint): Fingerprint | null | undefined {
    const row = this.#stmt.seenOwner!.get(fpToInt(fp)) as { owner: bigint | null } | undefined;
    if (row === undefined) return undefined;
    return row.owner === null ? null : BigInt.asUintN(64, row.owner).toString(16).padStart(16, '0');
  }

  /**
   * Claims fingerprints for `owner` and commits at once (the LocalSeenStore; the embedded
   * runtime commits claims with its step instead). Per fingerprint, in order: true when this call
   * inserted it or it was inserted by the same owner.
   */
  claimSeen(fps: readonly Fingerprint[], owner: Fingerprint): boolean[] {
    const s = this.#stmt;
    const ownerInt = fpToInt(owner);
    this.#db.exec('BEGIN');
    try {
      const result = fps.map((fp) => {
        const existing = this.seenOwner(fp);
        if (existing !== undefined) return existing === owner;
        s.seenAdd!.run(fpToInt(fp), ownerInt);
        return true;
      });
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Registers a content hash for `url` unless one is there; resolves the URL registered first. */
  claimContent(hash: string, url: string): string {
    this.#stmt.contentAdd!.run(hash, url);
    return this.contentOwner(hash) ?? url;
  }

  /** Appends tasks to their hosts' queues and commits (a task already queued stays where it is). */
  enqueue(tasks: readonly CrawlTask[]): void {
    this.#db.exec('BEGIN');
    try {
      for (const task of tasks) this.#stmt.push!.run(task.fp, task.host, ++this.#seq, JSON.stringify(task));
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Removes a task from the frontier (it is done). */
  removeTask(fp: Fingerprint): void {
    this.#stmt.remove!.run(fp);
  }

  seenCount(): number {
    return (this.#stmt.seenCount!.get() as { n: number }).n;
  }

  contentOwner(hash: string): string | undefined {
    return (this.#stmt.contentGet!.get(hash) as { url: string } | undefined)?.url;
  }

  robots(origin: string): RobotsEntry | undefined {
    const row = this.#stmt.robotsGet!.get(origin) as { entry: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.entry) as RobotsEntry);
  }

  putRobots(origin: string, entry: RobotsEntry): void {
    this.#stmt.robotsPut!.run(origin, JSON.stringify(entry));
  }

  /** The next task of a host in queue order, without removing it. */
  head(host: string): QueuedTask | undefined {
    const row = this.#stmt.head!.get(host) as { seq: number; task: string } | undefined;
    if (row === undefined) return undefined;
    return { ...(JSON.parse(row.task) as CrawlTask), seq: row.seq };
  }

  /** Queued task counts per host (to rebuild the scheduler after a restart). */
  hostCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const row of this.#stmt.hostCounts!.iterate() as Iterable<{ host: string; n: number }>) {
      counts.set(row.host, row.n);
    }
    return counts;
  }

  /** Pages requested per host so far (the per-host budget survives a restart). */
  hostFetchedCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const row of this.#stmt.hostsFetched!.iterate() as Iterable<{ host: string; fetched: number }>) {
      counts.set(row.host, row.fetched);
    }
    return counts;
  }

  frontierSize(): number {
    return (this.#stmt.frontierCount!.get() as { n: number }).n;
  }

  /** Seeds a fresh crawl: claims and queues the seed tasks in one transaction. */
  seed(tasks: readonly CrawlTask[], checkpoint: unknown): void {
    this.commit({
      claimed: tasks.map((t) => t.fp),
      claimOwner: SEED_OWNER,
      enqueue: [...tasks],
      contentHashes: [],
      checkpoint,
    });
  }

  /**
   * Applies one step atomically: new seen fingerprints, new frontier rows, content hashes, the
   * task's removal or rewrite, and the checkpoint that names the output files' committed sizes.
   */
  commit(write: StepWrite): void {
    const s = this.#stmt;
    this.#db.exec('BEGIN');
    try {
      const owner = write.claimOwner === undefined ? null : fpToInt(write.claimOwner);
      for (const fp of write.claimed) s.seenAdd!.run(fpToInt(fp), owner);
      for (const task of write.enqueue) {
        const seq = write.front ? --this.#frontSeq : ++this.#seq;
        s.push!.run(task.fp, task.host, seq, JSON.stringify(task));
      }
      for (const { hash, url } of write.contentHashes) s.contentAdd!.run(hash, url);
      if (write.finished !== undefined) s.remove!.run(write.finished);
      if (write.retried !== undefined) s.rewrite!.run(JSON.stringify(write.retried), write.retried.fp);
      if (write.hostFetched !== undefined) s.hostFetched!.run(write.hostFetched);
      s.setMeta!.run('checkpoint', JSON.stringify(write.checkpoint));
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
