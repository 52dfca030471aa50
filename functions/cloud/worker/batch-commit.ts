/**
 * The batch commit: the effects the records buffered, written in the one order that makes a crash
 * at any point safe to redeliver (every write is idempotent, and nothing is acknowledged before
 * what it depends on is durable):
 *
 *   1. every new link reaches the frontier before the page is acknowledged: the links of the
 *      hosts this batch holds refill their groups (the overflow into their back queues first),
 *      the links of other hosts go to those hosts' back queues (starting an idle group), and
 *      the batch's re-sent tasks go back to their groups (back-queues.ts);
 *   2. new URLs parked by AOPIC (the parked set)
 *   3. SendMessageBatch of the captures (page records + WARC records + out-links) to the archiver;
 *      a capture too big for a message has its records (then its links) stored as objects  first; the batch's URL-seen
 *      look-ups (seenTrace) in the same calls
 *   4. per host: politeness state + the ledger (counts exactly once per handled record) and the
 *      group's size; then the tasks the refills took are taken out of the back queues
 *   5. the batch's own claims enter the warm cache (their pages are finished now); credits to
 *      parked URLs when due; the maxPages budget; hosts a seed redirected to
 *   6. parked URLs of a crawl whose frontier the batch left dry (dry-admission.ts)
 */
import type { CrawlConfig } from '../../core/config.ts';
import { judgeError } from '../../core/step/error-policy.ts';
import type { CrawlTask, Fingerprint } from '../../core/types.ts';
import { type FaultHook, InjectedCrashError } from '../fault-hook.ts';
import {
  ADMIT_STARTER,
  asTurn,
  BackQueueFrontier,
  byHost,
  offerTasks,
  owedWith,
  PARENT_STARTER,
  type RefillPick,
  refillPlan,
  turnsOf,
} from '../frontier/back-queues.ts';
import { FRONTIER_GROUP_LIMIT } from '../lambda-settings.ts';
import {
  CAPTURE_MESSAGE_LIMIT,
  type CaptureMessage,
  encodeCaptureMessage,
} from '../messages/capture-message.ts';
import type { BacklogCredits, HostGroup } from '../messages/crawl-records.ts';
import {
  addHostCounts,
  COUNTER_SHARDS,
  type CounterShard,
  emptyHostCounts,
  FETCHES_REMEMBERED,
  STARTS_REMEMBERED,
  sequenceKey,
} from '../messages/crawl-records.ts';
import { resendId } from '../messages/task-message.ts';
import { encodeTraceMessages } from '../messages/trace-message.ts';
import { buildWarcObject, idsHash, linksKey, warcKey } from '../messages/warc-object.ts';
import { type BacklogTurn, type HostUpdate, stateKey } from '../ports/cloud-ports.ts';
import {
  CREDIT_FLUSH_MS,
  cashNow,
  flushCredits,
  flushRootCredits,
  followsCash,
  HOLD_BACK_FRESH_MS,
} from './aopic-admission.ts';
import {
  type BatchPlan,
  type BatchStats,
  backQueueDeps,
  type CrawlBatch,
  type Entry,
  type FrontierWorkerDeps,
  type GroupBatch,
  type MessageVerdict,
} from './batch-model.ts';
import type { CrawlContext, WorkerContainer } from './container-state.ts';
import { admitWhenDry } from './dry-admission.ts';

/** What the commit needs besides the plan. */
export interface CommitEnv {
  deps: FrontierWorkerDeps;
  container: WorkerContainer;
  fault: FaultHook;
  log: (line: string) => void;
  software: string;
  stats: BatchStats;
}

/**
 * Writes the batch. When a write fails, every record of a known crawl is failed (visible again in
 * 2 s) and the whole batch is redone: nothing is lost, every write above is idempotent. Only an
 * injected crash escapes.
 */
