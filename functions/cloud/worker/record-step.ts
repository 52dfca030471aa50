/**
 * The per-record step of the frontier worker: one message of a FIFO group, in the group's order.
 * It decides from the batch's state in memory (the host's ledger and politeness, the crawl's
 * status and budgets) whether the record is done already, dropped, deferred or crawled; runs the
 * shared crawl step (`crawlPage`: at most one request) with the worker's stores; and commits the
 * effects it returns into the batch's buffers (links to send, URLs to park, the capture, the link
 * graph, the host's counts) and its lessons into the crawl's defences. Nothing durable is written
 * here except URL-seen claims and content hashes, which are safe to repeat, and a robots.txt entry
 * after the sitemap files it names are sent; the batch commit writes the rest.
 */
import type { LRUCache } from 'lru-cache';
import type { CrawlConfig } from '../../core/config.ts';
import type { SeenStore } from '../../core/ports.ts';
import { type CashFlow, importanceOf } from '../../core/scheduling/aopic.ts';
import { applyRequestFeedback, doublingBackoffMs } from '../../core/scheduling/politeness.ts';
import { applyLessons, archiveCaptures } from '../../core/step/commit-effects.ts';
import {
  type CrawlPageDeps,
  type CrawlPageOutcome,
  crawlPage,
  isWholePage,
  SEED_OWNER,
} from '../../core/step/crawl-page.ts';
import { judgeStepFailure } from '../../core/step/error-policy.ts';
import { unfetchedRecord } from '../../core/step/page-record.ts';
import { type Readmitted, readmitted, readmitUrls } from '../../core/step/readmit-urls.ts';
import { isRobotsSitemap, type StepEffects } from '../../core/step/step-effects.ts';
import type { CrawlTask, LinkRecord, PageRecord } from '../../core/types.ts';
import { isRootUrl } from '../../core/url/canonicalize.ts';
import { UrlSeen, type UrlSeenStats } from '../../core/url-seen/url-seen.ts';
import { type FaultHook, InjectedCrashError } from '../fault-hook.ts';
import { fetchBudgetMs } from '../fetch-budget.ts';
import { offerTasks, owedWith, richestFirst } from '../frontier/back-queues.ts';
import { WRITE_RESERVE_MS } from '../lambda-settings.ts';
import {
  countFinished,
  type FinishedUrl,
  ownerTag,
  pageItemFromRecord,
  parseOwnerTag,
  sequenceKey,
} from '../messages/crawl-records.ts';
import { resendId } from '../messages/task-message.ts';
import { stateKey } from '../ports/cloud-ports.ts';
import { archiveRevisits } from '../use-cases/archive-visits.ts';
import {
  admitLinks,
  bonusOf,
  cashNow,
  HOLD_BACK_WAIT_S,
  heldBack,
  messageTask,
  noteDispatch,
  routeCash,
} from './aopic-admission.ts';
import { deadLetterOf, nearLastReceive } from './batch-intake.ts';
import {
  type BatchStats,
  backQueueDeps,
  type CrawlBatch,
  type Entry,
  type FrontierMessage,
  type FrontierWorkerDeps,
  type GroupBatch,
  type MessageVerdict,
} from './batch-model.ts';
import type { CrawlContext, WorkerContainer } from './container-state.ts';
import { refreshHostRules, saveHostRules } from './host-rules-sync.ts';
import { StepContentSeen } from './step-content-seen.ts';

/** A host ledger read for `cacheable` is not repeated sooner than this. */
const LEDGER_RECHECK_MS = 2_000;

/** What every record step of a batch shares. */
export interface StepEnv {
  deps: FrontierWorkerDeps;
  container: WorkerContainer;
  fault: FaultHook;
  log: (line: string) => void;
  /**
   * How long a record may wait for its host inside the invocation now: waiting is billed as wall
   * time, so the longer the more hosts are served meanwhile (see process-frontier-batch.ts).
   */
  inlineWaitMs: () => number;
  /** Processing errors of one message in this container before it goes to the DLQ. */
  errorAttempts: number;
  /** The redrive's maxReceiveCount: the worker finishes a message before it (see batch-model.ts). */
  maxReceives: number;
  stats: BatchStats;
  /**
   * The batch's link sends, as messages (see messageTask): the commit sends them before anything
   * is acknowledged.
   */
  sends: CrawlTask[];
  /** Sends again the task of one of the batch's own messages, acknowledged in its place (buffered too). */
  resend: (tasks: readonly CrawlTask[]) => Promise<void>;
  /** Time left in the invocation, ms. */
  remainingMs: () => number;
}

