/**
 * The embedded crawler's durable state in one SQLite file (node:sqlite, no native addon):
 * the URL-seen set (8-byte fingerprints), the frontier, content hashes, robots.txt entries and
 * checkpoints. Memory stays flat as the crawl grows: rows live on disk, SQLite caches pages.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { RobotsEntry } from '../../core/ports.ts';
import { SEED_OWNER } from '../../core/step/crawl-page.ts';
import type { CrawlTask, Fingerprint } from '../../core/types.ts';
import { fingerprint } from '../../core/url/fingerprint.ts';
import { openSqlite } from './open-sqlite.ts';

/** Fingerprint (16 hex chars) as the signed 64-bit integer SQLite stores in 8 bytes. */
export function fpToInt(fp: Fingerprint): bigint {
  return BigInt.asIntN(64, BigInt(`0x${fp}`));
}

/**
 * A frontier row plus its position: `seq` (queue order), `prio` (served highest first) and
 * `cashKey`, the AOPIC cash it holds now, credits included, minus the bonus when it was queued.
 */
export interface QueuedTask extends CrawlTask {
  seq: number;
  prio: number;
  cashKey: number;
}

/** How a new frontier row is valued: its priority and its AOPIC cash key. */
export interface RowValue {
  prio: number;
  cashKey: number;
}

/**
 * The priority a new frontier row gets, highest served first within its host (and across ready
 * hosts). Breadth-first by default: `-seq`, so the oldest row wins; `front` rows (redirect
 * targets) go before everything queued.
 */
export type Prioritize = (task: CrawlTask, seq: number, front: boolean) => RowValue;

const FRONT = 1e15;
/** Breadth-first, with the task's cash kept as its key (no bonus: fine for accounting alone). */
export const breadthFirst: Prioritize = (task, seq, front) => ({
  prio: front ? FRONT - seq : -seq,
  cashKey: task.cash,
});

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
  /** The task leaves the frontier (done): the queued row, or just its fingerprint. */
  finished?: QueuedTask | Fingerprint;
  /** AOPIC: the finished page's history and cash key (cash minus the bonus at that time). */
  finishedCash?: { history: number; key: number };
  /** The task is rewritten in place (retry). */
  retried?: CrawlTask | QueuedTask;
  /**
   * The task finished without a response for a reason a later run may remove (a wider setting,
   * a server back up): kept so that `requeueFailed` can queue it again.
   */
  failed?: { task: CrawlTask; reason: string };
  /** Host whose page budget the step used (a page request was made). */
  hostFetched?: string;
  /** Owner recorded with `claimed` (the page whose links they are; SeenStore semantics). */
  claimOwner?: Fingerprint;
  /** What the step taught the crawl's trap detectors, replayed after a crash (`qualityLog`). */
  quality?: unknown[];
  /** robots.txt entries the step read, stored with it (see StepUnit.robotsEntries). */
  robots?: [origin: string, entry: RobotsEntry][];
  /** Checkpoint written with the step (output file sizes, counters). */
  checkpoint: unknown;
}

/**
 * Claimed fingerprints wait in memory and are merged into the `seen` table in sorted batches of
 * this size. Inserting random 64-bit keys one step at a time touched a random B-tree page per key
 * and rewrote it to the WAL (57 ms per step with 1,000 new links); sorted batches touch each page
 * once (Mercator's disk-based URL set does the same). Until merged, they are safe in the frontier:
 * each queued row carries its fingerprint and owner, and opening the database merges them back.
 * On the one-million-URL benchmark: 16 Ki -> 21 s and 170 MB peak RSS; 64 Ki -> 19 s and 231 MB;
 * one insert per claim in the step's transaction -> 117 s. For the same reason the frontier is
 * keyed by queue order (appends) and has no fingerprint index: the `seen` row of a queued URL
 * holds its queue position, which is how AOPIC credits find it.
 */
const MERGE_BATCH = 16_384;

/**
 * Steps whose seen, content and host writes, and the removal of their finished frontier rows,
 * wait in the journal before they are applied to their tables (sooner when credits are applied:
 * see `credit`). Each step's commit writes one journal row, which also holds its checkpoint,
 * instead of a random page of `seen`, one of `content`, the `hosts` page, the `meta` page and the
 * frontier's table and index pages of the finished row: SQLite appends every page a transaction
 * changes to the WAL (two writes each) and copies it back at the next checkpoint, and a step's
 * commit came down from 6 pages to 1 for a page without new links (133 -> ~60 us on the
 * PostgreSQL docs). Finished rows stay in the frontier until the merge, listed in the in-memory
 * temp table `frontier_done` that `head` skips. Journal rows live in fixed slots (step mod this),
 * rewritten in place; `meta.journal` names the last step merged, and opening the database merges
 * the rows after it, so a crash loses nothing.
 */
