import { outcomeBuckets } from '../core/step/page-record.ts';
import type { CrawlSnapshot, CrawlSummary } from '../embedded/embedded-crawler.ts';
import { terminalSafe } from './terminal-text.ts';

/** What the progress line shows, read from the crawler's snapshot. */
export type ProgressView = Pick<
  CrawlSnapshot,
  | 'at'
  | 'pages'
  | 'skipped'
  | 'errors'
  | 'queued'
  | 'running'
  | 'hosts'
  | 'elapsedMs'
  | 'bytes'
  | 'pagesPerSecond'
> &
  Partial<Pick<CrawlSnapshot, 'waitingFor'>>;

/** How often the progress line is printed when stderr is not a terminal (CI logs, pipes). */
export const PLAIN_EVERY_MS = 5000;

/**
 * The live progress line: redrawn in place on a terminal, a plain log line every few seconds
 * otherwise (CI logs, pipes). Hand-written: a crawl has no known total, so a progress *bar*
 * library would only add a dependency for a single `\r` line.
 */
export class ProgressReporter<View> {
  readonly #stream: NodeJS.WriteStream;
  readonly #read: () => View | undefined;
  readonly #format: (view: View) => string;
  readonly #tty: boolean;
  #timer: NodeJS.Timeout | undefined;

  /**
   * `read` gives the crawl's state (undefined until the crawl is open), `format` its line
   * (`formatProgress` for a crawl's view).
   */
  constructor(stream: NodeJS.WriteStream, read: () => View | undefined, format: (view: View) => string) {
    this.#stream = stream;
    this.#read = read;
    this.#format = format;
    this.#tty = stream.isTTY === true;
  }

  start(): void {
    this.#timer = setInterval(() => this.#draw(), this.#tty ? 250 : PLAIN_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    if (this.#tty) this.#stream.write('\r\x1b[K');
  }

  /** Prints a line above the progress line. */
  log(line: string): void {
    if (this.#tty) this.#stream.write(`\r\x1b[K${line}\n`);
    else this.#stream.write(`${line}\n`);
  }

  #draw(): void {
    const p = this.#read();
    if (p === undefined) return;
    // Host names and reasons come from the crawl: no control character reaches the terminal.
    const line = terminalSafe(this.#format(p), { lines: false });
    if (this.#tty) this.#stream.write(`\r\x1b[K${line.slice(0, (this.#stream.columns ?? 120) - 1)}`);
    else this.#stream.write(`${new Date().toISOString()} ${line}\n`);
  }
}

/**
 * One progress line. The rate is the crawler's own, over its last 10 s of crawl time: an average
 * of 250 ms windows moved by 25-80% between draws, since pages finish in bursts.
 */
export function formatProgress(p: ProgressView): string {
  const parts = [
    `${p.pages} pages`,
    `${p.pagesPerSecond.toFixed(1)}/s`,
    `queue ${p.queued}`,
    `in flight ${p.running}`,
    `errors ${p.errors}`,
    `skipped ${p.skipped}`,
    `hosts ${p.hosts}`,
    formatBytes(p.bytes),
    formatDuration(p.elapsedMs),
  ];
  const waiting = p.waitingFor;
  if (waiting !== undefined && waiting.until - p.at >= WAIT_SHOWN_MS) {
    parts.push(
      `waiting for ${waiting.host}: ${waiting.reason}, ${formatDuration(waiting.until - p.at)} left`,
    );
  }
  return parts.join(' | ');
}

/** Waits shorter than this are ordinary politeness and not worth a word. */
const WAIT_SHOWN_MS = 2000;

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}:${String(sec).padStart(2, '0')}`;
}

/**
 * What the summary shows: a local crawl's summary, or a cloud crawl's built from its status (whose
 * state is the cloud's: running, done, cancelled, failed; no process of ours to measure, so its
 * CPU and memory are 0 and left out).
 */
export type SummaryView = Omit<CrawlSummary, 'state' | 'failedRequests'> & {
  state: string;
  /** Absent for a cloud crawl, which counts failed URLs but not failed requests. */
  failedRequests?: number;
};

/** The human summary printed when a crawl ends. */
export function formatSummary(s: SummaryView): string {
  const statuses = outcomeBuckets({ byStatus: s.byStatus, byReason: s.byReason, notFetched: s.skipped })
    .map(([label, n]) => `${label}: ${n}`)
    .join(', ');
  const reasons = Object.entries(s.byReason)
    .sort(([, a], [, b]) => b - a)
    .map(([reason, n]) => `${reason}: ${n}`)
    .join(', ');
  const lines = [
    `crawl ${s.state}${s.stopReason ? ` (${s.stopReason})` : ''}${s.resumed ? ' (resumed)' : ''} in ${formatDuration(s.durationMs)}`,
    `  pages        ${s.pages} fetched, ${s.skipped} not fetched, ${s.duplicates} exact duplicates`,
    `  by status    ${statuses || '-'}`,
    `  reasons      ${reasons || '-'}`,
    `  bytes        ${formatBytes(s.bytes)}`,
    `  hosts        ${s.hosts}`,
    `  requests     ${requestsLine(s)}`,
    `  discovered   ${s.discovered} URLs, ${s.queued} still queued`,
    `  rate         ${s.pagesPerSecond} pages/s`,
    `  URL-seen     ${(s.urlSeen.hitRate * 100).toFixed(1)}% cache hits (${s.urlSeen.cacheHits}/${s.urlSeen.lookups})`,
    `  resources    ${s.pages > 0 ? `${(s.cpuMs / s.pages).toFixed(2)} CPU ms/page` : `${s.cpuMs} CPU ms`}, peak RSS ${formatBytes(s.peakRssBytes)}`,
    `  output       ${s.outDir}`,
  ];
  return lines.filter((line) => !(line.startsWith('  resources') && s.peakRssBytes === 0)).join('\n');
}

/**
 * "12 (2 failed); 1 retry scheduled": requests made (robots.txt and retries included), those that
 * got no response or a 5xx/429, and the retries the crawl scheduled (a retry scheduled by an
 * interrupted crawl may not have been made yet, so they are not called requests).
 */
function requestsLine(s: SummaryView): string {
  const failed = s.failedRequests === undefined ? '' : ` (${s.failedRequests} failed)`;
  const retries = s.retries === 0 ? '' : `; ${s.retries} ${s.retries === 1 ? 'retry' : 'retries'} scheduled`;
  return `${s.requests}${failed}${retries}`;
}
