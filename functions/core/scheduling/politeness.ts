/**
 * Politeness arithmetic: how long to leave a host alone after a request. Pure; the runtimes
 * (the embedded scheduler, the cloud worker) apply the numbers.
 */
import type { CrawlConfig } from '../config.ts';

export type PolitenessSettings = Pick<
  CrawlConfig,
  'delayMs' | 'delayFactor' | 'maxDelayMs' | 'maxCrawlDelayMs' | 'maxRetryAfterMs' | 'retryBaseDelayMs'
>;

/**
 * Gap between the end of one request to a host and the start of the next:
 * max(Crawl-delay capped at maxCrawlDelayMs, delayMs, delayFactor × last response time capped at maxDelayMs).
 * Mercator waited a multiple (10×) of the last response time; Heritrix uses 5× with a minimum.
 */
export function hostGapMs(
  settings: PolitenessSettings,
  lastResponseMs: number,
  crawlDelayMs?: number,
): number {
  const crawlDelay = crawlDelayMs === undefined ? 0 : Math.min(crawlDelayMs, settings.maxCrawlDelayMs);
  const adaptive = Math.min(settings.delayFactor * Math.max(0, lastResponseMs), settings.maxDelayMs);
  return Math.ceil(Math.max(crawlDelay, settings.delayMs, adaptive));
}

/** What the runtime needs to schedule the host's next request (a crawl step's outcome carries it). */
export interface RequestFeedback {
  /** How long the request took (the adaptive delay multiplies it). */
  responseMs: number;
  /** Crawl-delay of the robots.txt group that applies to us, if any. */
  crawlDelayMs?: number;
  /** Leave the whole host alone until then (Retry-After, backoff after 5xx). */
  blockedUntil?: number;
}

/** The politeness state each runtime keeps per host (the embedded host slot, the cloud worker's host group). */
export interface PoliteHost {
  /** The robots.txt Crawl-delay that applies to us, ms: the last one a request's feedback gave. */
  crawlDelayMs?: number | undefined;
  /** How long the host's last request took. */
  lastResponseMs?: number | undefined;
}

/** When a host may be asked again after a request. */
export interface HostGapEnds {
  /** `now` plus the host's gap ({@link hostGapMs}). */
  gapEnds: number;
  /** The later of `gapEnds` and the feedback's `blockedUntil`: the host's next request waits until then. */
  nextAllowedAt: number;
}

/**
 * Applies one request's feedback to its host, the same way in both runtimes: the host remembers
 * the Crawl-delay (when the feedback has one; robots.txt may have given it on an earlier step) and
 * the response time, and its next request waits for the gap after this one, or longer when the
 * server asked (Retry-After) or the step backs off (`blockedUntil`).
 */
export function applyRequestFeedback(
  settings: PolitenessSettings,
  host: PoliteHost,
  feedback: RequestFeedback,
  now: number,
): HostGapEnds {
  if (feedback.crawlDelayMs !== undefined) host.crawlDelayMs = feedback.crawlDelayMs;
  host.lastResponseMs = feedback.responseMs;
  const gapEnds = now + hostGapMs(settings, feedback.responseMs, host.crawlDelayMs);
  return { gapEnds, nextAllowedAt: Math.max(gapEnds, feedback.blockedUntil ?? 0) };
}

/**
 * Milliseconds a `Retry-After` header asks us to wait (delta-seconds or an HTTP-date), capped at
 * maxRetryAfterMs; undefined when absent or unparseable.
 */
export function retryAfterMs(
  value: string | undefined,
  now: number,
  maxRetryAfterMs: number,
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    // An HTTP-date starts with the day name; V8's Date.parse alone would read "1.5" or "-5" as
    // dates in 2001, and the URL would be retried at once instead of after a backoff.
    const at = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(0, ms), maxRetryAfterMs);
}

/**
 * Wait before retry number `attempt` (1 = first retry): retryBaseDelayMs × 2^(attempt-1), capped
 * at maxRetryAfterMs (the longest a server may ask us to wait), with ±25% jitter from `random` so
 * hosts that failed together do not retry together.
 */
export function retryBackoffMs(settings: PolitenessSettings, attempt: number, random: () => number): number {
  const base = doublingBackoffMs(settings.retryBaseDelayMs, settings.maxRetryAfterMs, attempt);
  return Math.round(base * (0.75 + random() * 0.5));
}

/** `baseMs` × 2^(n-1), at most `capMs`: the shape of every backoff here (n = 1 for the first retry). */
export function doublingBackoffMs(baseMs: number, capMs: number, n: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, n - 1), capMs);
}
