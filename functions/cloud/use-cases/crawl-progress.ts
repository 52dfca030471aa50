/**
 * A crawl's status and counters (summed from its host ledgers), for the API and the scheduler.
 */

import {
  type AopicTotals,
  aggregateCounters,
  type CrawlCounters,
  type CrawlRecord,
  type UrlSeenCounters,
} from '../messages/crawl-records.ts';
import type { CrawlTableStore } from '../ports/cloud-ports.ts';

/** What GET /crawls/{id} returns. */
export interface CrawlProgressView {
  id: string;
  status: CrawlRecord['status'];
  createdAt: string;
  finishedAt?: string;
  config: CrawlRecord['config'];
  counters: CrawlCounters;
  urlSeen: UrlSeenCounters;
  /** URLs that left the queue unfinished (only when the crawl ended with some). */
  lost?: number;
}

/** Reads a crawl and sums its host ledgers; undefined for an unknown crawl. */
export async function crawlProgress(
  table: CrawlTableStore,
  id: string,
): Promise<{ crawl: CrawlRecord; view: CrawlProgressView; aopic: AopicTotals } | undefined> {
  const crawl = await table.getCrawl(id);
  if (crawl === undefined) return undefined;
  const { counters, urlSeen, aopic } = aggregateCounters(
    crawl.seeds,
    await table.hosts(id),
    crawl.aopic?.admitted ?? 0,
  );
  const view: CrawlProgressView = {
    id,
    status: crawl.status,
    createdAt: crawl.createdAt,
    config: crawl.config,
    counters,
    urlSeen,
  };
  if (crawl.finishedAt !== undefined) view.finishedAt = crawl.finishedAt;
  if (crawl.lost !== undefined && crawl.lost > 0) view.lost = crawl.lost;
  return { crawl, view, aopic };
}