export async function commitBatch(
  env: CommitEnv,
  plan: BatchPlan,
  verdicts: Map<string, MessageVerdict>,
): Promise<void> {
  try {
    await writeBatch(env, plan, verdicts);
  } catch (error) {
    if (error instanceof InjectedCrashError) throw error;
    env.log(`batch writes failed, the batch will be redelivered: ${judgeError(error).message}`);
    env.stats.commitsFailed += 1;
    for (const { message } of plan.entries) {
      verdicts.set(message.messageId, { kind: 'retry', seconds: 2, why: 'batch-write-failed' });
    }
  }
}

async function writeBatch(
  env: CommitEnv,
  plan: BatchPlan,
  verdicts: Map<string, MessageVerdict>,
): Promise<void> {
  const { deps, stats } = env;
  const refills = await sendLinks(env, plan, verdicts);
  for (const batch of plan.crawls.values()) {
    if (batch.parks.length === 0) continue;
    await deps.parked.park(batch.crawl.id, batch.parks);
    for (const { task } of batch.parks) batch.ctx.parked.set(task.fp, true);
    stats.parked += batch.parks.length;
  }
  const bodies: string[] = [];
  for (const batch of plan.crawls.values()) {
    for (const capture of batch.captures) bodies.push(await captureBody(env, capture));
  }
  stats.captures += bodies.length;
  // The batch's URL-seen look-ups ride in the same calls (see trace-message.ts).
  for (const batch of plan.crawls.values()) {
    const traces = encodeTraceMessages(batch.crawl.id, batch.lookups);
    bodies.push(...traces);
    stats.traceMessages += traces.length;
    stats.traceLookups += batch.lookups.length;
  }
  if (bodies.length > 0) await deps.captures.send(bodies);
  env.fault('after-captures');
  const writeTime = deps.clock.now();
  const counted = await Promise.all(
    [...plan.groups.values()]
      .filter(({ group }) => group.touched)
      .map(({ group }) => writeHost(env, group, writeTime, refills.get(stateKey(group.crawlId, group.host)))),
  );
  env.fault('after-ledgers');
  // Sent and counted: out of the back queues (a crash before this sends them again, once more).
  await Promise.all(
    [...refills.values()].map((r) =>
      r.taken.length > 0 ? deps.backlog.remove(r.crawlId, r.host, r.taken) : undefined,
    ),
  );
  // The crawls' running totals: what the ledgers counted now (a redelivered batch adds nothing).
  const totals = new Map<string, CounterShard>();
  for (const { group, firstRequest } of counted) {
    if (group === undefined) continue;
    const total = totals.get(group.crawlId) ?? { ...emptyHostCounts(), hosts: 0 };
    addHostCounts(total, group.counts);
    if (firstRequest) total.hosts += 1;
    totals.set(group.crawlId, total);
  }
  const shard = shardOf(plan.entries[0]?.message.messageId ?? '');
  await Promise.all([...totals].map(([crawlId, total]) => deps.table.addToShard(crawlId, shard, total)));
  // The claiming pages are finished (their ledgers say so): their claims may enter the cache.
  for (const b of plan.crawls.values()) for (const fp of b.claimed) b.ctx.cache.add(fp);
  for (const b of plan.crawls.values()) env.container.reweigh(b.crawl.id);
  for (const b of plan.crawls.values()) {
    stats.credits += await flushCredits(deps.parked, b.crawl.id, b.ctx, {
      now: deps.clock.now(),
      flushMs: deps.creditFlushMs ?? CREDIT_FLUSH_MS,
      force: false,
      log: env.log,
    });
    stats.rootCredits += await flushRootCredits(deps.table, b.crawl.id, b.ctx, env.log);
  }
  await Promise.all(
    [...plan.crawls.values()].map(async (b) => {
      if (b.ctx.config.maxPages !== undefined) {
        // What this batch fetched rides on the budget's write (no write of its own).
        await deps.table.addBudget(
          b.crawl.id,
          b.fetched,
          b.dispatched > 0 ? { cash: b.dispatchCash, at: b.dispatchAt } : undefined,
        );
      }
      await deps.table.addAllowedHosts(b.crawl.id, [...b.redirectedHosts]);
    }),
  );
  // Admitted URLs go through their hosts' back queues, as every task does.
  const admission = { ...deps, frontier: new BackQueueFrontier(backQueueDeps(deps), ADMIT_STARTER) };
  stats.admitted += await admitWhenDry(admission, plan, env.log);
}

