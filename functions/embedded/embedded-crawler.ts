/**
 * The embedded crawler: the shared crawl step (`crawlPage`) driven by a per-host scheduler over
 * local adapters, with all state under one output folder so that an interrupted crawl (Ctrl-C or
 * kill -9) continues when the same command runs again.
 *
 * Phases: opening (crawl-state.ts: state, outputs, resume), the dispatch loop (here: choose a
 * host, run its step, commit the step), the order (aopic-dispatch-policy.ts) and the per-host
 * queues (host-queues.ts). Layout of `outDir`: state.sqlite (seen set, frontier, checkpoints),
 * pages.jsonl, links.jsonl, sitemaps.jsonl, warc/*.warc.gz + warc/index.cdxj, summary.json, traps.json,
 * rules.json.
 */

import type { LookupFunction } from '../adapters/http/address-guard.ts';
import { withBodyShareScope } from '../adapters/http/body-share-scope.ts';
import { gunzipFile } from '../adapters/http/gunzip-file.ts';
import type { QueuedTask } from '../adapters/local/crawl-db.ts';
import { PendingClaims, StepUnit } from '../adapters/local/step-unit.ts';
import type { CrawlConfig } from '../core/config.ts';
import { listsAsImportant } from '../core/dashboard-snapshot.ts';
import type { Clock, Fetcher, RevisitLookup, RobotsEntry } from '../core/ports.ts';
import type { TrapFinding } from '../core/quality/trap-findings.ts';
import { robotsUrlFor, rulesFromEntry } from '../core/robots/policy.ts';
import { applyRequestFeedback, retryBackoffMs } from '../core/scheduling/politeness.ts';
import { applyLessons, archiveCaptures } from '../core/step/commit-effects.ts';
import {
  type CrawlPageDeps,
  type CrawlPageOptions,
  type CrawlPageOutcome,
  crawlPage,
  type FetchedPage,
  type RequestFeedback,
  SEED_OWNER,
} from '../core/step/crawl-page.ts';
import { judgeStepFailure } from '../core/step/error-policy.ts';
import { type OutcomeCounts, unfetchedRecord } from '../core/step/page-record.ts';
import { safeJson } from '../core/text/safe-text.ts';
import type { CrawlTask, Fingerprint } from '../core/types.ts';
import { UrlSeen, type UrlSeenStats } from '../core/url-seen/url-seen.ts';
import { encodeTrace } from '../core/url-seen/url-seen-trace.ts';
import { AddressGates } from './address-gates.ts';
import {
  countStep,
  crawlFailure,
  failureCause,
  failureDetail,
  failureHint,
  notFetched,
  requestFailure,
} from './crawl-counters.ts';
import { type CrawlStorageError, storageFailure } from './crawl-errors.ts';
import {
  type CrawlSnapshot,
  type HostView,
  RateSeries,
  type SnapshotOptions,
  TopPages,
  type WaitingFor,
} from './crawl-snapshot.ts';
import { CrawlState, type SeedPlan } from './crawl-state.ts';
import type { HostSlot } from './host-heap.ts';
import { HostQueues } from './host-queues.ts';
import { RETRYABLE_REASONS } from './resume-rules.ts';
import { StepQuality, StepUrlRules } from './step-quality.ts';

export type { CrawlCounters } from './crawl-counters.ts';
export { CrawlFolderError, CrawlStorageError } from './crawl-errors.ts';
export type { CrawlSnapshot } from './crawl-snapshot.ts';
export { CrawlStateMismatchError } from './crawl-state.ts';

/**
 * How a crawl ended: `failed` is a crawl that ran to its end (or its page budget) without a single
 * page answered (every request failed, or nothing could be requested): `stopReason` says why.
 */
export type CrawlEndState = 'done' | 'max-pages' | 'stopped' | 'interrupted' | 'failed';

/**
 * What the crawl did, as the CLI reports it at the end: the core's outcome counts by status and
 * reason, bytes and duplicates ({@link OutcomeCounts}; `pages` is its `fetched`, `skipped` the
 * URLs finished without a response), plus the run's own numbers.
 */
export interface CrawlSummary extends Pick<OutcomeCounts, 'byStatus' | 'byReason' | 'bytes' | 'duplicates'> {
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
  hosts: number;
  requests: number;
  /** Requests that got no response or a 5xx/429 (retried ones included). */
  failedRequests: number;
  retries: number;
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
  /**
   * DNS lookup for politeness per IP address (default `dns.lookup`); give the fetcher's when it
   * has its own (tests stage DNS answers this way).
   */
  lookup?: LookupFunction;
  /** A recrawl round: the archive's last fetch of each page (see CrawlPageDeps.revisits). */
  revisits?: RevisitLookup;
  /** A recrawl round: what a fresh folder is seeded with instead of the seeds. */
  seedPlan?: SeedPlan;
  /**
   * Test seam: awaited when a step's outcome is in, before its commit. A test holds a step here
   * to copy the folder as a `kill -9` at that moment would leave it.
   */
  beforeCommit?: (task: CrawlTask, kind: CrawlPageOutcome['kind']) => Promise<void>;
}

