/**
 * The embedded crawl's counters: what each finished step adds, kept in the checkpoint so that
 * they survive restarts. What a finished URL adds is the core's rule (`countOutcome`,
 * functions/core/step/page-record.ts), the one the cloud worker's host ledgers use too.
 */
import type { CrawlPageOutcome } from '../core/step/crawl-page.ts';
import {
  countOutcome,
  emptyOutcomeCounts,
  isErrorReason,
  type OutcomeCounts,
} from '../core/step/page-record.ts';
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
  /** The failed requests by cause ("connection refused", "HTTP 500", see {@link failureCause}). */
  failedBy: Record<string, number>;
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
    ...emptyOutcomeCounts(),
    requests: 0,
    failedRequests: 0,
    failedBy: {},
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
  const failure = requestFailure(outcome);
  if (failure !== undefined) {
    c.failedRequests += 1;
    const cause = failureCause(failure, failureDetail(outcome));
    c.failedBy[cause] = (c.failedBy[cause] ?? 0) + 1;
  }
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

/** What the step's failure says in its own words (the fetch error's message, "robots.txt: ..."). */
export function failureDetail(outcome: CrawlPageOutcome): string | undefined {
  if (outcome.kind === 'retry') return outcome.detail;
  return outcome.kind === 'done' ? outcome.record.detail : undefined;
}

/**
 * A failed request's cause in a user's words: `connection refused`, `DNS failure`, `timeout`,
 * `TLS failure`, `connection failed`, `HTTP 503`; from `requestFailure` and the failure's detail
 * (a robots.txt failure is named by what happened to robots.txt).
 */
export function failureCause(failure: string, detail = ''): string {
  const text =
    failure === 'robots-unreachable' ? detail.replace(/^robots\.txt: /, '') : `${failure}: ${detail}`;
  const code = /^[\w-]+/.exec(text)?.[0] ?? failure;
  if (text.includes('ECONNREFUSED')) return 'connection refused';
  if (code === 'dns') return 'DNS failure';
  if (code.startsWith('timeout') || text.includes('timeout-total')) return 'timeout';
  if (code === 'tls') return 'TLS failure';
  if (code === 'connect') return 'connection failed';
  if (/^\d{3}$/.test(code)) return `HTTP ${code}`;
  if (code.startsWith('http-')) return `HTTP ${code.slice(5)}`;
  return code;
}

/** What to do about a failure cause, when there is something to say. */
export function failureHint(cause: string): string | undefined {
  if (cause === 'connection refused') return 'is the server running? check the host and port';
  if (cause === 'DNS failure') return 'the host name did not resolve: check its spelling and your DNS';
  if (cause === 'timeout') return 'the server did not answer in time: is it up and reachable from here?';
  if (cause === 'connection failed') return 'the connection broke: is the server reachable from here?';
  if (cause === 'TLS failure') return "the TLS handshake failed: check the site's certificate";
  if (cause === 'HTTP 429') return 'the server asks to slow down: try a longer --delay';
  if (/^HTTP 5\d\d$/.test(cause)) return 'the server answers with errors: check its logs';
  return undefined;
}

/** Finished URLs that got an answer other than a failure (a 5xx or 429): the crawl reached a site. */
export function answeredPages(c: Pick<CrawlCounters, 'byStatus'>): number {
  let n = 0;
  for (const [key, count] of Object.entries(c.byStatus)) {
    const status = Number(key);
    if (Number.isInteger(status) && status < 500 && status !== 429) n += count;
  }
  return n;
}

/**
 * Why a crawl that finished without a single answered page failed, in one line ("every request
 * failed: 3 × connection refused from 127.0.0.1:8080; is the server running? ..."), or undefined
 * when some page was answered. `hosts`: the seeds' hosts, to say where.
 */
export function crawlFailure(c: CrawlCounters, hosts: readonly string[]): string | undefined {
  if (c.finished === 0 || answeredPages(c) > 0) return undefined;
  const where =
    hosts.length === 1 ? ` from ${hosts[0]}` : hosts.length > 1 ? ` from ${hosts.length} hosts` : '';
  const causes = Object.entries(c.failedBy).sort(([, a], [, b]) => b - a);
  if (causes.length === 0) {
    const reasons = Object.entries(c.byReason)
      .sort(([, a], [, b]) => b - a)
      .map(([reason, n]) => `${n} × ${reason}`);
    return `no page could be fetched: ${reasons.join(', ') || 'nothing to fetch'}`;
  }
  const listed = causes.map(([cause, n]) => `${n} × ${cause}`).join(', ');
  const hint = failureHint(causes[0]![0]);
  return `every request failed: ${listed}${where}${hint === undefined ? '' : `; ${hint}`}`;
}