/**
 * How a crawl's refills pick (see RefillPick): by task when a page budget makes the order decide
 * which pages are fetched at all (AOPIC with maxPages), by turn otherwise.
 */
export function refillPick(config: CrawlConfig | undefined): RefillPick {
  return followsCash(config) ? 'by-task' : 'by-turn';
}

/** What a held group's refill sent, and what its ledger write adds. */
interface GroupRefill {
  crawlId: string;
  host: string;
  /** Messages of the group after this batch: the read size, less the acked, plus what was sent. */
  inGroup: number;
  /** Added to the group's size with the ledger. */
  queuedDelta: number;
  /** Back-queue turns sent (taken out after the ledger write). */
  taken: BacklogTurn[];
  /** The version found drained, if the refill read the back queue to its end. */
  drained?: number;
  /** Some own links went to the back queue. */
  added: boolean;
  /** The credits the back queue is owed now, when it is owed some now or was before (written with the ledger). */
  credits?: BacklogCredits;
}

/**
 * Step 1 of the commit: the batch's new links and re-sends. Resolves the refill of each held group
 * with a ledger range (the only ones whose size change is counted exactly once); a held group whose
 * records were all deferred keeps its size and sends its new links nowhere but its back queue.
 */
async function sendLinks(
  env: CommitEnv,
  plan: BatchPlan,
  verdicts: Map<string, MessageVerdict>,
): Promise<Map<string, GroupRefill>> {
  const { deps } = env;
  const queues = backQueueDeps(deps);
  const limit = deps.groupLimit ?? FRONTIER_GROUP_LIMIT;
  const refills = new Map<string, GroupRefill>();
  const offers: CrawlTask[] = [];
  const sends: CrawlTask[] = [...plan.resends];
  const held = byHost(plan.sends);
  for (const [key, { group, entries }] of plan.groups) {
    // A page that comes back after a crash claims its links again, and the batch that brings it
    // back may hold some of them too (its first try's sends, behind it in the group): those are
    // in flight already, and sending them again would count a copy that SQS drops.
    const inBatch = new Set(entries.map(({ task }) => task.fp));
    // The refill's send is named by the group's first message, the same for a redone batch. A
    // task given back that came in this very send (a redo holding its first try's sends) is not
    // sent again under that name (SQS would drop it as a copy of itself): it waits.
    const sendName = `refill ${key} ${group.firstSeq}`;
    const sendTurn = resendId(sendName);
    const cameIn = (t: CrawlTask) => t.turn === sendTurn;
    const own = [
      ...(held.get(key)?.tasks ?? []).filter((t) => !inBatch.has(t.fp)),
      ...group.demoted.filter((t) => !cameIn(t)),
    ];
    const givenBack = group.demoted.filter(cameIn);
    held.delete(key);
    if (group.firstSeq === undefined) {
      if (own.length > 0) offers.push(...own);
      continue;
    }
    const acked = entries.filter(
      ({ message }) =>
        verdicts.get(message.messageId)?.kind === 'ack' &&
        message.sequenceNumber !== undefined &&
        sequenceKey(message.sequenceNumber) > group.doneSeq,
    ).length;
    const resent = plan.resends.filter((t) => stateKey(t.crawlId, t.host) === key).length;
    const staying = Math.max(0, group.state.queued - acked) + resent;
    // A group just started (its starter not yet ended by a ledger): the starter takes its turn
    // out of the back queue after sending it, so this batch may still read those tasks there and
    // send them twice. Unless the group would go idle, it reads the back queue at its next batch.
    const fresh = group.state.starter !== undefined && staying + own.length > 0;
    const state = fresh ? { ...group.state, version: group.state.drained } : group.state;
    // Credits to this batch's own URLs reach nothing that waits: they go to the lambda page.
    for (const fp of inBatch) {
      group.counts.lambda += group.credits.get(fp) ?? 0;
      group.credits.delete(fp);
    }
    const owed = owedWith(group.state.credits, group.credits);
    const crawlBatch = plan.crawls.get(group.crawlId);
    const config = crawlBatch?.ctx.config;
    const weigh = crawlBatch === undefined ? undefined : weighedLimit(crawlBatch, limit, deps.clock.now());
    const refill = await refillPlan(deps.backlog, group.crawlId, group.host, own, staying, state, {
      limit,
      ...(fresh ? {} : { owed }),
      pick: refillPick(config),
      ...(weigh === undefined ? {} : { weigh }),
      handled: handledNow(entries, group.doneSeq),
    });
    const wait = [...refill.wait, ...givenBack];
    // A turn's key follows its tasks: a turn taken that holds just what waits again is the turn
    // added again now, and taking it out after the ledger would take out what waits (traced: a
    // task given back alone, the turn that had held it alone taken as stale, the task lost).
    const waitKeys = new Set(turnsOf(wait).map((turn) => turn.key));
    const taken = refill.taken.filter((turn) => !waitKeys.has(turn.key));
    group.counts.lambda += refill.toLambda;
    const credits = fresh ? owed : refill.credits;
    const writeCredits = credits.size > 0 || (group.state.credits?.size ?? 0) > 0;
    if (wait.length > 0) await deps.backlog.add(group.crawlId, group.host, wait);
    sends.push(...asTurn(refill.send, sendName));
    refills.set(key, {
      crawlId: group.crawlId,
      host: group.host,
      inGroup: staying + refill.send.length,
      queuedDelta: staying + refill.send.length - group.state.queued,
      taken,
      ...(refill.drained ? { drained: group.state.version } : {}),
      added: wait.length > 0,
      ...(writeCredits ? { credits } : {}),
    });
    env.stats.backlogged += wait.length;
  }
  for (const { tasks } of held.values()) offers.push(...tasks);
  env.fault('after-backlog');
  if (sends.length > 0) await deps.frontier.enqueue(sends);
  env.fault('after-sends');
  // Other hosts' links: their back queues; an idle group is started in the name of the page that
  // links there (the same name when its message comes back).
  if (offers.length > 0) {
    env.stats.backlogged += offers.length;
    // A page received before (a crash, a timeout, or a deferral) may have made these offers.
    const again = new Set(plan.entries.filter((e) => e.message.receiveCount > 1).map((e) => e.task.fp));
    await offerTasks(queues, offers, PARENT_STARTER, {
      mayRepeat: (tasks) => tasks.some((t) => t.parent !== undefined && again.has(t.parent)),
    });
  }
  return refills;
}

