/**
 * A cloud crawl's status (GET /crawls/{id}) and page records (its index) in the local crawl's
 * terms, so `crawlstack cloud` prints the same progress line and summary as `crawlstack crawl`,
 * and a download is a folder the local commands read (pages.jsonl lines, summary.json).
 */
import type { PageItem } from '../../cloud/messages/crawl-records.ts';
import type { CrawlProgressView } from '../../cloud/use-cases/crawl-progress.ts';
import type { PageRecord } from '../../core/types.ts';
import type { ProgressView, SummaryView } from '../progress.ts';

/** The summary of a cloud crawl: the local summary's fields, plus what only the cloud knows. */
export interface CloudSummary extends SummaryView {
  crawlId: string;
  /** URLs parked by AOPIC (in `queued` too). */
  parked: number;
  /** URLs that left the queue unfinished. */
  lost: number;
  /** URLs sent to the dead-letter queue. */
  dlq: number;
}

/** Pages finished and fetched from a status' counters. */
function counts(view: CrawlProgressView) {
  const c = view.counters;
  return { pages: c.fetched, skipped: Math.max(0, c.finished - c.fetched), queued: c.queued + c.parked };
}

/**
 * The summary of the crawl as `view` shows it at `now` (a running crawl's so far). `outDir`: where
 * it was downloaded, or what to run to download it.
 */
export function summaryOfView(view: CrawlProgressView, now: number, outDir: string): CloudSummary {
  const c = view.counters;
  const { pages, skipped, queued } = counts(view);
  const started = Date.parse(view.createdAt);
  const finishedAt = view.finishedAt ?? new Date(now).toISOString();
  const durationMs = Math.max(0, Date.parse(finishedAt) - started);
  return {
    state: view.status,
    resumed: false,
    seeds: view.config.seeds,
    outDir,
    startedAt: view.createdAt,
    finishedAt,
    durationMs,
    totalDurationMs: durationMs,
    pages,
    skipped,
    byStatus: c.byStatus,
    byReason: c.byReason,
    bytes: c.bytes,
    hosts: c.hosts,
    requests: c.requests,
    // No failedRequests: the cloud counts failed URLs (`failed`, in the buckets and reasons), not
    // failed requests, and a number under that label would say something else.
    retries: c.retries,
    duplicates: c.duplicates,
    discovered: c.discovered,
    queued,
    pagesPerSecond: durationMs > 0 ? Math.round((pages / durationMs) * 1000 * 10) / 10 : 0,
    urlSeen: {
      lookups: view.urlSeen.lookups,
      cacheHits: view.urlSeen.cacheHits,
      storeLookups: view.urlSeen.lookups - view.urlSeen.cacheHits,
      claimed: c.discovered,
      hitRate: view.urlSeen.hitRate,
    },
    peakRssBytes: 0,
    cpuMs: 0,
    order: view.config.order,
    linksSkipped: c.linksSkipped,
    traps: [],
    crawlId: view.id,
    parked: c.parked,
    lost: view.lost ?? 0,
    dlq: c.dlq,
  };
}

/**
 * Pages per second over about the last 10 s (the local line's window), from the fetched counter
 * of the status polls: since the newest poll at least 10 s old, or the first one. The cloud has
 * no per-page clock the CLI can see.
 */
export class PollRate {
  readonly #samples: { at: number; pages: number }[] = [];

  /** Records a poll; resolves the rate. */
  add(at: number, pages: number): number {
    this.#samples.push({ at, pages });
    while (this.#samples.length > 2 && at - this.#samples[1]!.at >= 10_000) this.#samples.shift();
    const first = this.#samples[0]!;
    return at > first.at ? ((pages - first.pages) * 1000) / (at - first.at) : 0;
  }
}

/** The progress line's view of a status (nothing is known to be in flight: 0). */
export function progressOfView(view: CrawlProgressView, now: number, pagesPerSecond: number): ProgressView {
  const { pages, skipped, queued } = counts(view);
  return {
    at: now,
    pages,
    skipped,
    errors: view.counters.failed,
    queued,
    running: 0,
    hosts: view.counters.hosts,
    elapsedMs: Math.max(0, now - Date.parse(view.createdAt)),
    bytes: view.counters.bytes,
    pagesPerSecond,
  };
}

/**
 * A page record of the cloud's index as a pages.jsonl line of a local crawl: the same fields in
 * the same order (absent ones as null), and its WARC location as a file of the download's warc/
 * folder (`warcFile`, or none when the object is not there). Fields the local record does not
 * have (the URL's fingerprint and host) are left out; fields this version does not know are kept.
 */
export function pageRecordOfItem(item: Partial<PageItem> & PageItemCore, warcFile?: string): PageRecord {
  const {
    fp: _fp,
    host: _host,
    messageId: _m,
    enqueued: _e,
    warc,
    url,
    finalUrl,
    status,
    contentType,
    kind,
    depth,
    bytes,
    fetchedAt,
    durationMs,
    title,
    contentHash,
    outLinks,
    ...rest
  } = item;
  const record: PageRecord = {
    url,
    finalUrl: finalUrl ?? url,
    status,
    contentType: contentType ?? null,
    kind: kind as PageRecord['kind'],
    depth,
    bytes,
    fetchedAt: fetchedAt ?? null,
    durationMs: durationMs ?? null,
    title: title ?? null,
    contentHash: contentHash ?? null,
    outLinks,
    ...(rest as Partial<PageRecord>),
  };
  if (warc !== undefined && warcFile !== undefined) {
    record.warc = { file: warcFile, offset: warc.offset, length: warc.length };
  }
  return record;
}

/** The fields every page record of the index has. */
type PageItemCore = Pick<PageItem, 'url' | 'status' | 'kind' | 'depth' | 'bytes' | 'outLinks'>;
