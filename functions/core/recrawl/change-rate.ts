/**
 * A page's change rate from visits that only tell "changed or not" (Cho and Garcia-Molina,
 * "Estimating frequency of change", ACM TOIT 2003: the improved estimator for regular visits),
 * the revisit interval that follows from it within the crawl's bounds, and what a visit now is
 * worth: the probability that the page changed since the archive's copy (a Poisson process).
 */

/** What the archive knows of a page's changes (both runtimes keep it per URL). */
export interface ChangeHistory {
  /** Revisits judged changed or not (the first fetch is not one). */
  visits: number;
  /** Of those, the ones that found a change (a 304 or an identical payload is not one). */
  changes: number;
  /** Epoch ms of the first fetch and of the last visit. */
  firstVisitAt: number;
  lastVisitAt: number;
  /** Epoch ms of the sitemap `<lastmod>` last read for the page, if any: a hint, not proof. */
  lastmod?: number;
}

/** Bounds of the revisit interval (settings `recrawlMinIntervalMs`, `recrawlMaxIntervalMs`). */
export interface IntervalBounds {
  minIntervalMs: number;
  maxIntervalMs: number;
}

/**
 * Changes per ms, estimated from `visits` visits `changes` of which found a change, made over
 * `spanMs` in all: -ln((n - X + 0.5) / (n + 0.5)) / (span / n). Finite when every visit found a
 * change (the 0.5 terms), 0 when none did; undefined before the first revisit.
 */
export function changeRate(
  history: Pick<ChangeHistory, 'visits' | 'changes' | 'firstVisitAt' | 'lastVisitAt'>,
): number | undefined {
  const n = history.visits;
  if (n <= 0) return undefined;
  const x = Math.min(Math.max(history.changes, 0), n);
  const meanInterval = Math.max(history.lastVisitAt - history.firstVisitAt, 1) / n;
  const rate = -Math.log((n - x + 0.5) / (n + 0.5)) / meanInterval;
  return rate > 0 ? rate : 0;
}

/** The page's revisit interval: the mean time between its changes, within the bounds. */
export function revisitInterval(history: ChangeHistory, bounds: IntervalBounds): number {
  const rate = changeRate(history);
  // No revisit yet: the shortest interval, so that the rate gets its first observations.
  if (rate === undefined) return bounds.minIntervalMs;
  if (rate <= 0) return bounds.maxIntervalMs;
  return Math.min(Math.max(1 / rate, bounds.minIntervalMs), bounds.maxIntervalMs);
}

/** Probability given to a page that has no revisit yet: no evidence either way. */
export const UNKNOWN_CHANGE_PROBABILITY = 0.5;

/**
 * The probability that the page changed since its last visit, at `now`: 1 when its sitemap
 * `<lastmod>` is later than the visit, 1 - e^(-rate * elapsed) otherwise.
 */
export function changeProbability(history: ChangeHistory, now: number): number {
  if (history.lastmod !== undefined && history.lastmod > history.lastVisitAt) return 1;
  const rate = changeRate(history);
  if (rate === undefined) return UNKNOWN_CHANGE_PROBABILITY;
  return 1 - Math.exp(-rate * Math.max(now - history.lastVisitAt, 0));
}