/**
 * The URLs of a group's entries that this batch handles now: not those an earlier delivery's
 * counted ledger handled (acknowledged unread), whose fate that delivery wrote (a task it gave
 * back waits in a turn that must stay).
 */
function handledNow(entries: readonly Entry[], doneSeq: string): Set<Fingerprint> {
  return new Set(
    entries
      .filter(
        ({ message }) =>
          message.sequenceNumber === undefined || sequenceKey(message.sequenceNumber) > doneSeq,
      )
      .map(({ task }) => task.fp),
  );
}

/** How fast the fetch peak a group is weighed by fades: it halves in this time. */
export const FETCH_PEAK_HALF_LIFE_MS = 2_000;

/**
 * The richest the crawl has been fetching lately, as this container knows it: the highest of the
 * container's peak (halved every FETCH_PEAK_HALF_LIFE_MS), the budget item's batch mean as this
 * batch read it (while fresh), and this batch's own mean; kept as the container's new peak.
 */
function fetchPeak(
  batch: Pick<CrawlBatch, 'dispatchRead' | 'dispatchCash' | 'dispatched'> & {
    ctx: Pick<CrawlContext, 'fetchPeak'>;
  },
  now: number,
): number {
  const peak = batch.ctx.fetchPeak;
  const decayed = peak === undefined ? 0 : peak.cash * 0.5 ** ((now - peak.at) / FETCH_PEAK_HALF_LIFE_MS);
  const read = now - batch.dispatchRead.at < HOLD_BACK_FRESH_MS ? batch.dispatchRead.cash : 0;
  const own = batch.dispatched > 0 ? batch.dispatchCash : 0;
  const cash = Math.max(decayed, read, own);
  batch.ctx.fetchPeak = { cash, at: now };
  return cash;
}

