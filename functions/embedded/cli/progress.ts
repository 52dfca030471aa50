import type { CrawlProgress, CrawlSummary } from '../embedded-crawler.ts';

/**
 * The live progress line: redrawn in place on a terminal, a plain log line every few seconds
 * otherwise (CI logs, pipes). Hand-written: a crawl has no known total, so a progress *bar*
 * library would only add a dependency for a single `\r` line.
 */
export class ProgressReporter {
  readonly #stream: NodeJS.WriteStream;
  readonly #read: () => CrawlProgress;
  readonly #tty: boolean;
  #timer: NodeJS.Timeout | undefined;
  #last = { pages: 0, at: 0 };
  #rate = 0;

  constructor(stream: NodeJS.WriteStream, read: () => CrawlProgress) {
    this.#stream = stream;
    this.#read = read;
    this.#tty = stream.isTTY === true;
  }

  start(): void {
    this.#timer = setInterval(() => this.#draw(), this.#tty ? 250 : 10_000);
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
    const now = p.elapsedMs;
    if (now > this.#last.at) {
      const instant = ((p.pages - this.#last.pages) / (now - this.#last.at)) * 1000;
      this.#rate = this.#last.at === 0 ? instant : this.#rate * 0.6 + instant * 0.4;
    }
    this.#last = { pages: p.pages, at: now };
    const line = formatProgress(p, this.#rate);
    if (this.#tty) this.#stream.write(`\r\x1b[K${line.slice(0, (this.#stream.columns ?? 120) - 1)}`);
    else this.#stream.write(`${new Date().toISOString()} ${line}\n`);
  }
}

export function formatProgress(p: CrawlProgress, rate: number): string {
  return [
    `${p.pages} pages`,
    `${rate.toFixed(1)}/s`,
    `queue ${p.queued}`,
    `in flight ${p.running}`,
    `errors ${p.errors}`,
    `skipped ${p.skipped}`,
    `hosts ${p.hosts}`,
    formatBytes(p.bytes),
    formatDuration(p.elapsedMs),
  ].join(' | ');
}

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

/** The human summary printed when a crawl ends. */
export function formatSummary(s: CrawlSummary): string {
  const statuses = Object.entries(s.byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status === 'none' ? 'no response' : status}: ${n}`)
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
    `  requests     ${s.requests} (${s.retries} retries)`,
    `  discovered   ${s.discovered} URLs, ${s.queued} still queued`,
    `  rate         ${s.pagesPerSecond} pages/s`,
    `  URL-seen     ${(s.urlSeen.hitRate * 100).toFixed(1)}% cache hits (${s.urlSeen.cacheHits}/${s.urlSeen.lookups})`,
    `  resources    ${(s.cpuMs / Math.max(1, s.pages)).toFixed(2)} CPU ms/page, peak RSS ${formatBytes(s.peakRssBytes)}`,
    `  output       ${s.outDir}`,
  ];
  return lines.join('\n');
}