/**
 * Runs one record; resolves its verdict. Only an {@link InjectedCrashError} escapes. A host's
 * root page holds what other hosts' pages credited it while it waited (GroupBatch.rootCredit):
 * for the hold-back, the fetch (its links share it) and a resend; once its message is done, the
 * ledger write takes that credit off the host item and marks the root handled.
 */
export async function stepRecord(
  env: StepEnv,
  entry: Entry,
  group: GroupBatch,
  batch: CrawlBatch,
): Promise<MessageVerdict> {
  const credit = group.rootCredit > 0 && isRootUrl(entry.task.url) ? group.rootCredit : 0;
  if (credit === 0) return stepTask(env, entry, group, batch);
  const credited = { ...entry, task: { ...entry.task, cash: entry.task.cash + credit } };
  const verdict = await stepTask(env, credited, group, batch);
  if (verdict.kind === 'ack') {
    group.rootUsed = (group.rootUsed ?? 0) + credit;
    group.rootCredit = 0;
    group.touched = true;
  }
  return verdict;
}

async function stepTask(
  env: StepEnv,
  entry: Entry,
  group: GroupBatch,
  batch: CrawlBatch,
): Promise<MessageVerdict> {
  const { message, task } = entry;
  const { config } = batch.ctx;
  const seq = message.sequenceNumber;
  // Already handled by an earlier delivery whose ledger write went through.
  if (seq !== undefined && group.doneSeq !== '' && sequenceKey(seq) <= group.doneSeq) {
    env.stats.duplicates += 1;
    return { kind: 'ack' };
  }
  if (message.receiveCount >= env.maxReceives) {
    // Received as often as the redrive allows and never finished nor re-sent: its invocations
    // crashed or timed out. Finished here as `dlq` (recorded, counted), not moved by SQS unseen.
    const detail = `received ${message.receiveCount} times without finishing (crashes or timeouts)`;
    await env.deps.deadLetters.send(deadLetterOf(message, 'max-receives', detail));
    env.stats.deadLettered += 1;
    return recordDone(
      group,
      batch,
      message,
      task,
      unfetchedRecord(task, 'dlq', `max-receives: ${detail}`),
      0,
      undefined,
    );
  }
  if (batch.finished.has(task.fp) || group.recentlyFetched.includes(task.fp)) {
    // A second message of a URL finished earlier in this batch (a late re-send), or fetched by one
    // of the host's last batches (a copy a crash left in its group: see FETCHES_REMEMBERED).
    env.stats.duplicates += 1;
    markHandled(group, message);
    return { kind: 'ack' };
  }
  if (batch.crawl.status !== 'running') {
    if (batch.crawl.status !== 'cancelled') {
      // A finished crawl gets no new work; a late copy of one of its tasks is dropped.
      env.stats.duplicates += 1;
      return { kind: 'ack' };
    }
    // Counted, not listed: a cancelled crawl drains its whole queue this way.
    return finish(group, batch, message, task.fp, unfetched('cancelled'));
  }
  const overBudget =
    config.maxPages !== undefined && batch.budget + batch.fetched >= config.maxPages
      ? 'max-pages'
      : group.fetched >= config.maxPagesPerHost
        ? 'host-budget'
        : undefined;
  if (overBudget !== undefined) {
    // A page the budgets leave unfetched gives its cash to the lambda page (AOPIC's tax).
    group.counts.lambda += cashNow(task, batch.crawl);
    return finish(group, batch, message, task.fp, unfetched(overBudget));
  }
  if (heldBack(batch, task, env.deps.clock.now())) {
    env.stats.heldBack += 1;
    // Deferred, a held task keeps its whole host waiting (FIFO), with the URLs of its back queue
    // behind it: when a richer one waits there, the task goes back there instead, and the refill
    // sends the host's richest.
    if (await backQueueGoesFirst(env, group, batch, task)) {
      env.stats.heldBackReturned += 1;
      group.demoted.push(task);
      markHandled(group, message);
      return { kind: 'ack' };
    }
    return defer(env, entry, batch, HOLD_BACK_WAIT_S, 'hold-back');
  }
  try {
    return await crawlRecord(env, entry, group, batch);
  } catch (error) {
    if (error instanceof InjectedCrashError) throw error;
    return failRecord(env, entry, group, batch, error);
  }
}

