/**
 * What the dashboard shows: one snapshot of a crawl. Every field is optional but the counts, so a
 * snapshot can come from the crawler itself (`EmbeddedCrawler.snapshot()`, which has all of it),
 * from the `status.json` a running crawl publishes, or from the files of a finished crawl. The
 * shape is a subset of the crawler's snapshot: it is what the page reads, nothing more.
 */
import type { TrapFinding } from './quality/trap-findings.ts';

/** Pages finished by a moment of the crawl, and the rate since the point before. */
export interface DashboardRatePoint {
  elapsedMs: number;
  pages: number;
  pagesPerSecond: number;
}

/** One row of the host table. */
export interface DashboardHost {
  host: string;
  /** Tasks in its queue. */
  queued?: number;
  inFlight?: boolean;
  /** Epoch ms before which no request may start. */
  nextAllowedAt?: number;
  /** Page requests made. */
  fetched?: number;
  /** Duration of its last request, ms. */
  lastResponseMs?: number;
  /** Failed requests (no response, or 5xx/429). */
  errors?: number;
  lastError?: string;
  /** Why it waits past its ordinary gap. */
  waitingFor?: string;
  /** Crawl-delay from its robots.txt, ms. */
  crawlDelayMs?: number;
  /** robots.txt as last fetched: `rules`, `allow-all` or `disallow-all`, and the HTTP status. */
  robots?: { status: string; detail?: string };
  /** URLs its robots.txt disallowed. */
  robotsDisallowed?: number;
  /** Why the host was given up. */
  dead?: string;
}

/**
 * Whether a page goes into the most important pages: fetched with a 2xx status, a page worth
 * opening (a 404 or a redirect can hold much AOPIC cash too; a URL never fetched has no status).
 */
export function listsAsImportant(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/** A page ranked by its AOPIC importance estimate. */
export interface DashboardPage {
  url: string;
  importance: number;
  cash?: number;
}

/** One snapshot of a crawl, as the page reads it. */
export interface DashboardSnapshot {
  /** Epoch ms the snapshot was taken. */
  at: number;
  /** `running`, `stopping`, or how the crawl ended (`done`, `max-pages`, `interrupted`, ...). */
  state: string;
  /** Crawl time, ms. */
  elapsedMs: number;
  pages: number;
  skipped: number;
  errors: number;
  queued?: number;
  running?: number;
  hosts: number;
  bytes: number;
  requests?: number;
  retries?: number;
  duplicates: number;
  discovered?: number;
  /** Pages per second, recently. */
  pagesPerSecond: number;
  rate: DashboardRatePoint[];
  byStatus: Record<string, number>;
  byReason: Record<string, number>;
  linksSkipped?: Record<string, number>;
  hostTable: DashboardHost[];
  traps: TrapFinding[];
  topPages: DashboardPage[];
  urlSeen?: { lookups: number; cacheHits: number; hitRate: number };
  memory?: { rssBytes: number; heapUsedBytes?: number; peak?: boolean };
}

/** A crawl the cloud dashboard can show (`GET /crawls` of the cloud API). */
export interface DashboardCrawl {
  id: string;
  status: string;
  createdAt: string;
  finishedAt?: string;
  seeds: string[];
}

/** What the server sends: the crawl's identity and its snapshot. */
export interface DashboardView {
  /** The crawl's folder (embedded), or `crawl <id>` (cloud). */
  outDir: string;
  seeds: string[];
  /**
   * Where the numbers come from: the crawler in this process, its status.json, its files, or the
   * cloud API's snapshot.
   */
  source: 'live' | 'status' | 'files' | 'cloud';
  snapshot: DashboardSnapshot;
  /** Cloud: the crawls the page can switch to (newest first), and the one shown. */
  crawls?: DashboardCrawl[];
  crawlId?: string;
}
