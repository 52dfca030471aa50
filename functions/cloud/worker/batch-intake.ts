/**
 * Intake of a frontier batch, before any record runs: decode the bodies (what is not a task goes
 * to the DLQ at once), defer from the container's memory the records whose host must still wait
 * (no read at all), read the state of the rest in one round (crawls, budgets, host ledgers,
 * robots), and lay the batch out per crawl and per FIFO group.
 */

import type { CrawlTask } from '../../core/types.ts';
import { IDLE_GROUP } from '../frontier/back-queues.ts';
import { emptyHostCounts } from '../messages/crawl-records.ts';
import { decodeTask } from '../messages/task-message.ts';
import type { BatchState, BatchStateRequest, DeadLetter } from '../ports/cloud-ports.ts';
import { stateKey } from '../ports/cloud-ports.ts';
import type {
  BatchPlan,
  BatchStats,
  CrawlBatch,
  Entry,
  FrontierMessage,
  FrontierWorkerDeps,
  MessageVerdict,
} from './batch-model.ts';
import { CaptureBuffer } from './capture-buffer.ts';
import type { WorkerContainer } from './container-state.ts';

/** A dead letter for a message, with why. */
export function deadLetterOf(message: FrontierMessage, reason: string, detail: string): DeadLetter {
  return {
    body: message.body,
    groupId: message.groupId ?? 'invalid',
    messageId: message.messageId,
    reason,
    detail,
    receiveCount: message.receiveCount,
  };
}

/**
 * Decodes the batch. Bodies that are not tasks go to the DLQ (no retry can make them valid) and
 * are acknowledged.
 */
export async function decodeBatch(
  messages: readonly FrontierMessage[],
  deadLetters: FrontierWorkerDeps['deadLetters'],
  verdicts: Map<string, MessageVerdict>,
  stats: BatchStats,
): Promise<Entry[]> {
  const decoded: Entry[] = [];
  for (const message of messages) {
    const result = decodeTask(message.body);
    if (result.ok) {
      decoded.push({ message, task: result.task });
      continue;
    }
    await deadLetters.send(deadLetterOf(message, 'invalid-task', result.problem));
    stats.deadLettered += 1;
    verdicts.set(message.messageId, { kind: 'ack' });
  }
  return decoded;
}

/**
 * Defers, without reading anything, the records whose host this container knows must still wait
 * longer than `inlineWaitMs` (with the rest of their group in the batch, which is behind them
 * anyway). A record with few receives left is not deferred here: the step re-sends it (see
 * record-step.ts). Resolves the entries left to run.
 */
export function deferWarm(
  entries: readonly Entry[],
  container: WorkerContainer,
  options: { now: number; inlineWaitMs: number; maxReceives: number },
  verdicts: Map<string, MessageVerdict>,
  stats: BatchStats,
): Entry[] {
  const { now, inlineWaitMs } = options;
  const left: Entry[] = [];
  const deferred = new Map<string, MessageVerdict>();
  for (const entry of entries) {
    const key = stateKey(entry.task.crawlId, entry.task.host);
    let verdict = deferred.get(key);
    if (verdict === undefined && !nearLastReceive(entry.message, options.maxReceives)) {
      const wait = container.hostWait(key, now);
      if (wait > inlineWaitMs) {
        verdict = { kind: 'retry', seconds: Math.ceil(wait / 1000), why: 'politeness' };
        deferred.set(key, verdict);
      }
    }
    if (verdict === undefined) {
      left.push(entry);
    } else {
      stats.deferred += 1;
      stats.deferredWarm += 1;
      verdicts.set(entry.message.messageId, verdict);
    }
  }
  return left;
}

/**
 * True when a deferral now could let SQS move the message to the DLQ (one more receive after this
 * one reaches the redrive's count): the worker re-sends such a message instead of deferring it.
 */
export function nearLastReceive(message: FrontierMessage, maxReceives: number): boolean {
  return message.receiveCount >= maxReceives - 1;
}

/**
 * What the batch reads: its crawls, budgets (crawls with maxPages), hosts, robots entries not
 * warm, host rules and the crawls' rules news.
 */
