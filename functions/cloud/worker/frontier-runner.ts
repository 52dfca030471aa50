/**
 * The runner: one worker invocation serves many hosts, not one batch (Mercator's back queues, in
 * Lambda's terms). At the default politeness (1 s per host) a batch from the FIFO frontier holds
 * mostly one host's messages; fetched one by one, each page paid its own receive, visibility
 * change, invocation, state read, capture send and ledger write (about $6 per million pages).
 *
 * So an invocation, besides the batch the event source handed it, receives messages itself while
 * it holds fewer than {@link RUNNER_HOSTS} hosts, and runs each receive (mostly one host's
 * messages: FIFO hands out a group's messages together) as a batch of the batch processor, side
 * by side with the others. FIFO keeps a host's group locked while its messages are in flight, so
 * no other container fetches those hosts meanwhile; each host's messages run in order, and each
 * waits its host's gap inside the invocation while enough hosts share the wait (the batches count
 * the invocation's hosts together: process-frontier-batch.ts). Each batch commits as before
 * (links, captures, one ledger write for the host's pages, one counter shard), then:
 *
 *   - the event batch's messages: the response lists the failed ones for the event source, their
 *     visibility changed at once (a deferred host is free for other containers, and this one,
 *     during the rest of the invocation); the done ones deleted after their commit, as its own
 *     (below): a message holds its host's group until it is deleted, and the event source deletes
 *     only when the invocation returns;
 *   - the messages it received itself: deleted after their batch's commit (at-least-once: a
 *     container that dies mid-batch leaves them in flight, and they return after the queue's
 *     visibility timeout to a ledger that knows what was done), the others' visibility changed.
 *
 * When a batch ends, and every {@link RUNNER_POLL_MS} while it holds few hosts, the runner receives
 * again (often the same host's next messages; hosts others deferred come back visible). It stops
 * taking hosts, for a while, when a receive comes back empty; for good when no
 * request could start any more (the fetch budget and the write reserve before the timeout), after
 * {@link RUNNER_IDLE_ROUNDS} batches in a row that fetched nothing, or when a commit failed. No
 * visibility extension is needed: an invocation (45 s) ends long before the frontier's visibility
 * timeout (225 s). The number of runners is the event source's maxConcurrency (one invocation per
 * poller), so no lease is needed either: hosts side by side = pollers × hosts per invocation
 * (docs/cloud.md, "How many hosts at once").
 */
import { CLOUD_FETCH_BUDGET_MS, DEFAULT_HOSTS_PER_INVOCATION, WRITE_RESERVE_MS } from '../lambda-settings.ts';
import type { FrontierReceiver, MessageVisibility } from '../ports/cloud-ports.ts';
import type { BatchStats, FrontierMessage } from './batch-model.ts';
import { fifoResponse } from './fifo-groups.ts';
import type { FrontierBatchProcessor, ServedHosts } from './process-frontier-batch.ts';

/**
 * Hosts a runner holds at most in one round unless its settings say otherwise (the stack sets
 * them: crawlstack:workerHostsPerInvocation, and sizes the worker's memory for them,
 * lambda-settings.ts). Twenty: what fits the worker's 320 MB now that bodies past 256 KiB share one
 * budget (docs/cloud.md, "How many hosts at once"); the more hosts an invocation holds, the more
 * of them share each second of its waiting.
 */
export const RUNNER_HOSTS = DEFAULT_HOSTS_PER_INVOCATION;
/**
 * While it holds fewer hosts than it could, the runner receives again this often (hosts that other
 * containers deferred come back visible at any time; an empty receive costs an eighth of a second of
 * a 320 MB invocation).
 */
export const RUNNER_POLL_MS = 1_000;
/** Batches in a row that fetched nothing after which the runner takes no more hosts. */
export const RUNNER_IDLE_ROUNDS = 3;
/** A round starts only if this much time is left for requests after the fetch budget and writes. */
export const RUNNER_MIN_ROUND_MS = 2_000;

/** What the runner uses besides the batch processor. */
export interface RunnerDeps {
  messages: MessageVisibility;
  receiver?: FrontierReceiver;
  log?: (line: string) => void;
}

/** Tunables (tests and the bench); defaults above. */
export interface RunnerSettings {
  hosts?: number;
  idleRounds?: number;
  pollMs?: number;
}

/** What an invocation did: the event batch's failed ids (for the response) and per-round stats. */
export interface RunnerOutcome {
  /** Message ids of the event batch for `batchItemFailures`. */
  failed: string[];
  rounds: BatchStats[];
  /** Messages this invocation received itself, and of them deleted. */
  received: number;
  removed: number;
}

/**
 * Serves one invocation: the event batch, and batches of hosts the runner receives itself while
 * it holds fewer than `hosts` hosts, side by side. Without a receiver or a deadline (`remainingMs`
 * undefined: tests, direct calls) it is exactly the event batch.
 */