/** A step whose outcome is in, as its commit needs it. */
interface FinishedStep {
  slot: HostSlot;
  task: QueuedTask;
  unit: StepUnit;
  /**
   * The step's view of the defences: what it taught them (`lessons`, committed with it, replayed
   * after a crash), and where the commit applies the step's returned lessons.
   */
  quality: StepQuality;
  /** The host was handed on when the response came in (see #release). */
  released: boolean;
}

const systemClock: Clock = { now: () => Date.now() };
/**
 * A URL in flight when the crawl process died this many times is recorded as `crashed` instead
 * of fetched again: a page that kills the process (out of memory, a crash) must not stop the
 * crawl from ever finishing. A user's `kill -9` counts too, so it is more than one.
 */
export const MAX_CRASHES = 3;
/** Steps between two saves of the detectors' state. */
const QUALITY_SAVE_STEPS = 500;

/** A host set aside in a dispatch pass because its best URL waits for a dry frontier, with that URL. */
interface ParkedHost {
  slot: HostSlot;
  task: QueuedTask;
}

export class EmbeddedCrawler {
  readonly #config: CrawlConfig;
  readonly #options: EmbeddedCrawlerOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: (line: string) => void;
  /** Set by `run` once the crawl is open. */
  #state: CrawlState | undefined;
  #hosts: HostQueues | undefined;
  /** Politeness per IP address (undefined when `politenessPerIp` is off). */
  #gates: AddressGates | undefined;
  readonly #pending = new PendingClaims();
  readonly #running = new Set<Promise<void>>();
  readonly #rate = new RateSeries();
  readonly #topPages = new TopPages();
  #stepsSinceSave = 0;
  /** The defences' view of each running step, until its lessons are committed (#commit). */
  readonly #teaching = new Set<StepQuality>();
  #stopping: { state: CrawlEndState; reason?: string } | undefined;
  /** Local storage failed: nothing more is committed, and `run` rejects with it. */
  #failure: CrawlStorageError | undefined;
  /** A step failed outside its own error handling (a bug): `run` rejects with it. */
  #unexpected: unknown;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #runStartedAt = 0;
  /** Resolved when the commit running now is done (see #inTurn). */
  #turn: Promise<void> = Promise.resolve();

  constructor(options: EmbeddedCrawlerOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#log = options.log ?? (() => {});
  }

