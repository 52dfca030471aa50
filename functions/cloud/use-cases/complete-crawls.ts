/**
 * The scheduler's use case: run the AOPIC step of each running crawl, and end the crawls that
 * have nothing left.
 */

import type { Clock } from '../../core/ports.ts';
import { type BackQueueDeps, offerTasks } from '../frontier/back-queues.ts';
import { WORKER_TIMEOUT_MS } from '../lambda-settings.ts';
import {
  type AopicTotals,
  aggregateCounters,
  type CompletionWatch,
  type CrawlCounters,
  type CrawlRecord,
  type HostRecord,
  recordedPages,
} from '../messages/crawl-records.ts';
import type {
  BacklogTurn,
  CloudFrontier,
  HostBacklog,
  ObjectReader,
  QueueDepth,
} from '../ports/cloud-ports.ts';
import { archivedPages } from './archived-pages.ts';
import { crawlProgress, type ProgressTable } from './crawl-progress.ts';
import type { AopicStep } from './redistribute-credit.ts';

/** AOPIC's periodic step (see redistribute-credit.ts), behind a seam so tests can do without. */
export interface CreditRedistribution {
  /**
   * Runs one step for a running crawl. Must be idempotent: ticks may repeat or overlap.
   * `queueEmpty`: the whole queue is empty (the crawl's frontier is dry whatever its totals say).
   */
  redistribute(
    crawl: CrawlRecord,
    counters: CrawlCounters,
    totals: AopicTotals,
    options: { queueEmpty: boolean },
  ): Promise<AopicStep>;
}

/** What the scheduler touches. */
export interface CompleteCrawlsDeps {
  /** The registry and crawl items, their progress and host items (group counts, exact sums). */
  table: ProgressTable;
  frontier: Pick<CloudFrontier, 'depth'>;
  /**
   * The capture queue: a crawl is not done while its last pages wait to be archived (the API
   * lists pages from the archive). Absent: only the frontier is checked.
   */
  captures?: Pick<CloudFrontier, 'depth'>;
  /**
   * The page bucket's index objects (their keys count their page records): with it, a crawl ends
   * on its own work, in the tick that finds it all done and archived (see {@link ownWorkDone}).
   * Absent: only the queue-wide rules below end crawls.
   */
  archive?: Pick<ObjectReader, 'keys'>;
  /**
   * The hosts' back queues, as an offerer uses them. A crawl whose group counts say nothing is
   * queued may still have tasks waiting there (robots.txt's sitemap files are not counted as
   * discovered): it does not end on its own work then, and before it ends on the safety nets below
   * such a host is started again instead. Absent: a host whose back queue version moved since it
   * was last found empty keeps the crawl from ending on its own work, and the safety nets end it.
   */
  backQueues?: BackQueueDeps;
  clock: Clock;
  /** AOPIC step (absent: nothing is ever parked, as for breadth-first crawls). */
  aopic?: CreditRedistribution;
  log?: (line: string) => void;
}

/** Ticks in a row the whole queue must be seen empty before unfinished URLs count as lost. */
export const IDLE_TICKS_TO_END = 2;

/** What one tick did, per crawl id. */
export type TickResult = Record<string, 'running' | 'done' | 'failed' | 'cancelled' | 'missing'>;

function isEmpty(depth: QueueDepth): boolean {
  return depth.visible === 0 && depth.inFlight === 0 && depth.delayed === 0;
}

/** Both queues' depths as one: empty only when both are; the longer visibility timeout. */
async function queueDepth(deps: CompleteCrawlsDeps): Promise<QueueDepth> {
  const [frontier, captures] = await Promise.all([deps.frontier.depth(), deps.captures?.depth()]);
  if (captures === undefined) return frontier;
  return {
    visible: frontier.visible + captures.visible,
    inFlight: frontier.inFlight + captures.inFlight,
    delayed: frontier.delayed + captures.delayed,
    visibilityTimeoutSeconds: Math.max(frontier.visibilityTimeoutSeconds, captures.visibilityTimeoutSeconds),
  };
}

/**
 * For each registered crawl, sums its host ledgers. A crawl whose own work is done ends at once
 * (see {@link ownWorkDone}), whatever other crawls keep the queue doing. Otherwise the rules that
 * need no bookkeeping of the crawl's messages apply (the safety nets). "The queue" below is the frontier and the
 * capture queue together (a crawl's last pages may still be on their way to the archive). The
 * counters are exact, but a parent's `enqueued` lands in its ledger at the end of its batch,
 * after its links were sent, and a batch that dies keeps its messages invisible for the queue's
 * visibility timeout: for a while
 * `finished >= discovered` can hold with work still pending. So a settled crawl ends only when
 *
 * - the counters stayed the same for two ticks and the whole queue is empty now (no message of
 *   any crawl visible, in flight or delayed: nothing can be pending), or
 * - on a queue other crawls keep busy, the counters stayed the same for longer than any pending
 *   batch can stay hidden (visibility timeout + worker timeout).
 *
 * It ends `done`, or `failed` when no URL got an HTTP response, or stays `cancelled`. A crawl
 * whose counters never settle while the whole queue stays empty for {@link IDLE_TICKS_TO_END}
 * ticks lost URLs without the worker (SQS's own redrive after repeated crashes): it ends with
 * them counted as `lost`.
 */
