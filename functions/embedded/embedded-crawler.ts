/**
 * The embedded crawler: the shared crawl step (`crawlPage`) driven by a per-host scheduler over
 * local adapters, with all state under one output folder so that an interrupted crawl (Ctrl-C or
 * kill -9) continues when the same command runs again.
 *
 * Layout of `outDir`: state.sqlite (seen set, frontier, checkpoints), pages.jsonl, links.jsonl,
 * warc/*.warc.gz + warc/index.cdxj, summary.json.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { UndiciFetcher } from '../adapters/http/undici-fetcher.ts';
import { breadthFirst, CrawlDb, type Prioritize, type QueuedTask } from '../adapters/local/crawl-db.ts';
import { LocalNearDuplicateIndex } from '../adapters/local/local-near-duplicate-index.ts';
import { PendingClaims, StepUnit } from '../adapters/local/step-unit.ts';
import { LocalWarcPageStore, type WarcPosition } from '../adapters/local/warc-page-store.ts';
import { AopicLedger, type AopicState } from '../core/aopic.ts';
import { encodeTrace } from '../core/cache-study/url-seen-trace.ts';
import { ClockCache } from '../core/clock-cache.ts';
import type { CrawlConfig } from '../core/config.ts';
import {
  type CrawlPageOptions,
  type CrawlPageOutcome,
  crawlPage,
  type FetchedPage,
  type RequestFeedback,
  SEED_OWNER,
  seedTasks,
} from '../core/crawl-page.ts';
import { isErrorReason, unfetchedRecord } from '../core/page-record.ts';
import { hostGapMs } from '../core/politeness.ts';
import { CrawlQuality, type QualitySnapshot } from '../core/quality/crawl-quality.ts';
import type { TrapFinding } from '../core/quality/trap-findings.ts';
import type { CrawlTask } from '../core/types.ts';
import { UrlCanonicalizer } from '../core/url/canonicalize.ts';
import { ScopeRules } from '../core/url/scope.ts';
import { UrlSeen, type UrlSeenStats } from '../core/url-seen.ts';
import type { Clock, Fetcher, RobotsCache, RobotsEntry } from '../ports.ts';
import { AppendOnlyFile } from './append-only-file.ts';
import { HostScheduler, type HostSlot, hasWaitingTask, newHostSlot } from './host-heap.ts';
import { JsonlFile } from './jsonl-file.ts';

/** Persistent counters (they survive restarts through the checkpoint). */
export interface CrawlCounters {
  /** URLs finished with an HTTP response. */
  pages: number;
  /** URLs finished without one (skips, network failures). */
  skipped: number;
  byStatus: Record<string, number>;
  byReason: Record<string, number>;
  bytes: number;
  /** Every request made, robots.txt and retries included. */
  requests: number;
  retries: number;
  duplicates: number;
  /** URLs claimed as new (seeds included). */
  discovered: number;
  seen: UrlSeenStats;
  /** Out-links not followed, by reason (scope, max-depth, calendar, link-generator, ...). */
  linksSkipped: Record<string, number>;
  /** Wall time spent crawling over all runs. */
  elapsedMs: number;
}

interface Checkpoint {
  pagesSize: number;
  linksSize: number;
  warc: WarcPosition | null;
  counters: CrawlCounters;
  /** Hosts that seeds redirected to: they joined the scope, and must stay in it after a restart. */
  scopeHosts?: string[];
  /** AOPIC ledger: the lambda page, the redistribution bonus, totals. */
  aopic?: AopicState;
  /** Committed size of url-seen.trace. */
  traceSize?: number;
  /** Committed size of dataset.jsonl. */
  datasetSize?: number;
}

export type CrawlEndState = 'done' | 'max-pages' | 'stopped' | 'interrupted';

