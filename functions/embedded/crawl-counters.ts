/**
 * The embedded crawl's counters: what each finished step adds, kept in the checkpoint so that
 * they survive restarts. What a finished URL adds is the core's rule (`countOutcome`,
 * functions/core/step/page-record.ts), the one the cloud worker's host ledgers use too.
 */
import type { CrawlPageOutcome } from '../core/step/crawl-page.ts';
import { countOutcome, isErrorReason, type OutcomeCounts } from '../core/step/page-record.ts';
import type { UrlSeenStats } from '../core/url-seen/url-seen.ts';

/**
 * Persistent counters (they survive restarts through the checkpoint): the core's outcome counts
 * (finished, fetched, bytes, failed, duplicates, by status and reason) plus the embedded crawl's
 * own. `byStatus.none` counts the URLs finished without a response (the reports' "no response").
 */
export interface CrawlCounters extends OutcomeCounts {
  /** Every request made, robots.txt and retries included. */
  requests: number;
  /** Requests that got no response (refused, unreachable, timed out) or a 5xx/429, retries included. */
  failedRequests: number;
  retries: number;
  /** URLs claimed as new (seeds included). */
  discovered: number;
  seen: UrlSeenStats;
  /** Out-links not followed, by reason (scope, max-depth, calendar, link-generator, ...). */
  linksSkipped: Record<string, number>;
  /** Wall time spent crawling over all runs. */
  elapsedMs: number;
}

/** Counters of a crawl that has done nothing yet. */
export function emptyCounters(): CrawlCounters {
  return {
    finished: 0,
    fetched: 0,
    bytes: 0,
    failed: 0,
    duplicates: 0,
    byStatus: {},
    byReason: {},
    requests: 0,
    failedRequests: 0,
    retries: 0,
    discovered: 0,
    seen: { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 },
    linksSkipped: {},
    elapsedMs: 0,
  };
}

/** What the checkpoint of a crawl folder written before the counters were the core's held. */
interface OlderCounters {
  /** Now `fetched`. */
  pages?: number;
  /** Now `finished - fetched`. */
  skipped?: number;
}

/** The counters a checkpoint saved, from any version of crawlstack that wrote one. */
export function restoreCounters(saved: (Partial<CrawlCounters> & OlderCounters) | undefined): CrawlCounters {
  const { pages, skipped, ...current } = saved ?? {};
  const counters: CrawlCounters = { ...emptyCounters(), ...current };
  if (pages !== undefined && current.fetched === undefined) {
    counters.fetched = pages;
    counters.finished = pages + (skipped ?? 0);
    counters.failed = Object.entries(counters.byReason)
      .filter(([reason]) => isErrorReason(reason))
      .reduce((n, [, k]) => n + k, 0);
  }
  return counters;
}

/** URLs finished without an HTTP response (skipped, dropped, failed). */
export function notFetched(c: CrawlCounters): number {
  return c.finished - c.fetched;
}

/** What a finished step adds: its outcome, the URLs it queued, the out-links it did not follow. */
export function countStep(
  c: CrawlCounters,
  outcome: CrawlPageOutcome,
  enqueued: number,
  skippedLinks: ReadonlyMap<string, number>,
): void {
  if (outcome.kind === 'done') {
    const { record } = outcome;
    countOutcome(c, {
      status: record.status,
      bytes: record.bytes,
      ...(record.reason === undefined ? {} : { reason: record.reason }),
      ...(record.duplicateOf === undefined ? {} : { duplicateOf: record.duplicateOf }),
    });
    if (record.status === null) c.byStatus.none = (c.byStatus.none ?? 0) + 1;
  } else if (outcome.kind === 'retry') {
    c.retries += 1;
  }
  if (outcome.feedback !== undefined) c.requests += 1;
  if (requestFailure(outcome) !== undefined) c.failedRequests += 1;
  c.discovered += enqueued;
  for (const [reason, n] of skippedLinks) c.linksSkipped[reason] = (c.linksSkipped[reason] ?? 0) + n;
}

/**
 * Why the step's request failed, when it made one that failed: no response (the fetch error
 * code, `robots-unreachable` for robots.txt) or a 5xx/429 answer (`http-<status>`).
 */
export function requestFailure(outcome: CrawlPageOutcome): string | undefined {
  if (outcome.feedback === undefined) return undefined;
  if (outcome.kind === 'retry') return outcome.reason;
  if (outcome.kind !== 'done') return undefined;
  const { status, reason } = outcome.record;
  if (status === null) return reason;
  return status >= 500 || status === 429 ? `http-${status}` : undefined;
}