export async function completeCrawls(deps: CompleteCrawlsDeps): Promise<TickResult> {
  const result: TickResult = {};
  let depth: QueueDepth | undefined;
  for (const id of await deps.table.registeredCrawls()) {
    // The running totals (counter shards): O(1) in the crawl's hosts.
    const progress = await crawlProgress(deps.table, id);
    if (progress === undefined) {
      result[id] = 'missing';
      continue;
    }
    const { crawl, view } = progress;
    const { counters } = view;
    const ongoing = crawl.status === 'cancelled' ? 'cancelled' : 'running';
    depth ??= await queueDepth(deps);
    const queue = depth;
    let step: AopicStep | undefined;
    if (crawl.status === 'running' && deps.aopic !== undefined) {
      step = await deps.aopic.redistribute(crawl, counters, progress.aopic, { queueEmpty: isEmpty(queue) });
    }
    // Parked URLs are settled too, unless the crawl may still fetch some (they get admitted).
    const admitting = step !== undefined && (step.admitted > 0 || step.pending);
    const settled = !admitting && isSettled(counters);
    const now = deps.clock.now();
    // Settled; or idle (the whole queue empty); or, with other crawls keeping the queue busy,
    // quiet: nothing of this crawl moved for longer than any of its messages can wait.
    const kind: CompletionWatch['kind'] = settled ? 'settled' : isEmpty(queue) ? 'idle' : 'quiet';
    const signature = signatureOf(counters);
    const previous = crawl.watch;
    const same = previous !== undefined && previous.kind === kind && previous.signature === signature;
    const watch: CompletionWatch = same
      ? { ...previous, ticks: previous.ticks + 1 }
      : { kind, signature, since: now, ticks: 1 };
    const waited = now - watch.since;
    const end = admitting
      ? false
      : kind === 'settled'
        ? (watch.ticks >= 2 && isEmpty(queue)) ||
          waited >= queue.visibilityTimeoutSeconds * 1000 + WORKER_TIMEOUT_MS
        : kind === 'idle'
          ? watch.ticks >= IDLE_TICKS_TO_END
          : waited >= quietLimitMs(crawl, queue);
    // What this crawl admitted is in the queue now: read it again for the next crawl.
    if ((step?.admitted ?? 0) > 0) depth = undefined;
    // Its own work done: no need to wait for the queue or the quiet limit.
    const own = !end && !admitting && settled ? await ownWorkDone(deps, crawl, counters) : undefined;
    if (!end && own === undefined) {
      // Written when it starts and while the tick count matters; `since` alone needs no updates.
      if (!same || watch.ticks <= IDLE_TICKS_TO_END) await deps.table.setWatch(id, watch);
      result[id] = ongoing;
      continue;
    }
    // Work the queues cannot show: tasks in a back queue (robots.txt's sitemap files are not
    // counted as discovered). Its host is started again, and the crawl goes on.
    if (
      own === undefined &&
      deps.backQueues !== undefined &&
      (await restartBackQueues(deps.backQueues, id))
    ) {
      deps.log?.(`crawl ${id}: tasks waiting in back queues; their hosts started again`);
      await deps.table.setWatch(id, { kind, signature, since: now, ticks: 1 });
      result[id] = ongoing;
      continue;
    }
    // The running totals can be short of a batch that died between its ledgers and its shard
    // write: the end is decided on the exact sum of the host ledgers (once per crawl).
    const exact = own ?? (await crawlProgress(deps.table, id, { exact: true }))?.view.counters ?? counters;
    if (own === undefined && kind === 'settled' && !isSettled(exact)) {
      // The running totals will not move again for that dead batch: from now on the exact sum
      // is watched as the running totals were (idle: two ticks; busy queue: the quiet limit).
      const sameExact = watch.exact !== undefined && watch.exact.signature === signatureOf(exact);
      const exactWatch = sameExact
        ? { ...watch.exact!, ticks: watch.exact!.ticks + 1 }
        : { signature: signatureOf(exact), since: now, ticks: 1 };
      const stuck = isEmpty(queue)
        ? exactWatch.ticks >= IDLE_TICKS_TO_END
        : now - exactWatch.since >= quietLimitMs(crawl, queue);
      if (!stuck) {
        if (!sameExact) deps.log?.(`crawl ${id}: running totals settled, the ledgers not yet; going on`);
        await deps.table.setWatch(id, { ...watch, exact: exactWatch });
        result[id] = ongoing;
        continue;
      }
    }
    const lost = Math.max(0, exact.discovered - exact.finished - exact.parked);
    if (lost > 0) {
      deps.log?.(`crawl ${id}: ${kind} with ${lost} URLs unfinished; ending it with them as lost`);
    }
    const status = exact.fetched === 0 ? 'failed' : 'done';
    await deps.table.finishCrawl(id, {
      status,
      finishedAt: new Date(now).toISOString(),
      counters: exact,
      lost,
    });
    result[id] = crawl.status === 'cancelled' ? 'cancelled' : status;
  }
  return result;
}