export interface CrawlSummary {
  state: CrawlEndState;
  /** Why the crawl stopped early (e.g. the hunt found its keyword). */
  stopReason?: string;
  resumed: boolean;
  seeds: string[];
  outDir: string;
  startedAt: string;
  finishedAt: string;
  /** This run only. */
  durationMs: number;
  /** All runs of this crawl. */
  totalDurationMs: number;
  pages: number;
  skipped: number;
  byStatus: Record<string, number>;
  byReason: Record<string, number>;
  bytes: number;
  hosts: number;
  requests: number;
  retries: number;
  duplicates: number;
  discovered: number;
  queued: number;
  pagesPerSecond: number;
  urlSeen: UrlSeenStats & { hitRate: number };
  peakRssBytes: number;
  cpuMs: number;
  order: 'aopic' | 'bfs';
  linksSkipped: Record<string, number>;
  /** URL patterns the trap detectors caught (also written to traps.json). */
  traps: TrapFinding[];
}

/** A live view for progress lines. */
export interface CrawlProgress {
  pages: number;
  skipped: number;
  errors: number;
  queued: number;
  running: number;
  hosts: number;
  elapsedMs: number;
  bytes: number;
}

export interface EmbeddedCrawlerOptions {
  config: CrawlConfig;
  outDir: string;
  fetcher?: Fetcher;
  clock?: Clock;
  random?: () => number;
  /** Write WARC files (default true). */
  warc?: boolean;
  /** Called for each fetched page; return true to stop the crawl (the `hunt` command). */
  onPage?: (page: FetchedPage) => boolean | undefined;
  /** Extract visible text for onPage. */
  wantText?: boolean;
  /** Human log lines (errors, state changes). */
  log?: (line: string) => void;
}

/** The output folder holds another crawl than the one asked for. */
export class CrawlStateMismatchError extends Error {
  readonly code = 'CRAWL_STATE_MISMATCH';
}

const systemClock: Clock = { now: () => Date.now() };
/** A URL with less than this share of the recent average cash waits while better ones run. */
const HOLD_BACK_SHARE = 0.5;

export class EmbeddedCrawler {
  readonly #config: CrawlConfig;
  readonly #outDir: string;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #options: EmbeddedCrawlerOptions;
  readonly #log: (line: string) => void;
  #db!: CrawlDb;
  #fetcher!: Fetcher;
  #ownsFetcher = false;
  #warc: LocalWarcPageStore | undefined;
  #pagesFile!: JsonlFile;
  #linksFile!: JsonlFile;
  /** The URL-seen trace: 8 bytes per look-up, appended with each step's commit. */
  #traceFile: AppendOnlyFile | undefined;
  /** Rows of the `extract` fields, one per page they were pulled from (crawls with fields only). */
  #datasetFile: JsonlFile | undefined;
  #counters!: CrawlCounters;
  #canonicalizer!: UrlCanonicalizer;
  #scope!: ScopeRules;
  #cache!: ClockCache;
  #robots!: RobotsCache;
  readonly #pending = new PendingClaims();
  readonly #hosts = new Map<string, HostSlot>();
  readonly #scheduler = new HostScheduler();
  #ledger!: AopicLedger;
  #quality!: CrawlQuality;
  #nearIndex: LocalNearDuplicateIndex | undefined;
  /** AOPIC credits for known URLs, applied to the database in sorted batches. */
  readonly #credits = new Map<string, number>();
  #lastRedistribution = 0;
  /** Moving average of the cash of the URLs dispatched (see #holdBack). */
  #cashAverage = 0;
  #lastFlush = 0;
  /**
   * The head task the last offer read, for the dispatch that usually follows at once (so it is
   * not read twice). One entry: a cache per host would hold a task for every waiting host.
   */
  #offered: { slot: HostSlot; head: QueuedTask | undefined } | undefined;
  #stepsSinceSave = 0;
  readonly #running = new Set<Promise<void>>();
  readonly #scopeHosts = new Set<string>();
  #queued = 0;
  #stopping: { state: CrawlEndState; reason?: string } | undefined;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #runStartedAt = 0;
  #elapsedBefore = 0;

  constructor(options: EmbeddedCrawlerOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#outDir = options.outDir;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#log = options.log ?? (() => {});
  }

