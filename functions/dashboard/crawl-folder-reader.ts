import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type DashboardHost,
  type DashboardPage,
  type DashboardRatePoint,
  type DashboardSnapshot,
  type DashboardView,
  listsAsImportant,
} from '../core/dashboard-snapshot.ts';
import type { TrapFinding } from '../core/quality/trap-findings.ts';
import { isErrorReason } from '../core/step/page-record.ts';
import type { PageRecord } from '../core/types.ts';
import { JsonlTail, type JsonlTailOptions } from './jsonl-tail.ts';

/** The file a running crawl rewrites every second (see status-publisher.ts). */
export const STATUS_FILE = 'status.json';
/** A status older than this, with no summary after it, is from a crawl that is no longer running. */
const STALE_MS = 15_000;
const TOP_PAGES = 20;
const HOST_ROWS = 50;
const RATE_POINTS = 300;
/** Buckets of the rate kept at most; past it their width doubles (a crawl of weeks stays small). */
const RATE_BUCKETS = 3600;

interface HostTotals extends DashboardHost {
  fetched: number;
  errors: number;
  robotsDisallowed: number;
}

/**
 * Builds dashboard snapshots from a crawl's folder: pages.jsonl, read incrementally as the crawl
 * appends to it (a resumed crawl that cut it back is read again from the start), for statuses,
 * reasons, bytes, the rate over time, per-host figures and the most important pages; then what
 * the crawler wrote itself: summary.json and traps.json at the end, status.json while it runs.
 * Only whole lines are read, so a line being written is picked up on the next call.
 *
 * Memory does not grow with pages.jsonl: it is read in fixed-size chunks ({@link JsonlTail}) and
 * only aggregates are kept: counts, a row per host, the 20 most important pages, and at most
 * 3,600 rate buckets (their width doubles as the crawl grows longer).
 */
export class CrawlFolderReader {
  readonly outDir: string;
  readonly #now: () => number;
  readonly #tailer: JsonlTail;
  #pages = 0;
  #skipped = 0;
  #errors = 0;
  #bytes = 0;
  #duplicates = 0;
  #byStatus: Record<string, number> = {};
  #byReason: Record<string, number> = {};
  #hosts = new Map<string, HostTotals>();
  #top: DashboardPage[] = [];
  #rate = new RateBuckets();

  constructor(outDir: string, now: () => number = Date.now, options: JsonlTailOptions = {}) {
    this.outDir = outDir;
    this.#now = now;
    this.#tailer = new JsonlTail(join(outDir, 'pages.jsonl'), options);
  }

  /** The most bytes of pages.jsonl held at once (one chunk and one carried line). */
  get peakHeldBytes(): number {
    return this.#tailer.peakHeldBytes;
  }

  /**
   * The crawl now. `live` (the crawler in this process) overrides what the files say; a field it
   * lacks comes from status.json, summary.json or pages.jsonl, in that order.
   */
  read(live?: Partial<DashboardSnapshot>): DashboardView {
    this.#tail();
    const summary = readJson<Summary>(join(this.outDir, 'summary.json'));
    const status = readJson<{ at: number; seeds?: string[] } & Partial<DashboardSnapshot>>(
      join(this.outDir, STATUS_FILE),
    );
    const finishedAt = summary?.finishedAt === undefined ? undefined : Date.parse(summary.finishedAt);
    // After a summary, status.json speaks only for a crawl running again (a resume); its last
    // write, with the final state, says no more than the files do.
    const statusIsCurrent =
      status !== undefined &&
      (finishedAt === undefined || (status.at > finishedAt && status.state === 'running'));
    const now = this.#now();
    const snapshot: DashboardSnapshot = {
      ...this.#fromPages(now),
      ...(summary ? fromSummary(summary, readJson<TrapFinding[]>(join(this.outDir, 'traps.json'))) : {}),
      ...(statusIsCurrent ? withoutMeta(status) : {}),
      ...(live ?? {}),
    };
    if (live === undefined && statusIsCurrent && snapshot.state === 'running' && now - status.at > STALE_MS) {
      snapshot.state = 'not running';
    }
    snapshot.at = now;
    let source: DashboardView['source'] = 'files';
    if (live !== undefined) source = 'live';
    else if (statusIsCurrent) source = 'status';
    return { outDir: this.outDir, seeds: summary?.seeds ?? status?.seeds ?? [], source, snapshot };
  }

