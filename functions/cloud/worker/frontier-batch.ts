/**
 * The frontier worker's use case: one batch of frontier messages, each crawled with the shared
 * step (`crawlPage`: at most one request), then the batch's effects written in an order that makes
 * a crash anywhere harmless (everything is idempotent on redelivery):
 *
 *   before reading anything: a record whose host this container knows must still wait longer
 *     than `inlineWaitMs` is deferred at once (no read: deferring is always safe)
 *   per record (groups concurrently, a group's records in order):
 *     already handled? (seq <= host ledger) -> ack, no fetch
 *     cancelled / over maxPages / over the host budget -> ack, counted
 *     host not allowed yet -> wait inline (<= inlineWaitMs) or DEFER: the message's visibility is
 *       set to the wait and the record fails, which blocks its FIFO group without Lambda time
 *     crawlPage -> URL-seen claims happen inside; new links and the capture are buffered
 *   end of batch:
 *     1. SendMessageBatch of every new link of the batch (before anything is acked)
 *     2. SendMessageBatch of the captures (page record + WARC records) to the archiver
 *     3. host items: politeness state + the ledger (counts exactly once per handled record)
 *     4. maxPages budget, hosts a seed redirected to
 *     5. visibility of deferred records; the response lists them (and later records of their group)
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type CashFlow, splitCash } from '../../core/aopic.ts';
import { ClockCache } from '../../core/clock-cache.ts';
import { type CrawlConfig, parseCrawlConfig } from '../../core/config.ts';
import { type CrawlPageDeps, type CrawlPageOutcome, crawlPage, SEED_OWNER } from '../../core/crawl-page.ts';
import { hostGapMs } from '../../core/politeness.ts';
import { CrawlQuality } from '../../core/quality/crawl-quality.ts';
import type { CrawlTask, LinkRecord, PageRecord } from '../../core/types.ts';
import { UrlCanonicalizer } from '../../core/url/canonicalize.ts';
import { ScopeRules } from '../../core/url/scope.ts';
import { UrlSeen, type UrlSeenStats } from '../../core/url-seen.ts';
import type { Clock, Fetcher, Frontier, SeenStore } from '../../ports.ts';
import { type FaultHook, InjectedCrashError, NO_FAULTS } from '../fault-hook.ts';
import {
  CAPTURE_MESSAGE_LIMIT,
  type CaptureMessage,
  encodeCaptureMessage,
} from '../messages/capture-message.ts';
import {
  type CrawlRecord,
  countFinished,
  emptyHostCounts,
  type FinishedUrl,
  type HostCounts,
  ownerTag,
  pageItemFromRecord,
  parseOwnerTag,
  sequenceKey,
} from '../messages/crawl-records.ts';
import { decodeTask } from '../messages/task-message.ts';
import { buildWarcObject, idsHash, warcKey } from '../messages/warc-object.ts';
import {
  type CaptureSink,
  type CrawlStores,
  type CrawlTableStore,
  type DeadLetterSink,
  type MessageVisibility,
  type ObjectStore,
  type ParkedUrls,
  stateKey,
} from '../ports/cloud-ports.ts';
import { CaptureBuffer } from './capture-buffer.ts';
import { RecentNearDuplicates } from './recent-near-duplicates.ts';
import { StepContentSeen } from './step-content-seen.ts';

/** One frontier message, as the handler hands it over. */
export interface FrontierMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  /** FIFO MessageGroupId. */
  groupId?: string;
  /** FIFO SequenceNumber (increasing within a group). */
  sequenceNumber?: string;
  /** ApproximateReceiveCount. */
  receiveCount: number;
}

/** What happens to a message: deleted, or left on the queue, invisible for `seconds`. */
export type MessageVerdict = { kind: 'ack' } | { kind: 'retry'; seconds: number; why: string };

/** The batch's outcome: a verdict per message id, and what the batch did. */
export interface BatchOutcome {
  verdicts: Map<string, MessageVerdict>;
  stats: BatchStats;
}

/** Counts for logs and tests. */
export interface BatchStats {
  records: number;
  crawled: number;
  deferred: number;
  /** Deferred from this container's memory of the host, without reading its item. */
  deferredWarm: number;
  duplicates: number;
  deadLettered: number;
  errors: number;
  /** Capture messages sent to the archiver. */
  captures: number;
  /** Captures too big for a message, stored by the worker as their own WARC object. */
  storedCaptures: number;
  /** Content hashes registered in the store (pages with new links). */
  contentClaims: number;
  /** New URLs parked by AOPIC instead of queued, and credit writes to parked URLs. */
  parked: number;
  credits: number;
}