export async function serveInvocation(
  processBatch: FrontierBatchProcessor,
  deps: RunnerDeps,
  batch: readonly FrontierMessage[],
  remainingMs: (() => number) | undefined,
  settings: RunnerSettings = {},
): Promise<RunnerOutcome> {
  const log = deps.log ?? (() => {});
  const hosts = settings.hosts ?? RUNNER_HOSTS;
  const maxIdle = settings.idleRounds ?? RUNNER_IDLE_ROUNDS;
  const pollMs = settings.pollMs ?? RUNNER_POLL_MS;
  const receiver = remainingMs === undefined ? undefined : deps.receiver;
  const outcome: RunnerOutcome = { failed: [], rounds: [], received: 0, removed: 0 };
  const served: ServedHosts = { running: 0 };
  const running = new Set<Promise<void>>();
  let held = 0; // FIFO groups in flight in this invocation's batches
  let idle = 0; // batches in a row that fetched nothing (their hosts must all still wait)
  let stop = false;
  let crash: unknown;
  const timeLeft = () =>
    remainingMs === undefined ? 0 : remainingMs() - CLOUD_FETCH_BUDGET_MS - WRITE_RESERVE_MS;

  const start = (messages: readonly FrontierMessage[], own: boolean) => {
    const groups = new Set(messages.map((m) => m.groupId ?? m.messageId)).size;
    held += groups;
    const run = (async () => {
      const result = await processBatch(messages, remainingMs, served);
      outcome.rounds.push(result.stats);
      idle = result.stats.crawled > 0 ? 0 : idle + 1;
      if (result.stats.commitsFailed > 0 || idle >= maxIdle) stop = true;
      const { failed, changes } = fifoResponse(messages, result.verdicts);
      if (!own) outcome.failed = failed;
      await changeVisibility(deps, changes, log);
      // The event batch's done messages too are deleted now, not when the invocation returns: a
      // message holds its FIFO group (its host) until it is deleted, and the invocation may go on
      // for the rest of its 45 s. The event source deletes them again when it returns (a delete
      // of a deleted message's receipt handle changes nothing): one more request an invocation.
      const removed = receiver === undefined ? 0 : await removeDone(receiver, messages, failed, log);
      if (own) outcome.removed += removed;
    })()
      .catch((error: unknown) => {
        crash ??= error;
        stop = true;
      })
      .finally(() => {
        held -= groups;
        running.delete(run);
      });
    running.add(run);
  };

  // Takes more hosts while it holds fewer than `hosts`, until a receive comes back empty (the
  // next try waits for one of its batches to end: that host's next messages may be there).
  const fill = async (): Promise<void> => {
    while (receiver !== undefined && !stop && held < hosts && timeLeft() >= RUNNER_MIN_ROUND_MS) {
      const messages = await receiver.receive(10);
      if (messages.length === 0) return;
      outcome.received += messages.length;
      start(messages, true);
    }
  };

  start(batch, false);
  await fill();
  while (running.size > 0) {
    // A batch ended (its host's next messages may be there), or a poll's time passed while the
    // runner holds few hosts (hosts deferred by others come back visible any time).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, pollMs);
    });
    await Promise.race([...running, poll]);
    clearTimeout(timer);
    await fill();
  }
  if (crash !== undefined) throw crash;
  return outcome;
}

/**
 * Deletes a batch's done messages after their round's commit (the FIFO rule: only those with no
 * failed record before them in their group; the failed ones were made visible again after their
 * wait). Resolves how many were deleted.
 */
async function removeDone(
  receiver: FrontierReceiver,
  messages: readonly FrontierMessage[],
  failed: readonly string[],
  log: (line: string) => void,
): Promise<number> {
  const failedIds = new Set(failed);
  const done = messages.filter((m) => !failedIds.has(m.messageId)).map((m) => m.receiptHandle);
  if (done.length === 0) return 0;
  try {
    const refused = await receiver.remove(done);
    if (refused > 0) log(`${refused} deletions refused; those messages return and are acked by their ledger`);
    return done.length - refused;
  } catch (error) {
    log(`deletions failed (${String(error)}); the messages return and are acked by their ledger`);
    return 0;
  }
}

async function changeVisibility(
  deps: RunnerDeps,
  changes: Parameters<MessageVisibility['changeVisibility']>[0],
  log: (line: string) => void,
): Promise<void> {
  if (changes.length === 0) return;
  try {
    const refused = await deps.messages.changeVisibility(changes);
    if (refused > 0)
      log(`${refused} visibility changes refused; those messages return after the queue's timeout`);
  } catch (error) {
    log(`visibility changes failed (${String(error)}); the messages return after the queue's timeout`);
  }
}
