/**
 * What may change when a crawl folder is run again, and what a change means for the URLs that
 * already failed. A folder holds one crawl: its seeds and scope are its identity, and its
 * near-duplicate index was built for one distance. Every other setting may change and applies to
 * the URLs still to fetch; a setting that widens what the crawl may do (allowPrivate, a longer
 * timeout, more retries, a larger per-host budget) also queues again the URLs that failed for the
 * reason it removes. So does running again a crawl that fetched no page at all (the cause, a
 * server down or a network problem, may be gone).
 */
import type { CrawlConfig } from '../core/config.ts';
import { TRANSIENT_REASONS as TRANSIENT_FAILURES } from '../core/step/error-policy.ts';

/** Settings a folder's crawl keeps for good (seeds and scope are checked as its identity). */
export const FIXED_SETTINGS = ['nearDuplicateDistance'] as const satisfies readonly (keyof CrawlConfig)[];

/** Reasons a finished URL is kept for `requeueFailed` (see crawl-db.ts). */
export const RETRYABLE_REASONS: ReadonlySet<string> = new Set([
  ...TRANSIENT_FAILURES,
  'blocked-address',
  'host-budget',
]);

/** The first fixed setting that differs, as a message, or undefined. */
export function fixedSettingChange(previous: Partial<CrawlConfig>, next: CrawlConfig): string | undefined {
  for (const key of FIXED_SETTINGS) {
    if (previous[key] !== undefined && previous[key] !== next[key]) {
      return `${key} was ${JSON.stringify(previous[key])} when this crawl started (got ${JSON.stringify(next[key])}); it cannot change for a crawl`;
    }
  }
  return undefined;
}

/** Why failed URLs go back to the frontier: each reason with the change that removes it. */
export function reasonsToRetry(
  previous: Partial<CrawlConfig> | undefined,
  next: CrawlConfig,
  pagesFetched: number,
): Map<string, string> {
  const retry = new Map<string, string>();
  const grew = (key: keyof CrawlConfig) =>
    previous !== undefined &&
    typeof previous[key] === 'number' &&
    typeof next[key] === 'number' &&
    (next[key] as number) > (previous[key] as number);
  if (previous !== undefined && next.allowPrivate !== false) {
    const before = JSON.stringify(previous.allowPrivate ?? false);
    // Another list of networks may allow what the last one refused (checking which would need
    // each refused URL's address again): try the refused ones once more.
    if (previous.allowPrivate === false) retry.set('blocked-address', 'allowPrivate is now on');
    else if (before !== JSON.stringify(next.allowPrivate)) {
      retry.set('blocked-address', 'allowPrivate names other networks');
    }
  }
  const timeouts = [
    ['timeout-connect', 'connectTimeoutMs'],
    ['timeout-headers', 'headersTimeoutMs'],
    ['timeout-idle', 'idleTimeoutMs'],
    ['timeout-total', 'totalTimeoutMs'],
  ] as const;
  for (const [reason, key] of timeouts) if (grew(key)) retry.set(reason, `${key} grew`);
  if (grew('maxPagesPerHost')) retry.set('host-budget', 'maxPagesPerHost grew');
  const anew =
    pagesFetched === 0 ? 'no page was fetched before' : grew('maxRetries') ? 'maxRetries grew' : undefined;
  if (anew !== undefined)
    for (const reason of TRANSIENT_FAILURES) if (!retry.has(reason)) retry.set(reason, anew);
  return retry;
}
