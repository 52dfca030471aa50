/**
 * The embedded crawl's counters: what each finished step adds, kept in the checkpoint so that
 * they survive restarts.
 */
import type { CrawlPageOutcome } from '../core/crawl-page.ts';
import type { UrlSeenStats } from '../core/url-seen.ts';

/** Persistent counters (they survive restarts through the checkpoint). */
export interface CrawlCounters {
  /** URLs finished with an HTTP response. */
  pages: number;
  /** URLs finished without one (skips, network failures). */
  skipped: number;
  byStatus: Record<string, number>;
  byReason: Record<string, number>;
  bytes: number;
  /** Every request made, robots.txt and retries included. */
  requests: number;
  /** Requests that got no response (refused, unreachable, timed out) or a 5xx/429, retries included. */
  failedRequests: number;
  retries: number;
  duplicates: number;
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
    pages: 0,
    skipped: 0,
    byStatus: {},
    byReason: {},
    bytes: 0,
    requests: 0,
    failedRequests: 0,
    retries: 0,
    duplicates: 0,
    discovered: 0,
    seen: { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 },
    linksSkipped: {},
    elapsedMs: 0,
  };
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
    if (record.status === null) {
      c.skipped += 1;
    } else {
      c.pages += 1;
      c.bytes += record.bytes;
    }
    const statusKey = record.status === null ? 'none' : String(record.status);
    c.byStatus[statusKey] = (c.byStatus[statusKey] ?? 0) + 1;
    if (record.reason !== undefined) c.byReason[record.reason] = (c.byReason[record.reason] ?? 0) + 1;
    if (record.duplicateOf !== undefined) c.duplicates += 1;
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
