/**
 * `GET /crawls/{id}/snapshot`: a cloud crawl as the dashboard shows it (the embedded dashboard's
 * `DashboardSnapshot`), from what the cloud knows cheaply, every read bounded whatever the size
 * of the crawl:
 *
 *   counters, statuses, reasons, links not followed, URL-seen   the counter shards (crawlProgress:
 *                                                               a few items, O(1) in hosts)
 *   host table                                                  one Query of at most `hostRows`
 *                                                               host items (the first by name)
 *   pages per second over time                                  the crawl's newest index objects
 *                                                               (one LIST of the last minutes'
 *                                                               keys, at most `indexObjects` GETs)
 *   the most important pages                                    those, and the crawl's first index
 *                                                               object (AOPIC fetches the richest
 *                                                               pages first: one LIST, one GET)
 *
 * The rate comes from the archive, so it lags the crawl by the archiver's batching window (up to
 * a minute); the counters do not.
 */
import {
  type DashboardHost,
  type DashboardPage,
  type DashboardRatePoint,
  type DashboardSnapshot,
  listsAsImportant,
} from '../../core/dashboard-snapshot.ts';
import type { Clock } from '../../core/ports.ts';
import type { PageItem } from '../messages/crawl-records.ts';
import { indexPrefix, stampOf } from '../messages/warc-object.ts';
import type { ObjectReader } from '../ports/cloud-ports.ts';
import { crawlProgress, type ProgressTable } from './crawl-progress.ts';

/** How much one snapshot reads at most. */
export interface SnapshotBounds {
  /** Host items read (one Query). Default 50. */
  hostRows?: number;
  /** Newest index objects read. Default 4. */
  indexObjects?: number;
  /** Bytes of index objects read (the newest first; the one that passes it is the last). Default 8 MB. */
  indexBytes?: number;
  /** How far back the rate goes, ms. Default 15 minutes. */
  windowMs?: number;
  /** Width of a rate point, ms. Default: 1 s to 60 s, so the pages read make at most 120 points. */
  bucketMs?: number;
  /** Pages in `topPages`. Default 20. */
  topPages?: number;
}

/** What the snapshot reads. */
export interface SnapshotDeps {
  /** The crawl's progress, and some host items for the host table. */
  table: ProgressTable;
  pages: ObjectReader;
  clock: Clock;
}

/** Keys asked for per LIST. */
const LIST_CHUNK = 1000;
/** LIST requests per snapshot at most (a window holding more keys is cut to its newest). */
const MAX_LISTS = 3;
/** The live pages-per-second figure: the archived pages of this last stretch. */
const RATE_SPAN_MS = 60_000;
/** Widths of a rate point to choose from, and the points a chart gets at most. */
const BUCKETS_MS = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000];
const MAX_POINTS = 120;

/** The crawl's dashboard snapshot; undefined for an unknown crawl. */
export async function cloudCrawlSnapshot(
  deps: SnapshotDeps,
  id: string,
  bounds: SnapshotBounds = {},
): Promise<DashboardSnapshot | undefined> {
  const progress = await crawlProgress(deps.table, id);
  if (progress === undefined) return undefined;
  const { crawl, view } = progress;
  const c = view.counters;
  const now = deps.clock.now();
  const createdAt = Date.parse(crawl.createdAt);
  const end = crawl.finishedAt === undefined ? now : Date.parse(crawl.finishedAt);

  const [hostItems, recent, first] = await Promise.all([
    deps.table.someHosts(id, bounds.hostRows ?? 50),
    newestPages(deps.pages, id, end - (bounds.windowMs ?? 15 * 60_000), bounds),
    firstPages(deps.pages, id),
  ]);
  const rate = rateSeries(recent, createdAt, bounds.bucketMs, c.fetched);
  const hostTable: DashboardHost[] = hostItems
    .map((h) => {
      const row: DashboardHost = {
        host: h.host,
        nextAllowedAt: h.nextAllowedAt,
        fetched: h.fetched,
        errors: h.failed,
        robotsDisallowed: h.byReason.robots ?? 0,
      };
      if (h.crawlDelayMs !== undefined) row.crawlDelayMs = h.crawlDelayMs;
      return row;
    })
    .sort((a, b) => (b.fetched ?? 0) - (a.fetched ?? 0) || (a.host < b.host ? -1 : 1));

  const snapshot: DashboardSnapshot = {
    at: now,
    state: crawl.status,
    elapsedMs: Math.max(0, end - createdAt),
    pages: c.fetched,
    skipped: c.finished - c.fetched,
    errors: c.failed,
    queued: c.queued,
    hosts: c.hosts,
    bytes: c.bytes,
    requests: c.requests,
    retries: c.retries,
    duplicates: c.duplicates,
    discovered: c.discovered,
    pagesPerSecond: crawl.status === 'running' ? recentRate(recent) : 0,
    rate,
    byStatus: { ...c.byStatus },
    byReason: { ...c.byReason },
    linksSkipped: { ...c.linksSkipped },
    hostTable,
    // Trap findings with examples live in each worker container (per-container detectors); the
    // counters say how many links they refused (linksSkipped).
    traps: [],
    topPages: topPages([...first, ...recent], bounds.topPages ?? 20),
    urlSeen: view.urlSeen,
  };
  return snapshot;
}