  /** Asks the crawl to stop: no new requests; running steps finish and commit. */
  stop(state: CrawlEndState = 'stopped', reason?: string): void {
    if (this.#stopping === undefined) this.#stopping = reason === undefined ? { state } : { state, reason };
    this.#wake?.();
  }

  /** Snapshot for progress lines. */
  progress(): CrawlProgress {
    const c = this.#counters;
    return {
      pages: c.pages,
      skipped: c.skipped,
      errors: countErrors(c),
      queued: this.#queued,
      running: this.#running.size,
      hosts: this.#hosts.size,
      elapsedMs: this.#elapsedBefore + (this.#clock.now() - this.#runStartedAt),
      bytes: c.bytes,
    };
  }

  async run(): Promise<CrawlSummary> {
    const cpuStart = process.cpuUsage();
    const startedAt = this.#clock.now();
    this.#runStartedAt = startedAt;
    const resumed = this.#open();
    let hosts: number;
    try {
      await this.#loop();
    } finally {
      await Promise.allSettled([...this.#running]);
      clearTimeout(this.#timer);
      hosts = this.#db.hostFetchedCounts().size;
      this.#closeResources();
      await this.#closeFetcher();
    }
    const cpu = process.cpuUsage(cpuStart);
    return this.#summary(resumed, startedAt, hosts, (cpu.user + cpu.system) / 1000);
  }

  // -------------------------------------------------------------------------------------------

  /** Opens or resumes the crawl state; returns true when resuming. */
  #open(): boolean {
    const config = this.#config;
    mkdirSync(this.#outDir, { recursive: true });
    // AOPIC serves the most cash first; the key is cash minus the ledger's bonus (see aopic.ts).
    const prioritize: Prioritize =
      config.order === 'aopic'
        ? (task) => {
            const key = this.#ledger.keyFor(task.cash);
            return { prio: key, cashKey: key };
          }
        : (task, seq, front) => ({
            ...breadthFirst(task, seq, front),
            cashKey: this.#ledger.keyFor(task.cash),
          });
    this.#db = new CrawlDb(join(this.#outDir, 'state.sqlite'), { prioritize });
    const identity = { seeds: config.seeds, scope: config.scope };
    const stored = this.#db.getMeta<{ seeds: string[]; scope: string; crawlId: string }>('crawl');
    const checkpoint = this.#db.getMeta<Checkpoint>('checkpoint');
    if (
      stored !== undefined &&
      JSON.stringify({ seeds: stored.seeds, scope: stored.scope }) !== JSON.stringify(identity)
    ) {
      this.#db.close();
      throw new CrawlStateMismatchError(
        `${this.#outDir} holds another crawl (seeds ${stored.seeds.join(' ')}, scope ${stored.scope}); ` +
          'choose another --out folder to start a new crawl, or run the same seeds and scope to resume it',
      );
    }
    this.#canonicalizer = new UrlCanonicalizer(config);
    this.#scope = new ScopeRules(config, this.#seedUrls());
    for (const host of checkpoint?.scopeHosts ?? []) {
      this.#scopeHosts.add(host);
      this.#scope.allowHost(host);
    }
    this.#cache = new ClockCache(config.seenCacheSize);
    this.#counters = { ...emptyCounters(), ...checkpoint?.counters };
    this.#ledger = new AopicLedger(checkpoint?.aopic);
    if (config.nearDuplicateDistance > 0) {
      this.#nearIndex = new LocalNearDuplicateIndex(this.#db.database, {
        k: config.nearDuplicateDistance,
      });
    }
    this.#quality = new CrawlQuality(
      config,
      { ...(this.#nearIndex ? { index: this.#nearIndex } : {}), random: this.#random },
      this.#db.getMeta<QualitySnapshot>('quality') ?? {},
    );
    this.#elapsedBefore = this.#counters.elapsedMs;
    this.#pagesFile = new JsonlFile(join(this.#outDir, 'pages.jsonl'), checkpoint?.pagesSize ?? 0);
    this.#linksFile = new JsonlFile(join(this.#outDir, 'links.jsonl'), checkpoint?.linksSize ?? 0);
    if (Object.keys(config.extract).length > 0) {
      this.#datasetFile = new JsonlFile(join(this.#outDir, 'dataset.jsonl'), checkpoint?.datasetSize ?? 0);
    }
    if (config.seenTrace) {
      this.#traceFile = new AppendOnlyFile(join(this.#outDir, 'url-seen.trace'), checkpoint?.traceSize ?? 0);
    }
    if (this.#options.warc !== false) {
      const warcOptions: Parameters<typeof LocalWarcPageStore.open>[1] = {
        warcinfo: { 'crawl-seeds': config.seeds.join(' '), 'user-agent': config.userAgent },
      };
      if (checkpoint?.warc) warcOptions.resumeAt = checkpoint.warc;
      this.#warc = LocalWarcPageStore.open(join(this.#outDir, 'warc'), warcOptions);
    }
    const db = this.#db;
    // Parsed rules are memoized per entry object, so recent entries stay in memory as objects.
    const recent = new LRUCache<string, RobotsEntry>({ max: 1024 });
    this.#robots = {
      get: async (origin) => {
        let entry = recent.get(origin);
        if (entry === undefined) {
          entry = db.robots(origin);
          if (entry !== undefined) recent.set(origin, entry);
        }
        return entry;
      },
      put: async (origin, entry) => {
        recent.set(origin, entry);
        db.putRobots(origin, entry);
      },
    };
    if (this.#options.fetcher) {
      this.#fetcher = this.#options.fetcher;
    } else {
      this.#fetcher = new UndiciFetcher(config);
      this.#ownsFetcher = true;
    }

    let crawlId = stored?.crawlId;
    if (crawlId === undefined) {
      crawlId = randomUUID();
      db.setMeta('crawl', { ...identity, crawlId });
      const { tasks } = seedTasks(crawlId, config.seeds, this.#canonicalizer);
      this.#counters.discovered += tasks.length;
      this.#ledger.discovered(tasks.length);
      db.seed(tasks, this.#checkpoint());
    }
    // Rebuild the scheduler from the frontier (a fresh crawl holds just the seeds).
    const fetched = db.hostFetchedCounts();
    const now = this.#clock.now();
    for (const [host, count] of db.hostCounts()) {
      const slot = this.#slot(host);
      slot.queued = count;
      slot.fetched = fetched.get(host) ?? 0;
      this.#queued += count;
      this.#offer(slot, now);
    }
    this.#lastRedistribution = now;
    this.#lastFlush = now;
    if (stored !== undefined) this.#log(`resuming crawl in ${this.#outDir}: ${this.#queued} URLs queued`);
    return stored !== undefined;
  }

  #seedUrls(): string[] {
    const urls: string[] = [];
    const canonicalizer = new UrlCanonicalizer(this.#config);
    for (const seed of this.#config.seeds) {
      const canonical = canonicalizer.canonicalize(seed);
      if (canonical.ok) urls.push(canonical.url);
    }
    return urls;
  }

  async #loop(): Promise<void> {
    for (;;) {
      if (this.#stopping === undefined) this.#dispatch();
      if (this.#running.size === 0) {
        if (this.#stopping !== undefined) return;
        if (!this.#scheduler.hasWork()) return; // nothing queued anywhere: done
        if (this.#budgetLeft() <= 0) {
          this.stop('max-pages');
          return;
        }
      }
      await this.#sleepUntilWork();
    }
  }

  #budgetLeft(): number {
    const max = this.#config.maxPages;
    return max === undefined ? Number.POSITIVE_INFINITY : max - this.#counters.pages - this.#running.size;
  }

  #dispatch(): void {
    const now = this.#clock.now();
    this.#maintain(now);
    // Hosts whose best URL is a generated one, set aside while other work runs (see #waitsForDry).
    const parked: HostSlot[] = [];
    try {
      this.#dispatchReady(now, parked);
    } finally {
      for (const slot of parked) this.#scheduler.offer(slot, now);
    }
  }

  #dispatchReady(now: number, parked: HostSlot[]): void {
    while (this.#running.size < this.#config.concurrency && this.#budgetLeft() > 0) {
      const slot = this.#scheduler.pop(now);
      if (slot === undefined) return;
      const offered = this.#offered;
      this.#offered = undefined;
      const head = offered?.slot === slot ? offered.head : this.#db.head(slot.host, slot.finishing);
      // The task's cash now: its share at discovery, the credits since, the lambda page's bonus.
      const task = head === undefined ? undefined : { ...head, cash: this.#ledger.cashOf(head.cashKey) };
      if (task === undefined) {
        // The count drifted (should not happen); trust the database.
        const drift = slot.queued - (slot.finishing === undefined ? 0 : 1);
        this.#queued -= drift;
        slot.queued -= drift;
        continue;
      }
      if (this.#waitsForDry(task)) {
        parked.push(slot);
        continue;
      }
      if (this.#holdBack(task.cash)) {
        // Better URLs are in flight: wait for their hosts rather than spend budget on this one.
        this.#scheduler.offer(slot, now);
        return;
      }
      slot.busy = true;
      const step = this.#step(slot, task).finally(() => {
        this.#running.delete(step);
        this.#wake?.();
      });
      this.#running.add(step);
    }
  }

  /**
   * With a page budget and AOPIC order, a URL a generator made (a link to its page's own path
   * pattern: the next month, the next listing page) waits while anything else runs, as the cloud
   * parks it. Its cash alone does not keep it back: the lambda page's redistribution gives every
   * known URL the same bonus, which late in a crawl outweighs a link's own share, and on a
   * generated web the second page of every trap was fetched that way (1.1% of the requests).
   */
  #waitsForDry(task: CrawlTask): boolean {
    return (
      task.generated === true &&
      this.#config.order === 'aopic' &&
      this.#config.maxPages !== undefined &&
      this.#running.size > 0
    );
  }

  /**
   * With a page budget and AOPIC order, a URL whose cash is far below what the crawl has been
   * fetching waits while other requests are in flight: greedy-by-cash within politeness would
   * otherwise fill every free slot from hosts that have nothing better left (on a generated web,
   * small hosts' traps took 9% of a 3,000-page budget at concurrency 16, 2% at concurrency 1).
   * When nothing is in flight it goes ahead, so the crawl always progresses.
   */
  #holdBack(cash: number): boolean {
    if (this.#config.order !== 'aopic' || this.#config.maxPages === undefined) return false;
    const average = this.#cashAverage;
    if (this.#running.size > 0 && cash < average * HOLD_BACK_SHARE) return true;
    // Only what is dispatched moves the average: a URL held back and looked at again on every
    // dispatch would otherwise drag it down until it passed.
    this.#cashAverage = average === 0 ? cash : average * 0.95 + cash * 0.05;
    return false;
  }

  /**
   * Periodic work between steps: AOPIC's lambda-page redistribution (O(1): a bonus every page
   * holds) and applying the credits that steps gave to already-known URLs.
   */
  #maintain(now: number): void {
    if (now - this.#lastRedistribution >= this.#config.redistributeEveryMs) {
      this.#ledger.redistribute();
      this.#lastRedistribution = now;
    }
    if (this.#credits.size >= 4096 || (this.#credits.size > 0 && now - this.#lastFlush >= 50)) {
      this.#flushCredits();
      this.#lastFlush = now;
    }
  }

  /** Applies pending credits; queued hosts re-read their heads when they are next offered. */
  #flushCredits(): void {
    this.#db.credit(this.#credits, this.#config.order === 'aopic');
    this.#credits.clear();
    // Credits change cash and priorities without an offer.
    this.#offered = undefined;
  }