const JOURNAL_STEPS = 32;

const SCHEMA = `
  PRAGMA locking_mode = EXCLUSIVE;
  PRAGMA journal_mode = WAL;
  PRAGMA synchronous = NORMAL;
  PRAGMA temp_store = MEMORY;
  PRAGMA cache_size = -4000;
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS seen (fp INTEGER PRIMARY KEY, owner INTEGER, seq INTEGER, history REAL, key REAL);
  CREATE TABLE IF NOT EXISTS frontier (
    seq INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    fp INTEGER NOT NULL,
    owner INTEGER,
    prio REAL NOT NULL,
    cash REAL NOT NULL,
    task TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS frontier_by_host ON frontier (host, prio DESC, seq);
  CREATE INDEX IF NOT EXISTS frontier_site_declared_by_host ON frontier (host, prio DESC, seq)
    WHERE (json_extract(task, '$.listed') = 1 OR json_extract(task, '$.sitemap') IS NOT NULL);
  CREATE TABLE IF NOT EXISTS content (hash INTEGER PRIMARY KEY, url TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS robots (origin TEXT PRIMARY KEY, entry TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, fetched INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS failed (fp INTEGER PRIMARY KEY, reason TEXT NOT NULL, task TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS journal (
    slot INTEGER PRIMARY KEY,
    step INTEGER NOT NULL,
    checkpoint TEXT NOT NULL,
    seq INTEGER,
    fp INTEGER,
    owner INTEGER,
    history REAL,
    key REAL,
    host TEXT,
    content TEXT,
    quality TEXT
  );
  CREATE TABLE IF NOT EXISTS quality_log (id INTEGER PRIMARY KEY, events TEXT NOT NULL);
`;

/** The state file was written by an incompatible version of crawlstack. */
export class CrawlDbVersionError extends Error {
  override readonly name = 'CrawlDbVersionError';
  readonly code = 'CRAWL_DB_VERSION';
}

/** One committed step's writes waiting in the journal (see JOURNAL_STEPS). */
interface JournalEntry {
  step: number;
  checkpoint: string;
  /** The finished URL's frontier row, removed at the merge. */
  seq: number | null;
  /** Its `seen` row: fingerprint and owner (for fingerprints without a queue position), AOPIC history and key. */
  fp: bigint | null;
  owner: bigint | null;
  history: number | null;
  key: number | null;
  /** Host whose fetched count grows by one. */
  host: string | null;
  /** Content hashes first seen by the step, with their URLs. */
  content: [hash: string, url: string][];
  /** What the step taught the trap detectors (JSON), replayed by a resumed crawl. */
  quality: string | null;
}

/** A claimed URL waiting for the sorted merge: its owner and, when queued, its frontier row. */
interface RecentClaim {
  owner: Fingerprint | null;
  seq: number | null;
}

export class CrawlDb {
  readonly #db: DatabaseSync;
  readonly #stmt: Statements;
  /** Claimed, committed with their frontier rows, not yet merged into `seen`. */
  readonly #recent = new Map<Fingerprint, RecentClaim>();
  /** Committed steps not yet merged from the journal, oldest first, and what reads need of them. */
  readonly #journal: JournalEntry[] = [];
  readonly #journalContent = new Map<bigint, string>();
  #journalStep: number;
  #inTransaction = false;
  /** Set by a merge inside the running transaction: the journal is emptied once it commits. */
  #mergedJournal = false;
  #seq: number;
  #frontSeq: number;
  /** How new frontier rows are valued; set by the crawl's order once its ledger is loaded. */
  prioritize: Prioritize;