/**
 * A budgeted crawl's group size by its host's richest waiting URL against the richest the crawl
 * has been fetching lately (`fetchPeak`): SQS hands the groups out in turn, so a host's share of
 * the requests follows how many messages its group holds per turn. Full at or above the peak,
 * falling with the square of the ratio below it, never below 1 (a group with work never goes idle).
 * A peak, not the hold-back's last batch mean: the mean follows whichever host committed last, and
 * weighed by it every host's group came out full about as often (docs/quality-bench.md).
 */
export function weighedLimit(
  batch: Pick<CrawlBatch, 'crawl' | 'dispatchRead' | 'dispatchCash' | 'dispatched'> & {
    ctx: Pick<CrawlContext, 'config' | 'fetchPeak'>;
  },
  limit: number,
  now: number,
): ((richest: CrawlTask) => number) | undefined {
  if (!followsCash(batch.ctx.config)) return undefined;
  const cash = fetchPeak(batch, now);
  if (cash <= 0) return undefined;
  return (richest) => {
    const ratio = Math.min(1, cashNow(richest, batch.crawl) / cash);
    return Math.max(1, Math.ceil(limit * ratio * ratio));
  };
}

/** One host item write: politeness state and the ledger with this batch's counts. */
async function writeHost(
  env: CommitEnv,
  group: GroupBatch,
  writeTime: number,
  refill: GroupRefill | undefined,
): Promise<{ group?: GroupBatch; firstRequest: boolean }> {
  const update = {
    nextAllowedAt: group.nextAllowedAt,
    ...(group.crawlDelayMs === undefined ? {} : { crawlDelayMs: group.crawlDelayMs }),
    counts: group.counts,
    ...(group.firstSeq === undefined || group.lastSeq === undefined
      ? {}
      : { ledger: { firstSeq: group.firstSeq, lastSeq: group.lastSeq } }),
    ...(Object.keys(group.probes).length === 0 ? {} : { probes: group.probes }),
    ...(group.fetchedNow.length === 0
      ? {}
      : { recentlyFetched: [...group.recentlyFetched, ...group.fetchedNow].slice(-FETCHES_REMEMBERED) }),
    ...(group.rootUsed === undefined ? {} : { root: { used: group.rootUsed } }),
  };
  let result = await env.deps.table.updateHost(group.crawlId, group.host, {
    ...update,
    ...(refill === undefined ? {} : { group: groupUpdate(refill, group.state, group.state.version) }),
  });
  // An offer reached the back queue while this batch was letting the group go idle: read the
  // back queue again and refill before the group may go idle (a few rounds at most: each one
  // either sends or finds the version still).
  for (let round = 0; result.moved !== undefined && refill !== undefined && round < 5; round++) {
    const moved = result.moved;
    const again = await refillPlan(env.deps.backlog, group.crawlId, group.host, [], 0, moved, {
      ...(env.deps.groupLimit === undefined ? {} : { limit: env.deps.groupLimit }),
      // Whole turns: this refill adds nothing to the back queue, so a turn's unsent tasks would be lost.
      pick: 'by-turn',
    });
    if (again.send.length > 0) {
      await env.deps.frontier.enqueue(
        asTurn(again.send, `refill ${group.crawlId} ${group.host} ${group.firstSeq} ${round}`),
      );
    }
    refill.taken.push(...again.taken);
    refill.inGroup = again.send.length;
    refill.queuedDelta += again.send.length;
    if (again.drained) refill.drained = moved.version;
    result = await env.deps.table.updateHost(group.crawlId, group.host, {
      ...update,
      group: groupUpdate(refill, group.state, moved.version),
    });
  }
  const { counted, firstRequest } = result;
  const key = stateKey(group.crawlId, group.host);
  env.container.rememberHost(key, group.nextAllowedAt);
  if (group.lastSeq !== undefined) env.container.rememberLedger(key, sequenceKey(group.lastSeq), writeTime);
  if (!counted) env.log(`host ${group.host} of ${group.crawlId}: records already counted (redelivered)`);
  return counted ? { group, firstRequest } : { firstRequest: false };
}

