/**
 * A read-only view of a running embedded crawl, for progress lines and live dashboards: rates over
 * time, statuses and reasons, a per-host table, traps, the most important pages by AOPIC, the
 * URL-seen cache and memory. Built on demand from the crawler's own state (nothing is sampled on a
 * timer); every array and object in it is a copy.
 */

import type { RobotsEntry } from '../core/ports.ts';
import type { TrapFinding } from '../core/quality/trap-findings.ts';
import type { UrlSeenStats } from '../core/url-seen/url-seen.ts';

/** One point of the crawl's rate: pages finished by `elapsedMs` (crawl time, all runs). */
export interface RatePoint {
  elapsedMs: number;
  pages: number;
  /** Pages per second since the previous point. */
  pagesPerSecond: number;
}

/** A host as the scheduler sees it. */
export interface HostView {
  host: string;
  /** Tasks in its queue (a running one included). */
  queued: number;
  /** A request to it is in flight. */
  inFlight: boolean;
  /** Epoch ms before which no request may start (politeness gap, Retry-After, retry backoff). */
  nextAllowedAt: number;
  /** Page requests made (its budget). */
  fetched: number;
  /** Duration of its last request, ms. */
  lastResponseMs?: number;
  /** Failed requests (no response, or 5xx/429). */
  errors: number;
  /** The last failure: a fetch error code or `http-<status>`. */
  lastError?: string;
  /** Why the host is waiting past its ordinary gap, until `nextAllowedAt`. */
  waitingFor?: string;
  /** Crawl-delay from its robots.txt, ms. */
  crawlDelayMs?: number;
  /** Its robots.txt as last fetched (origin of the last request), when known. */
  robots?: Pick<RobotsEntry, 'status' | 'detail' | 'fetchedAt' | 'expiresAt'> & { origin: string };
  /** The address its requests go to, when known. */
  address?: string;
  /** Set when the host was given up (robots.txt unreachable). */
  dead?: string;
}

/** A fetched page ranked by its AOPIC importance estimate when it was fetched. */
export interface ImportantPage {
  url: string;
  importance: number;
  cash: number;
}

/** What the crawl is waiting for when nothing runs: the host whose gap ends first. */
export interface WaitingFor {
  host: string;
  /** Epoch ms. */
  until: number;
  reason: string;
}

export interface CrawlSnapshot {
  /** Epoch ms when the snapshot was taken. */
  at: number;
  /** Crawl time over all runs, ms. */
  elapsedMs: number;
  /** `running`, or how the crawl is ending. */
  state: 'running' | 'stopping';
  pages: number;
  skipped: number;
  /** Requests that failed (no response, or 5xx/429), retried ones included. */
  errors: number;
  queued: number;
  running: number;
  hosts: number;
  bytes: number;
  requests: number;
  retries: number;
  duplicates: number;
  discovered: number;
  /** Pages per second over the last 10 s (or the run so far, when shorter). */
  pagesPerSecond: number;
  /** Pages over time, at most a few hundred points (older ones thinned out as the crawl runs). */
  rate: RatePoint[];
  byStatus: Record<string, number>;
  /** Why URLs were not fetched or failed, by reason. */
  byReason: Record<string, number>;
  /** Out-links not followed, by reason. */
  linksSkipped: Record<string, number>;
  /** The busiest hosts (most queued first), at most the number asked for. */
  hostTable: HostView[];
  /** Set when nothing is in flight and the crawl waits for a host's gap to end. */
  waitingFor?: WaitingFor;
  /** URL patterns the trap detectors caught, with example URLs. */
  traps: TrapFinding[];
  /** Fetched pages with the highest AOPIC importance, highest first. */
  topPages: ImportantPage[];
  urlSeen: UrlSeenStats & { hitRate: number };
  memory: { rssBytes: number; heapUsedBytes: number };
}

/** How a snapshot is cut. */
export interface SnapshotOptions {
  /** Rows of the host table (default 50; 0 skips it). */
  hosts?: number;
  /** Pages in `topPages` (default 20, at most the 100 kept). */
  topPages?: number;
  /** Include traps (default true). */
  traps?: boolean;
}

/** The window of `pagesPerSecond`. */
export const RATE_WINDOW_MS = 10_000;
const MAX_POINTS = 512;

/**
 * Pages finished over crawl time, one point per `stepMs` at most: when the series is full every
 * other point is dropped and the step doubles, so a long crawl keeps its whole history at a
 * coarser grain. The last points stay fine-grained enough for a 10 s rate.
 */
export class RateSeries {
  readonly #points: { elapsedMs: number; pages: number }[] = [];
  /** Fine samples for the windowed rate (one per 250 ms at most, the last RATE_WINDOW_MS). */
  readonly #recent: { elapsedMs: number; pages: number }[] = [];
  #stepMs = 1000;

  /** Records the count at a moment (cheap when called more often than the step). */
  sample(elapsedMs: number, pages: number): void {
    const recent = this.#recent;
    const lastRecent = recent.at(-1);
    if (lastRecent === undefined || elapsedMs - lastRecent.elapsedMs >= 250) {
      recent.push({ elapsedMs, pages });
      while (recent.length > 2 && elapsedMs - recent[1]!.elapsedMs >= RATE_WINDOW_MS) recent.shift();
    } else {
      lastRecent.pages = pages;
    }
    const points = this.#points;
    const last = points.at(-1);
    if (last !== undefined && elapsedMs - last.elapsedMs < this.#stepMs) return;
    points.push({ elapsedMs, pages });
    if (points.length >= MAX_POINTS) {
      let kept = 0;
      for (let i = 0; i < points.length; i += 2) points[kept++] = points[i]!;
      points.length = kept;
      this.#stepMs *= 2;
    }
  }

  /**
   * Pages per second over the last RATE_WINDOW_MS up to `elapsedMs` (when the series is shorter,
   * since its first point).
   */
  rate(elapsedMs: number, pages: number): number {
    const first = this.#recent[0];
    if (first === undefined) return 0;
    const span = elapsedMs - first.elapsedMs;
    return span <= 0 ? 0 : ((pages - first.pages) / span) * 1000;
  }

  /** The series with each point's rate since the one before. */
  points(): RatePoint[] {
    const out: RatePoint[] = [];
    let previous: { elapsedMs: number; pages: number } | undefined;
    for (const point of this.#points) {
      const span = previous === undefined ? 0 : point.elapsedMs - previous.elapsedMs;
      const pagesPerSecond =
        previous === undefined || span <= 0 ? 0 : ((point.pages - previous.pages) / span) * 1000;
      out.push({ ...point, pagesPerSecond });
      previous = point;
    }
    return out;
  }
}

/** The `capacity` fetched pages with the highest importance so far (a small sorted array). */
export class TopPages {
  readonly #capacity: number;
  readonly #pages: ImportantPage[] = [];

  constructor(capacity = 100) {
    this.#capacity = capacity;
  }

  offer(page: ImportantPage): void {
    const pages = this.#pages;
    if (pages.length >= this.#capacity && page.importance <= pages.at(-1)!.importance) return;
    let i = pages.length;
    while (i > 0 && pages[i - 1]!.importance < page.importance) i--;
    pages.splice(i, 0, { ...page });
    if (pages.length > this.#capacity) pages.pop();
  }

  list(limit: number): ImportantPage[] {
    return this.#pages.slice(0, limit).map((p) => ({ ...p }));
  }
}
