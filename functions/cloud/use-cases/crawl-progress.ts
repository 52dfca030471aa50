/**
 * A crawl's status and counters, for the API and the scheduler: O(1) in the number of hosts (the
 * crawl's counter shards; a finished crawl's frozen counters), or, with `exact`, summed from every
 * host ledger (the scheduler does that once, before it ends a crawl).
 */

import {
  type AopicTotals,
  aggregateCounters,
  type CrawlCounters,
  type CrawlRecord,
  type RecrawlOf,
  type UrlSeenCounters,
} from '../messages/crawl-records.ts';
import type { CrawlCounterStore, CrawlRegistry, HostItems } from '../ports/cloud-ports.ts';

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
  /** A recrawl round: its archive and plan, and what its revisits found (docs/recrawl.md). */
  recrawl?: RecrawlView;
}

/** A round's summary: the archive, the plan, and its pages by verdict. */
export interface RecrawlView extends RecrawlOf {
  notModified: number;
  unchanged: number;
  changed: number;
  gone: number;
  /** Pages the archive did not hold (found through links or sitemaps). */
  new: number;
}

/** The crawl table's families a crawl's progress is read from: its item, its counter shards or its host items. */
export type ProgressTable = CrawlRegistry & CrawlCounterStore & HostItems;

/** Reads a crawl and its counters; undefined for an unknown crawl. */
export async function crawlProgress(
  table: ProgressTable,
  id: string,
  options: { exact?: boolean } = {},
): Promise<{ crawl: CrawlRecord; view: CrawlProgressView; aopic: AopicTotals } | undefined> {
  const crawl = await table.getCrawl(id);
  if (crawl === undefined) return undefined;
  const parts = options.exact === true ? await table.hosts(id) : await table.counterShards(id);
  const summed = aggregateCounters(crawl.seeds, parts, crawl.aopic?.admitted ?? 0);
  const { urlSeen, aopic } = summed;
  // A finished crawl reports the exact counters frozen at its end.
  const counters =
    crawl.counters !== undefined && crawl.status !== 'running' && crawl.finishedAt !== undefined
      ? crawl.counters
      : summed.counters;
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
  if (crawl.recrawl !== undefined) {
    const by = counters.byChange ?? {};
    view.recrawl = {
      ...crawl.recrawl,
      notModified: by['not-modified'] ?? 0,
      unchanged: by.unchanged ?? 0,
      changed: by.changed ?? 0,
      gone: by.gone ?? 0,
      new: by.new ?? 0,
    };
  }
  return { crawl, view, aopic };
}