  /** Reads the whole lines appended to pages.jsonl since the last call. */
  #tail(): void {
    this.#tailer.read(
      (line) => {
        let record: PageRecord;
        try {
          record = JSON.parse(line) as PageRecord;
        } catch {
          return; // a damaged line (a crash mid-write before a resume): the crawl cuts it back
        }
        this.#add(record);
      },
      () => this.#reset(), // cut back by a resume
    );
  }

  #add(record: PageRecord): void {
    const statusKey = record.status === null ? 'none' : String(record.status);
    this.#byStatus[statusKey] = (this.#byStatus[statusKey] ?? 0) + 1;
    if (record.reason !== undefined) this.#byReason[record.reason] = (this.#byReason[record.reason] ?? 0) + 1;
    const failed =
      (record.status !== null && (record.status >= 500 || record.status === 429)) ||
      (record.reason !== undefined && isErrorReason(record.reason));
    if (failed) this.#errors++;
    if (record.duplicateOf !== undefined) this.#duplicates++;
    let hostName: string;
    try {
      hostName = new URL(record.url).hostname;
    } catch {
      return;
    }
    let host = this.#hosts.get(hostName);
    if (host === undefined) {
      host = { host: hostName, fetched: 0, errors: 0, robotsDisallowed: 0 };
      this.#hosts.set(hostName, host);
    }
    if (failed) {
      host.errors++;
      host.lastError = record.reason ?? `http-${record.status}`;
    }
    if (record.reason === 'robots') host.robotsDisallowed++;
    if (record.reason === 'robots-unreachable') host.dead = 'robots-unreachable';
    if (record.status === null) {
      this.#skipped++;
      return;
    }
    this.#pages++;
    this.#bytes += record.bytes;
    host.fetched++;
    if (record.durationMs !== null) host.lastResponseMs = record.durationMs;
    if (record.fetchedAt !== null) {
      const second = Math.floor(Date.parse(record.fetchedAt) / 1000);
      if (Number.isFinite(second)) this.#rate.add(second);
    }
    if (record.importance !== undefined && listsAsImportant(record.status)) this.#offerTop(record);
  }

  #offerTop(record: PageRecord): void {
    const top = this.#top;
    const importance = record.importance!;
    if (top.length >= TOP_PAGES && importance <= top.at(-1)!.importance) return;
    let i = top.length;
    while (i > 0 && top[i - 1]!.importance < importance) i--;
    top.splice(i, 0, {
      url: record.url,
      importance,
      ...(record.cash !== undefined ? { cash: record.cash } : {}),
    });
    if (top.length > TOP_PAGES) top.pop();
  }

  #fromPages(now: number): DashboardSnapshot {
    const rate = this.#rate.points();
    const last = rate.at(-1);
    const hosts = [...this.#hosts.values()]
      .sort((a, b) => b.fetched - a.fetched || b.errors - a.errors || a.host.localeCompare(b.host))
      .slice(0, HOST_ROWS)
      .map((h) => ({ ...h }));
    return {
      at: now,
      state: 'running',
      elapsedMs: last?.elapsedMs ?? 0,
      pages: this.#pages,
      skipped: this.#skipped,
      errors: this.#errors,
      hosts: this.#hosts.size,
      bytes: this.#bytes,
      duplicates: this.#duplicates,
      pagesPerSecond: this.#rate.recent(),
      rate,
      byStatus: { ...this.#byStatus },
      byReason: { ...this.#byReason },
      hostTable: hosts,
      traps: [],
      topPages: this.#top.map((p) => ({ ...p })),
    };
  }

  #reset(): void {
    this.#pages = this.#skipped = this.#errors = this.#bytes = this.#duplicates = 0;
    this.#byStatus = {};
    this.#byReason = {};
    this.#hosts = new Map();
    this.#top = [];
    this.#rate = new RateBuckets();
  }
}

/**
 * Pages by the second their request started, in at most RATE_BUCKETS buckets: when the crawl
 * spans more, each bucket doubles its width (two neighbours merge). The last 11 seconds are also
 * kept one by one, for the recent rate.
 */
class RateBuckets {
  /** Seconds per bucket. */
  #width = 1;
  /** The first second seen: bucket 0 starts there (buckets before it have negative indexes). */
  #origin: number | undefined;
  #buckets = new Map<number, number>();
  #low = Number.POSITIVE_INFINITY;
  #high = Number.NEGATIVE_INFINITY;
  #recent = new Map<number, number>();
  #firstSecond = Number.POSITIVE_INFINITY;
  #lastSecond = Number.NEGATIVE_INFINITY;