  async #sleepUntilWork(): Promise<void> {
    const wakeAt = this.#scheduler.nextWakeAt();
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      if (
        wakeAt !== undefined &&
        this.#running.size < this.#config.concurrency &&
        this.#stopping === undefined
      ) {
        const delay = Math.max(0, wakeAt - this.#clock.now());
        this.#timer = setTimeout(resolve, delay);
      }
    });
    this.#wake = undefined;
    clearTimeout(this.#timer);
  }

  async #step(slot: HostSlot, task: QueuedTask): Promise<void> {
    const unit = new StepUnit(this.#db, this.#pending);
    let outcome: CrawlPageOutcome;
    // Set when the response is in and the host was handed to its next request (see #release).
    let released = false;
    const hostReleased = async (feedback: RequestFeedback) => {
      released = this.#release(slot, task, feedback);
      // Let the loop send the host's next request before this step's parsing takes the thread.
      if (released) await new Promise<void>((resolve) => setImmediate(resolve));
    };
    try {
      const blocked = slot.dead ?? (slot.fetched >= this.#config.maxPagesPerHost ? 'host-budget' : undefined);
      if (blocked !== undefined) {
        const record = unfetchedRecord(task, blocked);
        await unit.page(record);
        outcome = { kind: 'done', record, enqueued: [] };
      } else {
        outcome = await crawlPage(this.#deps(unit, hostReleased), task, this.#pageOptions());
      }
    } catch (error) {
      // A bug or a storage failure, not a network problem: record it and move on.
      this.#log(`error crawling ${task.url}: ${(error as Error).stack ?? error}`);
      unit.release();
      const retry = new StepUnit(this.#db, this.#pending);
      appendAll(retry.lookups, unit.lookups);
      const record = unfetchedRecord(task, 'internal-error');
      record.detail = (error as Error).message;
      await retry.page(record);
      this.#commit(slot, task, { kind: 'done', record, enqueued: [] }, retry, released);
      return;
    }
    this.#commit(slot, task, outcome, unit, released);
  }

  /**
   * The page's response is in: the host may take its next request after its gap, while this step
   * stores and parses the page (one request in flight per host still holds; the network wait of
   * the next request overlaps this step's CPU work). Only one step per host may be finishing, so
   * a second early release waits for the commit instead. Returns whether the host was released.
   */
  #release(slot: HostSlot, task: QueuedTask, feedback: RequestFeedback): boolean {
    if (slot.finishing !== undefined || this.#stopping !== undefined) return false;
    if (this.#offered?.slot === slot) this.#offered = undefined;
    const now = this.#clock.now();
    if (feedback.crawlDelayMs !== undefined) slot.crawlDelayMs = feedback.crawlDelayMs;
    slot.nextAt = Math.max(
      slot.nextAt,
      now + hostGapMs(this.#config, feedback.responseMs, slot.crawlDelayMs),
    );
    slot.finishing = task.seq;
    slot.fetched += 1;
    slot.busy = false;
    this.#offer(slot, now);
    this.#wake?.();
    return true;
  }

  #deps(unit: StepUnit, hostReleased: (feedback: RequestFeedback) => void) {
    const pages = this.#warc ?? {
      put: async () => ({ file: '', offset: 0, length: 0 }),
      flush: async () => {},
    };
    return {
      config: this.#config,
      clock: this.#clock,
      random: this.#random,
      fetcher: this.#fetcher,
      robots: this.#robots,
      seen: new UrlSeen(
        this.#cache,
        unit,
        this.#counters.seen,
        this.#traceFile ? { trace: (fps) => appendAll(unit.lookups, fps) } : {},
      ),
      contentSeen: unit.contentSeen(),
      frontier: unit,
      pages,
      results: unit,
      canonicalizer: this.#canonicalizer,
      scope: this.#scope,
      quality: this.#quality,
      importanceOf: (cash: number) => this.#ledger.fetched(cash),
      hostReleased,
    };
  }

  #pageOptions(): CrawlPageOptions {
    const onPage = this.#options.onPage;
    const options: CrawlPageOptions = {};
    if (this.#options.wantText) options.wantText = true;
    if (onPage) {
      options.onPage = (page) => {
        if (onPage(page) === true) this.stop('stopped', 'found');
      };
    }
    return options;
  }

  /**
   * Writes the step's lines, then commits its state and the new checkpoint in one transaction.
   * `released`: the host was handed on when the response came in (its gap and page count are
   * applied already, and another step of the host may be running).
   */
  #commit(
    slot: HostSlot,
    task: QueuedTask,
    outcome: CrawlPageOutcome,
    unit: StepUnit,
    released: boolean,
  ): void {
    const c = this.#counters;
    const now = this.#clock.now();
    if (outcome.kind === 'done') {
      const { record } = outcome;
      if (record.status === null) {
        c.skipped += 1;
      } else {
        c.pages += 1;
        c.bytes += record.bytes;
        if (!released) slot.fetched += 1;
      }
      const statusKey = record.status === null ? 'none' : String(record.status);
      c.byStatus[statusKey] = (c.byStatus[statusKey] ?? 0) + 1;
      if (record.reason !== undefined) c.byReason[record.reason] = (c.byReason[record.reason] ?? 0) + 1;
      if (record.duplicateOf !== undefined) c.duplicates += 1;
      if (record.reason === 'robots-unreachable') slot.dead = 'robots-unreachable';
      // crawlPage widened the scope to where a seed moved; the checkpoint below keeps it.
      if (task.depth === 0 && record.redirectTo !== undefined && record.reason !== 'too-many-redirects') {
        this.#scopeHosts.add(new URL(record.redirectTo).hostname);
      }
    } else if (outcome.kind === 'retry') {
      c.retries += 1;
    }
    if (outcome.feedback !== undefined) c.requests += 1;
    if (outcome.feedback !== undefined && !released) {
      const { feedback } = outcome;
      if (feedback.crawlDelayMs !== undefined) slot.crawlDelayMs = feedback.crawlDelayMs;
      const gap = hostGapMs(this.#config, feedback.responseMs, slot.crawlDelayMs);
      slot.nextAt = Math.max(now + gap, feedback.blockedUntil ?? 0);
    }
    if (outcome.kind === 'retry') slot.nextAt = Math.max(slot.nextAt, outcome.notBefore);
    c.discovered += unit.enqueued.length;
    for (const [reason, n] of unit.skippedLinks) c.linksSkipped[reason] = (c.linksSkipped[reason] ?? 0) + n;
    // AOPIC: new URLs carry their share in their task; known ones are credited; taxes to lambda.
    this.#ledger.discovered(unit.enqueued.length);
    let finishedCash: { history: number; key: number } | undefined;
    if (outcome.kind === 'done' && outcome.cashFlow !== undefined) {
      const flow = outcome.cashFlow;
      this.#ledger.collect(flow.toLambda);
      for (const { fp, amount } of flow.credits) this.#credits.set(fp, (this.#credits.get(fp) ?? 0) + amount);
      if (outcome.record.status !== null) {
        finishedCash = { history: flow.cash, key: this.#ledger.keyFor(0) };
      }
    }
    c.elapsedMs = this.#elapsedBefore + (now - this.#runStartedAt);

    this.#pagesFile.append(unit.pageLines);
    this.#linksFile.append(unit.linkLines);
    this.#datasetFile?.append(unit.datasetLines);
    if (unit.lookups.length > 0) this.#traceFile?.appendBytes(encodeTrace(unit.lookups));
    this.#offered = undefined;
    this.#db.commit({
      claimed: unit.claimed,
      ...(unit.claimOwner !== undefined ? { claimOwner: unit.claimOwner } : {}),
      enqueue: unit.enqueued,
      front: outcome.kind === 'done' && outcome.record.redirectTo !== undefined,
      contentHashes: unit.contentHashes,
      ...(outcome.kind === 'done' ? { finished: task } : {}),
      ...(finishedCash !== undefined ? { finishedCash } : {}),
      ...(outcome.kind === 'retry' ? { retried: { ...outcome.task, seq: task.seq } } : {}),
      ...(outcome.kind === 'done' && outcome.record.status !== null ? { hostFetched: slot.host } : {}),
      checkpoint: this.#checkpoint(),
    });
    unit.release();

    if (outcome.kind === 'done') {
      slot.queued -= 1;
      this.#queued -= 1;
    }
    if (released) slot.finishing = undefined;
    else slot.busy = false;
    const targets = new Set<HostSlot>([slot]);
    for (const next of unit.enqueued) {
      const target = this.#slot(next.host);
      target.queued += 1;
      this.#queued += 1;
      targets.add(target);
    }
    for (const target of targets) this.#offer(target, now);
    if (++this.#stepsSinceSave >= 500) this.#saveQuality();
  }

  /** Queues a host for dispatch with the priority of its current head task. */
  #offer(slot: HostSlot, now: number): void {
    if (slot.busy || !hasWaitingTask(slot)) return;
    const head = this.#db.head(slot.host, slot.finishing);
    // Every change to a host's rows is followed by its offer, credit flushes aside.
    this.#offered = { slot, head };
    slot.best = head?.prio ?? Number.NEGATIVE_INFINITY;
    this.#scheduler.offer(slot, now);
  }

  /** Detector state is saved every few hundred steps (a resumed crawl relearns the rest). */
  #saveQuality(): void {
    this.#stepsSinceSave = 0;
    this.#db.setMeta('quality', this.#quality.snapshot());
    this.#nearIndex?.flush();
  }

  #slot(host: string): HostSlot {
    let slot = this.#hosts.get(host);
    if (slot === undefined) {
      slot = newHostSlot(host);
      this.#hosts.set(host, slot);
    }
    return slot;
  }

  #checkpoint(): Checkpoint {
    return {
      pagesSize: this.#pagesFile?.size ?? 0,
      linksSize: this.#linksFile?.size ?? 0,
      warc: this.#warc?.position() ?? null,
      counters: this.#counters,
      scopeHosts: [...this.#scopeHosts],
      aopic: this.#ledger.state,
      ...(this.#traceFile ? { traceSize: this.#traceFile.size } : {}),
      ...(this.#datasetFile ? { datasetSize: this.#datasetFile.size } : {}),
    };
  }

  #closeResources(): void {
    this.#flushCredits();
    this.#saveQuality();
    this.#db.setMeta('checkpoint', this.#checkpoint());
    writeFileSync(join(this.#outDir, 'traps.json'), `${JSON.stringify(this.#quality.report(), null, 2)}\n`);
    this.#nearIndex?.close();
    this.#pagesFile.close();
    this.#linksFile.close();
    this.#traceFile?.close();
    this.#datasetFile?.close();
    this.#warc?.close();
    this.#db.close();
  }

  async #closeFetcher(): Promise<void> {
    if (this.#ownsFetcher) await this.#fetcher.close();
  }

  #summary(resumed: boolean, startedAt: number, hosts: number, cpuMs: number): CrawlSummary {
    const c = this.#counters;
    const finishedAt = this.#clock.now();
    const durationMs = finishedAt - startedAt;
    const state: CrawlEndState = this.#stopping?.state ?? 'done';
    const summary: CrawlSummary = {
      state,
      resumed,
      seeds: this.#config.seeds,
      outDir: this.#outDir,
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: new Date(finishedAt).toISOString(),
      durationMs,
      totalDurationMs: c.elapsedMs,
      pages: c.pages,
      skipped: c.skipped,
      byStatus: c.byStatus,
      byReason: c.byReason,
      bytes: c.bytes,
      hosts,
      requests: c.requests,
      retries: c.retries,
      duplicates: c.duplicates,
      discovered: c.discovered,
      queued: this.#queued,
      pagesPerSecond: c.elapsedMs > 0 ? Math.round((c.pages / c.elapsedMs) * 1000 * 10) / 10 : 0,
      urlSeen: { ...c.seen, hitRate: c.seen.lookups === 0 ? 0 : c.seen.cacheHits / c.seen.lookups },
      // The kernel's high-water mark: exact, and free (sampling rss in the loop cost ~2% CPU).
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      cpuMs: Math.round(cpuMs),
      order: this.#config.order,
      linksSkipped: c.linksSkipped,
      traps: this.#quality.report(),
    };
    if (this.#stopping?.reason !== undefined) summary.stopReason = this.#stopping.reason;
    return summary;
  }
}

function emptyCounters(): CrawlCounters {
  return {
    pages: 0,
    skipped: 0,
    byStatus: {},
    byReason: {},
    bytes: 0,
    requests: 0,
    retries: 0,
    duplicates: 0,
    discovered: 0,
    seen: { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 },
    linksSkipped: {},
    elapsedMs: 0,
  };
}

function countErrors(c: CrawlCounters): number {
  let errors = 0;
  for (const [reason, n] of Object.entries(c.byReason)) if (isErrorReason(reason)) errors += n;
  return errors;
}

/** `push(...items)` without the engine's limit on arguments (a page may have 100,000 links). */
function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

export { SEED_OWNER };
