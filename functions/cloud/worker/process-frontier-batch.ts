/**
 * The frontier worker's use case: one batch of frontier messages, in explicit phases.
 *
 *   intake   decode (what is not a task: DLQ); defer from the container's memory the records
 *            whose host must still wait (no read); one state read for the rest (crawls, budgets,
 *            host ledgers, robots); the batch laid out per crawl and per FIFO group
 *   step     groups concurrently (different hosts fetch in parallel), each group's records in
 *            order (record-step.ts), the FIFO rule in fifo-groups.ts
 *   commit   the buffered effects, in the order that makes a crash anywhere safe (batch-commit.ts)
 *
 * The container state (container-state.ts) is what a warm container remembers between batches.
 */
import { randomUUID } from 'node:crypto';
import { NO_FAULTS } from '../fault-hook.ts';
import { stateKey } from '../ports/cloud-ports.ts';
import { messageTask } from './aopic-admission.ts';
import { commitBatch } from './batch-commit.ts';
import {
  deadLetterOf,
  decodeBatch,
  deferWarm,
  groupKey,
  nearLastReceive,
  planBatch,
  stateRequest,
  unknownCrawlEntries,
} from './batch-intake.ts';
import {
  type BatchOutcome,
  emptyBatchStats,
  type FrontierMessage,
  type FrontierWorkerDeps,
  type MessageVerdict,
} from './batch-model.ts';
import { WorkerContainer } from './container-state.ts';
import { runGroupInOrder } from './fifo-groups.ts';
import { followRulesNews, mergeStoredRules } from './host-rules-sync.ts';
import { defer, type StepEnv, stepRecord } from './record-step.ts';

/**
 * How long a record may wait for its host inside the invocation, per host the invocation serves
 * meanwhile. At 320 MB a second of waiting costs $4.2 per million pages when it serves one host; a
 * deferral costs the host one more batch cycle (a receive, a visibility change, an invocation, a
 * state read, a ledger write, a counter shard and a capture send), measured at $4-6 per million
 * pages at 1 s per host (docs/cloud.md). So a host alone waits its default gap inline (up to
 * 1.5 s: LONE_HOST_SHARE), and hosts served side by side (a runner's batches, frontier-runner.ts)
 * share the wait: ten hosts wait up to 10 s each (Mercator's back queues, paid by the second).
 */
const DEFAULT_INLINE_WAIT_MS = 1_000;
/**
 * Hosts a host served alone counts as, for its inline wait: a deferral is whole seconds of
 * visibility, so a lone host whose gap is a little over a second (the default politeness, five
 * times a 200-300 ms response) was deferred for 2 s every other page and crawled a third slower
 * (the realistic regime's biggest host, alone for the last 190 s of the crawl).
 */
const LONE_HOST_SHARE = 1.5;
/** The stack's default redrive maxReceiveCount. */
const DEFAULT_MAX_RECEIVES = 10;

/** Hosts an invocation is serving now, shared by the batches it runs side by side (the runner). */
export interface ServedHosts {
  running: number;
}

/**
 * Processes one batch; `remainingMs` is the invocation's time left; `served` counts the hosts the
 * whole invocation serves meanwhile (default: this batch's own), which share each wait.
 */
export type FrontierBatchProcessor = (
  messages: readonly FrontierMessage[],
  remainingMs?: () => number,
  served?: ServedHosts,
) => Promise<BatchOutcome>;

/**
 * Builds the batch processor; call once per container (the returned function keeps the container
 * state: URL-seen caches per crawl, parsed settings, what it knows of hosts, error counts).
 */