/**
 * The first turn of each host's back queue that may hold tasks (its version moved since it was last
 * found empty), for the hosts whose back queue is not empty.
 */
async function backQueueHeads(
  backlog: Pick<HostBacklog, 'richest'>,
  crawlId: string,
  hosts: readonly HostRecord[],
): Promise<{ host: string; turn: BacklogTurn }[]> {
  const heads: { host: string; turn: BacklogTurn }[] = [];
  for (const { host, group } of hosts) {
    if (group === undefined || group.version <= group.drained) continue;
    const [turn] = await backlog.richest(crawlId, host, 1);
    if (turn !== undefined) heads.push({ host, turn });
  }
  return heads;
}

/**
 * Offers again the tasks left in the back queues of a crawl's hosts (starting each idle group);
 * resolves whether any was found.
 */
async function restartBackQueues(deps: BackQueueDeps, crawlId: string): Promise<boolean> {
  const heads = await backQueueHeads(deps.backlog, crawlId, await deps.table.hosts(crawlId));
  for (const { host, turn } of heads) {
    await offerTasks(deps, turn.tasks, () => `restart:${crawlId}:${host}:${turn.key}`, { inBackQueue: true });
  }
  return heads.length > 0;
}

/**
 * A crawl's own work is done when, read exactly (its host items, strongly consistent):
 *
 * - every URL is finished or parked for good (the ledgers' sum agrees with the running totals,
 *   which the AOPIC step just judged: a parked URL that could still be admitted was admitted);
 * - none of its messages is in SQS: each host's group size (`group.queued`, counted with the
 *   ledgers; back-queues.ts) is 0. A batch in flight still counts its messages, so a page whose
 *   children finished before its own ledger write keeps the crawl open;
 * - the archive holds a page record for every finished URL that has one (the counts in its index
 *   keys): the API lists every page.
 *
 * Resolves the exact counters then, else undefined. Read only when the running totals say
 * settled: O(hosts) reads and one LIST per 1,000 index objects, in the ticks near the crawl's end.
 */
async function ownWorkDone(
  deps: CompleteCrawlsDeps,
  crawl: CrawlRecord,
  counters: CrawlCounters,
): Promise<CrawlCounters | undefined> {
  if (deps.archive === undefined) return undefined;
  const hosts = await deps.table.hosts(crawl.id);
  const exact = aggregateCounters(crawl.seeds, hosts, crawl.aopic?.admitted ?? 0).counters;
  const agree =
    exact.finished === counters.finished &&
    exact.discovered === counters.discovered &&
    exact.parked === counters.parked;
  if (!agree || !isSettled(exact)) return undefined;
  if (hosts.some((host) => (host.group?.queued ?? 0) > 0)) return undefined;
  const waiting = hosts.some(({ group }) => group !== undefined && group.version > group.drained);
  if (waiting && deps.backQueues === undefined) return undefined;
  if (waiting && (await backQueueHeads(deps.backQueues!.backlog, crawl.id, hosts)).length > 0)
    return undefined;
  const archived = await archivedPages(deps.archive, crawl.id);
  if (archived === undefined || archived < recordedPages(exact)) return undefined;
  deps.log?.(
    `crawl ${crawl.id}: its own work done (${exact.finished} finished, ${archived} page records archived)`,
  );
  return exact;
}

/** What must stand still for a crawl to end: a change restarts its watch. */
function signatureOf(counters: CrawlCounters): string {
  return `${counters.finished}/${counters.discovered}/${counters.parked}/${counters.requests}/${counters.retries}`;
}

function isSettled(counters: CrawlCounters): boolean {
  return counters.finished + counters.parked >= counters.discovered;
}

/**
 * How long a crawl's counters may stand still while it still has work queued: the longest a
 * message of it can wait (Retry-After, Crawl-delay, its gaps, a robots.txt retry), plus a batch
 * hidden by a crash (visibility timeout + worker timeout). Quieter than that, with the queue busy
 * with other crawls' work, the crawl has nothing left in it: a crawl ends on its own work.
 */
export function quietLimitMs(crawl: CrawlRecord, depth: QueueDepth): number {
  const c = crawl.config;
  const longestWait = Math.max(
    c.maxRetryAfterMs,
    c.maxCrawlDelayMs,
    c.maxDelayMs,
    c.delayMs,
    c.robotsErrorTtlMs,
  );
  return longestWait + depth.visibilityTimeoutSeconds * 1000 + WORKER_TIMEOUT_MS;
}
