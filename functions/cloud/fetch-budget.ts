/**
 * How a crawl's fetch settings fit in a Lambda invocation: its timeouts are capped at the cloud
 * fetch budget (functions/cloud/lambda-settings.ts), so a request always ends before the worker does.
 */
import type { CrawlConfig } from '../core/config.ts';
import { CLOUD_FETCH_BUDGET_MS } from './lambda-settings.ts';

/**
 * The fetch settings a worker uses for a crawl: the crawl's, with timeouts capped for Lambda, and
 * the SSRF guard kept whatever the crawl says when the deployment forbids private addresses.
 */
export function cloudFetchSettings(config: CrawlConfig, options: { forbidPrivate?: boolean } = {}) {
  return {
    userAgent: config.userAgent,
    allowPrivate: config.allowPrivate && options.forbidPrivate !== true,
    connectTimeoutMs: Math.min(config.connectTimeoutMs, CLOUD_FETCH_BUDGET_MS),
    headersTimeoutMs: Math.min(config.headersTimeoutMs, CLOUD_FETCH_BUDGET_MS),
    idleTimeoutMs: Math.min(config.idleTimeoutMs, CLOUD_FETCH_BUDGET_MS),
    totalTimeoutMs: Math.min(config.totalTimeoutMs, CLOUD_FETCH_BUDGET_MS),
  };
}

/** Longest one request of this crawl can take in the cloud. */
export function fetchBudgetMs(config: CrawlConfig): number {
  return Math.min(config.totalTimeoutMs, CLOUD_FETCH_BUDGET_MS);
}
