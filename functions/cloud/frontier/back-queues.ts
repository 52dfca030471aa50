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
 * - anyone else (another host's page, a sitemap, the scheduler, the API's seeds) starts an idle
 *   group with its own richest tasks straight away (one conditional write; what does not fit waits
 *   in the back queue, added first), or, when the group is busy, adds to the back queue and notes
 *   it on the host item (a version), starting the group after all if it went idle meanwhile
 *   (`offerTasks`). One starter wins (a conditional write); a starter that dies before its sends
 *   is recognised when its message comes back.
 * The holder that would leave the group empty writes its ledger on condition that the version is
 * still the one it read: an offer made meanwhile fails that write, and the holder reads the back
 * queue again (strongly consistent) before it lets the group go idle. So no task waits in a back
 * queue whose group is idle, and nothing is lost across a crash at any point (every step repeats
 * safely; see docs/cloud.md, "Bounded back queues").
 */
import { createHash } from 'node:crypto';
import type { Frontier } from '../../core/ports.ts';
import { readsFirst } from '../../core/sitemap/sitemap-plan.ts';
import type { CrawlTask, Fingerprint } from '../../core/types.ts';
import type { FaultHook } from '../fault-hook.ts';
import { BACKLOG_TURN, FRONTIER_GROUP_LIMIT } from '../lambda-settings.ts';
import type { BacklogCredits, HostGroup } from '../messages/crawl-records.ts';
import { resendId } from '../messages/task-message.ts';
import { type BacklogTurn, type HostBacklog, type HostItems, stateKey } from '../ports/cloud-ports.ts';

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
  table: HostItems;
  backlog: HostBacklog;
  /** Sends to the FIFO queue itself (group = crawl and host). */
  queue: Frontier;
  /** URLs of one host in its group at most (default FRONTIER_GROUP_LIMIT). */
  groupLimit?: number;
  /** Test seam (see fault-hook.ts). */
  fault?: FaultHook;
  /** Groups this process saw busy lately: their offers skip the start that would fail. */
  hints?: GroupHints;
}

/**
 * Which hosts' groups this process saw busy in the last {@link GroupHints.ttlMs}: an offer to a
 * busy group goes to its back queue at once instead of paying a start that fails (a failed
 * conditional write costs a write unit too). Only a hint: a wrong one costs a write, never a task.
 */
export class GroupHints {
  readonly #busy = new Map<string, number>();
  readonly #now: () => number;
  readonly ttlMs: number;
  readonly #max: number;

  constructor(now: () => number, ttlMs = 5_000, max = 10_000) {
    this.#now = now;
    this.ttlMs = ttlMs;
    this.#max = max;
  }