  /** Asks the crawl to stop: no new requests; running steps finish and commit. */
  stop(state: CrawlEndState = 'stopped', reason?: string): void {
    if (this.#stopping === undefined) this.#stopping = reason === undefined ? { state } : { state, reason };
    this.#wake?.();
  }

  /**
   * Opens (or resumes) the crawl, runs it to its end, closes it; resolves the summary.
   * @throws CrawlFolderError, CrawlStateMismatchError when the folder cannot hold this crawl.
   * @throws CrawlStorageError when writing the crawl's files failed (disk full, I/O error): the
   *   pages in progress were not committed, and running the crawl again resumes it.
   */
  async run(): Promise<CrawlSummary> {
    const cpuStart = process.cpuUsage();
    const startedAt = this.#clock.now();
    this.#runStartedAt = startedAt;
    const outDir = this.#options.outDir;
    let state: CrawlState;
    try {
      state = await CrawlState.open({
        config: this.#config,
        outDir,
        now: startedAt,
        random: this.#random,
        log: this.#log,
        ...(this.#options.warc === undefined ? {} : { warc: this.#options.warc }),
        ...(this.#options.fetcher === undefined ? {} : { fetcher: this.#options.fetcher }),
        ...(this.#options.seedPlan === undefined ? {} : { seedPlan: this.#options.seedPlan }),
      });
    } catch (error) {
      throw storageFailure(error, outDir) ?? error;
    }
    const hosts = new HostQueues(state.db);
    hosts.restore(state.db.hostCounts(), state.db.hostFetchedCounts(), startedAt);
    this.#state = state;
    this.#hosts = hosts;
    if (this.#config.politenessPerIp) {
      const resolved = (slot: HostSlot) => {
        hosts.offer(slot, this.#clock.now());
        this.#wake?.();
      };
      this.#gates = new AddressGates(resolved, this.#options.lookup);
    }
    if (state.resumed) this.#log(`resuming crawl in ${state.outDir}: ${hosts.queued} URLs queued`);
    let hostCount = 0;
    let thrown: unknown;
    try {
      await this.#loop(state, hosts);
    } catch (error) {
      thrown = error;
      this.#fail(storageFailure(error, outDir));
    }
    await Promise.allSettled([...this.#running]);
    clearTimeout(this.#timer);
    if (this.#failure === undefined && thrown === undefined && this.#unexpected === undefined) {
      try {
        hostCount = state.db.hostFetchedCounts().size;
        await state.close();
      } catch (error) {
        thrown = error;
        this.#fail(storageFailure(error, outDir));
      }
    }
    thrown ??= this.#unexpected;
    if (this.#failure !== undefined || thrown !== undefined) {
      // Write nothing more: what the last commit recorded is what a resumed crawl starts from.
      await state.abandon();
      throw this.#failure ?? thrown;
    }
    const cpu = process.cpuUsage(cpuStart);
    return this.#summary(state, hosts, startedAt, hostCount, (cpu.user + cpu.system) / 1000);
  }

  /** Local storage failed: stop at once, commit nothing more, let `run` report it. */
  #fail(failure: CrawlStorageError | undefined): void {
    if (failure === undefined || this.#failure !== undefined) return;
    this.#failure = failure;
    // No log line: run() rejects with the failure, and its one message says what to do.
    this.stop('stopped', 'storage');
  }

  /**
   * A read-only view of the running crawl (undefined before `run` opened it): rates, statuses,
   * reasons, a per-host table, traps, the most important pages, the URL-seen cache, memory.
   */
  snapshot(options: SnapshotOptions = {}): CrawlSnapshot | undefined {
    const state = this.#state;
    const hosts = this.#hosts;
    if (state === undefined || hosts === undefined) return undefined;
    const c = state.counters;
    const now = this.#clock.now();
    const elapsedMs = this.#elapsed(state, now);
    this.#rate.sample(elapsedMs, c.fetched);
    const memory = process.memoryUsage();
    const snapshot: CrawlSnapshot = {
      at: now,
      elapsedMs,
      state: this.#stopping === undefined ? 'running' : 'stopping',
      pages: c.fetched,
      skipped: notFetched(c),
      errors: c.failedRequests,
      queued: hosts.queued,
      running: this.#running.size,
      hosts: hosts.size,
      bytes: c.bytes,
      requests: c.requests,
      retries: c.retries,
      duplicates: c.duplicates,
      discovered: c.discovered,
      pagesPerSecond: this.#rate.rate(elapsedMs, c.fetched),
      rate: this.#rate.points(),
      byStatus: { ...c.byStatus },
      byReason: { ...c.byReason },
      linksSkipped: { ...c.linksSkipped },
      hostTable: this.#hostTable(state, hosts, options.hosts ?? 50),
      traps: options.traps === false ? [] : state.quality.report(),
      topPages: this.#topPages.list(options.topPages ?? 20),
      urlSeen: { ...c.seen, hitRate: c.seen.lookups === 0 ? 0 : c.seen.cacheHits / c.seen.lookups },
      memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
    };
    const waiting = this.#waitingFor(hosts, now);
    if (waiting !== undefined) snapshot.waitingFor = waiting;
    return snapshot;
  }

  // -------------------------------------------------------------------------------------------
  // The dispatch loop

  async #loop(state: CrawlState, hosts: HostQueues): Promise<void> {
    for (;;) {
      if (this.#stopping === undefined) this.#dispatch(state, hosts);
      if (this.#running.size === 0) {
        if (this.#stopping !== undefined) return;
        // nothing queued anywhere, no host waiting for its address: done
        if (!hosts.hasWork() && (this.#gates?.resolving ?? 0) === 0) return;
        if (this.#budgetLeft(state) <= 0) {
          this.stop('max-pages');
          return;
        }
      }
      await this.#sleepUntilWork(hosts);
    }
  }

  #budgetLeft(state: CrawlState): number {
    const max = this.#config.maxPages;
    return max === undefined ? Number.POSITIVE_INFINITY : max - state.counters.fetched - this.#running.size;
  }

  #dispatch(state: CrawlState, hosts: HostQueues): void {
    const now = this.#clock.now();
    // Credits change cash and priorities without an offer: the head read by the last offer is
    // stale, and so is the key each credited host waits under in the ready heap (a host is ranked
    // by the head it had when offered, so one whose URLs were credited since would wait behind
    // poorer hosts). Their heads are read again.
    const credited = state.policy.maintain(now, state.db);
    if (credited !== undefined) {
      hosts.forgetOffered();
      for (const host of credited) hosts.reoffer(host, now);
    }
    // Hosts whose best URL is a generated one, set aside unless the frontier is dry (see waitsForDry).
    const parked: ParkedHost[] = [];
    try {
      this.#dispatchReady(state, hosts, now, parked);
    } finally {
      for (const { slot } of parked) hosts.putBack(slot, now);
    }
  }

  #dispatchReady(state: CrawlState, hosts: HostQueues, now: number, parked: ParkedHost[]): void {
    const policy = state.policy;
    while (this.#running.size < this.#config.concurrency && this.#budgetLeft(state) > 0) {
      const taken = hosts.take(now);
      if (taken === undefined) break;
      const { slot } = taken;
      const verdict = this.#gates?.check(slot, now) ?? 'go';
      // Resolving or busy: offered again when the address is known or frees.
      if (verdict === 'resolving' || verdict === 'busy') continue;
      if (verdict === 'gap') {
        hosts.putBack(slot, now);
        continue;
      }
      const task = policy.taskOf(taken.head);
      if (policy.waitsForDry(task)) {
        // Its generated best URL waits; what the site itself declares (its sitemap files and the
        // pages they list) need not wait behind it: no link may ever lead there (docs/sitemaps.md).
        const declared = state.db.headDeclared(slot.host, slot.finishing);
        if (declared !== undefined) {
          this.#start(state, hosts, slot, policy.taskOf(declared));
          continue;
        }
        parked.push({ slot, task });
        continue;
      }
      if (policy.holdBack(task, this.#running.size)) {
        // Better URLs are in flight: wait for their hosts rather than spend budget on this one.
        hosts.putBack(slot, now);
        return;
      }
      this.#start(state, hosts, slot, task);
    }
    // Dry: nothing runs and every ready host's best URL is a generator's. The richest goes (it was
    // taken first). Nothing running is not enough: once the hold-back rule lets one poor URL go
    // at a time, nothing runs between every two steps, and a generated URL richer than the pages
    // left went at each of those moments (on the quality bench, the `?print=1` twins of rich
    // pages: up to 20 per run while a ready host still had hundreds of pages; quality-bench.md).
    const first = parked[0];
    if (first !== undefined && this.#running.size === 0 && this.#budgetLeft(state) > 0) {
      parked.shift();
      this.#start(state, hosts, first.slot, first.task);
    }
  }

  #start(state: CrawlState, hosts: HostQueues, slot: HostSlot, task: QueuedTask): void {
    slot.busy = true;
    this.#gates?.acquire(slot);
    state.inflight.started(task.fp);
    const step = this.#step(state, hosts, slot, task)
      .catch((error: unknown) => {
        // A step's own errors are recorded or classified inside it: this is a bug in the
        // runtime. Stop, and let run() report it (never an unhandled rejection).
        this.#unexpected ??= error;
        this.stop('stopped', 'error');
      })
      .finally(() => {
        this.#running.delete(step);
        this.#wake?.();
      });
    this.#running.add(step);
  }

  async #sleepUntilWork(hosts: HostQueues): Promise<void> {
    const wakeAt = hosts.nextWakeAt();
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

  // -------------------------------------------------------------------------------------------
  // One step: run it, then commit it

  async #step(state: CrawlState, hosts: HostQueues, slot: HostSlot, task: QueuedTask) {
    const unit = new StepUnit(state.db, this.#pending);
    const quality = new StepQuality(state.quality);
    this.#teaching.add(quality);
    // Its observations join the step's lessons, committed with it.
    const urlRules = state.urlRules && new StepUrlRules(state.urlRules, quality.lessons);
    // Set when the response is in and the host was handed to its next request (see #release).
    let released = false;
    const hostReleased = async (feedback: RequestFeedback) => {
      released = this.#release(hosts, slot, task, feedback);
      // Let the loop send the host's next request before this step's parsing takes the thread.
      if (released) await new Promise<void>((resolve) => setImmediate(resolve));
    };
    // Read when the step's outcome is in (`released` is final by then).
    const finished = (): FinishedStep => ({ slot, task, unit, quality, released });
    const crashes = state.crashes.get(task.fp) ?? 0;
    const blocked =
      slot.dead ??
      (slot.fetched >= this.#config.maxPagesPerHost ? 'host-budget' : undefined) ??
      (crashes >= MAX_CRASHES ? 'crashed' : undefined);
    if (blocked !== undefined) {
      const record = unfetchedRecord(task, blocked);
      if (blocked === 'crashed') {
        record.detail = `the crawl process died ${crashes} times while this page was in progress; not tried again`;
      }
      await this.#commitInTurn(state, hosts, finished(), { kind: 'done', record, enqueued: [] });
      return;
    }
    // A large body keeps its share of the fetcher's body budget until the step is done with it
    // (its capture archived, the first part of the commit: before the record is written).
    await withBodyShareScope(async () => {
      let outcome: CrawlPageOutcome;
      try {
        const deps = this.#deps(state, unit, quality, urlRules, hostReleased);
        outcome = await crawlPage(deps, task, this.#pageOptions());
      } catch (error) {
        await this.#inTurn(() => this.#stepFailed(state, hosts, finished(), error));
        return;
      }
      await this.#commitInTurn(state, hosts, finished(), outcome);
    });
  }

  /**
   * Commits a step in its turn: its captures archived into the WARC file, then its lines and its
   * state with the checkpoint (#commit). Captures are written in the turn, not when the step
   * finishes: a checkpoint names the WARC file's size at its commit, and a record another step
   * wrote before it would lie inside that size while its step is not committed; after a kill -9
   * the resumed crawl keeps that record and fetches the page again (two records for one page).
   */
  async #commitInTurn(
    state: CrawlState,
    hosts: HostQueues,
    step: FinishedStep,
    outcome: CrawlPageOutcome,
  ): Promise<void> {
    await this.#options.beforeCommit?.(step.task, outcome.kind);
    await this.#inTurn(async () => {
      if (this.#failure !== undefined) {
        step.unit.release();
        return;
      }
      try {
        await archiveCaptures(
          { pages: state.pages, robots: state.pages },
          outcome,
          outcome.kind === 'done' ? outcome.record : undefined,
        );
      } catch (error) {
        this.#stepFailed(state, hosts, step, error);
        return;
      }
      this.#commitOrFail(state, hosts, step, outcome);
    });
  }

  /**
   * Runs `commit` once the commits before it are done: steps commit one at a time, so that no
   * step writes to the crawl's files between another step's archive and its checkpoint.
   */
  async #inTurn(commit: () => Promise<void> | void): Promise<void> {
    const previous = this.#turn;
    let done = () => {};
    this.#turn = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      await previous;
      await commit();
    } finally {
      done();
    }
  }

  /**
   * A step threw (crawling the page or archiving its captures); in the step's commit turn. The
   * disk failing stops the crawl with nothing recorded (the page is fetched again on resume).
   * Anything else is an adapter failure or a bug, not a network problem (crawlPage returns
   * those): the error policy both runtimes share says whether another try may help; then the
   * task goes back, as a failed fetch would, up to maxRetries; else, or after them, the URL is
   * recorded.
   */
  #stepFailed(state: CrawlState, hosts: HostQueues, step: FinishedStep, error: unknown): void {
    const { task, unit } = step;
    unit.release();
    const storage = storageFailure(error, state.outDir);
    if (storage !== undefined) {
      this.#fail(storage);
      return;
    }
    this.#log(`error crawling ${task.url}: ${(error as Error).stack ?? error}`);
    const verdict = judgeStepFailure(error, task.attempt, {
      limit: this.#config.maxRetries,
      waitMs: (n) => retryBackoffMs(this.#config, n, this.#random),
    });
    const retry = new StepUnit(state.db, this.#pending);
    appendAll(retry.lookups, unit.lookups);
    let failed: CrawlPageOutcome;
    if (verdict.kind === 'retry') {
      const notBefore = this.#clock.now() + verdict.waitMs;
      failed = {
        kind: 'retry',
        task: { ...task, attempt: verdict.retry },
        reason: 'internal-error',
        notBefore,
        enqueued: [],
      };
    } else {
      const record = unfetchedRecord(task, 'internal-error', verdict.error.message);
      failed = { kind: 'done', record, enqueued: [] };
    }
    this.#commitOrFail(state, hosts, { ...step, unit: retry }, failed);
  }

  /** Commits the step unless storage failed (before or while committing it). */
  #commitOrFail(state: CrawlState, hosts: HostQueues, step: FinishedStep, outcome: CrawlPageOutcome): void {
    if (this.#failure !== undefined) {
      step.unit.release();
      return;
    }
    try {
      this.#commit(state, hosts, step, outcome);
    } catch (error) {
      step.unit.release();
      const storage = storageFailure(error, state.outDir);
      if (storage === undefined) throw error;
      this.#fail(storage);
    }
  }

  /**
   * The page's response is in: the host may take its next request after its gap, while this step
   * stores and parses the page (one request in flight per host still holds; the network wait of
   * the next request overlaps this step's CPU work). Only one step per host may be finishing, so
   * a second early release waits for the commit instead. Returns whether the host was released.
   */
  #release(hosts: HostQueues, slot: HostSlot, task: QueuedTask, feedback: RequestFeedback) {
    if (slot.finishing !== undefined || this.#stopping !== undefined) return false;
    hosts.forgetOffered(slot);
    const now = this.#clock.now();
    // Released early only when the step asked for no longer wait (no blockedUntil).
    const { gapEnds } = applyRequestFeedback(this.#config, slot, feedback, now);
    slot.nextAt = Math.max(slot.nextAt, gapEnds);
    slot.finishing = task.seq;
    slot.fetched += 1;
    slot.busy = false;
    for (const other of this.#gates?.release(slot, gapEnds) ?? []) hosts.offer(other, now);
    hosts.offer(slot, now);
    this.#wake?.();
    return true;
  }

  #deps(
    state: CrawlState,
    unit: StepUnit,
    quality: StepQuality,
    urlRules: StepUrlRules | undefined,
    hostReleased: (feedback: RequestFeedback) => Promise<void>,
  ): CrawlPageDeps {
    const deps: CrawlPageDeps = {
      config: this.#config,
      clock: this.#clock,
      random: this.#random,
      fetcher: state.fetcher,
      // robots.txt entries are stored with the step's commit (its effects), with the sitemaps
      // they queued; the step reads the crawl's cache
      robots: unit.robotsCache(state.robots),
      // The cache holds committed claims only: a step that fails releases its claims, and the
      // step that retries the page must claim and queue its links again. The step's own claims
      // enter it with its commit (#commit); another running step's, once that step commits.
      seen: new UrlSeen(state.seenCache, unit, state.counters.seen, {
        remember: () => {},
        cacheable: (fps) => unit.committed(fps),
        ...(state.traceFile ? { trace: (fps: readonly Fingerprint[]) => appendAll(unit.lookups, fps) } : {}),
      }),
      contentSeen: unit.contentSeen(),
      canonicalizer: state.canonicalizer,
      scope: state.scope,
      quality,
      importanceOf: (cash: number) => state.policy.ledger.fetched(cash),
      hostReleased,
      gunzip: gunzipFile,
    };
    if (urlRules !== undefined) deps.urlRules = urlRules;
    if (this.#options.revisits !== undefined) deps.revisits = this.#options.revisits;
    return deps;
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
  #commit(state: CrawlState, hosts: HostQueues, step: FinishedStep, outcome: CrawlPageOutcome): void {
    const { slot, task, unit, released } = step;
    const now = this.#clock.now();
    // What the defences learned, applied through the step's view: its lessons join the commit.
    applyLessons(step.quality, outcome.lessons);
    // The step's effects join its claims in the one transaction below.
    unit.take(outcome, outcome.kind === 'done' ? outcome.record : undefined);
    countStep(state.counters, outcome, unit.enqueued.length, unit.skippedLinks);
    if (task.depth === 0 && slot.fetched === 0) this.#logSeedFailure(task, outcome);
    const gapEnds = this.#applyToHost(slot, task, outcome, released, now);
    if (!released) for (const other of this.#gates?.release(slot, gapEnds) ?? []) hosts.offer(other, now);
    if (outcome.kind === 'done') {
      const { record } = outcome;
      // crawlPage widened the scope to where a seed moved; the checkpoint below keeps it.
      if (task.depth === 0 && record.redirectTo !== undefined && record.reason !== 'too-many-redirects') {
        state.scopeHosts.add(new URL(record.redirectTo).hostname);
      }
      if (record.importance !== undefined && record.cash !== undefined && listsAsImportant(record.status)) {
        this.#topPages.offer({ url: record.url, importance: record.importance, cash: record.cash });
      }
    }
    // AOPIC: new URLs carry their share in their task; known ones are credited; taxes to lambda.
    const finishedCash = state.policy.book(
      unit.enqueued.length,
      outcome.kind === 'done' ? outcome.cashFlow : undefined,
      outcome.kind === 'done' && outcome.record.status !== null,
    );
    state.counters.elapsedMs = this.#elapsed(state, now);
    this.#rate.sample(state.counters.elapsedMs, state.counters.fetched);

    const failed = retryableFailure(task, outcome);
    state.pagesFile.append(unit.pageLines);
    state.linksFile.append(unit.linkLines);
    state.datasetFile?.append(unit.datasetLines);
    if (unit.lookups.length > 0) state.traceFile?.appendBytes(encodeTrace(unit.lookups));
    // A robots.txt fetched (not a probe step, which reuses the entry): its sitemaps.
    if (outcome.kind === 'robots' && outcome.probe === undefined) {
      state.sitemapsFile.append(sitemapLines(task, outcome.entry, this.#config));
    }
    hosts.forgetOffered();
    state.db.commit({
      ...unit.write(),
      front: outcome.kind === 'done' && outcome.record.redirectTo !== undefined,
      ...(outcome.kind === 'done' ? { finished: task } : {}),
      ...(finishedCash !== undefined ? { finishedCash } : {}),
      ...(outcome.kind === 'retry' ? { retried: { ...outcome.task, seq: task.seq } } : {}),
      ...(failed !== undefined ? { failed } : {}),
      quality: step.quality.lessons,
      ...(outcome.kind === 'done' && outcome.record.status !== null ? { hostFetched: slot.host } : {}),
      checkpoint: state.checkpoint(),
    });
    for (const [origin, entry] of unit.robotsEntries) state.robots.remember(origin, entry);
    for (const fp of unit.claimed) state.seenCache.add(fp);
    unit.release();
    state.inflight.finished(task.fp);

    if (outcome.kind === 'done') hosts.finished(slot);
    if (released) slot.finishing = undefined;
    else slot.busy = false;
    const targets = new Set<HostSlot>([slot]);
    hosts.added(unit.enqueued, targets);
    for (const target of targets) hosts.offer(target, now);
    // The step's lessons are committed: it no longer holds anything the saved state must leave out.
    this.#teaching.delete(step.quality);
    if (++this.#stepsSinceSave >= QUALITY_SAVE_STEPS && this.#taughtOnlyCommitted()) {
      this.#stepsSinceSave = 0;
      state.saveQuality();
    }
  }

  /**
   * True when no running step has taught the defences anything yet: their state is then what
   * the committed steps taught them, and may be saved in place of those steps' lessons. A step
   * teaches them while it runs (a page's SimHash, its template's count) and commits the lessons
   * with its page; a save in between would hold a lesson that a resumed crawl replays again, or
   * that the step teaches again when a kill cut it off (a page counted twice). Lessons record
   * every change the crawl decides with (step-quality.ts), so a step without any taught none.
   */
  #taughtOnlyCommitted(): boolean {
    for (const quality of this.#teaching) if (quality.lessons.length > 0) return false;
    return true;
  }

  /**
   * A seed whose host never answered failed: say so at once, with the cause and what to do, and
   * when it is tried again (a wrong port or a server not started should not look like a slow crawl).
   */
  #logSeedFailure(task: CrawlTask, outcome: CrawlPageOutcome): void {
    const failure = requestFailure(outcome);
    if (failure === undefined) return;
    const cause = failureCause(failure, failureDetail(outcome));
    const hint = failureHint(cause);
    const detail = failureDetail(outcome);
    let next = 'giving up';
    if (outcome.kind === 'retry') {
      const seconds = Math.max(0, (outcome.notBefore - this.#clock.now()) / 1000);
      next = `retry ${outcome.task.attempt} of ${this.#config.maxRetries} in ${seconds.toFixed(1)} s`;
    }
    this.#log(
      `${task.url}: ${cause}${detail === undefined ? '' : ` (${detail})`}${hint === undefined ? '' : `; ${hint}`}; ${next}`,
    );
  }

  /**
   * The host's politeness after a step: its gap, Retry-After or retry backoff, its page count.
   * Returns when the ordinary gap after the step's request ends (now when it made none).
   */
  #applyToHost(
    slot: HostSlot,
    task: CrawlTask,
    outcome: CrawlPageOutcome,
    released: boolean,
    now: number,
  ): number {
    let gapEnds = now;
    slot.origin = new URL(task.url).origin;
    slot.waitingFor = undefined;
    const failure = requestFailure(outcome);
    if (failure !== undefined) {
      slot.errors += 1;
      slot.lastError = failure;
    }
    if (outcome.kind === 'done') {
      if (outcome.record.status !== null && !released) slot.fetched += 1;
      if (outcome.record.reason === 'robots-unreachable') slot.dead = 'robots-unreachable';
    }
    const { feedback } = outcome;
    if (feedback !== undefined && !released) {
      const ends = applyRequestFeedback(this.#config, slot, feedback, now);
      gapEnds = ends.gapEnds;
      slot.nextAt = ends.nextAllowedAt;
      if (feedback.blockedUntil !== undefined && feedback.blockedUntil > gapEnds) {
        slot.waitingFor = `host blocked after ${failure ?? 'Retry-After'}`;
      }
    }
    if (outcome.kind === 'retry') {
      slot.nextAt = Math.max(slot.nextAt, outcome.notBefore);
      slot.waitingFor = `retry ${outcome.task.attempt} of ${this.#config.maxRetries} after ${outcome.reason}`;
    }
    return gapEnds;
  }

  // -------------------------------------------------------------------------------------------
  // Reports

  #elapsed(state: CrawlState, now: number): number {
    return state.elapsedBefore + (now - this.#runStartedAt);
  }

  #hostTable(state: CrawlState, hosts: HostQueues, limit: number): HostView[] {
    if (limit <= 0) return [];
    const slots = [...hosts.slots()]
      .sort((a, b) => b.queued - a.queued || Number(b.busy) - Number(a.busy) || (a.host < b.host ? -1 : 1))
      .slice(0, limit);
    return slots.map((slot) => {
      const view: HostView = {
        host: slot.host,
        queued: slot.queued,
        inFlight: slot.busy,
        nextAllowedAt: slot.nextAt,
        fetched: slot.fetched,
        errors: slot.errors,
      };
      if (slot.lastResponseMs !== undefined) view.lastResponseMs = slot.lastResponseMs;
      if (slot.lastError !== undefined) view.lastError = slot.lastError;
      if (slot.waitingFor !== undefined) view.waitingFor = slot.waitingFor;
      if (slot.crawlDelayMs !== undefined) view.crawlDelayMs = slot.crawlDelayMs;
      if (slot.dead !== undefined) view.dead = slot.dead;
      const address = this.#gates?.addressOf(slot.host);
      if (address !== undefined) view.address = address;
      if (slot.origin !== undefined) {
        const robots = state.robots.peek(slot.origin);
        if (robots !== undefined) {
          const { status, detail, fetchedAt, expiresAt } = robots;
          view.robots = { origin: slot.origin, status, detail, fetchedAt, expiresAt };
        }
      }
      return view;
    });
  }

  /** The host the crawl waits for, when nothing runs and a host's gap has not ended. */
  #waitingFor(hosts: HostQueues, now: number): WaitingFor | undefined {
    if (this.#running.size > 0) return undefined;
    const until = hosts.nextWakeAt();
    if (until === undefined || until <= now) return undefined;
    let host: HostSlot | undefined;
    for (const slot of hosts.slots()) if (slot.nextAt === until && !slot.busy) host = slot;
    if (host === undefined) return undefined;
    return { host: host.host, until, reason: host.waitingFor ?? 'politeness gap' };
  }

  #summary(
    state: CrawlState,
    hosts: HostQueues,
    startedAt: number,
    hostCount: number,
    cpuMs: number,
  ): CrawlSummary {
    const c = state.counters;
    const finishedAt = this.#clock.now();
    let endState = this.#stopping?.state ?? 'done';
    let stopReason = this.#stopping?.reason;
    const failure =
      endState === 'done' || endState === 'max-pages'
        ? crawlFailure(c, seedHosts(this.#config.seeds))
        : undefined;
    if (failure !== undefined) {
      endState = 'failed';
      stopReason = failure;
    }
    const summary: CrawlSummary = {
      state: endState,
      resumed: state.resumed,
      seeds: this.#config.seeds,
      outDir: state.outDir,
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: new Date(finishedAt).toISOString(),
      durationMs: finishedAt - startedAt,
      totalDurationMs: c.elapsedMs,
      pages: c.fetched,
      skipped: notFetched(c),
      byStatus: c.byStatus,
      byReason: c.byReason,
      bytes: c.bytes,
      hosts: hostCount,
      requests: c.requests,
      failedRequests: c.failedRequests,
      retries: c.retries,
      duplicates: c.duplicates,
      discovered: c.discovered,
      queued: hosts.queued,
      pagesPerSecond: c.elapsedMs > 0 ? Math.round((c.fetched / c.elapsedMs) * 1000 * 10) / 10 : 0,
      urlSeen: { ...c.seen, hitRate: c.seen.lookups === 0 ? 0 : c.seen.cacheHits / c.seen.lookups },
      // The kernel's high-water mark: exact, and free (sampling rss in the loop cost ~2% CPU).
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      cpuMs: Math.round(cpuMs),
      order: this.#config.order,
      linksSkipped: c.linksSkipped,
      traps: state.quality.report(),
    };
    if (stopReason !== undefined) summary.stopReason = stopReason;
    return summary;
  }
}

/** The sitemaps a fetched robots.txt names, as one line of sitemaps.jsonl (none when it names none). */
function sitemapLines(task: CrawlTask, entry: RobotsEntry, config: CrawlConfig): string[] {
  if (entry.status !== 'rules') return [];
  const { sitemaps } = rulesFromEntry(entry, config.robotsAgent, config.maxRobotsBytes);
  if (sitemaps.length === 0) return [];
  const robotsUrl = robotsUrlFor(task.url);
  // RFC 9309 asks for absolute URLs; a relative one is read against the robots.txt URL.
  const absolute = sitemaps.flatMap((sitemap) => URL.parse(sitemap, robotsUrl)?.href ?? []);
  return [safeJson({ robotsUrl, fetchedAt: new Date(entry.fetchedAt).toISOString(), sitemaps: absolute })];
}

/** The seeds' hosts (with their ports), each once. */
function seedHosts(seeds: readonly string[]): string[] {
  return [...new Set(seeds.flatMap((seed) => URL.parse(seed)?.host ?? []))];
}

/** A URL that finished without a response for a reason a later run may remove (resume-rules.ts). */
function retryableFailure(
  task: QueuedTask,
  outcome: CrawlPageOutcome,
): { task: CrawlTask; reason: string } | undefined {
  if (outcome.kind !== 'done' || outcome.record.status !== null) return undefined;
  const { reason } = outcome.record;
  if (reason === undefined || !RETRYABLE_REASONS.has(reason)) return undefined;
  const { seq: _seq, prio: _prio, cashKey: _cashKey, ...plain } = task;
  return { task: plain, reason };
}

/** `push(...items)` without the engine's limit on arguments (a page may have 100,000 links). */
function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

export { SEED_OWNER };