export function createFrontierBatchProcessor(deps: FrontierWorkerDeps): FrontierBatchProcessor {
  const fault = deps.fault ?? NO_FAULTS;
  const log = deps.log ?? (() => {});
  const newId = deps.newId ?? randomUUID;
  const software = deps.software ?? 'crawlstack';
  const inlineWaitMs = deps.inlineWaitMs ?? DEFAULT_INLINE_WAIT_MS;
  // The longest inline wait while the invocation serves `hosts` hosts (they share it).
  const inlineLimit = (hosts: number) => inlineWaitMs * Math.max(LONE_HOST_SHARE, hosts);
  const maxReceives = deps.maxReceives ?? DEFAULT_MAX_RECEIVES;
  const container = new WorkerContainer({ clock: deps.clock, random: deps.random });

  return async function processBatch(
    messages,
    remainingMs = () => Number.POSITIVE_INFINITY,
    served = { running: 0 },
  ) {
    const verdicts = new Map<string, MessageVerdict>();
    const stats = emptyBatchStats(messages.length);

    // Intake.
    const decoded = await decodeBatch(messages, deps.deadLetters, verdicts, stats);
    const now = deps.clock.now();
    const hosts = new Set(decoded.map(({ task }) => groupKey(task))).size;
    const entries = deferWarm(
      decoded,
      container,
      { now, inlineWaitMs: inlineLimit(served.running + hosts), maxReceives },
      verdicts,
      stats,
    );
    if (entries.length === 0) return { verdicts, stats };
    const state = await deps.table.loadBatchState(
      stateRequest(entries, container, (crawlId, origin) => deps.stores(crawlId).robots.isWarm(origin)),
    );
    const plan = planBatch(entries, state, container, { now, newId });
    for (const [key, entry] of state.robots) {
      const space = key.indexOf(' ');
      deps.stores(key.slice(0, space)).robots.prime(key.slice(space + 1), entry);
    }
    // Rules are kept per origin: each origin of a group's tasks (a host's ports are apart).
    const batchOrigins = new Map<string, Set<string>>();
    for (const { group, entries: tasks } of plan.groups.values()) {
      const batch = plan.crawls.get(group.crawlId);
      if (batch === undefined || batch.ctx.urlRules === undefined) continue;
      const origins = batchOrigins.get(group.crawlId) ?? new Set<string>();
      batchOrigins.set(group.crawlId, origins);
      for (const { task } of tasks) {
        const origin = URL.parse(task.url)?.origin;
        if (origin === undefined || origins.has(origin)) continue;
        origins.add(origin);
        const stored = state.rules.get(stateKey(group.crawlId, origin));
        mergeStoredRules({ now, log }, batch.ctx, group.crawlId, origin, stored);
      }
    }
    // Rules other containers changed for hosts this one holds pages of (whatever hosts it serves now).
    await Promise.all(
      [...state.rulesNews].map(([crawlId, news]) => {
        const batch = plan.crawls.get(crawlId);
        if (batch === undefined) return undefined;
        const env = { table: deps.table, now, log };
        return followRulesNews(env, batch.ctx, crawlId, news, batchOrigins.get(crawlId) ?? new Set());
      }),
    );
    // Tasks of crawls that do not exist: nothing can ever process them.
    for (const entry of unknownCrawlEntries(entries, plan)) {
      await deps.deadLetters.send(
        deadLetterOf(entry.message, 'unknown-crawl', `no crawl ${entry.task.crawlId}`),
      );
      verdicts.set(entry.message.messageId, { kind: 'ack' });
    }

    // Steps: groups concurrently, each group's records in order; a wait is shared by the groups
    // still running.
    served.running += plan.groups.size;
    const env: StepEnv = {
      deps,
      container,
      fault,
      log,
      inlineWaitMs: () => inlineLimit(served.running),
      errorAttempts: deps.errorAttempts ?? 3,
      maxReceives,
      stats,
      // A message carries a task's AOPIC key (see messageTask): the redistributions it waits
      // through are added when it is fetched.
      sends: plan.sends,
      resend: async (tasks) => {
        for (const t of tasks) plan.resends.push(messageTask(t, state.crawls.get(t.crawlId)));
      },
      remainingMs,
    };
    const runs = await Promise.allSettled(
      [...plan.groups.values()].map(({ group, entries: groupEntries }) =>
        runGroupInOrder(
          groupEntries,
          (entry) => stepRecord(env, entry, group, plan.crawls.get(group.crawlId)!),
          verdicts,
          // Behind a record that must wait: wait too, unless few receives are left (re-sent then).
          (entry, blocked) =>
            blocked.kind === 'retry' && nearLastReceive(entry.message, maxReceives)
              ? defer(env, entry, plan.crawls.get(group.crawlId)!, blocked.seconds, blocked.why)
              : Promise.resolve(blocked),
        ).finally(() => {
          served.running -= 1;
        }),
      ),
    );
    for (const run of runs) if (run.status === 'rejected') throw run.reason;

    // Commit.
    const commitStart = deps.clock.now();
    await commitBatch({ deps, container, fault, log, software, stats }, plan, verdicts);
    stats.commitMs += deps.clock.now() - commitStart;
    fault('before-ack');
    return { verdicts, stats };
  };
}