  add(second: number): void {
    this.#origin ??= second;
    this.#firstSecond = Math.min(this.#firstSecond, second);
    if (second > this.#lastSecond) {
      this.#lastSecond = second;
      for (const s of this.#recent.keys()) if (s < second - 11) this.#recent.delete(s);
    }
    if (second >= this.#lastSecond - 11) this.#recent.set(second, (this.#recent.get(second) ?? 0) + 1);
    const index = Math.floor((second - this.#origin) / this.#width);
    this.#buckets.set(index, (this.#buckets.get(index) ?? 0) + 1);
    this.#low = Math.min(this.#low, index);
    this.#high = Math.max(this.#high, index);
    while (this.#high - this.#low + 1 > RATE_BUCKETS) this.#widen();
  }

  #widen(): void {
    const merged = new Map<number, number>();
    for (const [index, count] of this.#buckets) {
      const half = Math.floor(index / 2);
      merged.set(half, (merged.get(half) ?? 0) + count);
    }
    this.#buckets = merged;
    this.#width *= 2;
    this.#low = Math.floor(this.#low / 2);
    this.#high = Math.floor(this.#high / 2);
  }

  /**
   * Pages per second over the last 10 whole seconds before the latest one (which is still
   * filling), or over the whole crawl when it is shorter.
   */
  recent(): number {
    if (this.#origin === undefined) return 0;
    const latest = this.#lastSecond;
    if (latest === this.#firstSecond) return this.#recent.get(latest) ?? 0;
    const from = Math.max(this.#firstSecond, latest - 10);
    let pages = 0;
    for (let second = from; second < latest; second++) pages += this.#recent.get(second) ?? 0;
    return pages / (latest - from);
  }

  /** Pages over time from the seconds their requests started, at most RATE_POINTS points. */
  points(): DashboardRatePoint[] {
    if (this.#origin === undefined) return [];
    // Crawl time counts from the first second fetched, in the buckets' width.
    const firstSecond = this.#firstSecond;
    const span = this.#lastSecond - firstSecond + 1;
    const step = Math.max(this.#width, Math.ceil(span / RATE_POINTS / this.#width) * this.#width);
    const counts = new Array<number>(Math.ceil(span / step) + 1).fill(0);
    for (const [index, count] of this.#buckets) {
      const second = this.#origin + index * this.#width;
      counts[Math.max(0, Math.floor((second - firstSecond) / step))]! += count;
    }
    while (counts.length > 1 && counts.at(-1) === 0 && (counts.length - 1) * step >= span) counts.pop();
    let pages = 0;
    return counts.map((count, i) => {
      pages += count;
      return { elapsedMs: (i + 1) * step * 1000, pages, pagesPerSecond: count / step };
    });
  }
}

/** The parts of summary.json the dashboard reads. */
interface Summary {
  state: string;
  seeds: string[];
  finishedAt: string;
  totalDurationMs: number;
  queued: number;
  hosts: number;
  requests: number;
  retries: number;
  discovered: number;
  pagesPerSecond: number;
  linksSkipped: Record<string, number>;
  urlSeen: { lookups: number; cacheHits: number; hitRate: number };
  peakRssBytes: number;
  traps?: TrapFinding[];
}

function fromSummary(summary: Summary, traps: TrapFinding[] | undefined): Partial<DashboardSnapshot> {
  return {
    state: summary.state,
    elapsedMs: summary.totalDurationMs,
    queued: summary.queued,
    running: 0,
    hosts: summary.hosts,
    requests: summary.requests,
    retries: summary.retries,
    discovered: summary.discovered,
    pagesPerSecond: summary.pagesPerSecond,
    linksSkipped: summary.linksSkipped,
    urlSeen: summary.urlSeen,
    memory: { rssBytes: summary.peakRssBytes, peak: true },
    traps: traps ?? summary.traps ?? [],
  };
}

function withoutMeta(status: { at: number; seeds?: string[] } & Partial<DashboardSnapshot>) {
  const { seeds: _seeds, ...rest } = status;
  return rest;
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    // absent, or being replaced right now: the next read gets it
    return undefined;
  }
}
