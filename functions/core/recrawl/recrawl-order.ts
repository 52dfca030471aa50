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
  /** The pages whose interval has passed, the likeliest to have changed first. */
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
 * visited (`uniform`), or the pages due by their interval ordered by the probability that they
 * changed (`adaptive`: where a request most likely refreshes a stale copy). Ties keep the
 * input's order, so the same archive gives the same plan.
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
    const due = live.flatMap((page) => {
      const elapsed = options.now - page.history.lastVisitAt;
      const hinted = page.history.lastmod !== undefined && page.history.lastmod > page.history.lastVisitAt;
      return hinted || elapsed >= revisitInterval(page.history, options)
        ? [{ url: page.url, gain: gain(page) }]
        : [];
    });
    chosen = stableSort(due, (a, b) => b.gain - a.gain);
  }
  return chosen.slice(0, budget);
}

function stableSort<T>(items: readonly T[], compare: (a: T, b: T) => number): T[] {
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => compare(a.item, b.item) || a.index - b.index)
    .map(({ item }) => item);
}
