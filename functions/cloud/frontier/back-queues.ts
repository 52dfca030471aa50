/**
 * Bounded back queues (Mercator's split of the frontier, on AWS): a host's FIFO message group holds
 * at most FRONTIER_GROUP_LIMIT URLs; the rest of the host's frontier waits in its back queue in
 * DynamoDB, richest first, and refills the group as it drains. Why: a FIFO queue looks for
 * available groups among its first 120,000 messages only (one big host's backlog blocks every host
 * queued after it), holds at most 120,000 in flight, deletes a message 14 days after its send, and
 * cannot reorder a group: only the refill can follow AOPIC cash.
 *
 * Who sends to a host's group:
 * - the batch that holds the group (its messages are in flight, so no one else can): at its
 *   commit it refills the group up to the limit from its own new links and the back queue, richest
 *   first, and counts the change in the host's ledger write (exactly once: see `refillPlan`);
 * - anyone else (another host's page, a sitemap, the scheduler, the API's seeds) adds to the back
 *   queue, notes it on the host item (a version), and, when the group holds no message, starts it
 *   with the back queue's richest tasks (`offerTasks`). One starter wins (a conditional write); a
 *   starter that dies before its sends is recognised when its message comes back.
 * The holder that would leave the group empty writes its ledger on condition that the version is
 * still the one it read: an offer made meanwhile fails that write, and the holder reads the back
 * queue again (strongly consistent) before it lets the group go idle. So no task waits in a back
 * queue whose group is idle, and nothing is lost across a crash at any point (every step repeats
 * safely; see docs/cloud.md, "Bounded back queues").
 */
import type { Frontier } from '../../core/ports.ts';
import type { CrawlTask } from '../../core/types.ts';
import type { FaultHook } from '../fault-hook.ts';
import { FRONTIER_GROUP_LIMIT } from '../lambda-settings.ts';
import type { HostGroup } from '../messages/crawl-records.ts';
import { resendId } from '../messages/task-message.ts';
import { type CrawlTableStore, type HostBacklog, stateKey } from '../ports/cloud-ports.ts';

/** Names who offers a host's tasks, the same way each time the offer is made again. */
export type Starter = (crawlId: string, host: string, tasks: readonly CrawlTask[]) => string;

/** A page's links for other hosts are offered in its name: its fingerprint (the tasks' parent). */
export const PARENT_STARTER: Starter = (_crawlId, _host, tasks) =>
  `links:${[...tasks].sort(richestFirst)[0]?.parent ?? ''}`;

/** A crawl's seeds are offered in the crawl's name. */
export const SEEDS_STARTER: Starter = (crawlId) => `seeds:${crawlId}`;

/** Parked URLs admitted by cash are offered in the name of the richest. */
export const ADMIT_STARTER: Starter = (_crawlId, _host, tasks) =>
  `admit:${[...tasks].sort(richestFirst)[0]?.fp ?? ''}`;

/** What offering tasks needs: the host items, the back queues and the raw queue. */
export interface BackQueueDeps {
  table: Pick<CrawlTableStore, 'noteBacklog' | 'startGroup'>;
  backlog: HostBacklog;
  /** Sends to the FIFO queue itself (group = crawl and host). */
  queue: Frontier;
  /** URLs of one host in its group at most (default FRONTIER_GROUP_LIMIT). */
  groupLimit?: number;
  /** Test seam (see fault-hook.ts). */
  fault?: FaultHook;
}

/**
 * The tasks as one send into their group: each gets the send's name in its deduplication id, so
 * SQS drops a copy only when this same send is redone (then it is counted once, too), never a
 * send counted on its own (see CrawlTask.turn).
 */
export function asTurn(tasks: readonly CrawlTask[], send: string): CrawlTask[] {
  const turn = resendId(send);
  return tasks.map((t) => ({ ...t, turn }));
}

/** An idle group as a host item tells it (no item yet: idle, version 0). */
export const IDLE_GROUP: HostGroup = { queued: 0, version: 0, drained: 0 };