  constructor(path: string, options: { prioritize?: Prioritize } = {}) {
    this.prioritize = options.prioritize ?? breadthFirst;
    this.#db = openSqlite(path, SCHEMA);
    const columnsOf = (table: string) =>
      (this.#db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string }[]).map(
        (c) => `${c.name}:${c.type}`,
      );
    if (
      !columnsOf('frontier').includes('cash:REAL') ||
      !columnsOf('seen').includes('seq:INTEGER') ||
      columnsOf('content')[0] !== 'hash:INTEGER'
    ) {
      this.#db.close();
      throw new CrawlDbVersionError(
        `${path} was written by an older crawlstack; start the crawl in a new --out folder`,
      );
    }
    // Journals written before they held the finished row's queue position.
    if (!columnsOf('journal').includes('seq:INTEGER'))
      this.#db.exec('ALTER TABLE journal ADD COLUMN seq INTEGER');
    if (!columnsOf('journal').includes('quality:TEXT'))
      this.#db.exec('ALTER TABLE journal ADD COLUMN quality TEXT');
    this.#db.exec('CREATE TEMP TABLE frontier_done (seq INTEGER PRIMARY KEY)');
    this.#stmt = prepareStatements(this.#db);
    // Fingerprints and owners are full 64-bit values: read them as bigint, not as lossy numbers.
    for (const name of ['seenRow', 'rowBySeq', 'journalAfter'] as const)
      this.#stmt[name].setReadBigInts(true);
    // Queued fingerprints that a crash kept from being merged: put them in the seen set now.
    this.#db.exec(
      'INSERT INTO seen (fp, owner, seq) SELECT fp, owner, seq FROM frontier WHERE true ORDER BY fp ' +
        'ON CONFLICT (fp) DO UPDATE SET seq = excluded.seq WHERE seen.seq IS NULL AND seen.key IS NULL',
    );
    const bounds = this.#stmt.seqBounds.get() as { hi: number; lo: number };
    this.#seq = Math.max(0, bounds.hi);
    this.#frontSeq = Math.min(0, bounds.lo);
    this.#journalStep = this.#recoverJournal();
  }

  /** The open connection, for tables kept beside the crawl's (the near-duplicate index). */
  get database(): DatabaseSync {
    return this.#db;
  }

  getMeta<T>(key: string): T | undefined {
    // The latest checkpoint may still be in the journal.
    this.#mergeJournal();
    const row = this.#stmt.getMeta.get(key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  setMeta(key: string, value: unknown): void {
    // A later merge must not put an older journalled checkpoint over this one.
    this.#mergeJournal();
    this.#stmt.setMeta.run(key, JSON.stringify(value));
  }

  /** True when the URL has a row in the frontier that no finished step removed. */
  isQueued(fp: Fingerprint): boolean {
    const seq = this.#claimOf(fp)?.seq;
    if (seq === null || seq === undefined) return false;
    const row = this.#stmt.rowBySeq.get(seq) as { fp: bigint } | undefined;
    return row !== undefined && row.fp === fpToInt(fp) && this.#stmt.isDone.get(seq) === undefined;
  }

  seenHas(fp: Fingerprint): boolean {
    return this.#claimOf(fp) !== undefined;
  }

  /**
   * The owner recorded with a seen fingerprint: its fingerprint, `null` for rows written without
   * one, `undefined` when the fingerprint is not seen.
   */
  seenOwner(fp: Fingerprint): Fingerprint | null | undefined {
    return this.#claimOf(fp)?.owner;
  }

  seenCount(): number {
    this.#mergeJournal();
    this.#merge();
    return (this.#stmt.seenCount.get() as { n: number }).n;
  }

  contentOwner(hash: string): string | undefined {
    const key = hashKey(hash);
    // A row in `content` is older than any journalled claim of the same hash.
    const row = this.#stmt.contentGet.get(key) as { url: string } | undefined;
    return row?.url ?? this.#journalContent.get(key);
  }

  robots(origin: string): RobotsEntry | undefined {
    const row = this.#stmt.robotsGet.get(origin) as { entry: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.entry) as RobotsEntry);
  }

  putRobots(origin: string, entry: RobotsEntry): void {
    this.#stmt.robotsPut.run(origin, JSON.stringify(entry));
  }

  /**
   * The next task of a host (highest priority, then oldest), without removing it; `taken` is the
   * queue position of a row a running step already holds, which is passed over.
   */
  head(host: string, taken?: number): QueuedTask | undefined {
    return queuedTask(
      taken === undefined ? this.#stmt.head.get(host) : this.#stmt.headTaken.get(host, taken),
    );
  }

  /**
   * The host's best task the site itself declared: a sitemap file, or a page a sitemap lists
   * (`listed`), passing over the row `taken`. What a host whose best URL waits for a dry frontier
   * can still send (see EmbeddedCrawler's dispatch).
   */
  headDeclared(host: string, taken?: number): QueuedTask | undefined {
    return queuedTask(this.#stmt.headDeclared.get(host, taken ?? -1));
  }

  /**
   * Adds AOPIC credits to the cash of queued rows (and to their priority too when `byCash`, the
   * AOPIC order) and to the cash key of fetched pages. Applied in key order, in one transaction,
   * so each B-tree page is touched once however many credits there are. A queued row an
   * `ordinary` link credited is no longer a generator's URL only: its `generated` mark goes.
   */
  credit(
    credits: ReadonlyMap<Fingerprint, number>,
    byCash: boolean,
    ordinary: ReadonlySet<Fingerprint>,
  ): void {
    if (credits.size === 0) return;
    const queued: [number, number, number][] = [];
    const fetched: [bigint, number][] = [];
    for (const [fp, amount] of credits) {
      const seq = this.#claimOf(fp)?.seq;
      if (seq !== undefined && seq !== null) queued.push([seq, amount, ordinary.has(fp) ? 1 : 0]);
      fetched.push([fpToInt(fp), amount]);
    }
    queued.sort((a, b) => a[0] - b[0]);
    fetched.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.#transaction(() => {
      // Journalled pages get their `seen` rows first, so that their cash keys are credited too.
      this.#mergeJournal();
      for (const [seq, amount, linked] of queued)
        this.#stmt.creditQueued.run(amount, byCash ? 1 : 0, seq, linked);
      for (const [fp, amount] of fetched) this.#stmt.creditSeen.run(amount, fp);
    });
  }

  /** A fetched page's AOPIC history and cash key, if it has them. */
  pageCash(fp: Fingerprint): { history: number; key: number } | undefined {
    this.#mergeJournal();
    const row = this.#stmt.pageCash.get(fpToInt(fp)) as
      | { history: number | null; key: number | null }
      | undefined;
    if (row === undefined || row.history === null || row.key === null) return undefined;
    return { history: row.history, key: row.key };
  }

  /**
   * What committed steps taught the trap detectors since their state was last saved, oldest
   * first: each step's `StepWrite.quality`.
   */
  qualityLog(): unknown[][] {
    this.#mergeJournal();
    const steps: unknown[][] = [];
    for (const row of this.#stmt.qualityRows.iterate() as Iterable<{ events: string }>) {
      for (const step of JSON.parse(row.events) as unknown[][]) steps.push(step);
    }
    return steps;
  }

  /**
   * Saves the detectors' state, which covers every step committed so far, and drops their logged
   * lessons, in one transaction; `alsoWrite` runs inside it (the near-duplicate index's merge).
   */
  saveQuality(snapshot: unknown, alsoWrite: () => void = () => {}): void {
    this.#transaction(() => {
      this.#mergeJournal();
      this.#stmt.setMeta.run('quality', JSON.stringify(snapshot));
      this.#stmt.qualityClear.run();
      alsoWrite();
    });
  }

  /** URLs that failed for each of these reasons (see `StepWrite.failed`). */
  failedCounts(reasons: Iterable<string>): Map<string, number> {
    const counts = new Map<string, number>();
    for (const reason of reasons) {
      const n = (this.#stmt.failedCount.get(reason) as { n: number }).n;
      if (n > 0) counts.set(reason, n);
    }
    return counts;
  }

  /**
   * Queues again, as new tasks (first attempt, the cash `cashOf` gives back), the URLs that failed
   * for these reasons, forgets the robots.txt entries that were failures (disallow-all: 5xx,
   * unreachable, refused address) so that they are fetched again, and writes the checkpoint (read
   * after the cash moved), in one transaction. Returns the tasks queued.
   */
  requeueFailed(
    reasons: Iterable<string>,
    cashOf: (failed: CrawlTask) => number,
    checkpoint: () => unknown,
  ): CrawlTask[] {
    const s = this.#stmt;
    const tasks: CrawlTask[] = [];
    this.#transaction(() => {
      this.#mergeJournal();
      for (const reason of reasons) {
        for (const row of s.failedOf.all(reason) as { task: string }[]) {
          const failed = JSON.parse(row.task) as CrawlTask;
          tasks.push({ ...failed, attempt: 0, cash: cashOf(failed) });
        }
        s.failedDelete.run(reason);
      }
      for (const task of tasks) {
        const seq = ++this.#seq;
        this.#push(task, seq, null, false);
        // The URL stays seen; its queue position is how AOPIC credits find it.
        s.seenQueued.run(seq, fpToInt(task.fp));
        const recent = this.#recent.get(task.fp);
        if (recent !== undefined) recent.seq = seq;
      }
      if (tasks.length > 0) s.robotsForget.run('%"status":"disallow-all"%');
      s.setMeta.run('checkpoint', JSON.stringify(checkpoint()));
    });
    return tasks;
  }

  /** Queued task counts per host (to rebuild the scheduler after a restart). */
  hostCounts(): Map<string, number> {
    return this.#countsByHost(this.#stmt.hostCounts);
  }

  /** Pages requested per host so far (the per-host budget survives a restart). */
  hostFetchedCounts(): Map<string, number> {
    return this.#countsByHost(this.#stmt.hostsFetched);
  }

  /** The rows `(host, n)` of a per-host count, the committed steps merged first. */
  #countsByHost(statement: StatementSync): Map<string, number> {
    this.#mergeJournal();
    const counts = new Map<string, number>();
    for (const row of statement.iterate() as Iterable<{ host: string; n: number }>)
      counts.set(row.host, row.n);
    return counts;
  }

  frontierSize(): number {
    this.#mergeJournal();
    return (this.#stmt.frontierCount.get() as { n: number }).n;
  }

  /**
   * Seeds a fresh crawl: claims and queues the seed tasks in one transaction. `known`: URLs that
   * enter the seen set without being queued (a recrawl's pages left out of its round: a link to
   * one is credited, not queued).
   */
  seed(tasks: readonly CrawlTask[], checkpoint: unknown, known: readonly Fingerprint[] = []): void {
    this.commit({
      claimed: [...tasks.map((t) => t.fp), ...known],
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
    const owner = write.claimOwner ?? null;
    const queued = new Map<Fingerprint, number>();
    const entry: JournalEntry = {
      step: this.#journalStep + 1,
      checkpoint: JSON.stringify(write.checkpoint),
      seq: null,
      fp: null,
      owner: null,
      history: null,
      key: null,
      host: write.hostFetched ?? null,
      content: write.contentHashes.map(({ hash, url }) => [hash, url]),
      quality:
        write.quality === undefined || write.quality.length === 0 ? null : JSON.stringify(write.quality),
    };
    try {
      this.#transaction(() => {
        for (const task of write.enqueue) {
          const seq = write.front ? --this.#frontSeq : ++this.#seq;
          this.#push(task, seq, owner, write.front === true);
          queued.set(task.fp, seq);
        }
        // A claim without a frontier row has nothing to recover it from: it goes to `seen` now.
        const ownerInt = owner === null ? null : fpToInt(owner);
        for (const fp of write.claimed) if (!queued.has(fp)) s.seenAdd.run(fpToInt(fp), ownerInt, null);
        this.#writeStep(write, entry);
        this.#journal.push(entry);
        this.#journalStep = entry.step;
        // Before its slot comes round again.
        if (this.#journal.length >= JOURNAL_STEPS) this.#mergeJournal();
      });
    } catch (error) {
      if (this.#journal.at(-1) === entry) {
        this.#journal.pop();
        this.#journalStep = entry.step - 1;
      }
      throw error;
    }
    if (this.#journal.at(-1) === entry) {
      for (const [hash, url] of entry.content) {
        const key = hashKey(hash);
        if (!this.#journalContent.has(key)) this.#journalContent.set(key, url);
      }
    }
    for (const [fp, seq] of queued) this.#recent.set(fp, { owner, seq });
    const finished = write.finished;
    if (entry.seq !== null && finished !== undefined) {
      const claim = this.#recent.get(typeof finished === 'string' ? finished : finished.fp);
      if (claim !== undefined) claim.seq = null;
    }
    if (this.#recent.size >= MERGE_BATCH) this.#merge();
  }

  /** The finished or retried row and the journal row of one step (inside its transaction). */
  #writeStep(write: StepWrite, entry: JournalEntry): void {
    const s = this.#stmt;
    if (write.finished !== undefined) {
      // A finished URL leaves the queue (at the merge; `head` passes over it until then); the
      // seen set keeps it, with its AOPIC history.
      const seq = this.#seqOf(write.finished);
      if (seq !== undefined) {
        entry.seq = seq;
        if (write.finishedCash !== undefined) {
          entry.history = write.finishedCash.history;
          entry.key = write.finishedCash.key;
        }
        s.done.run(seq);
      }
    }
    if (write.retried !== undefined) {
      const row = this.#row(write.retried);
      if (row !== undefined) {
        const { seq: _seq, prio: _prio, cashKey: _cashKey, ...task } = write.retried as QueuedTask;
        s.rewrite.run(JSON.stringify(task), row.seq);
      }
    }
    if (write.failed !== undefined) {
      const { task, reason } = write.failed;
      s.failedPut.run(fpToInt(task.fp), reason, JSON.stringify(task));
    }
    for (const [origin, robots] of write.robots ?? []) s.robotsPut.run(origin, JSON.stringify(robots));
    s.journalPut.run(
      entry.step % JOURNAL_STEPS,
      entry.step,
      entry.checkpoint,
      entry.seq,
      entry.fp,
      entry.owner,
      entry.history,
      entry.key,
      entry.host,
      entry.content.length === 0 ? null : JSON.stringify(entry.content),
      entry.quality,
    );
  }

  close(): void {
    this.#mergeJournal();
    this.#merge();
    this.#db.close();
  }

  /**
   * Closes the connection without merging what waits in memory (after a storage failure: the
   * committed steps are in the journal and the frontier, and opening the file again recovers them).
   */
  abandon(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  /** The claim of a fingerprint: in memory waiting for the merge, or in `seen`. */
  #claimOf(fp: Fingerprint): RecentClaim | undefined {
    const recent = this.#recent.get(fp);
    if (recent !== undefined) return recent;
    const row = this.#stmt.seenRow.get(fpToInt(fp)) as
      | { owner: bigint | null; seq: bigint | null }
      | undefined;
    if (row === undefined) return undefined;
    return {
      owner: row.owner === null ? null : intToFp(row.owner),
      seq: row.seq === null ? null : Number(row.seq),
    };
  }

  #push(task: CrawlTask, seq: number, owner: Fingerprint | null, front: boolean): void {
    const ownerInt = owner === null ? null : fpToInt(owner);
    const { prio, cashKey } = this.prioritize(task, seq, front);
    this.#stmt.push.run(seq, task.host, fpToInt(task.fp), ownerInt, prio, cashKey, JSON.stringify(task));
  }

  /** The frontier row of a queued task: by its queue position when known, else through `seen`. */
  /** The queue position of a task: the row `head` returned, or the latest row queued for a fingerprint. */
  #seqOf(task: CrawlTask | QueuedTask | Fingerprint): number | undefined {
    const seq =
      typeof task !== 'string' && 'seq' in task
        ? task.seq
        : this.#claimOf(typeof task === 'string' ? task : task.fp)?.seq;
    return seq === null ? undefined : seq;
  }

  #row(
    task: CrawlTask | QueuedTask | Fingerprint,
  ): { seq: number; fp: bigint; owner: bigint | null } | undefined {
    const seq = this.#seqOf(task);
    if (seq === undefined) return undefined;
    const row = this.#stmt.rowBySeq.get(seq) as { seq: bigint; fp: bigint; owner: bigint | null } | undefined;
    return row === undefined ? undefined : { seq: Number(row.seq), fp: row.fp, owner: row.owner };
  }

  /** Moves the recent claims into `seen`, in key order. */
  #merge(): void {
    if (this.#recent.size === 0) return;
    const rows = [...this.#recent].map(
      ([fp, claim]) => [fpToInt(fp), claim.owner === null ? null : fpToInt(claim.owner), claim.seq] as const,
    );
    rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.#transaction(() => {
      for (const [fp, owner, seq] of rows) this.#stmt.seenAdd.run(fp, owner, seq);
    });
    this.#recent.clear();
  }

  /**
   * Applies the journalled steps to `seen`, `content`, `hosts` and the checkpoint, in key order,
   * inside the current transaction or a new one. A failed transaction leaves them journalled.
   */
  #mergeJournal(): void {
    const entries = this.#journal;
    const last = entries.at(-1);
    if (last === undefined) return;
    if (!this.#inTransaction) {
      this.#transaction(() => this.#mergeJournal());
      return;
    }
    const s = this.#stmt;
    // The finished rows, read and removed in queue order (neighbouring pages), then filed in
    // `seen` in key order. Stable sort: of two rows for one key, the later step writes last.
    const finished: (JournalEntry & { seq: number })[] = [];
    for (const e of entries) if (e.seq !== null) finished.push({ ...e, seq: e.seq });
    finished.sort((a, b) => a.seq - b.seq);
    const filed: (JournalEntry & { fp: bigint })[] = [];
    for (const e of finished) {
      const row = s.rowBySeq.get(e.seq) as { fp: bigint; owner: bigint | null } | undefined;
      if (row === undefined) continue;
      filed.push({ ...e, fp: row.fp, owner: row.owner });
      s.remove.run(e.seq);
    }
    s.doneClear.run();
    filed.sort((a, b) => a.step - b.step);
    filed.sort((a, b) => (a.fp < b.fp ? -1 : a.fp > b.fp ? 1 : 0));
    for (const e of filed) {
      if (e.history === null || e.key === null) s.seenAdd.run(e.fp, e.owner, null);
      else s.seenFinished.run(e.fp, e.owner, e.history, e.key);
    }
    const content: [bigint, string][] = [];
    for (const e of entries) for (const [hash, url] of e.content) content.push([hashKey(hash), url]);
    // INSERT OR IGNORE keeps the first URL of a hash, so steps stay in order within a key.
    content.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [key, url] of content) s.contentAdd.run(key, url);
    const hosts = new Map<string, number>();
    for (const e of entries) if (e.host !== null) hosts.set(e.host, (hosts.get(e.host) ?? 0) + 1);
    for (const [host, n] of hosts) s.hostFetchedBy.run(host, n);
    const events = entries.flatMap((e) => (e.quality === null ? [] : [e.quality]));
    if (events.length > 0) s.qualityAppend.run(`[${events.join(',')}]`);
    s.setMeta.run('checkpoint', last.checkpoint);
    s.setMeta.run('journal', JSON.stringify({ merged: last.step }));
    // Cleared only once the merge commits (see #transaction).
    this.#mergedJournal = true;
  }

  /** Loads the steps a crash left in the journal and merges them; returns the last step. */
  #recoverJournal(): number {
    const merged = this.#metaValue<{ merged: number }>('journal')?.merged ?? 0;
    type Row = {
      step: bigint;
      checkpoint: string;
      seq: bigint | null;
      fp: bigint | null;
      owner: bigint | null;
      history: number | null;
      key: number | null;
      host: string | null;
      content: string | null;
      quality: string | null;
    };
    for (const row of this.#stmt.journalAfter.iterate(merged) as Iterable<Row>) {
      this.#journal.push({
        step: Number(row.step),
        checkpoint: row.checkpoint,
        seq: row.seq === null ? null : Number(row.seq),
        fp: row.fp,
        owner: row.owner,
        history: row.history,
        key: row.key,
        host: row.host,
        content: row.content === null ? [] : (JSON.parse(row.content) as [string, string][]),
        quality: row.quality,
      });
    }
    const last = Math.max(merged, (this.#stmt.journalMax.get() as { step: number }).step);
    this.#mergeJournal();
    return last;
  }

  #metaValue<T>(key: string): T | undefined {
    const row = this.#stmt.getMeta.get(key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  #transaction<T>(work: () => T): T {
    const s = this.#stmt;
    s.begin.run();
    this.#inTransaction = true;
    try {
      const result = work();
      s.commit.run();
      if (this.#mergedJournal) {
        this.#journal.length = 0;
        this.#journalContent.clear();
      }
      return result;
    } catch (error) {
      // SQLite rolls back by itself after some errors (SQLITE_FULL, SQLITE_IOERR): a ROLLBACK then
      // fails with "no transaction is active", which must not hide the error that caused it.
      if (this.#db.isTransaction) {
        try {
          s.rollback.run();
        } catch {
          // the original error says more
        }
      }
      throw error;
    } finally {
      this.#inTransaction = false;
      this.#mergedJournal = false;
    }
  }
}