/**
 * True when a task richer than the held one waits in the group's back queue (one strongly
 * consistent read of its first turn, once per group and batch; none when the host item says the
 * back queue is empty): its first turn's head is richer, or a URL there is owed a credit larger
 * than the held task's cash (a URL the host's pages link to, queued poor: the refill adds the
 * credit, see back-queues.ts). Given back, the held task lets the refill send the host's richest first.
 * When the held task is the richest its host has, it waits (deferred): giving it back would only
 * send it round again. Not in a group just started: its starter's turn may still be in the back
 * queue, and its first refill reads none (batch-commit.ts, `fresh`).
 */
async function backQueueGoesFirst(
  env: StepEnv,
  group: GroupBatch,
  batch: CrawlBatch,
  held: CrawlTask,
): Promise<boolean> {
  if (group.state.starter !== undefined || group.state.version <= group.state.drained) return false;
  if (group.backQueueHead === undefined) {
    // A turn is stored richest task first (turnsOf), and the first turn is the richest.
    const [turn] = await env.deps.backlog.richest(group.crawlId, group.host, 1);
    group.backQueueHead = turn?.tasks[0] ?? null;
  }
  // Both are keys (cash less the bonus when sent, see messageTask): they compare as their cash.
  const head = group.backQueueHead;
  if (head !== null && richestFirst(head, held) < 0) return true;
  // A credited URL holds at least its credit (a key plus the bonus is never below 0).
  const owed = owedWith(group.state.credits, group.credits);
  return [...owed.values()].some((credit) => credit.amount > cashNow(held, batch.crawl));
}