/**
 * The group part of a held host's ledger write. It ends the start the batch found (if any) and
 * remembers its name, so that the starter's page, redelivered, does not offer its tasks again.
 */
function groupUpdate(
  refill: GroupRefill,
  state: HostGroup,
  version: number,
): NonNullable<HostUpdate['group']> {
  return {
    ...(state.starter === undefined
      ? {}
      : { ended: [...(state.ended ?? []), state.starter].slice(-STARTS_REMEMBERED) }),
    queuedDelta: refill.queuedDelta,
    ...(refill.drained === undefined ? {} : { drained: refill.drained }),
    ...(refill.added ? { added: true } : {}),
    // Left empty: only if no offer came since the version this batch acted on.
    ...(refill.inGroup === 0 ? { idleAt: version } : {}),
    ...(refill.credits === undefined ? {} : { credits: refill.credits }),
  };
}

/** A batch's counter shard: spread by its first message id, so no shard item is hot. */
function shardOf(messageId: string): number {
  let h = 0;
  for (let i = 0; i < messageId.length; i++) h = (h * 31 + messageId.charCodeAt(i)) >>> 0;
  return h % COUNTER_SHARDS;
}

/**
 * The message body of a capture. One too big for SQS has the bigger of its two bulky parts stored
 * first, then the other if still needed: its WARC records (as their own WARC object, pointed at)
 * and its out-links (as their own links object, named; 6,000 links of up to 2,048 characters do
 * not fit in a message).
 */
async function captureBody(env: CommitEnv, capture: CaptureMessage): Promise<string> {
  const { deps } = env;
  let body = encodeCaptureMessage(capture);
  const fits = () => Buffer.byteLength(body, 'utf8') <= CAPTURE_MESSAGE_LIMIT;
  if (fits()) return measured(env, body, capture);
  const now = deps.clock.now();
  const hash = idsHash([capture.page.messageId, capture.page.fp]);
  const storeRecords = async (message: CaptureMessage): Promise<CaptureMessage> => {
    const key = warcKey(capture.crawlId, now, hash);
    const object = buildWarcObject({
      key,
      hash,
      date: now,
      software: env.software,
      fields: { 'crawl-id': capture.crawlId },
      parts: [message.records!],
    });
    await deps.objects.put(key, object.body, 'application/warc');
    env.stats.storedCaptures += 1;
    const where = object.responses[0]!;
    const { records: _r, ...rest } = message;
    return {
      ...rest,
      stored: { bucket: deps.objects.bucket, key, offset: where.offset, length: where.length },
    };
  };
  const storeLinks = async (message: CaptureMessage): Promise<CaptureMessage> => {
    const key = linksKey(capture.crawlId, now, hash);
    const line = `${JSON.stringify({ from: capture.page.url, links: message.links })}\n`;
    await deps.objects.put(key, Buffer.from(line, 'utf8'), 'application/x-ndjson');
    env.stats.storedLinks += 1;
    const { links: _l, ...rest } = message;
    return { ...rest, linksStored: key };
  };
  const parts: { size: number; store: typeof storeLinks }[] = [];
  if (capture.records !== undefined)
    parts.push({ size: Math.ceil(capture.records.members.length / 3) * 4, store: storeRecords });
  if (capture.links !== undefined)
    parts.push({ size: JSON.stringify(capture.links).length, store: storeLinks });
  let message = capture;
  for (const part of parts.sort((a, b) => b.size - a.size)) {
    message = await part.store(message);
    body = encodeCaptureMessage(message);
    if (fits()) break;
  }
  return measured(env, body, message);
}

/** Counts a capture message's bytes, and its inline WARC records' (base64), in the batch's stats. */
function measured(env: CommitEnv, body: string, message: CaptureMessage): string {
  env.stats.captureBytes += Buffer.byteLength(body, 'utf8');
  if (message.records !== undefined)
    env.stats.captureRecordBytes += Math.ceil(message.records.members.byteLength / 3) * 4;
  return body;
}