/** Most cash first; equal cash by fingerprint, so every reader orders alike. */
export function richestFirst(a: CrawlTask, b: CrawlTask): number {
  return b.cash - a.cash || (a.fp < b.fp ? -1 : a.fp > b.fp ? 1 : 0);
}

/** Tasks by crawl and host, in their order. */
export function byHost(
  tasks: readonly CrawlTask[],
): Map<string, { crawlId: string; host: string; tasks: CrawlTask[] }> {
  const out = new Map<string, { crawlId: string; host: string; tasks: CrawlTask[] }>();
  for (const task of tasks) {
    const key = stateKey(task.crawlId, task.host);
    const entry = out.get(key) ?? { crawlId: task.crawlId, host: task.host, tasks: [] };
    entry.tasks.push(task);
    out.set(key, entry);
  }
  return out;
}

/**
 * Adds tasks to their hosts' back queues and starts each host whose group is idle with its
 * richest tasks. `starter` names the caller stably across its redeliveries (a message, the page
 * whose links these are, a crawl's seeds): a starter that died after winning the start and before
 * sending sends again when it comes back. Resolves how many tasks went to a group now.
 */
export async function offerTasks(
  deps: BackQueueDeps,
  tasks: readonly CrawlTask[],
  starter: Starter,
): Promise<number> {
  const limit = deps.groupLimit ?? FRONTIER_GROUP_LIMIT;
  let sent = 0;
  for (const { crawlId, host, tasks: hostTasks } of byHost(tasks).values()) {
    await deps.backlog.add(crawlId, host, hostTasks);
    const group = await deps.table.noteBacklog(crawlId, host);
    const me = starter(crawlId, host, hostTasks);
    if (group.queued > 0 && group.starter !== me) continue;
    const turn = await deps.backlog.richest(crawlId, host, limit);
    if (turn.length === 0) continue;
    if (!(await deps.table.startGroup(crawlId, host, turn.length, me))) continue;
    deps.fault?.('after-start');
    await deps.queue.enqueue(asTurn(turn, `start ${me}`));
    await deps.backlog.remove(crawlId, host, turn);
    sent += turn.length;
  }
  return sent;
}

/** What the holder of a group sends at its commit, and what waits. */
export interface RefillPlan {
  /** Tasks for the group now, richest first. */
  send: CrawlTask[];
  /** Of `send`, those read from the back queue (taken out after the ledger write). */
  taken: CrawlTask[];
  /** The holder's own new links that do not fit: added to the back queue before the sends. */
  wait: CrawlTask[];
  /** The back queue was read and held nothing more: its version then counts as drained. */
  drained: boolean;
}

/**
 * The refill of a held group: `inGroup` messages stay in it after this batch (deferred ones, and
 * re-sent ones), so `limit - inGroup` may be sent: the richest of the batch's own new links for
 * the host and of its back queue (read only when the host item says it may hold something).
 */
export async function refillPlan(
  backlog: Pick<HostBacklog, 'richest'>,
  crawlId: string,
  host: string,
  own: readonly CrawlTask[],
  inGroup: number,
  group: HostGroup,
  limit: number = FRONTIER_GROUP_LIMIT,
): Promise<RefillPlan> {
  const room = Math.max(0, limit - inGroup);
  let waiting: CrawlTask[] = [];
  let drained = false;
  if (room > 0 && group.version > group.drained) {
    waiting = await backlog.richest(crawlId, host, room);
    drained = waiting.length < room;
  }
  const merged = [...own, ...waiting].sort(richestFirst);
  const send = merged.slice(0, room);
  const sending = new Set(send);
  return {
    send,
    taken: waiting.filter((t) => sending.has(t)),
    wait: own.filter((t) => !sending.has(t)),
    drained,
  };
}

/** A frontier whose sends go through the hosts' back queues (the API's seeds, the scheduler's admissions). */
export class BackQueueFrontier implements Frontier {
  readonly #deps: BackQueueDeps;
  readonly #starter: Starter;

  constructor(deps: BackQueueDeps, starter: Starter) {
    this.#deps = deps;
    this.#starter = starter;
  }

  async enqueue(tasks: readonly CrawlTask[]): Promise<void> {
    await offerTasks(this.#deps, tasks, this.#starter);
  }
}