/** The politeness gate and the crawl step, repeated while the step only prepared the origin. */
async function crawlRecord(
  env: StepEnv,
  entry: Entry,
  group: GroupBatch,
  batch: CrawlBatch,
): Promise<MessageVerdict> {
  const { deps, stats } = env;
  const { message, task } = entry;
  const { config } = batch.ctx;
  const seq = message.sequenceNumber;
  for (;;) {
    const wait = group.nextAllowedAt - deps.clock.now();
    if (wait > env.inlineWaitMs()) return defer(env, entry, batch, Math.ceil(wait / 1000), 'politeness');
    // A wait after which no request could start anyway (the invocation's time) is not waited.
    if (wait > 0 && env.remainingMs() - wait < fetchBudgetMs(config) + WRITE_RESERVE_MS)
      return defer(env, entry, batch, Math.ceil(wait / 1000), 'time');
    if (wait > 0) await deps.sleep(wait);
    // A request must end (and the batch's writes after it) before the invocation times out.
    if (env.remainingMs() < fetchBudgetMs(config) + WRITE_RESERVE_MS)
      return defer(env, entry, batch, 0, 'time');
    env.fault('before-crawl', task.url);
    const rulesEnv = { table: deps.table, now: deps.clock.now(), log: env.log };
    // duplicate-URL rules are kept per origin (docs/duplicate-urls.md)
    const origin = new URL(task.url).origin;
    await refreshHostRules(rulesEnv, batch.ctx, batch.crawl.id, origin);
    const seenStats: UrlSeenStats = { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 };
    const claimed: string[] = [];
    const content = new StepContentSeen(batch.ctx.contentHashes, deps.stores(batch.crawl.id).contentSeen, {
      everyPage: batch.ctx.urlRules?.learnsFrom(origin) ?? false,
    });
    const owner = ownerTag(task.fp, seq ?? message.messageId, task.host);
    const buffers: StepBuffers = { seenStats, claimed, content, owner, gated: true };
    const ports = stepDeps(env, batch, buffers);
    // A large body keeps its share of the container's body budget until this step is done with it
    // (its capture compressed into the batch's buffer, the reference put into its record).
    const scope = deps.stepScope ?? ((step) => step());
    const stepStart = deps.clock.now();
    const outcome = await scope(async () => {
      const stepped = await crawlPage(ports, { ...task, cash: cashNow(task, batch.crawl) });
      // robots.txt responses are not archived in the cloud (no `robots` store)
      await archiveCaptures(
        { pages: batch.buffer },
        stepped,
        stepped.kind === 'done' ? stepped.record : undefined,
      );
      return stepped;
    });
    stats.stepMs += deps.clock.now() - stepStart;
    // What the defences learned (a probe's answer), before the probe answer is read below.
    applyLessons(batch.ctx.quality, outcome.lessons);
    // The page's new links wait here until the outcome tells where its cash went (see admitLinks).
    const links = await takeEffects(env, batch, group, owner, outcome, message.receiveCount > 1);
    stats.crawled += 1;
    if (content.registered) stats.contentClaims += 1;
    group.counts.lookups += seenStats.lookups;
    group.counts.cacheHits += seenStats.cacheHits;
    stats.seenLookups += seenStats.lookups;
    stats.seenCacheHits += seenStats.cacheHits;
    applyFeedback(group, config, outcome, deps.clock.now());
    if (outcome.kind === 'robots') {
      // Keep a probe's answer with the crawl (the host item), not only in this container.
      const origin = outcome.probe === undefined ? undefined : URL.parse(outcome.probe)?.origin;
      const answer = origin === undefined ? undefined : batch.ctx.quality.probeAnswer(origin);
      if (origin !== undefined && answer !== undefined) group.probes[origin] = answer;
      continue; // same task again, after the host's gap
    }
    noteDispatch(batch, task, deps.clock.now());
    if (outcome.kind === 'retry') {
      // Re-sent as a new message (new dedup id), the original acked; the host item carries
      // the block so the next message of the host is deferred until notBefore.
      await env.resend([outcome.task]);
      group.nextAllowedAt = Math.max(group.nextAllowedAt, outcome.notBefore);
      group.counts.retries += 1;
      markHandled(group, message);
      return { kind: 'ack' };
    }
    const record = outcome.record;
    // The gate found the hash registered by another URL, or a page that registered nothing finds
    // it now: a duplicate (crawlPage did not know). Before the links are admitted: a rule the pair
    // blocks gives back the URLs it merged, which go with them.
    if (record.duplicateOf === undefined && record.status !== null) await content.check(task.url);
    let readmittedUrls = 0;
    if (content.duplicateOf !== undefined && record.duplicateOf === undefined) {
      record.duplicateOf = content.duplicateOf;
      const back = teachRules(batch.ctx, task, record);
      // claimed without the content gate, which refuses a duplicate page's new links
      buffers.gated = false;
      if (back.length > 0) {
        const { enqueued } = await readmitUrls(ports, task, back);
        for (const t of enqueued) links.push(t);
        readmittedUrls = enqueued.length;
      }
    }
    batch.claimed.push(...claimed);
    const parked = await admit(env, batch, owner, links, outcome.cashFlow, task.sitemap !== undefined);
    routeCash(
      group,
      batch.ctx,
      record,
      outcome.cashFlow,
      (fp) => deps.stores(batch.crawl.id).seen.isParked(fp),
      deps.clock.now(),
    );
    content.finish(task.url);
    // The host's rules, stored when this page changed them (rare: see host-rules-sync.ts).
    await saveHostRules({ ...rulesEnv, now: deps.clock.now() }, batch.ctx, batch.crawl.id, origin);
    return recordDone(
      group,
      batch,
      message,
      task,
      record,
      outcome.enqueued.length + readmittedUrls,
      record.warc?.file,
      parked,
      outcome.links,
    );
  }
}

/**
 * The wait before a failed record's retry n: 1 s × 2^(n-1), at most 60 s (see StepRetryPolicy in
 * functions/core/step/error-policy.ts for why it is not the embedded crawler's retryBackoffMs).
 */
const ERROR_RETRY_BASE_MS = 1000;
const ERROR_RETRY_CAP_MS = 60_000;

/**
 * A record whose processing threw (an adapter error, a bug). Worth retrying (judgeError): the
 * record fails, with a short backoff, until its errors in this container or its receives reach
 * the limit; not worth it, or at the limit: it goes to the DLQ with the error and is finished as
 * `dlq` (a page record, counted), so its crawl still completes.
 */
