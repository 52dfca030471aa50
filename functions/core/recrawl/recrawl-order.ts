/**
 * Which known pages a recrawl round visits, in what order, under its request budget. Politeness
 * is not decided here: the runtime's scheduler spaces the requests of each host as in any crawl.
 */
import {
  type ChangeHistory,
  changeProbability,
  type IntervalBounds,
  revisitInterval,
} from './change-rate.ts';

/** How a recrawl chooses its pages (setting `recrawlSchedule`). */
export type RecrawlSchedule =
  /** Every known page, every round. */
  | 'full'
  /** The pages visited longest ago first, ignoring what changed. */
  | 'uniform'
  /**
   * The likeliest changed first: without a budget the pages whose interval has passed, with one
   * the budget's worth of pages past the shortest interval.
   */
  | 'adaptive';

/** A known page as the order needs it. */
export interface KnownPage {
  url: string;
  history: ChangeHistory;
  /** Removed (404/410 at its last visit): never planned again; a link to it makes it new. */
  gone?: boolean;
}

/** One planned visit, with the probability of a change that made it worth its request. */
export interface PlannedVisit {
  url: string;
  gain: number;
}

export interface RecrawlOrderOptions extends IntervalBounds {
  schedule: RecrawlSchedule;
  now: number;
  /** Visits at most (requests of the round's known pages); absent: no limit. */
  budget?: number;
}

/**
 * The round's visits, best first, at most `budget`: all live pages (`full`), the least recently
 * visited (`uniform`), or, `adaptive`, the pages ordered by the probability that they changed
 * since their last visit (where a request most likely refreshes a stale copy): those due by their
 * interval when there is no budget, the best `budget` of those past the shortest interval when
 * there is one (pages past the longest interval first). Ties keep the input's order, so the same
 * archive gives the same plan.
 */
export function recrawlOrder(pages: readonly KnownPage[], options: RecrawlOrderOptions): PlannedVisit[] {
  const live = pages.filter((page) => page.gone !== true);
  const budget = options.budget ?? Number.POSITIVE_INFINITY;
  const gain = (page: KnownPage) => changeProbability(page.history, options.now);
  let chosen: PlannedVisit[];
  if (options.schedule === 'full') {
    chosen = live.map((page) => ({ url: page.url, gain: gain(page) }));
  } else if (options.schedule === 'uniform') {
    chosen = stableSort(live, (a, b) => a.history.lastVisitAt - b.history.lastVisitAt).map((page) => ({
      url: page.url,
      gain: gain(page),
    }));
  } else {
    const now = options.now;
    const scored = live.flatMap((page) => {
      const { history } = page;
      const elapsed = now - history.lastVisitAt;
      const hinted = history.lastmod !== undefined && history.lastmod > history.lastVisitAt;
      if (!hinted && elapsed < options.minIntervalMs) return [];
      const due = hinted || elapsed >= revisitInterval(history, options);
      return [{ page, gain: gain(page), due, overdue: elapsed >= options.maxIntervalMs }];
    });
    // Without a budget only the due pages go; with one, the budget is spent best first: pages
    // past the longest interval, then by the probability of a change, then the oldest visit.
    const pool = options.budget === undefined ? scored.filter((s) => s.due) : scored;
    chosen = stableSort(
      pool,
      (a, b) =>
        Number(b.overdue) - Number(a.overdue) ||
        b.gain - a.gain ||
        a.page.history.lastVisitAt - b.page.history.lastVisitAt,
    ).map((s) => ({ url: s.page.url, gain: s.gain }));
  }
  return chosen.slice(0, budget);
}

function stableSort<T>(items: readonly T[], compare: (a: T, b: T) => number): T[] {
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => compare(a.item, b.item) || a.index - b.index)
    .map(({ item }) => item);
}
