/**
 * The runner: one worker invocation serves many hosts, not one batch (Mercator's back queues, in
 * Lambda's terms). At the default politeness (1 s per host) a batch from the FIFO frontier holds
 * mostly one host's messages; fetched one by one, each page paid its own receive, visibility
 * change, invocation, state read, capture send and ledger write (about $6 per million pages).
 *
 * So an invocation, besides the batch the event source handed it, receives messages itself until
 * it holds {@link RUNNER_HOSTS} hosts (FIFO keeps each host's group locked while its messages are
 * in flight, so no other container fetches those hosts meanwhile), and runs them all as one round
 * of the batch processor: hosts side by side, each host's messages in order, each waiting its
 * gap inside the invocation while enough hosts share the wait (process-frontier-batch.ts). A round
 * commits once (links, captures, one ledger write per host, one counter shard), then:
 *
 *   - the event batch's messages: deleted by the event source when the invocation returns (the
 *     response lists the others), their visibility changed at once, so a deferred host is free
 *     for other containers (and this one) during the rest of the invocation;
 *   - the messages it received itself: deleted after their round's commit (at-least-once: a
 *     container that dies mid-round leaves them in flight, and they return after the queue's
 *     visibility timeout to a ledger that knows what was done), the others' visibility changed.
 *
 * Then another round while a request could still start (the step's own time check: the fetch
 * budget and the write reserve), up to {@link RUNNER_ROUNDS}. No extension of visibility is
 * needed: an invocation (45 s) ends long before the frontier's visibility timeout (225 s). The
 * number of runners is the event source's maxConcurrency (one invocation per poller).
 */
import { CLOUD_FETCH_BUDGET_MS, WRITE_RESERVE_MS } from '../../lambda-settings.ts';
import type { FrontierReceiver, MessageVisibility } from '../ports/cloud-ports.ts';
import type { BatchStats, FrontierMessage } from './batch-model.ts';
import { fifoResponse } from './fifo-groups.ts';
import type { FrontierBatchProcessor } from './process-frontier-batch.ts';

/**
 * Hosts a runner holds at most in one round. Ten: ten bodies at the 10 MB default cap fit the
 * worker's 256 MB beside the crawl contexts (container-state.ts); at 1 s per host and 300 ms of
 * inline wait per host served, ten hosts keep each host's 1 s gap inside the invocation.
 */
export const RUNNER_HOSTS = 10;
/** Receives a round makes at most to find its hosts (FIFO hands out one group's messages first). */
export const RUNNER_RECEIVES = 10;
/** Rounds per invocation at most (a round ends when its hosts are done or must wait too long). */
export const RUNNER_ROUNDS = 4;
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
  receives?: number;
  rounds?: number;
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
 * Serves one invocation: the event batch plus what the runner receives, in rounds. Without a
 * receiver or a deadline (`remainingMs` undefined: tests, direct calls) it is exactly one batch.
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
  const maxRounds = settings.rounds ?? RUNNER_ROUNDS;
  const receiver = remainingMs === undefined ? undefined : deps.receiver;
  const outcome: RunnerOutcome = { failed: [], rounds: [], received: 0, removed: 0 };
  const roundLeft = () =>
    remainingMs === undefined
      ? Number.POSITIVE_INFINITY
      : remainingMs() - CLOUD_FETCH_BUDGET_MS - WRITE_RESERVE_MS;

  // Round 1: the event batch, with more hosts when it holds few.
  let { messages: own, dry } =
    receiver === undefined || roundLeft() < RUNNER_MIN_ROUND_MS
      ? { messages: [], dry: true }
      : await receiveHosts(receiver, batch, hosts, settings.receives ?? RUNNER_RECEIVES);
  const first = await processBatch([...batch, ...own], remainingMs);
  outcome.rounds.push(first.stats);
  const response = fifoResponse(batch, first.verdicts);
  outcome.failed = response.failed;
  await changeVisibility(deps, response.changes, log);
  outcome.received += own.length;
  outcome.removed += await settle(deps, receiver, own, first.verdicts, log);

  // More rounds of hosts the runner receives itself, while requests can still start.
  for (let round = 1; receiver !== undefined && round < maxRounds; round++) {
    const last = outcome.rounds[outcome.rounds.length - 1]!;
    // Stop when the queue had no other host to give (a receive came back empty), when a round
    // fetched nothing (its hosts must all still wait: do not churn) or could not commit.
    if (dry || last.crawled === 0 || last.commitsFailed > 0 || roundLeft() < RUNNER_MIN_ROUND_MS) break;
    ({ messages: own, dry } = await receiveHosts(receiver, [], hosts, settings.receives ?? RUNNER_RECEIVES));
    if (own.length === 0) break;
    const next = await processBatch(own, remainingMs);
    outcome.rounds.push(next.stats);
    outcome.received += own.length;
    outcome.removed += await settle(deps, receiver, own, next.verdicts, log);
  }
  return outcome;
}

/**
 * Receives until the held messages (`held` plus the received) span `hosts` FIFO groups, a
 * receive comes back empty (`dry`), or `receives` calls were made.
 */
export async function receiveHosts(
  receiver: FrontierReceiver,
  held: readonly FrontierMessage[],
  hosts: number,
  receives: number,
): Promise<{ messages: FrontierMessage[]; dry: boolean }> {
  const groups = new Set(held.map((m) => m.groupId ?? m.messageId));
  const messages: FrontierMessage[] = [];
  for (let i = 0; i < receives && groups.size < hosts; i++) {
    const got = await receiver.receive(10);
    if (got.length === 0) return { messages, dry: true };
    for (const m of got) {
      messages.push(m);
      groups.add(m.groupId ?? m.messageId);
    }
  }
  return { messages, dry: false };
}

/**
 * The fate of the messages the runner received itself, after their round's commit: deleted when
 * done (the FIFO rule: only those with no failed record before them in their group), the others
 * made visible again after their wait. Resolves how many were deleted.
 */
async function settle(
  deps: RunnerDeps,
  receiver: FrontierReceiver | undefined,
  own: readonly FrontierMessage[],
  verdicts: Parameters<typeof fifoResponse>[1],
  log: (line: string) => void,
): Promise<number> {
  if (receiver === undefined || own.length === 0) return 0;
  const { failed, changes } = fifoResponse(own, verdicts);
  const failedIds = new Set(failed);
  const done = own.filter((m) => !failedIds.has(m.messageId)).map((m) => m.receiptHandle);
  await changeVisibility(deps, changes, log);
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
