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
  const base = Math.min(settings.retryBaseDelayMs * 2 ** Math.max(0, attempt - 1), settings.maxRetryAfterMs);
  return Math.round(base * (0.75 + random() * 0.5));
}