export function stateRequest(
  entries: readonly Entry[],
  container: WorkerContainer,
  isRobotsWarm: (crawlId: string, origin: string) => boolean,
): BatchStateRequest {
  const crawlIds = new Set<string>();
  const hosts = new Map<string, { crawlId: string; host: string }>();
  const robots = new Map<string, { crawlId: string; origin: string }>();
  const origins = new Map<string, { crawlId: string; origin: string }>();
  for (const { task } of entries) {
    crawlIds.add(task.crawlId);
    hosts.set(stateKey(task.crawlId, task.host), { crawlId: task.crawlId, host: task.host });
    const origin = URL.parse(task.url)?.origin;
    if (origin === undefined || origin === 'null') continue;
    origins.set(stateKey(task.crawlId, origin), { crawlId: task.crawlId, origin });
    if (!isRobotsWarm(task.crawlId, origin))
      robots.set(stateKey(task.crawlId, origin), { crawlId: task.crawlId, origin });
  }
  // The budget item is read only for crawls that have (or may have, when not seen yet) maxPages.
  const budgets = [...crawlIds].filter((id) => {
    const ctx = container.knownContext(id);
    return ctx === undefined || ctx.config.maxPages !== undefined;
  });
  // An origin's stored duplicate-URL rules come with its host's state, for crawls that learn them (or may).
  const rules = [...origins.values()].filter(({ crawlId }) => {
    const ctx = container.knownContext(crawlId);
    return ctx === undefined || ctx.urlRules !== undefined;
  });
  // Their crawls' rules news: rules another container changed for hosts this one holds pages of.
  const rulesNews = [...new Set(rules.map(({ crawlId }) => crawlId))];
  return {
    crawlIds: [...crawlIds],
    budgets,
    hosts: [...hosts.values()],
    robots: [...robots.values()],
    rules,
    rulesNews,
  };
}

/**
 * Lays the batch out from its state: one {@link CrawlBatch} per crawl, one group per crawl and
 * host (its host item read into memory, written once at the end). Entries of crawls that do not
 * exist are left out (the caller dead-letters them).
 */
export function planBatch(
  entries: readonly Entry[],
  state: BatchState,
  container: WorkerContainer,
  options: { now: number; newId: () => string },
): BatchPlan {
  const plan: BatchPlan = { crawls: new Map(), groups: new Map(), sends: [], resends: [], entries: [] };
  for (const entry of entries) {
    const { task } = entry;
    const crawl = state.crawls.get(task.crawlId);
    if (crawl === undefined) continue;
    plan.entries.push(entry);
    if (!plan.crawls.has(crawl.id))
      plan.crawls.set(crawl.id, newCrawlBatch(crawl, container, state, options.newId));
    const key = stateKey(task.crawlId, task.host);
    let slot = plan.groups.get(key);
    if (slot === undefined) {
      const host = state.hosts.get(key);
      if (host !== undefined) container.rememberHost(key, host.nextAllowedAt);
      if (host?.doneSeq !== undefined) container.rememberLedger(key, host.doneSeq, options.now);
      // A probe made by any container (or by this one before it forgot the crawl) is not made again.
      const { quality, rootsHandled } = plan.crawls.get(crawl.id)!.ctx;
      if (host?.rootHandled === true) rootsHandled.set(task.host, true);
      for (const [origin, answer] of Object.entries(host?.probes ?? {})) {
        if (quality.probeAnswer(origin) === undefined) quality.restoreProbe(origin, answer);
      }
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
          probes: {},
          credits: new Map(),
          demoted: [],
          state: host?.group ?? IDLE_GROUP,
          recentlyFetched: host?.recentlyFetched ?? [],
          fetchedNow: [],
          rootCredit: host?.rootHandled === true ? 0 : (host?.rootCredit ?? 0),
        },
        entries: [],
      };
      plan.groups.set(key, slot);
    }
    slot.entries.push(entry);
  }
  return plan;
}

function newCrawlBatch(
  crawl: CrawlBatch['crawl'],
  container: WorkerContainer,
  state: BatchState,
  newId: () => string,
): CrawlBatch {
  return {
    crawl,
    ctx: container.contextFor(crawl),
    buffer: new CaptureBuffer({ newId }),
    captures: [],
    finished: new Set(),
    fetched: 0,
    parks: [],
    budget: state.budgets.get(crawl.id) ?? 0,
    dispatchCash: state.dispatch.get(crawl.id)?.cash ?? 0,
    dispatchAt: state.dispatch.get(crawl.id)?.at ?? 0,
    dispatched: 0,
    dispatchRead: {
      cash: state.dispatch.get(crawl.id)?.cash ?? 0,
      at: state.dispatch.get(crawl.id)?.at ?? 0,
    },
    redirectedHosts: new Set(),
    claimed: [],
    lookups: [],
  };
}

/** The tasks of entries whose crawl is unknown (to dead-letter). */
export function unknownCrawlEntries(entries: readonly Entry[], plan: BatchPlan): Entry[] {
  return entries.filter((entry) => !plan.crawls.has(entry.task.crawlId));
}

/** A task's politeness key in the batch state. */
export function groupKey(task: Pick<CrawlTask, 'crawlId' | 'host'>): string {
  return stateKey(task.crawlId, task.host);
}