/** A fetched page's time, for the rate. */
interface Fetched {
  at: number;
}

/** The page records of the crawl's newest index objects written after `since` (bounded). */
async function newestPages(
  reader: ObjectReader,
  id: string,
  since: number,
  bounds: SnapshotBounds,
): Promise<PageItem[]> {
  const prefix = indexPrefix(id);
  // Keys are `<stamp>-<hash>`: listing after the stamp of `since` lists only the window's objects.
  let after = `${prefix}${stampOf(Math.max(0, since))}`;
  let keys: string[] = [];
  for (let i = 0; i < MAX_LISTS; i++) {
    const page = await reader.keys(prefix, after, LIST_CHUNK);
    keys = [...keys, ...page].slice(-(bounds.indexObjects ?? 4));
    if (page.length < LIST_CHUNK) break;
    after = page[page.length - 1]!;
  }
  const maxBytes = bounds.indexBytes ?? 8_000_000;
  const pages: PageItem[] = [];
  let bytes = 0;
  for (const key of keys.reverse()) {
    if (bytes >= maxBytes) break;
    const body = await reader.read(key, 0);
    bytes += body.length;
    pages.push(...pageLines(body));
  }
  return pages;
}

/**
 * The page records of the crawl's first index object: AOPIC fetches the pages holding the most
 * cash first, so the crawl's most important pages are mostly there, not in its newest objects.
 */
async function firstPages(reader: ObjectReader, id: string): Promise<PageItem[]> {
  const [key] = await reader.keys(indexPrefix(id), undefined, 1);
  return key === undefined ? [] : pageLines(await reader.read(key, 0));
}

function pageLines(body: Uint8Array): PageItem[] {
  const pages: PageItem[] = [];
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      pages.push(JSON.parse(line) as PageItem);
    } catch {
      // A line that does not parse is not the archiver's: skipped, the snapshot is a view.
    }
  }
  return pages;
}

function fetchedTimes(pages: readonly PageItem[]): Fetched[] {
  const out: Fetched[] = [];
  for (const p of pages) {
    if (p.status === null || p.fetchedAt === undefined) continue;
    const at = Date.parse(p.fetchedAt);
    if (Number.isFinite(at)) out.push({ at });
  }
  return out;
}

/**
 * Pages fetched per `bucketMs` over the window the newest index objects cover, in crawl time. The
 * running total of each point counts back from the crawl's `fetched` counter, so the last point
 * is the crawl's total (pages fetched but not archived yet included).
 */
function rateSeries(
  pages: readonly PageItem[],
  createdAt: number,
  bucketMsAsked: number | undefined,
  fetched: number,
): DashboardRatePoint[] {
  const times = fetchedTimes(pages);
  if (times.length === 0) return [];
  const span = Math.max(...times.map((t) => t.at)) - Math.min(...times.map((t) => t.at));
  const bucketMs =
    bucketMsAsked ?? BUCKETS_MS.find((ms) => span / ms <= MAX_POINTS) ?? BUCKETS_MS[BUCKETS_MS.length - 1]!;
  const counts = new Map<number, number>();
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const { at } of times) {
    const bucket = Math.floor((at - createdAt) / bucketMs);
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
    first = Math.min(first, bucket);
    last = Math.max(last, bucket);
  }
  const points: DashboardRatePoint[] = [];
  let after = times.length;
  for (let b = first; b <= last; b++) {
    const n = counts.get(b) ?? 0;
    after -= n;
    points.push({
      elapsedMs: (b + 1) * bucketMs,
      // Pages fetched by the end of this bucket: the total, less those the window shows later.
      pages: Math.max(0, fetched - after),
      pagesPerSecond: n / (bucketMs / 1000),
    });
  }
  return points;
}

/** Pages per second over the last minute of archived pages (0 when none). */
function recentRate(pages: readonly PageItem[]): number {
  const times = fetchedTimes(pages);
  if (times.length === 0) return 0;
  const newest = Math.max(...times.map((t) => t.at));
  const oldest = Math.min(...times.map((t) => t.at));
  // The last minute, or all the pages read when they span less.
  const span = Math.max(1000, Math.min(RATE_SPAN_MS, newest - oldest));
  const inSpan = times.filter((t) => t.at >= newest - span).length;
  return inSpan / (span / 1000);
}

/** The most important pages among those read, each URL once: fetched with a 2xx (worth opening). */
function topPages(pages: readonly PageItem[], limit: number): DashboardPage[] {
  const byUrl = new Map<string, DashboardPage>();
  for (const p of pages) {
    if (p.importance === undefined || !listsAsImportant(p.status)) continue;
    const known = byUrl.get(p.url);
    if (known === undefined || known.importance < p.importance) {
      byUrl.set(p.url, {
        url: p.url,
        importance: p.importance,
        ...(p.cash === undefined ? {} : { cash: p.cash }),
      });
    }
  }
  return [...byUrl.values()].sort((a, b) => b.importance - a.importance).slice(0, limit);
}