/** Everything the worker touches; the entry wires the AWS adapters. */
export interface FrontierWorkerDeps {
  clock: Clock;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  table: CrawlTableStore;
  frontier: Frontier;
  messages: MessageVisibility;
  deadLetters: DeadLetterSink;
  /** The URL-table and robots stores of one crawl. */
  stores: (crawlId: string) => CrawlStores;
  /** The capture queue (to the archiver). */
  captures: CaptureSink;
  /** The page bucket, for captures too big for a message. */
  objects: ObjectStore;
  /** URLs parked by AOPIC (cash too low to queue yet). */
  parked: ParkedUrls;
  /** The fetcher for a crawl's settings (the worker keeps one per distinct settings). */
  fetcher: (config: CrawlConfig) => Fetcher;
  /** UUIDs of WARC records (default: crypto.randomUUID). */
  newId?: () => string;
  /** warcinfo `software` of objects the worker writes itself. */
  software?: string;
  /** Test seam (see fault-hook.ts); production passes nothing. */
  fault?: FaultHook;
  log?: (line: string) => void;
  /** Waits up to this long are waited inside the invocation; longer ones defer the message. Default 300. */
  inlineWaitMs?: number;
  /** Credits to parked URLs are written at most this often, ms. Default 10 s. */
  creditFlushMs?: number;
  /** Processing errors of one message in this container before it goes to the DLQ. Default 3. */
  errorAttempts?: number;
  /** ...or receives of the message, whichever comes first (below the redrive's 10). Default 8. */
  deadLetterReceives?: number;
}

/** What the worker keeps per crawl in a warm container. */
interface CrawlContext {
  config: CrawlConfig;
  canonicalizer: UrlCanonicalizer;
  scope: ScopeRules;
  allowed: Set<string>;
  cache: ClockCache;
  /** Content hash -> first URL this container saw with it (see StepContentSeen). */
  contentHashes: LRUCache<string, string>;
  /** Trap and near-duplicate defences, with this container's memory of the crawl. */
  quality: CrawlQuality;
  /** URLs known to be parked: credits to them are kept on their items, not sent to the lambda page. */
  parked: LRUCache<string, true>;
  /** Credits for parked URLs, summed in memory and written every few seconds. */
  credits: Map<string, number>;
  creditsSince: number;
}

/** One crawl's share of a batch. */
interface CrawlBatch {
  crawl: CrawlRecord;
  ctx: CrawlContext;
  buffer: CaptureBuffer;
  captures: CaptureMessage[];
  /** Fingerprints finished in this batch (a duplicate message later in the batch is acked). */
  finished: Set<string>;
  /** Pages fetched in this batch (for the maxPages budget). */
  fetched: number;
  budget: number;
  redirectedHosts: Set<string>;
  /** URLs the batch's finished pages claimed and queued: cached once their ledgers are durable. */
  claimed: string[];
  /** New URLs to park instead of queue (written before the ledgers, like the sends). */
  parks: { task: CrawlTask; owner: string; key: number }[];
}

/** One FIFO group's share of a batch: its host's state, kept in memory and written once. */
interface GroupBatch {
  crawlId: string;
  host: string;
  doneSeq: string;
  nextAllowedAt: number;
  crawlDelayMs: number | undefined;
  fetched: number;
  counts: HostCounts;
  firstSeq: string | undefined;
  lastSeq: string | undefined;
  touched: boolean;
}

interface Entry {
  message: FrontierMessage;
  task: CrawlTask;
}

/**
 * At 256 MB, a second of waiting costs about $3.3 per million pages; a deferral (one more receive,
 * a visibility change and an invocation, shared by the batch) about $1.2 for a batch of one. Waits
 * up to about 350 ms are cheaper inline; 300 leaves room for the fetch that follows.
 */
const DEFAULT_INLINE_WAIT_MS = 300;
/** Time kept for the end-of-batch writes. */
const WRITE_RESERVE_MS = 5_000;
/** Crawls whose settings and caches a container keeps. */
const CACHED_CRAWLS = 8;
/** A host ledger read for `cacheable` is not repeated sooner than this. */
const LEDGER_RECHECK_MS = 2_000;
/**
 * Credits for parked URLs are written at most this often (or sooner when this many wait): a
 * parked URL linked from many pages gets one write per flush, not one per link.
 */
const CREDIT_FLUSH_MS = 10_000;
const CREDIT_FLUSH_SIZE = 1_000;
/** Pages whose SimHash a container remembers per crawl (two generations of this many). */
const NEAR_DUPLICATE_MEMORY = 20_000;

/**
 * Longest a cloud fetch may take. The worker's Lambda timeout is 60 s, so a crawl's longer
 * timeouts are cut to this in the cloud (see `cloudFetchSettings`).
 */
export const MAX_CLOUD_FETCH_MS = 40_000;

/** The fetch settings a worker uses for a crawl: the crawl's, with timeouts capped for Lambda. */
export function cloudFetchSettings(config: CrawlConfig) {
  return {
    userAgent: config.userAgent,
    allowPrivate: config.allowPrivate,
    connectTimeoutMs: Math.min(config.connectTimeoutMs, MAX_CLOUD_FETCH_MS),
    headersTimeoutMs: Math.min(config.headersTimeoutMs, MAX_CLOUD_FETCH_MS),
    idleTimeoutMs: Math.min(config.idleTimeoutMs, MAX_CLOUD_FETCH_MS),
    totalTimeoutMs: Math.min(config.totalTimeoutMs, MAX_CLOUD_FETCH_MS),
  };
}