  busy(key: string): boolean {
    const until = this.#busy.get(key);
    if (until === undefined) return false;
    if (until > this.#now()) return true;
    this.#busy.delete(key);
    return false;
  }

  seen(key: string, busy: boolean): void {
    this.#busy.delete(key);
    if (!busy) return;
    if (this.#busy.size >= this.#max) {
      const oldest = this.#busy.keys().next().value;
      if (oldest !== undefined) this.#busy.delete(oldest);
    }
    this.#busy.set(key, this.#now() + this.ttlMs);
  }
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

/**
 * Most cash first; equal cash in the order given (sorts are stable): a page's links of equal cash
 * keep the page's order, as they did in a FIFO group (its first forms of a URL before later ones).
 */
export function richestFirst(a: CrawlTask, b: CrawlTask): number {
  return rankOf(b) - rankOf(a);
}

/**
 * What orders a host's back queue: the task's cash, but a sitemap file the site names goes before
 * every page, as the embedded crawler reads it (readsFirst): it holds no cash, and by cash alone a
 * late host's sitemap index and its children waited behind all its pages, so a budget ran out
 * before the pages only they list (the quality bench's host 10, in some cloud runs).
 */
export function rankOf(task: CrawlTask): number {
  return task.sitemap !== undefined && readsFirst(task.sitemap) ? Number.POSITIVE_INFINITY : task.cash;
}

/**
 * A string that sorts in the opposite order of the number (bytewise, as DynamoDB compares
 * strings): the IEEE 754 bits made order-preserving (sign bit flipped for positives, every bit
 * for negatives), then inverted.
 */
export function descendingKey(value: number): string {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(value === 0 ? 0 : value);
  const negative = (bytes[0]! & 0x80) !== 0;
  for (let i = 0; i < 8; i++) {
    const ascending = negative ? bytes[i]! ^ 0xff : i === 0 ? bytes[i]! ^ 0x80 : bytes[i]!;
    bytes[i] = ascending ^ 0xff;
  }
  return bytes.toString('hex');
}

/**
 * Tasks cut into turns of at most BACKLOG_TURN, richest first (each fingerprint once), each with
 * its key: its richest task's cash and a hash of its tasks, so the same tasks give the same keys.
 */
export function turnsOf(tasks: readonly CrawlTask[]): BacklogTurn[] {
  const unique = new Map<string, CrawlTask>();
  for (const task of tasks) if (!unique.has(task.fp)) unique.set(task.fp, task);
  const sorted = [...unique.values()].sort(richestFirst);
  const turns: BacklogTurn[] = [];
  for (let i = 0; i < sorted.length; i += BACKLOG_TURN) {
    const chunk = sorted.slice(i, i + BACKLOG_TURN);
    const hash = createHash('sha256')
      .update(chunk.map((t) => `${t.fp}:${t.cash}`).join(','))
      .digest('hex')
      .slice(0, 16);
    turns.push({ key: `${descendingKey(rankOf(chunk[0]!))}#${hash}`, tasks: chunk });
  }
  return turns;
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
 *
 * `inBackQueue`: the tasks wait in their back queue already (the scheduler restarting a host):
 * the group is started from the back queue as it stands, never with the tasks directly, which
 * would leave them waiting there too and send them twice.
 *
 * `mayRepeat`: these tasks may repeat an offer made by a starter that died after it (a redelivered
 * page). A task whose own starter name (`starter` of that task alone: its page, for PARENT_STARTER)
 * is among the starts a holder has ended was in that start's offer, which sent its richest tasks
 * and added the rest to the back queue: it is not offered again. Offered again, it started the
 * group anew when idle (the group's count stayed above 0, the send dropped by SQS) or went to a
 * busy group's back queue, whence it was sent and counted a second time (docs/cloud.md, "Bounded
 * back queues"). The other tasks are offered as usual (a page the first try deferred has links
 * never offered). One strongly consistent read, only for such offers.
 */
export async function offerTasks(
  deps: BackQueueDeps,
  tasks: readonly CrawlTask[],
  starter: Starter,
  options: { inBackQueue?: boolean; mayRepeat?: (tasks: readonly CrawlTask[]) => boolean } = {},
): Promise<number> {
  const limit = deps.groupLimit ?? FRONTIER_GROUP_LIMIT;
  let sent = 0;
  for (const { crawlId, host, tasks: offered } of byHost(tasks).values()) {
    let hostTasks: readonly CrawlTask[] = offered;
    if (options.mayRepeat?.(offered) === true) {
      const { ended = [] } = await deps.table.hostGroup(crawlId, host);
      hostTasks = offered.filter((task) => !ended.includes(starter(crawlId, host, [task])));
      if (hostTasks.length === 0) continue;
    }
    const me = starter(crawlId, host, hostTasks);
    const key = stateKey(crawlId, host);
    let waiting: readonly CrawlTask[] = options.inBackQueue === true ? [] : hostTasks;
    if (options.inBackQueue !== true && deps.hints?.busy(key) !== true) {
      const direct = await startWithOwn(deps, crawlId, host, hostTasks, me, limit);
      deps.hints?.seen(key, direct.sent === 0);
      sent += direct.sent;
      if (direct.sent > 0) continue;
      waiting = direct.waiting;
    }
    if (waiting.length > 0) await deps.backlog.add(crawlId, host, waiting);
    const group = await deps.table.noteBacklog(crawlId, host);
    deps.hints?.seen(key, group.queued > 0 && group.starter !== me);
    if (group.queued > 0 && group.starter !== me) continue;
    const start = takeTurns(await deps.backlog.richest(crawlId, host, turnsFor(limit)), limit);
    const turn = onceEach(start.flatMap((t) => t.tasks));
    if (turn.length === 0) continue;
    if (!(await deps.table.startGroup(crawlId, host, turn.length, me))) continue;
    deps.fault?.('after-start');
    await deps.queue.enqueue(asTurn(turn, `start ${me}`));
    await deps.backlog.remove(crawlId, host, start);
    sent += turn.length;
  }
  return sent;
}

/**
 * An idle group started with the offer's own richest tasks, sent straight to it: no back-queue
 * item to add and take out again (the back queue of an idle group is empty). What does not fit
 * waits in the back queue, added before the start notes it, so the group's holder reads it there.
 * Resolves the tasks sent, or (none sent: the group was busy) those not yet in the back queue.
 */
async function startWithOwn(
  deps: BackQueueDeps,
  crawlId: string,
  host: string,
  tasks: readonly CrawlTask[],
  me: string,
  limit: number,
): Promise<{ sent: number; waiting: CrawlTask[] }> {
  const unique = new Map<string, CrawlTask>();
  for (const task of tasks) if (!unique.has(task.fp)) unique.set(task.fp, task);
  const sorted = [...unique.values()].sort(richestFirst);
  const first = sorted.slice(0, limit);
  const rest = sorted.slice(limit);
  if (first.length === 0) return { sent: 0, waiting: [] };
  if (rest.length > 0) await deps.backlog.add(crawlId, host, rest);
  if (!(await deps.table.startGroup(crawlId, host, first.length, me, { noted: rest.length > 0 }))) {
    return { sent: 0, waiting: first };
  }
  deps.fault?.('after-start');
  await deps.queue.enqueue(asTurn(first, `start ${me}`));
  return { sent: first.length, waiting: [] };
}

/** Each fingerprint's first task, in order (one send must not carry a URL twice: see refillPlan). */
function onceEach(tasks: readonly CrawlTask[]): CrawlTask[] {
  const seen = new Set<Fingerprint>();
  return tasks.filter((task) => {
    if (seen.has(task.fp)) return false;
    seen.add(task.fp);
    return true;
  });
}

/** Turns to read for `room` messages: enough to fill it, and one more to know if more wait. */
function turnsFor(room: number): number {
  return Math.ceil(room / BACKLOG_TURN) + 1;
}

/** Whole turns, richest first, while `room` is left (the last may overfill it by up to a turn less one). */
function takeTurns(turns: readonly BacklogTurn[], room: number): BacklogTurn[] {
  const taken: BacklogTurn[] = [];
  let left = room;
  for (const turn of turns) {
    if (left <= 0) break;
    taken.push(turn);
    left -= turn.tasks.length;
  }
  return taken;
}

/** What the holder of a group sends at its commit, and what waits. */
export interface RefillPlan {
  /** Tasks for the group now (each with the credits it was owed added to its cash). */
  send: CrawlTask[];
  /** The back queue's turns whose tasks are in `send` (taken out after the ledger write). */
  taken: BacklogTurn[];
  /** The holder's own new links that do not fit: added to the back queue before the sends. */
  wait: CrawlTask[];
  /** The back queue was read and held nothing more: its version then counts as drained. */
  drained: boolean;
  /** The credits the host's back queue is owed after this refill (see {@link nextCredits}). */
  credits: BacklogCredits;
  /** Credits that can no longer reach a waiting URL: their cash goes to the lambda page. */
  toLambda: number;
}

/**
 * Turns read to refill a group that is owed credits: enough to find the credited URLs among the
 * host's richest waiting ones (a consistent read of 6 turns of about 1 KB is 2 read units).
 */
export const CREDIT_WINDOW_TURNS = 6;
/**
 * Turns read when a credit was not found in the last window: the URLs many pages link to are
 * often found early (a home page's "latest" list) and wait deeper than the window, where the
 * embedded crawler's credits lift them at once (docs/quality-bench.md, issue 21 item 8). About
 * 10 read units, only for refills owed a credit the window missed.
 */
export const CREDIT_DEEP_TURNS = 40;

/**
 * Credits kept per host: a host item stays below 1 KB (one write unit) with 24 entries of 17
 * bytes. The smallest go to the lambda page first.
 */
export const BACKLOG_CREDIT_SLOTS = 24;

/**
 * Refills that read a window of the back queue without finding a credited URL before its credit
 * goes to the lambda page: it was fetched or is in the group already, or waits too deep to matter.
 */
export const BACKLOG_CREDIT_MISSES = 4;

/** How a refill reads and picks (see {@link refillPlan}). */
export interface RefillOptions {
  /** URLs of the host in its group at most (default FRONTIER_GROUP_LIMIT). */
  limit?: number;
  /** Credits owed to URLs of the back queue: the host item's and this batch's. */
  owed?: BacklogCredits;
  pick?: RefillPick;
  /**
   * The group's size for this refill given its richest candidate (at most `limit`, at least 1):
   * a host whose best waiting URL is poor next to what the crawl fetches gets fewer messages per
   * FIFO turn (see batch-commit.ts, `weighedLimit`). Absent: `limit`.
   */
  weigh?: (richest: CrawlTask) => number;
  /**
   * URLs whose messages are in the batch that refills (finished now, or still in the group): not
   * sent again, and a turn read that holds one leaves the back queue, its other tasks waiting
   * again. A redone batch can hold the first try's sends (SQS gives them back with the page) while
   * the turns that try took still wait (it died before taking them out): sent again under the
   * same name, SQS dropped them and the group's size counted them (traced under container kills).
   */
  handled?: ReadonlySet<Fingerprint>;
}

/**
 * The refill of a held group: `inGroup` messages stay in it after this batch (deferred ones, and
 * re-sent ones), so the group is filled while it holds fewer than `limit`: the richer first of the
 * batch's own new links for the host and of its back queue (read only when the host item says it
 * may hold something), picked by turn or by task (see RefillPick).
 *
 * AOPIC credits (cash that pages found to link to a URL after it was queued, `owed`: the host
 * item's and this batch's) are added to the waiting URLs they reach in the turns read, so a URL
 * that many pages link to rises to the front of its host as it does in the embedded crawler
 * (docs/quality-bench.md, issue 21 item 8). The credits of the URLs sent go with them; the rest
 * are kept for the next refill, within bounds (see {@link nextCredits}).
 */
export async function refillPlan(
  backlog: Pick<HostBacklog, 'richest'>,
  crawlId: string,
  host: string,
  own: readonly CrawlTask[],
  inGroup: number,
  group: HostGroup,
  options: RefillOptions = {},
): Promise<RefillPlan> {
  const { limit = FRONTIER_GROUP_LIMIT, pick = 'by-turn' } = options;
  const room = Math.max(0, limit - inGroup);
  const read = room > 0 && group.version > group.drained;
  const owed = options.owed ?? new Map();
  const missed = [...owed.values()].some((credit) => credit.misses > 0);
  const window = missed ? CREDIT_DEEP_TURNS : CREDIT_WINDOW_TURNS;
  const asked = owed.size > 0 ? Math.max(turnsFor(room), window) : turnsFor(room);
  const found = new Set<Fingerprint>();
  const handled = options.handled ?? new Set<Fingerprint>();
  const readTurns = read ? await backlog.richest(crawlId, host, asked) : [];
  const complete = read && readTurns.length < asked;
  // A turn holding a URL of the batch leaves the back queue whatever is picked (see `handled`):
  // its other tasks are its candidates; one that held nothing else is only taken out.
  const turns: CreditedTurn[] = [];
  const emptied: BacklogTurn[] = [];
  for (const stored of readTurns) {
    const tasks = stored.tasks.filter((task) => !handled.has(task.fp));
    if (tasks.length === 0) emptied.push(stored);
    else turns.push({ ...creditedTurn({ ...stored, tasks }, owed, found), stored });
  }
  // Richest first by the cash with credits (stable: equal keys keep the stored order).
  const ordered = [...turns].sort((a, b) => richestFirst(a.tasks[0]!, b.tasks[0]!));
  const richest = [...own, ...(ordered[0]?.tasks.slice(0, 1) ?? [])].sort(richestFirst)[0];
  const weighed =
    options.weigh === undefined || richest === undefined
      ? room
      : Math.max(0, Math.min(limit, Math.max(1, options.weigh(richest))) - inGroup);
  const picked = pick === 'by-task' ? pickByTask(own, ordered, weighed) : pickByTurn(own, ordered, weighed);
  const { send } = picked;
  // The stale turns leave too; what they hold that is neither sent nor the batch's waits again.
  const takenKeys = new Set(picked.takenFrom.map((turn) => turn.stored.key));
  const staleOnly = ordered.filter(
    (turn) => !takenKeys.has(turn.stored.key) && turn.tasks.length < turn.stored.tasks.length,
  );
  const takenFrom = [...picked.takenFrom, ...staleOnly];
  const sentNow = new Set(send.map((task) => task.fp));
  const waiting = new Set(picked.wait.map((task) => task.fp));
  const wait = [
    ...picked.wait,
    ...staleOnly
      .flatMap((turn) => turn.tasks)
      .filter((task) => !sentNow.has(task.fp) && !waiting.has(task.fp)),
  ];
  const consumed = new Set<Fingerprint>(takenFrom.flatMap((turn) => turn.tasks.map((task) => task.fp)));
  // Not read: a full group (the credits wait as they are), or a back queue known empty.
  const empty = !read && group.version <= group.drained;
  const next =
    read || empty
      ? nextCredits(owed, { found, consumed, complete: complete || empty })
      : { credits: owed, toLambda: 0 };
  return {
    send,
    taken: [...takenFrom.map((turn) => turn.stored), ...emptied],
    wait,
    // Read to its end, and all of it taken: nothing waits there now but what `wait` adds again.
    drained: complete && takenFrom.length === ordered.length,
    credits: next.credits,
    toLambda: next.toLambda,
  };
}

/**
 * How a refill picks among the batch's own new links and the turns it read:
 * - `by-turn`: a turn whole, compared by its richest task, against the own links one by one. A
 *   turn taken is one write unit out and nothing rewritten; the order within a host is by cash to
 *   within a turn.
 * - `by-task`: the richest tasks one at a time, wherever they wait; a taken turn's tasks that are
 *   not sent wait again, in a turn of their own (one more write unit for most refills: +$0.16 per
 *   million pages on `npm run bench:cloud -- --only realistic`). A turn is stored by its richest
 *   task, so taking it whole sent five poorer tasks with the one credits had lifted, and a rich
 *   host's batches alternated one page worth fetching with five that were not (the quality bench's
 *   host 0, issue 21 item 8). Budgeted crawls pick by task: with a page budget, the order decides
 *   which pages are fetched at all; without one, only when (batch-commit.ts, `refillPick`).
 */
export type RefillPick = 'by-turn' | 'by-task';

/** A turn as read, its tasks with their credits (see `creditedTurn`). */
type CreditedTurn = { stored: BacklogTurn; tasks: CrawlTask[] };

/** What a refill sends, which turns it takes out, and what waits (again) in the back queue. */
interface Picked {
  send: CrawlTask[];
  takenFrom: CreditedTurn[];
  wait: CrawlTask[];
}

/**
 * A URL goes into one send once: SQS keeps one of two copies with the same deduplication id, and
 * the group's size must count what it keeps (a URL can wait in two turns, or in a turn and among
 * the batch's own links, when two pages each claimed it or a redone commit added it again).
 */
class OneSend {
  readonly tasks: CrawlTask[] = [];
  readonly #sent = new Set<Fingerprint>();

  has(task: CrawlTask): boolean {
    return this.#sent.has(task.fp);
  }

  /** Adds the task unless sent already; true when added. */
  add(task: CrawlTask): boolean {
    if (this.#sent.has(task.fp)) return false;
    this.#sent.add(task.fp);
    this.tasks.push(task);
    return true;
  }

  /** The tasks not in the send. */
  fresh(tasks: readonly CrawlTask[]): CrawlTask[] {
    return tasks.filter((task) => !this.#sent.has(task.fp));
  }
}

/** `by-turn` (see RefillPick): turns whole against own links one by one, richer first. */
function pickByTurn(own: readonly CrawlTask[], ordered: readonly CreditedTurn[], room: number): Picked {
  const mine = [...own].sort(richestFirst);
  const send = new OneSend();
  const takenFrom: CreditedTurn[] = [];
  let left = room;
  let o = 0;
  let t = 0;
  while (left > 0 && (o < mine.length || t < ordered.length)) {
    const link = mine[o];
    const turn = ordered[t];
    if (turn !== undefined && (link === undefined || richestFirst(turn.tasks[0]!, link) < 0)) {
      for (const task of turn.tasks) if (send.add(task)) left -= 1;
      takenFrom.push(turn);
      t += 1;
    } else if (link !== undefined) {
      if (send.add(link)) left -= 1;
      o += 1;
    }
  }
  return { send: send.tasks, takenFrom, wait: send.fresh(mine.slice(o)) };
}

/**
 * `by-task` (see RefillPick): the richest tasks one at a time; a taken turn's others wait again.
 * A URL that is both an own link and in a turn read is ranked as the own link: a redone commit
 * reads the turn its first try left (the first try's unsent own links, keyed with the lambda
 * bonus of that time), and ranked by that older key they went before the own links the first try
 * sent, so the redo sent other URLs under the same name and the first try's stayed in SQS while
 * its turn held the redo's: both were sent twice (traced under container kills, 2026-11-29).
 */
function pickByTask(own: readonly CrawlTask[], ordered: readonly CreditedTurn[], room: number): Picked {
  const mine = new Set(own.map((task) => task.fp));
  const waiting = ordered.flatMap((turn) => turn.tasks).filter((task) => !mine.has(task.fp));
  // Own links first at equal cash (sorts are stable).
  const candidates = [...own, ...waiting].sort(richestFirst);
  const send = new OneSend();
  for (const task of candidates) {
    if (send.tasks.length === room) break;
    send.add(task);
  }
  // A turn holding a URL sent now leaves the back queue (also one the send got from another turn).
  const takenFrom = ordered.filter((turn) => turn.tasks.some((task) => send.has(task)));
  return {
    send: send.tasks,
    takenFrom,
    wait: send.fresh([...own, ...takenFrom.flatMap((turn) => turn.tasks)]),
  };
}

/** A turn as read (`stored`, to take out by its key) and its tasks with their credits, richest first. */
function creditedTurn(turn: BacklogTurn, owed: BacklogCredits, found: Set<Fingerprint>): CreditedTurn {
  if (owed.size === 0) return { stored: turn, tasks: turn.tasks };
  const tasks = turn.tasks.map((task) => {
    const credit = owed.get(task.fp);
    if (credit === undefined) return task;
    found.add(task.fp);
    return { ...task, cash: task.cash + credit.amount };
  });
  return { stored: turn, tasks: tasks.sort(richestFirst) };
}

/**
 * The credits a host's back queue is owed after a refill: those of the URLs sent leave (their
 * tasks carry them); a credit whose URL was not in the turns read counts a miss, and after
 * BACKLOG_CREDIT_MISSES misses, or when the read covered the whole back queue (or it is known
 * empty), it goes to the lambda page; beyond BACKLOG_CREDIT_SLOTS the smallest go there too.
 * Cash is conserved: what leaves the credits is in a task or in `toLambda`.
 */
export function nextCredits(
  owed: BacklogCredits,
  refill: { found: ReadonlySet<Fingerprint>; consumed: ReadonlySet<Fingerprint>; complete: boolean },
  slots: number = BACKLOG_CREDIT_SLOTS,
): { credits: BacklogCredits; toLambda: number } {
  let toLambda = 0;
  const kept: [Fingerprint, { amount: number; misses: number }][] = [];
  for (const [fp, credit] of owed) {
    if (refill.consumed.has(fp)) continue;
    if (refill.found.has(fp)) {
      kept.push([fp, { amount: credit.amount, misses: 0 }]);
      continue;
    }
    const misses = credit.misses + 1;
    if (refill.complete || misses >= BACKLOG_CREDIT_MISSES) toLambda += credit.amount;
    else kept.push([fp, { amount: credit.amount, misses }]);
  }
  kept.sort((a, b) => b[1].amount - a[1].amount);
  for (const [, credit] of kept.slice(slots)) toLambda += credit.amount;
  return { credits: new Map(kept.slice(0, slots)), toLambda };
}

/** Adds a batch's credits (fingerprint to amount) to those a host's back queue is owed. */
export function owedWith(
  stored: BacklogCredits | undefined,
  batch: ReadonlyMap<Fingerprint, number>,
): BacklogCredits {
  const owed: BacklogCredits = new Map(stored ?? []);
  for (const [fp, amount] of batch) {
    const was = owed.get(fp);
    owed.set(fp, { amount: (was?.amount ?? 0) + amount, misses: was?.misses ?? 0 });
  }
  return owed;
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