/**
 * A content hash as a 64-bit key: the first 8 bytes of a hex digest (SHA-256 from
 * `contentHash`; collisions ~1e-8 at a million pages), or the fingerprint of any other string.
 */
function hashKey(hash: string): bigint {
  return HEX_DIGEST.test(hash)
    ? BigInt.asIntN(64, BigInt(`0x${hash.slice(0, 16)}`))
    : fpToInt(fingerprint(hash));
}

const HEX_DIGEST = /^[0-9a-f]{16}/;

function intToFp(value: bigint): Fingerprint {
  return BigInt.asUintN(64, value).toString(16).padStart(16, '0');
}

/** A frontier row (seq, prio, cash, task) as the queued task it holds; undefined for no row. */
function queuedTask(row: unknown): QueuedTask | undefined {
  if (row === undefined) return undefined;
  const { seq, prio, cash, task } = row as { seq: number; prio: number; cash: number; task: string };
  return { ...(JSON.parse(task) as CrawlTask), seq, prio, cashKey: cash };
}

/** The statements of one connection, prepared once: exec() would parse them again on every step. */
function prepareStatements(db: DatabaseSync) {
  return {
    getMeta: db.prepare('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    seenRow: db.prepare('SELECT owner, seq FROM seen WHERE fp = ?'),
    seenAdd: db.prepare('INSERT OR IGNORE INTO seen (fp, owner, seq) VALUES (?, ?, ?)'),
    seenCount: db.prepare('SELECT count(*) AS n FROM seen'),
    seenFinished: db.prepare(
      'INSERT INTO seen (fp, owner, history, key) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (fp) DO UPDATE SET history = excluded.history, key = excluded.key',
    ),
    push: db.prepare(
      'INSERT INTO frontier (seq, host, fp, owner, prio, cash, task) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    // Rows finished since the last merge are still here, listed in temp.frontier_done.
    head: db.prepare(
      'SELECT seq, prio, cash, task FROM frontier WHERE host = ? ' +
        'AND seq NOT IN (SELECT seq FROM frontier_done) ORDER BY prio DESC, seq LIMIT 1',
    ),
    headTaken: db.prepare(
      'SELECT seq, prio, cash, task FROM frontier WHERE host = ? AND seq != ? ' +
        'AND seq NOT IN (SELECT seq FROM frontier_done) ORDER BY prio DESC, seq LIMIT 1',
    ),
    // Through the partial index frontier_site_declared_by_host (the same WHERE term, so SQLite uses it).
    headDeclared: db.prepare(
      'SELECT seq, prio, cash, task FROM frontier WHERE host = ? ' +
        "AND (json_extract(task, '$.listed') = 1 OR json_extract(task, '$.sitemap') IS NOT NULL) " +
        'AND seq != ? AND seq NOT IN (SELECT seq FROM frontier_done) ORDER BY prio DESC, seq LIMIT 1',
    ),
    done: db.prepare('INSERT OR IGNORE INTO frontier_done (seq) VALUES (?)'),
    doneClear: db.prepare('DELETE FROM frontier_done'),
    isDone: db.prepare('SELECT 1 AS done FROM frontier_done WHERE seq = ?'),
    rowBySeq: db.prepare('SELECT seq, fp, owner FROM frontier WHERE seq = ?'),
    remove: db.prepare('DELETE FROM frontier WHERE seq = ?'),
    rewrite: db.prepare('UPDATE frontier SET task = ? WHERE seq = ?'),
    creditQueued: db.prepare(
      'UPDATE frontier SET cash = cash + ?1, prio = prio + ?1 * ?2, ' +
        "task = CASE WHEN ?4 = 1 AND json_extract(task, '$.generated') = 1 " +
        "THEN json_remove(task, '$.generated') ELSE task END WHERE seq = ?3",
    ),
    creditSeen: db.prepare('UPDATE seen SET key = key + ? WHERE fp = ? AND key IS NOT NULL'),
    pageCash: db.prepare('SELECT history, key FROM seen WHERE fp = ?'),
    hostCounts: db.prepare('SELECT host, count(*) AS n FROM frontier GROUP BY host'),
    frontierCount: db.prepare('SELECT count(*) AS n FROM frontier'),
    seqBounds: db.prepare('SELECT coalesce(max(seq), 0) AS hi, coalesce(min(seq), 0) AS lo FROM frontier'),
    contentGet: db.prepare('SELECT url FROM content WHERE hash = ?'),
    contentAdd: db.prepare('INSERT OR IGNORE INTO content (hash, url) VALUES (?, ?)'),
    hostsFetched: db.prepare('SELECT host, fetched AS n FROM hosts'),
    robotsGet: db.prepare('SELECT entry FROM robots WHERE origin = ?'),
    qualityAppend: db.prepare('INSERT INTO quality_log (events) VALUES (?)'),
    qualityRows: db.prepare('SELECT events FROM quality_log ORDER BY id'),
    qualityClear: db.prepare('DELETE FROM quality_log'),
    failedPut: db.prepare('INSERT OR REPLACE INTO failed (fp, reason, task) VALUES (?, ?, ?)'),
    failedCount: db.prepare('SELECT count(*) AS n FROM failed WHERE reason = ?'),
    failedOf: db.prepare('SELECT task FROM failed WHERE reason = ?'),
    failedDelete: db.prepare('DELETE FROM failed WHERE reason = ?'),
    seenQueued: db.prepare('UPDATE seen SET seq = ? WHERE fp = ?'),
    robotsForget: db.prepare('DELETE FROM robots WHERE entry LIKE ?'),
    robotsPut: db.prepare(
      'INSERT INTO robots (origin, entry) VALUES (?, ?) ON CONFLICT (origin) DO UPDATE SET entry = excluded.entry',
    ),
    hostFetchedBy: db.prepare(
      'INSERT INTO hosts (host, fetched) VALUES (?1, ?2) ON CONFLICT (host) DO UPDATE SET fetched = fetched + ?2',
    ),
    journalPut: db.prepare(
      'INSERT OR REPLACE INTO journal (slot, step, checkpoint, seq, fp, owner, history, key, host, content, quality) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    journalAfter: db.prepare(
      'SELECT step, checkpoint, seq, fp, owner, history, key, host, content, quality FROM journal WHERE step > ? ORDER BY step',
    ),
    journalMax: db.prepare('SELECT coalesce(max(step), 0) AS step FROM journal'),
    // Prepared once: exec() would parse them again on every step.
    begin: db.prepare('BEGIN'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
  };
}

type Statements = ReturnType<typeof prepareStatements>;