function fetchBudgetMs(config: CrawlConfig): number {
  return Math.min(config.totalTimeoutMs, MAX_CLOUD_FETCH_MS);
}

/**
 * Builds the batch processor. Its closure is the warm container's state: URL-seen caches per
 * crawl, parsed crawl settings, fetchers, what it knows of hosts, and error counts per message.
 */
export function createFrontierBatchProcessor(
  deps: FrontierWorkerDeps,
): (messages: readonly FrontierMessage[], remainingMs?: () => number) => Promise<BatchOutcome> {
  const fault = deps.fault ?? NO_FAULTS;
  const log = deps.log ?? (() => {});
  const newId = deps.newId ?? randomUUID;
  const software = deps.software ?? 'crawlstack';
  const inlineWaitMs = deps.inlineWaitMs ?? DEFAULT_INLINE_WAIT_MS;
  const errorAttempts = deps.errorAttempts ?? 3;
  const deadLetterReceives = deps.deadLetterReceives ?? 8;
  const contexts = new LRUCache<string, CrawlContext>({ max: CACHED_CRAWLS });
  const errorCounts = new LRUCache<string, number>({ max: 10_000 });
  // `<crawl> <host>` -> the host's nextAllowedAt as this container last wrote or read it. Another
  // container can only have moved it later, so "still too early" needs no read.
  const hostClock = new LRUCache<string, number>({ max: 50_000 });
  // `<crawl> <host>` -> the host's ledger position (padded doneSeq) as last known, and when read.
  const ledgers = new LRUCache<string, { seq: string; at: number }>({ max: 50_000 });

  function contextFor(crawl: CrawlRecord): CrawlContext {
    let ctx = contexts.get(crawl.id);
    if (ctx === undefined) {
      // The item holds a validated config; parsing again fills defaults added since it was written.
      const parsed = parseCrawlConfig(crawl.config);
      const config = parsed.ok ? parsed.config : crawl.config;
      const canonicalizer = new UrlCanonicalizer(config);
      const seeds: string[] = [];
      for (const seed of config.seeds) {
        const c = canonicalizer.canonicalize(seed);
        if (c.ok) seeds.push(c.url);
      }
      const index =
        config.nearDuplicateDistance > 0
          ? new RecentNearDuplicates(config.nearDuplicateDistance, NEAR_DUPLICATE_MEMORY)
          : undefined;
      ctx = {
        config,
        canonicalizer,
        scope: new ScopeRules(config, seeds),
        allowed: new Set(),
        cache: new ClockCache(config.seenCacheSize),
        contentHashes: new LRUCache({ max: 20_000 }),
        quality: new CrawlQuality(config, { ...(index ? { index } : {}), random: deps.random }),
        parked: new LRUCache({ max: 50_000 }),
        credits: new Map(),
        creditsSince: deps.clock.now(),
      };
      contexts.set(crawl.id, ctx);
    }
    for (const host of crawl.allowedHosts ?? []) {
      if (!ctx.allowed.has(host)) {
        ctx.allowed.add(host);
        ctx.scope.allowHost(host);
      }
    }
    return ctx;
  }

  function knownLedger(key: string, seq: string): boolean {
    const known = ledgers.get(key);
    return known !== undefined && known.seq >= seq;
  }

  return async function processBatch(messages, remainingMs = () => Number.POSITIVE_INFINITY) {
    const verdicts = new Map<string, MessageVerdict>();
    const stats: BatchStats = {
      records: messages.length,
      crawled: 0,
      deferred: 0,
      deferredWarm: 0,
      duplicates: 0,
      deadLettered: 0,
      errors: 0,
      captures: 0,
      storedCaptures: 0,
      contentClaims: 0,
      parked: 0,
      credits: 0,
    };

    // 1. Bodies that are not tasks go to the DLQ at once: no retry can make them valid.
    const decoded: Entry[] = [];
    for (const message of messages) {
      const result = decodeTask(message.body);
      if (result.ok) {
        decoded.push({ message, task: result.task });
        continue;
      }
      await deps.deadLetters.send({
        body: message.body,
        groupId: message.groupId ?? 'invalid',
        messageId: message.messageId,
        reason: 'invalid-task',
        detail: result.problem,
        receiveCount: message.receiveCount,
      });
      stats.deadLettered += 1;
      verdicts.set(message.messageId, { kind: 'ack' });
    }

    // 2. Hosts this container knows to be waiting: deferred without reading anything (with the
    //    rest of their group in the batch, which is behind them anyway).
    const entries: Entry[] = [];
    const warmDeferred = new Map<string, MessageVerdict>();
    const now = deps.clock.now();
    for (const entry of decoded) {
      const key = stateKey(entry.task.crawlId, entry.task.host);
      let verdict = warmDeferred.get(key);
      if (verdict === undefined) {
        const wait = (hostClock.get(key) ?? 0) - now;
        if (wait > inlineWaitMs) {
          verdict = { kind: 'retry', seconds: Math.ceil(wait / 1000), why: 'politeness' };
          warmDeferred.set(key, verdict);
        }
      }
      if (verdict === undefined) {
        entries.push(entry);
      } else {
        stats.deferred += 1;
        stats.deferredWarm += 1;
        verdicts.set(entry.message.messageId, verdict);
      }
    }
    if (entries.length === 0) return { verdicts, stats };

    // 3. One read for the rest of the batch: crawls, budgets, host ledgers, robots.
    const state = await deps.table.loadBatchState(stateRequest(entries));
    const crawls = new Map<string, CrawlBatch>();
    const groups = new Map<string, { group: GroupBatch; entries: Entry[] }>();
    const sends: CrawlTask[] = [];
    // A message carries a task's AOPIC key, its cash less the crawl's bonus when sent: the
    // redistributions it waits through are added when it is fetched (see cashNow).
    const frontier: Frontier = {
      enqueue: async (tasks) => {
        for (const t of tasks) sends.push({ ...t, cash: t.cash - bonusOf(state.crawls.get(t.crawlId)) });
      },
    };
    for (const entry of entries) {
      const { task } = entry;
      const crawl = state.crawls.get(task.crawlId);
      if (crawl === undefined) continue;
      if (!crawls.has(crawl.id)) {
        crawls.set(crawl.id, {
          crawl,
          ctx: contextFor(crawl),
          buffer: new CaptureBuffer({ newId }),
          captures: [],
          finished: new Set(),
          fetched: 0,
          parks: [],
          budget: state.budgets.get(crawl.id) ?? 0,
          redirectedHosts: new Set(),
          claimed: [],
        });
      }
      const key = stateKey(task.crawlId, task.host);
      let slot = groups.get(key);
      if (slot === undefined) {
        const host = state.hosts.get(key);
        if (host !== undefined) hostClock.set(key, host.nextAllowedAt);
        if (host?.doneSeq !== undefined) ledgers.set(key, { seq: host.doneSeq, at: now });
        slot = {
          group: {
            crawlId: task.crawlId,
            host: task.host,
            doneSeq: host?.doneSeq ?? '',
            nextAllowedAt: host?.nextAllowedAt ?? 0,
            crawlDelayMs: host?.crawlDelayMs,
            fetched: host?.fetched ?? 0,
            counts: emptyHostCounts(),
            firstSeq: undefined,
            lastSeq: undefined,
            touched: false,
          },
          entries: [],
        };
        groups.set(key, slot);
      }
      slot.entries.push(entry);
    }
    for (const [key, entry] of state.robots) {
      const space = key.indexOf(' ');
      deps.stores(key.slice(0, space)).robots.prime(key.slice(space + 1), entry);
    }

    // Tasks of crawls that do not exist: nothing can ever process them.
    for (const entry of entries) {
      if (crawls.has(entry.task.crawlId)) continue;
      await deadLetter(entry, 'unknown-crawl', `no crawl ${entry.task.crawlId}`);
      verdicts.set(entry.message.messageId, { kind: 'ack' });
    }

    // 4. Groups concurrently (different hosts fetch in parallel), each group's records in order.
    const runs = await Promise.allSettled(
      [...groups.values()].map(async ({ group, entries: groupEntries }) => {
        const batch = crawls.get(group.crawlId) as CrawlBatch;
        let blocked: MessageVerdict | undefined;
        for (const entry of groupEntries) {
          // FIFO: once a record of the group fails, every later record of the group fails too.
          const verdict = blocked ?? (await processRecord(entry, group, batch, stats, frontier, remainingMs));
          if (verdict.kind === 'retry') blocked ??= verdict;
          verdicts.set(entry.message.messageId, verdict);
        }
      }),
    );
    for (const run of runs) if (run.status === 'rejected') throw run.reason;

    // 5. The batch's writes, in the order that makes a crash at any point safe to redeliver.
    try {
      // New links first: a URL claimed by a page must reach the frontier (or the parked set)
      // before the page is acked.
      if (sends.length > 0) await deps.frontier.enqueue(sends);
      for (const batch of crawls.values()) {
        if (batch.parks.length === 0) continue;
        await deps.parked.park(batch.crawl.id, batch.parks);
        for (const { task } of batch.parks) batch.ctx.parked.set(task.fp, true);
        stats.parked += batch.parks.length;
      }
      const bodies: string[] = [];
      for (const batch of crawls.values()) {
        for (const capture of batch.captures) bodies.push(await captureBody(capture, stats));
      }
      if (bodies.length > 0) await deps.captures.send(bodies);
      stats.captures += bodies.length;
      fault('after-captures');
      const writeTime = deps.clock.now();
      await Promise.all(
        [...groups.values()]
          .filter(({ group }) => group.touched)
          .map(async ({ group }) => {
            const counted = await deps.table.updateHost(group.crawlId, group.host, {
              nextAllowedAt: group.nextAllowedAt,
              ...(group.crawlDelayMs === undefined ? {} : { crawlDelayMs: group.crawlDelayMs }),
              counts: group.counts,
              ...(group.firstSeq === undefined || group.lastSeq === undefined
                ? {}
                : { ledger: { firstSeq: group.firstSeq, lastSeq: group.lastSeq } }),
            });
            const key = stateKey(group.crawlId, group.host);
            hostClock.set(key, group.nextAllowedAt);
            if (group.lastSeq !== undefined)
              ledgers.set(key, { seq: sequenceKey(group.lastSeq), at: writeTime });
            if (!counted)
              log(`host ${group.host} of ${group.crawlId}: records already counted (redelivered)`);
          }),
      );
      // The claiming pages are finished (their ledgers say so): their claims may enter the cache.
      for (const b of crawls.values()) for (const fp of b.claimed) b.ctx.cache.add(fp);
      for (const b of crawls.values()) stats.credits += await flushCredits(b.crawl.id, b.ctx, false);
      await Promise.all(
        [...crawls.values()].map(async (b) => {
          if (b.ctx.config.maxPages !== undefined) await deps.table.addBudget(b.crawl.id, b.fetched);
          await deps.table.addAllowedHosts(b.crawl.id, [...b.redirectedHosts]);
        }),
      );
    } catch (error) {
      if (error instanceof InjectedCrashError) throw error;
      // Nothing is lost: every write above is idempotent, so the whole batch is simply redone.
      log(`batch writes failed, the batch will be redelivered: ${describe(error)}`);
      for (const { message, task } of entries) {
        if (!crawls.has(task.crawlId)) continue; // dead-lettered for good
        verdicts.set(message.messageId, { kind: 'retry', seconds: 2, why: 'batch-write-failed' });
      }
    }
    fault('before-ack');
    return { verdicts, stats };
  };

  /** The message body of a capture; one too big for SQS is stored first and pointed at. */
  async function captureBody(capture: CaptureMessage, stats: BatchStats): Promise<string> {
    const body = encodeCaptureMessage(capture);
    if (body.length <= CAPTURE_MESSAGE_LIMIT || capture.records === undefined) return body;
    const now = deps.clock.now();
    const hash = idsHash([capture.page.messageId, capture.page.fp]);
    const key = warcKey(capture.crawlId, now, hash);
    const object = buildWarcObject({
      key,
      hash,
      date: now,
      software,
      fields: { 'crawl-id': capture.crawlId },
      parts: [capture.records],
    });
    await deps.objects.put(key, object.body, 'application/warc');
    stats.storedCaptures += 1;
    const where = object.responses[0]!;
    return encodeCaptureMessage({
      crawlId: capture.crawlId,
      page: capture.page,
      stored: { bucket: deps.objects.bucket, key, offset: where.offset, length: where.length },
    });
  }

  async function deadLetter(entry: Entry, reason: string, detail: string): Promise<void> {
    await deps.deadLetters.send({
      body: entry.message.body,
      groupId: entry.message.groupId ?? 'invalid',
      messageId: entry.message.messageId,
      reason,
      detail,
      receiveCount: entry.message.receiveCount,
    });
  }

  /** The record's handling: it will be acked, so its sequence number joins the ledger. */
  function handled(group: GroupBatch, message: FrontierMessage): void {
    group.touched = true;
    const seq = message.sequenceNumber;
    if (seq === undefined) return;
    group.firstSeq ??= seq;
    group.lastSeq = seq;
  }

  function finish(
    group: GroupBatch,
    batch: CrawlBatch,
    message: FrontierMessage,
    fp: string,
    finished: FinishedUrl,
  ): MessageVerdict {
    countFinished(group.counts, finished);
    if (finished.status !== null) {
      group.fetched += 1;
      batch.fetched += 1;
    }
    batch.finished.add(fp);
    handled(group, message);
    return { kind: 'ack' };
  }

  async function processRecord(
    entry: Entry,
    group: GroupBatch,
    batch: CrawlBatch,
    stats: BatchStats,
    frontier: Frontier,
    remainingMs: () => number,
  ): Promise<MessageVerdict> {
    const { message, task } = entry;
    const { config } = batch.ctx;
    const seq = message.sequenceNumber;
    // Already handled by an earlier delivery whose ledger write went through.
    if (seq !== undefined && group.doneSeq !== '' && sequenceKey(seq) <= group.doneSeq) {
      stats.duplicates += 1;
      return { kind: 'ack' };
    }
    if (batch.finished.has(task.fp)) {
      // A second message of a URL finished earlier in this batch (a late re-send).
      stats.duplicates += 1;
      handled(group, message);
      return { kind: 'ack' };
    }
    if (batch.crawl.status !== 'running') {
      if (batch.crawl.status !== 'cancelled') {
        // A finished crawl gets no new work; a late copy of one of its tasks is dropped.
        stats.duplicates += 1;
        return { kind: 'ack' };
      }
      // Counted, not listed: a cancelled crawl drains its whole queue this way.
      return finish(group, batch, message, task.fp, {
        status: null,
        bytes: 0,
        reason: 'cancelled',
        enqueued: 0,
      });
    }
    if (config.maxPages !== undefined && batch.budget + batch.fetched >= config.maxPages) {
      group.counts.lambda += cashNow(task, batch);
      return finish(group, batch, message, task.fp, {
        status: null,
        bytes: 0,
        reason: 'max-pages',
        enqueued: 0,
      });
    }
    if (group.fetched >= config.maxPagesPerHost) {
      group.counts.lambda += cashNow(task, batch);
      return finish(group, batch, message, task.fp, {
        status: null,
        bytes: 0,
        reason: 'host-budget',
        enqueued: 0,
      });
    }

    try {
      for (;;) {
        const wait = group.nextAllowedAt - deps.clock.now();
        if (wait > inlineWaitMs) {
          stats.deferred += 1;
          return { kind: 'retry', seconds: Math.ceil(wait / 1000), why: 'politeness' };
        }
        if (wait > 0) await deps.sleep(wait);
        // A request must end (and the batch's writes after it) before the invocation times out.
        if (remainingMs() < fetchBudgetMs(config) + WRITE_RESERVE_MS) {
          stats.deferred += 1;
          return { kind: 'retry', seconds: 0, why: 'time' };
        }
        fault('before-crawl', task.url);
        const seenStats: UrlSeenStats = { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 };
        const claimed: string[] = [];
        const content = new StepContentSeen(batch.ctx.contentHashes, deps.stores(batch.crawl.id).contentSeen);
        const owner = ownerTag(task.fp, seq ?? message.messageId, task.host);
        // The page's new links wait here until the step tells where its cash went (see admit).
        const links: CrawlTask[] = [];
        const outcome = await crawlPage(
          crawlDeps(batch, group, seenStats, claimed, content, owner, {
            enqueue: async (tasks) => void links.push(...tasks),
          }),
          { ...task, cash: cashNow(task, batch) },
        );
        stats.crawled += 1;
        if (content.registered) stats.contentClaims += 1;
        group.counts.lookups += seenStats.lookups;
        group.counts.cacheHits += seenStats.cacheHits;
        applyFeedback(group, config, outcome);
        if (outcome.kind === 'robots') continue; // same task again, after the host's gap
        if (outcome.kind === 'retry') {
          // Re-sent as a new message (new dedup id), the original acked; the host item carries
          // the block so the next message of the host is deferred until notBefore.
          await frontier.enqueue([outcome.task]);
          group.nextAllowedAt = Math.max(group.nextAllowedAt, outcome.notBefore);
          group.counts.retries += 1;
          handled(group, message);
          return { kind: 'ack' };
        }
        batch.claimed.push(...claimed);
        const record = outcome.record;
        const parked = await admit(batch, owner, links, outcome.cashFlow, frontier);
        applyCash(group, batch, record, outcome.cashFlow);
        // The gate found the hash registered by another URL: a duplicate (crawlPage did not know).
        if (content.duplicateOf !== undefined && record.duplicateOf === undefined) {
          record.duplicateOf = content.duplicateOf;
        }
        content.finish(task.url);
        return recordDone(
          group,
          batch,
          message,
          task,
          record,
          outcome.enqueued.length,
          record.warc?.file,
          parked,
        );
      }
    } catch (error) {
      if (error instanceof InjectedCrashError) throw error;
      stats.errors += 1;
      const errors = (errorCounts.get(message.messageId) ?? 0) + 1;
      errorCounts.set(message.messageId, errors);
      log(`error on ${task.url} (message ${message.messageId}, error ${errors}): ${describe(error)}`);
      if (errors < errorAttempts && message.receiveCount < deadLetterReceives) {
        return { kind: 'retry', seconds: Math.min(60, 2 ** (errors - 1)), why: 'error' };
      }
      const detail = describe(error);
      await deadLetter(entry, 'processing-error', detail);
      stats.deadLettered += 1;
      errorCounts.delete(message.messageId);
      const record: PageRecord = {
        url: task.url,
        finalUrl: task.url,
        status: null,
        contentType: null,
        kind: 'page',
        depth: task.depth,
        bytes: 0,
        fetchedAt: null,
        durationMs: null,
        title: null,
        contentHash: null,
        outLinks: 0,
        reason: 'dlq',
        detail: `processing-error: ${detail}`,
      };
      return recordDone(group, batch, message, task, record, 0, undefined);
    }
  }

  function recordDone(
    group: GroupBatch,
    batch: CrawlBatch,
    message: FrontierMessage,
    task: CrawlTask,
    record: PageRecord,
    enqueued: number,
    captureRef: string | undefined,
    parked = 0,
  ): MessageVerdict {
    const item = pageItemFromRecord(record, {
      fp: task.fp,
      host: task.host,
      messageId: message.messageId,
      enqueued,
    });
    const records = captureRef === undefined ? undefined : batch.buffer.take({ file: captureRef });
    batch.captures.push({
      crawlId: batch.crawl.id,
      page: item,
      ...(records === undefined ? {} : { records }),
    });
    // crawlPage widened this container's scope to where a seed moved; share it with the others.
    if (task.depth === 0 && record.redirectTo !== undefined && record.reason !== 'too-many-redirects') {
      const host = URL.parse(record.redirectTo)?.hostname;
      if (host !== undefined && !batch.ctx.allowed.has(host)) batch.redirectedHosts.add(host);
    }
    const finished: FinishedUrl = {
      status: record.status,
      bytes: record.bytes,
      enqueued,
      parked,
    };
    if (record.reason !== undefined) finished.reason = record.reason;
    if (record.duplicateOf !== undefined) finished.duplicateOf = record.duplicateOf;
    return finish(group, batch, message, task.fp, finished);
  }

  function applyFeedback(group: GroupBatch, config: CrawlConfig, outcome: CrawlPageOutcome): void {
    const feedback = outcome.feedback;
    if (feedback === undefined) return;
    group.touched = true;
    group.counts.requests += 1;
    if (feedback.crawlDelayMs !== undefined) group.crawlDelayMs = feedback.crawlDelayMs;
    const gap = hostGapMs(config, feedback.responseMs, group.crawlDelayMs);
    group.nextAllowedAt = Math.max(deps.clock.now() + gap, feedback.blockedUntil ?? 0);
  }

  /** The cash a task holds now: its key plus the lambda page's redistributions since it was sent. */
  function cashNow(task: CrawlTask, batch: CrawlBatch): number {
    return task.cash + bonusOf(batch.crawl);
  }

  /**
   * AOPIC admission (SQS has no priorities): a new URL goes to the batch's sends when it received
   * at least `aopicAdmitShare` of what an ordinary link of its page received, and is parked
   * otherwise, for the scheduler to admit richest first. Compared within the page, the rule does
   * not drift as the crawl's cash thins out with depth; what it parks are the links a page makes
   * to its own path pattern (a tenth of a share, SELF_LINK_SHARE): the next month of a calendar,
   * the next page of a list, the next facet. Resolves how many were parked.
   */
  async function admit(
    batch: CrawlBatch,
    owner: string,
    links: readonly CrawlTask[],
    flow: CashFlow | undefined,
    frontier: Frontier,
  ): Promise<number> {
    const { config } = batch.ctx;
    if (links.length === 0) return 0;
    if (config.order !== 'aopic' || config.aopicAdmitShare <= 0 || flow === undefined) {
      await frontier.enqueue(links);
      return 0;
    }
    // Every candidate link is new (a task) or known (a credit): the page's ordinary share.
    const ordinary = splitCash(flow.cash, links.length + flow.credits.length, config.aopicTax).share;
    const bonus = bonusOf(batch.crawl);
    const queue: CrawlTask[] = [];
    let parked = 0;
    for (const task of links) {
      if (task.cash >= config.aopicAdmitShare * ordinary) {
        queue.push(task);
      } else {
        batch.parks.push({ task, owner, key: task.cash - bonus });
        parked += 1;
      }
    }
    if (queue.length > 0) await frontier.enqueue(queue);
    return parked;
  }

  /**
   * Where a finished page's cash went: the tax, and credits to URLs that cannot use them (queued
   * or fetched: SQS cannot reorder a message), to the lambda page; credits to parked URLs to
   * their items, in the next flush. A fetched page's cash becomes history.
   */
  function applyCash(
    group: GroupBatch,
    batch: CrawlBatch,
    record: PageRecord,
    flow: CashFlow | undefined,
  ): void {
    if (flow === undefined) return;
    const { ctx } = batch;
    const seen = deps.stores(batch.crawl.id).seen;
    group.counts.lambda += flow.toLambda;
    if (record.status !== null) group.counts.history += flow.cash;
    for (const { fp, amount } of flow.credits) {
      if (!(ctx.parked.has(fp) || seen.isParked(fp))) {
        group.counts.lambda += amount;
        continue;
      }
      if (ctx.credits.size === 0) ctx.creditsSince = deps.clock.now();
      ctx.credits.set(fp, (ctx.credits.get(fp) ?? 0) + amount);
    }
  }

  /** Writes the credits a crawl's parked URLs collected, when due (or always with `force`). */
  async function flushCredits(crawlId: string, ctx: CrawlContext, force: boolean): Promise<number> {
    const size = ctx.credits.size;
    const due =
      size >= CREDIT_FLUSH_SIZE ||
      deps.clock.now() - ctx.creditsSince >= (deps.creditFlushMs ?? CREDIT_FLUSH_MS);
    if (size === 0 || !(due || force)) return 0;
    const credits = ctx.credits;
    ctx.credits = new Map();
    try {
      for (const fp of await deps.parked.credit(crawlId, credits)) ctx.parked.delete(fp);
    } catch (error) {
      // Credits refine the order of parked URLs; a lost flush costs accuracy, never a URL.
      log(`credits for ${size} parked URLs of ${crawlId} not written: ${describe(error)}`);
    }
    return size;
  }

  function crawlDeps(
    batch: CrawlBatch,
    group: GroupBatch,
    seenStats: UrlSeenStats,
    claimed: string[],
    content: StepContentSeen,
    owner: string,
    frontier: Frontier,
  ): CrawlPageDeps {
    const { ctx } = batch;
    const crawlId = batch.crawl.id;
    const stores = deps.stores(crawlId);
    const seen: SeenStore = {
      // The owner is this message (see ownerTag), not just the page's fingerprint.
      claim: async (fps) => {
        const answers = await stores.seen.claim(fps, owner, content.gate);
        fault('after-claims');
        return answers;
      },
      has: (fp) => stores.seen.has(fp),
    };
    // A URL claimed by another page enters the cache only once that page is finished (its ledger
    // covers its message): until then its owner may still be redelivered, and the redelivery
    // must find the claim in the store (and queue the URL again), not be told "seen" by a cache.
    const cacheable = async (fps: readonly string[]): Promise<boolean[]> => {
      const answers: boolean[] = new Array(fps.length).fill(false);
      const waiting: { index: number; key: string; host: string; seq: string }[] = [];
      for (let i = 0; i < fps.length; i++) {
        const found = stores.seen.ownerOf(fps[i]!);
        if (found === undefined) continue; // not claimed by anyone (a vetoed claim): never cached
        if (found === SEED_OWNER) {
          answers[i] = true;
          continue;
        }
        const tag = parseOwnerTag(found);
        if (tag === undefined) continue;
        const key = stateKey(crawlId, tag.host);
        const seq = sequenceKey(tag.seq);
        if (knownLedger(key, seq)) answers[i] = true;
        else waiting.push({ index: i, key, host: tag.host, seq });
      }
      if (waiting.length === 0) return answers;
      const now = deps.clock.now();
      const stale = [...new Set(waiting.map((w) => w.host))].filter((host) => {
        const known = ledgers.get(stateKey(crawlId, host));
        return known === undefined || now - known.at >= LEDGER_RECHECK_MS;
      });
      if (stale.length > 0) {
        const found = await deps.table.doneSeqs(crawlId, stale);
        for (const host of stale) {
          const seq = found.get(host);
          const key = stateKey(crawlId, host);
          const previous = ledgers.get(key);
          ledgers.set(key, { seq: seq ?? previous?.seq ?? '', at: now });
        }
      }
      for (const w of waiting) if (knownLedger(w.key, w.seq)) answers[w.index] = true;
      return answers;
    };
    return {
      config: ctx.config,
      clock: deps.clock,
      random: deps.random,
      fetcher: deps.fetcher(ctx.config),
      robots: stores.robots,
      // Own claims are cached at the end of the batch, after the ledger: a redelivery of a page
      // that died before it must count (and queue) its children again.
      seen: new UrlSeen(ctx.cache, seen, seenStats, { cacheable, remember: (fps) => claimed.push(...fps) }),
      contentSeen: content,
      frontier,
      pages: batch.buffer,
      results: {
        page: async () => {},
        // Links the defences refused are counted per reason (the cloud's traps report).
        links: async (links: LinkRecord) => {
          const skipped = group.counts.linksSkipped;
          for (const link of links.links) {
            if (link.skipped !== undefined) skipped[link.skipped] = (skipped[link.skipped] ?? 0) + 1;
          }
        },
      },
      canonicalizer: ctx.canonicalizer,
      scope: ctx.scope,
      quality: ctx.quality,
      importanceOf: (cash) => cash / ((batch.crawl.aopic?.history ?? 0) + 1),
    };
  }

  function stateRequest(entries: readonly Entry[]) {
    const crawlIds = new Set<string>();
    const hosts = new Map<string, { crawlId: string; host: string }>();
    const robots = new Map<string, { crawlId: string; origin: string }>();
    for (const { task } of entries) {
      crawlIds.add(task.crawlId);
      hosts.set(stateKey(task.crawlId, task.host), { crawlId: task.crawlId, host: task.host });
      const origin = URL.parse(task.url)?.origin;
      if (origin !== undefined && origin !== 'null' && !deps.stores(task.crawlId).robots.isWarm(origin)) {
        robots.set(stateKey(task.crawlId, origin), { crawlId: task.crawlId, origin });
      }
    }
    // The budget item is read only for crawls that have (or may have, when not seen yet) maxPages.
    const budgets = [...crawlIds].filter((id) => {
      const ctx = contexts.get(id);
      return ctx === undefined || ctx.config.maxPages !== undefined;
    });
    return {
      crawlIds: [...crawlIds],
      budgets,
      hosts: [...hosts.values()],
      robots: [...robots.values()],
    };
  }
}

/** The crawl's AOPIC bonus as its item was read (0 before the scheduler's first step). */
function bonusOf(crawl: CrawlRecord | undefined): number {
  return crawl?.aopic?.bonus ?? 0;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