async function failRecord(
  env: StepEnv,
  entry: Entry,
  group: GroupBatch,
  batch: CrawlBatch,
  error: unknown,
): Promise<MessageVerdict> {
  const { message, task } = entry;
  env.stats.errors += 1;
  const errors = env.container.countError(message.messageId);
  const verdict = judgeStepFailure(error, errors - 1, {
    limit: env.errorAttempts - 1,
    waitMs: (n) => doublingBackoffMs(ERROR_RETRY_BASE_MS, ERROR_RETRY_CAP_MS, n),
  });
  const judged = verdict.error;
  env.log(`error on ${task.url} (message ${message.messageId}, error ${errors}): ${judged.message}`);
  if (verdict.kind === 'retry' && !nearLastReceive(message, env.maxReceives)) {
    return { kind: 'retry', seconds: verdict.waitMs / 1000, why: 'error' };
  }
  await env.deps.deadLetters.send(deadLetterOf(message, 'processing-error', judged.message));
  env.stats.deadLettered += 1;
  env.container.forgetErrors(message.messageId);
  const record = unfetchedRecord(task, 'dlq', `processing-error: ${judged.message}`);
  return recordDone(group, batch, message, task, record, 0, undefined);
}

/**
 * A record that must wait: its message returns to the queue after `seconds` (a deferral counts
 * as a receive). When few receives are left, the task is re-sent as a new message instead (with
 * its own deduplication id) and this one acknowledged: waiting for politeness must never use up
 * the receives after which SQS moves a message to the DLQ (at the default 1 s per host, a batch
 * of ten records of one host fetches one and defers nine, again and again).
 */
export async function defer(
  env: StepEnv,
  entry: Entry,
  batch: CrawlBatch,
  seconds: number,
  why: string,
): Promise<MessageVerdict> {
  const { message, task } = entry;
  if (nearLastReceive(message, env.maxReceives)) {
    await env.resend([
      { ...task, cash: cashNow(task, batch.crawl), resentFrom: resendId(message.messageId) },
    ]);
    env.stats.resent += 1;
    return { kind: 'ack' };
  }
  env.stats.deferred += 1;
  return { kind: 'retry', seconds, why };
}

/** Queues or parks the page's new links (see admitLinks); resolves how many were parked. */
async function admit(
  env: StepEnv,
  batch: CrawlBatch,
  owner: string,
  links: readonly CrawlTask[],
  flow: CashFlow | undefined,
  fromSitemap: boolean,
): Promise<number> {
  const { queue, parks } = admitLinks(
    links,
    flow,
    batch.ctx.config,
    bonusOf(batch.crawl),
    owner,
    fromSitemap,
  );
  for (const t of queue) env.sends.push(messageTask(t, batch.crawl));
  batch.parks.push(...parks);
  return parks.length;
}

/**
 * Commits what the crawl step returned (step-effects.ts) but its links: the sitemap files a
 * site's robots.txt names are sent at once, before the robots.txt entry that says they were is
 * stored (a step that dies between them reads robots.txt again; they hold no cash: never parked,
 * and the guessed /sitemap.xml is a link of the root page, which goes with the links); the link
 * graph's line is kept for the capture, with the links the defences refused counted per reason
 * (the cloud's traps report). Resolves the other admitted tasks, in order: the page's new links,
 * which wait for admitLinks.
 */
async function takeEffects(
  env: StepEnv,
  batch: CrawlBatch,
  group: GroupBatch,
  owner: string,
  effects: StepEffects,
  redelivered: boolean,
): Promise<CrawlTask[]> {
  const sitemaps = effects.enqueued.filter(isRobotsSitemap);
  if (sitemaps.length > 0)
    await offerTasks(
      backQueueDeps(env.deps),
      sitemaps.map((t) => messageTask(t, batch.crawl)),
      () => `sitemaps:${owner}`,
      { mayRepeat: () => redelivered },
    );
  if (effects.storeRobots !== undefined) {
    const { origin, entry } = effects.storeRobots;
    await env.deps.stores(batch.crawl.id).robots.put(origin, entry);
  }
  const skipped = group.counts.linksSkipped;
  for (const link of effects.links?.links ?? []) {
    if (link.skipped !== undefined) skipped[link.skipped] = (skipped[link.skipped] ?? 0) + 1;
  }
  return effects.enqueued.filter((t) => !isRobotsSitemap(t));
}

/**
 * Tells the origin's duplicate-URL rules of a duplicate found after the crawl step (by the gate or
 * the store's read), which the step's own observation could not name: a pair they learn from.
 * Resolves what a rule it blocked gives back.
 */
