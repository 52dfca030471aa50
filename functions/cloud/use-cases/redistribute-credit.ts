/**
 * The scheduler's AOPIC step for one running crawl (cloud mode). Two jobs:
 *
 * 1. The lambda page: the host ledgers sum the cash every page sent there (taxes, dropped URLs,
 *    credits that could not be used); what was not spread yet is spread over all known pages as
 *    a common `bonus` (O(1), see functions/core/scheduling/aopic.ts), published on the crawl item with the
 *    history total that normalizes importance estimates.
 * 2. Admission: SQS has no priorities, so the worker queues a new URL at once only when it got an
 *    ordinary share of its page's cash, and parks the rest (links to the page's own path pattern).
 *    Each step admits the parked URLs that are at least `aopicAdmitShare` as rich as the pages the
 *    crawl fetched since the last step (they would be fetched now in a greedy crawl), richest
 *    first, up to `frontierTarget` queued URLs; poorer ones only when the frontier has run dry.
 *    Never past the crawl's maxPages budget: with a budget, pages that only link among themselves
 *    (traps: a tenth of a share per hop) are never fetched while anything better is left.
 *
 * Safe to repeat: tasks are sent before they are unparked (a tick that dies between the two
 * sends them again next time, and the FIFO deduplication id drops the copy within five minutes),
 * and `admitted` only counts URLs this tick unparked.
 */

import { randomUUID } from 'node:crypto';
import type { Frontier } from '../../core/ports.ts';
import { AopicLedger, cashOf } from '../../core/scheduling/aopic.ts';
import type { CrawlTask } from '../../core/types.ts';
import type { AopicTotals, CloudAopicState, CrawlCounters, CrawlRecord } from '../messages/crawl-records.ts';
import type { CrawlAopicStore, ParkedUrl, ParkedUrls } from '../ports/cloud-ports.ts';

export interface RedistributeCreditDeps {
  table: CrawlAopicStore;
  parked: ParkedUrls;
  frontier: Frontier;
  /** Queued URLs a crawl should have before parked ones wait (default {@link FRONTIER_TARGET}). */
  frontierTarget?: number;
  log?: (line: string) => void;
}

/**
 * Enough queued URLs to keep a crawl busy until the next tick (EventBridge's shortest rate is a
 * minute): a hundred hosts at one page a second each take 6,000 a minute, most of them admitted
 * at once by the workers; parked URLs are the low-cash tail.
 */
export const FRONTIER_TARGET = 2_000;

/** What one step did. */
export interface AopicStep {
  /** Parked URLs sent to the frontier. */
  admitted: number;
  /** Parked URLs remain that the crawl may still fetch (it has budget left): not finished yet. */
  pending: boolean;
  state: CloudAopicState;
}

export const EMPTY_AOPIC: CloudAopicState = { bonus: 0, lambdaSpent: 0, admitted: 0, history: 0, fetched: 0 };

/** What admitting parked URLs touches (the scheduler's step, and a worker that finds the frontier dry). */
export type AdmissionDeps = Pick<RedistributeCreditDeps, 'parked' | 'frontier'> & {
  table: CrawlAopicStore;
};

/**
 * Claims parked URLs for this admission, sends those it got to the frontier (their hosts' back
 * queues), then takes them out of the parked set; resolves how many this call unparked. Safe to
 * overlap: each URL is claimed by one admission (the scheduler's tick and a batch that found the
 * frontier dry sent one URL twice before: two fetches), and only URLs this call unparked are
 * counted, with an atomic increment. Safe to die anywhere: a URL claimed and not sent stays
 * parked, and its claim lapses (ADMISSION_CLAIM_MS).
 */
export async function admitParked(
  deps: AdmissionDeps,
  crawlId: string,
  entries: readonly ParkedUrl[],
): Promise<number> {
  if (entries.length === 0) return 0;
  const mine = new Set(
    await deps.parked.claimAdmission(
      crawlId,
      entries.map((e) => e.task.fp),
      randomUUID(),
    ),
  );
  if (mine.size === 0) return 0;
  // Messages carry the key (cash less the bonus): the worker adds the bonus when it fetches.
  const tasks: CrawlTask[] = entries
    .filter((e) => mine.has(e.task.fp))
    .map(({ task, key }) => ({ ...task, cash: key }));
  await deps.frontier.enqueue(tasks);
  const admitted = await deps.parked.unpark(
    crawlId,
    tasks.map((t) => t.fp),
  );
  if (admitted > 0) await deps.table.addAdmitted(crawlId, admitted);
  return admitted;
}

/**
 * Runs the step for a running crawl, given its summed ledgers. `queueEmpty`: the whole frontier
 * and capture queue are empty, which makes the crawl's frontier dry whatever its running totals
 * say (they can be short of a batch that died between its ledgers and its shard write).
 */
export async function redistributeCredit(
  deps: RedistributeCreditDeps,
  crawl: CrawlRecord,
  counters: CrawlCounters,
  totals: AopicTotals,
  options: { queueEmpty?: boolean } = {},
): Promise<AopicStep> {
  const previous = { ...EMPTY_AOPIC, ...crawl.aopic };
  const state: CloudAopicState = { ...previous, history: totals.history, fetched: counters.fetched };
  // The lambda page holds what the ledgers collected since the last step; spread over every
  // known URL, it raises the common bonus (the core's ledger does the arithmetic).
  const ledger = new AopicLedger({
    lambda: totals.lambda - previous.lambdaSpent,
    bonus: previous.bonus,
    known: counters.discovered,
    history: totals.history,
  });
  if (ledger.redistribute() > 0) {
    state.bonus = ledger.state.bonus;
    state.lambdaSpent = totals.lambda;
  }
  const budget =
    crawl.config.maxPages === undefined
      ? Number.POSITIVE_INFINITY
      : crawl.config.maxPages - counters.fetched - counters.queued;
  const room = Math.min((deps.frontierTarget ?? FRONTIER_TARGET) - counters.queued, budget);
  // What the crawl has been fetching since the last step (its cash includes the bonus, as a parked
  // URL's does): a parked URL at least `aopicAdmitShare` as rich is as good as what runs, and
  // goes now; poorer ones wait until the frontier runs dry (with a page budget: usually never).
  const fetchedSince = counters.fetched - previous.fetched;
  const recentCash = fetchedSince > 0 ? (state.history - previous.history) / fetchedSince : undefined;
  const dry = counters.queued <= 0 || options.queueEmpty === true;
  const floor = dry || recentCash === undefined ? 0 : crawl.config.aopicAdmitShare * recentCash;
  let admitted = 0;
  let pending = false;
  if (counters.parked > 0 && room > 0) {
    const candidates = await deps.parked.richest(crawl.id, room);
    const richest = candidates.filter(({ key }) => dry || cashOf(key, state.bonus) >= floor);
    if (richest.length > 0) {
      // Counted by an increment, not in the state written below: a step overlapping this one
      // (its unpark found these URLs gone and counts 0) must not overwrite the count.
      admitted = await admitParked(deps, crawl.id, richest);
      state.admitted += admitted;
      deps.log?.(`crawl ${crawl.id}: admitted ${admitted} parked URLs`);
    }
    // More may wait than fit this tick (or than are rich enough); an empty answer means none is
    // parked at all.
    pending = candidates.length > 0;
  } else if (counters.parked > 0 && budget > 0) {
    pending = true;
  }
  if (JSON.stringify(state) !== JSON.stringify(previous)) await deps.table.setAopic(crawl.id, state);
  return { admitted, pending, state };
}