function teachRules(ctx: CrawlContext, task: CrawlTask, record: PageRecord): Readmitted[] {
  if (ctx.urlRules === undefined || !isWholePage(record) || record.contentHash === undefined) return [];
  const { duplicateOf } = record;
  if (duplicateOf === undefined) return [];
  return readmitted(
    ctx.urlRules.observePage({ url: task.url, contentHash: record.contentHash, duplicateOf }),
  );
}

/** The record's handling: it will be acked, so its sequence number joins the ledger. */
function markHandled(group: GroupBatch, message: FrontierMessage): void {
  group.touched = true;
  const seq = message.sequenceNumber;
  if (seq === undefined) return;
  group.firstSeq ??= seq;
  group.lastSeq = seq;
}

/** A URL finished without a request, for `reason`. */
function unfetched(reason: string): FinishedUrl {
  return { status: null, bytes: 0, reason, enqueued: 0 };
}

/**
 * Counts a finished URL. Called directly (no page record, no capture) only for the reasons in
 * UNRECORDED_REASONS (crawl-records.ts): the scheduler expects an archived page record for every
 * other finished URL before it ends a crawl on its own work.
 */
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
    group.fetchedNow.push(fp);
  }
  batch.finished.add(fp);
  markHandled(group, message);
  return { kind: 'ack' };
}

/** A finished URL: its page record goes into the batch's captures, its counts into the group. */
function recordDone(
  group: GroupBatch,
  batch: CrawlBatch,
  message: FrontierMessage,
  task: CrawlTask,
  record: PageRecord,
  enqueued: number,
  captureRef: string | undefined,
  parked = 0,
  graph?: LinkRecord,
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
    ...(records?.payloadDigest === undefined ? {} : { payloadDigest: records.payloadDigest }),
    // The page's line of the link graph (the archiver writes it beside the index).
    ...(graph === undefined ? {} : { links: graph.links }),
  });
  // crawlPage widened this container's scope to where a seed moved; share it with the others.
  if (task.depth === 0 && record.redirectTo !== undefined && record.reason !== 'too-many-redirects') {
    const host = URL.parse(record.redirectTo)?.hostname;
    if (host !== undefined && !batch.ctx.allowed.has(host)) batch.redirectedHosts.add(host);
  }
  const finished: FinishedUrl = { status: record.status, bytes: record.bytes, enqueued, parked };
  if (record.reason !== undefined) finished.reason = record.reason;
  if (record.duplicateOf !== undefined) finished.duplicateOf = record.duplicateOf;
  // A recrawl round's summary: what each revisit found, and the pages its archive did not hold.
  if (batch.crawl.recrawl !== undefined && record.status !== null && record.sitemap === undefined) {
    const verdict = record.change ?? 'new';
    group.counts.byChange[verdict] = (group.counts.byChange[verdict] ?? 0) + 1;
  }
  return finish(group, batch, message, task.fp, finished);
}

/** The host's next allowed time after a request (the gap, Retry-After, backoff). */
function applyFeedback(group: GroupBatch, config: CrawlConfig, outcome: CrawlPageOutcome, now: number): void {
  const feedback = outcome.feedback;
  if (feedback === undefined) return;
  group.touched = true;
  group.counts.requests += 1;
  group.nextAllowedAt = applyRequestFeedback(config, group, feedback, now).nextAllowedAt;
}

/** What one crawl step of the record collects besides its outcome. */
interface StepBuffers {
  seenStats: UrlSeenStats;
  /** Fingerprints this page claimed and queued (cached after the batch's ledgers). */
  claimed: string[];
  content: StepContentSeen;
  /** The claim owner: this message (see ownerTag). */
  owner: string;
  /** Claims pass the content gate (the crawl step's); not those of URLs a blocked rule gives back. */
  gated: boolean;
}

/** The crawl step's ports for one record: the crawl's stores, with the worker's URL-seen rules. */
function stepDeps(env: StepEnv, batch: CrawlBatch, buffers: StepBuffers): CrawlPageDeps {
  const { deps, fault } = env;
  const { ctx } = batch;
  const stores = deps.stores(batch.crawl.id);
  const seen: SeenStore = {
    // The owner is this message (see ownerTag), not just the page's fingerprint.
    claim: (fps, _owner, options) =>
      timed(env, 'urlSeenMs', async () => {
        const answers = await stores.seen.claim(fps, buffers.owner, {
          ...options,
          ...(buffers.gated ? { gate: buffers.content.gate } : {}),
        });
        fault('after-claims');
        return answers;
      }),
  };
  const fetcher = deps.fetcher(ctx.config);
  return {
    config: ctx.config,
    clock: deps.clock,
    random: deps.random,
    fetcher: {
      fetch: (request) => timed(env, 'fetchMs', () => fetcher.fetch(request)),
      close: () => fetcher.close(),
    },
    robots: stores.robots,
    // Own claims are cached at the end of the batch, after the ledger: a redelivery of a page
    // that died before it must count (and queue) its children again.
    seen: new UrlSeen(ctx.cache, seen, buffers.seenStats, {
      cacheable: (fps) => cacheable(env, batch.crawl.id, fps, ctx.pendingClaims),
      claimedByOther: (fp) => {
        const owner = ctx.pendingClaims.get(fp);
        return owner !== undefined && owner !== buffers.owner;
      },
      remember: (fps) => buffers.claimed.push(...fps),
      // The URL-seen trace of the cache study: the batch's look-ups in the order they happened.
      ...(ctx.config.seenTrace ? { trace: (fps: readonly string[]) => void batch.lookups.push(...fps) } : {}),
    }),
    contentSeen: buffers.content,
    canonicalizer: ctx.canonicalizer,
    scope: ctx.scope,
    quality: ctx.quality,
    ...(ctx.urlRules === undefined ? {} : { urlRules: ctx.urlRules }),
    ...(deps.gunzip === undefined ? {} : { gunzip: deps.gunzip }),
    importanceOf: (cash) => importanceOf(cash, batch.crawl.aopic?.history ?? 0),
    // A recrawl round sends each page's validators back and judges it against the archive.
    ...(batch.crawl.recrawl === undefined || deps.archive === undefined
      ? {}
      : { revisits: archiveRevisits(deps.archive, batch.crawl.recrawl.archive, batch.crawl.id) }),
  };
}

/** Runs `work`, adding its wall time to the batch's `field` (where the batch's time went). */
async function timed<T>(env: StepEnv, field: 'fetchMs' | 'urlSeenMs', work: () => Promise<T>): Promise<T> {
  const start = env.deps.clock.now();
  try {
    return await work();
  } finally {
    env.stats[field] += env.deps.clock.now() - start;
  }
}

/**
 * Which URLs claimed by other pages may enter the cache: a URL claimed by another page enters it
 * only once that page is finished (its host's ledger covers its message). Until then its owner
 * may still be redelivered, and the redelivery must find the claim in the store (and queue the
 * URL again), not be told "seen" by a cache. Such a claim is kept in `pending` with its owner:
 * every other page is told "seen" from there (`claimedByOther`), the owner is not.
 */
async function cacheable(
  env: StepEnv,
  crawlId: string,
  fps: readonly string[],
  pending: LRUCache<string, string>,
): Promise<boolean[]> {
  const { container, deps } = env;
  const stores = deps.stores(crawlId);
  const answers: boolean[] = new Array(fps.length).fill(false);
  const waiting: { index: number; key: string; host: string; seq: string; owner: string }[] = [];
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
    if (container.ledgerCovers(key, seq)) answers[i] = true;
    else waiting.push({ index: i, key, host: tag.host, seq, owner: found });
  }
  if (waiting.length === 0) return answers;
  const now = deps.clock.now();
  const stale = [...new Set(waiting.map((w) => w.host))].filter((host) => {
    const known = container.ledger(stateKey(crawlId, host));
    return known === undefined || now - known.at >= LEDGER_RECHECK_MS;
  });
  if (stale.length > 0) {
    const found = await deps.table.doneSeqs(crawlId, stale);
    for (const host of stale) {
      const key = stateKey(crawlId, host);
      const seq = found.get(host) ?? container.ledger(key)?.seq ?? '';
      container.rememberLedger(key, seq, now);
    }
  }
  for (const w of waiting) {
    if (container.ledgerCovers(w.key, w.seq)) {
      answers[w.index] = true;
      pending.delete(fps[w.index]!);
    } else {
      pending.set(fps[w.index]!, w.owner);
    }
  }
  return answers;
}
