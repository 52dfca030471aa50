/**
 * `npm run bench:recrawl`: a generated web of pages that change at known, varied rates, on four
 * loopback hosts, crawled once and then recrawled round after round by the embedded recrawl, for
 * each schedule: `full` (every page, conditional GETs), `uniform` and `adaptive` (both under a
 * budget of half the pages per round). Printed per schedule: requests and bytes per round (and
 * what they save against a re-crawl from nothing, which fetches every page in full), freshness
 * (share of pages whose archived copy matches the live page at the end of the round) and age (the
 * mean time, over all pages, that a page's archived copy has been out of date, in days: a round's
 * changes happen half a day before its recrawl), averaged over the rounds;
 * and the bytes of a recrawl of the site unchanged against its first crawl.
 *
 * Page classes (by index; each page links its four children, a tree from /p/0):
 *   40% static (never change; ETag and Last-Modified honoured)      15% hot (change every round)
 *   15% sometimes (change with probability 0.3 a round)              15% rare (probability 0.1)
 *   10% lastmod (probability 0.3; the host's sitemap gives the time of their last change)
 *    5% lying (never change, but a new ETag and Last-Modified: now on every response, validators ignored)
 * Each host's robots.txt names its sitemap, which every round reads again.
 * Time is virtual: one round is one day (the fetcher's timings are shifted onto that clock), so
 * the change-rate estimator sees rates per day. Changes come from a seeded generator: every
 * schedule sees the same changes.
 *
 *   npm run bench:recrawl                     240 pages, 8 rounds
 *   npm run bench:recrawl -- --pages 400 --rounds 10
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { UndiciFetcher } from '../functions/adapters/http/undici-fetcher.ts';
import { RecrawlArchive } from '../functions/adapters/local/recrawl-archive.ts';
import { mulberry32 } from '../functions/cache-study/cache-policies.ts';
import { type CrawlConfig, type CrawlConfigInput, parseCrawlConfig } from '../functions/core/config.ts';
import type { Clock, Fetcher } from '../functions/core/ports.ts';
import type { RecrawlSchedule } from '../functions/core/recrawl/recrawl-order.ts';
import { imfFixdate } from '../functions/core/recrawl/validators.ts';
import { EmbeddedCrawler } from '../functions/embedded/embedded-crawler.ts';
import { recrawl } from '../functions/embedded/recrawl.ts';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '240' },
    rounds: { type: 'string', default: '8' },
    verbose: { type: 'boolean', default: false },
  },
});
const PAGES = Number(args.pages);
const ROUNDS = Number(args.rounds);
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const DAY = 86_400_000;
const FANOUT = 4;

type PageClass = 'static' | 'hot' | 'sometimes' | 'rare' | 'lastmod' | 'lying';
function classOf(i: number): PageClass {
  const k = i % 20;
  if (k < 8) return 'static';
  if (k < 11) return 'hot';
  if (k < 14) return 'sometimes';
  if (k < 17) return 'rare';
  if (k < 19) return 'lastmod';
  return 'lying';
}
const CHANGE_P: Record<PageClass, number> = {
  static: 0,
  hot: 1,
  sometimes: 0.3,
  rare: 0.1,
  lastmod: 0.3,
  lying: 0,
};

const WORDS =
  'crawl page host link index queue fetch parse robots delay budget cache frontier archive record river stone cloud forest garden window letter market harbor bridge candle mirror orchard lantern'.split(
    ' ',
  );

/** The generated web: versions per page, the round each version appeared, transfer counters. */
class Web {
  readonly version: number[] = [];
  /** changedAt[i][v]: the round version v of page i appeared. */
  readonly changedAt: number[][] = [];
  origins: string[] = [];
  requests = 0;
  bytes = 0;
  round = 0;
  /** Seeded: the same changes for every schedule. */
  #random = mulberry32(42);

  reset(): void {
    this.#random = mulberry32(42);
    this.round = 0;
    for (let i = 0; i < PAGES; i++) {
      this.version[i] = 1;
      this.changedAt[i] = [0, 0];
    }
  }

  /** The changes of one round (before the round's recrawl). */
  advance(): void {
    this.round += 1;
    for (let i = 0; i < PAGES; i++) {
      const p = CHANGE_P[classOf(i)];
      if (p > 0 && this.#random() < p) {
        this.version[i]! += 1;
        this.changedAt[i]![this.version[i]!] = this.round;
      }
    }
  }

  url(i: number): string {
    return `${this.origins[i % HOSTS.length]}/p/${i}`;
  }

  html(i: number): string {
    const v = this.version[i]!;
    const links: string[] = [];
    for (let c = FANOUT * i + 1; c <= FANOUT * i + FANOUT && c < PAGES; c++)
      links.push(`<a href="${this.url(c)}">${c}</a>`);
    const words: string[] = [];
    for (let w = 0; w < 400; w++) words.push(WORDS[(i * 7 + w * 13 + v * 3) % WORDS.length]!);
    return `<!doctype html><html><head><title>Page ${i} v${v}</title></head><body><h1>Page ${i} v${v}</h1>\n${links.join('\n')}\n<p>${words.join(' ')}</p></body></html>\n`;
  }

  /** The host's sitemap: its `lastmod` pages, each with the (virtual) time of its last change. */
  sitemap(origin: string): string {
    const host = this.origins.indexOf(origin);
    const entries: string[] = [];
    for (let i = host; i < PAGES; i += HOSTS.length) {
      if (classOf(i) !== 'lastmod') continue;
      const changed = this.changedAt[i]![this.version[i]!]!;
      const lastmod = new Date(Math.max(changed - 0.5, 0) * DAY).toISOString().slice(0, 19);
      entries.push(`<url><loc>${this.url(i)}</loc><lastmod>${lastmod}Z</lastmod></url>`);
    }
    return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries.join('\n')}\n</urlset>\n`;
  }

  hashOf(i: number): string {
    return createHash('sha256').update(this.html(i)).digest('hex');
  }

  route(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '/';
    const i = /^\/p\/(\d+)$/.exec(path) ? Number(path.slice(3)) : -1;
    this.requests += 1;
    const origin = `http://${req.headers.host}`;
    if (path === '/robots.txt') {
      this.#send(
        res,
        200,
        { 'content-type': 'text/plain' },
        `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`,
      );
      return;
    }
    if (path === '/sitemap.xml') {
      this.#send(res, 200, { 'content-type': 'application/xml' }, this.sitemap(origin));
      return;
    }
    if (i < 0 || i >= PAGES) {
      this.#send(res, 404, {}, '');
      return;
    }
    const kind = classOf(i);
    const v = this.version[i]!;
    const body = this.html(i);
    if (kind === 'lying') {
      this.#send(res, 200, { etag: `"${Math.random()}"`, 'last-modified': imfFixdate(Date.now()) }, body);
      return;
    }
    const etag = `"${i}-${v}"`;
    const headers = {
      etag,
      'last-modified': imfFixdate(Date.UTC(2026, 0, 1) + this.changedAt[i]![v]! * DAY),
    };
    if (req.headers['if-none-match'] === etag) this.#send(res, 304, headers, '');
    else this.#send(res, 200, headers, body);
  }

  #send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
    const bytes = Buffer.from(body);
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(bytes.length),
      ...headers,
    });
    // What went over the wire: status line, headers, body.
    let head = `HTTP/1.1 ${status} x\r\n`;
    for (const [name, value] of Object.entries(res.getHeaders())) head += `${name}: ${value}\r\n`;
    this.bytes += Buffer.byteLength(head) + 2 + bytes.length;
    res.end(bytes);
  }
}

/** One round is one day: the crawl's clock and the fetcher's timings both read it. */
class RoundClock implements Clock {
  #base = 0;
  #start = Date.now();
  at(round: number): void {
    this.#base = round * DAY;
    this.#start = Date.now();
  }
  now(): number {
    return this.#base + (Date.now() - this.#start);
  }
}

function roundFetcher(inner: Fetcher, clock: Clock): Fetcher {
  return {
    async fetch(request) {
      const result = await inner.fetch(request);
      return { ...result, timings: { ...result.timings, startedAt: clock.now() } };
    },
    close: () => inner.close(),
  };
}

function config(input: Partial<CrawlConfigInput>): CrawlConfig {
  const parsed = parseCrawlConfig({
    seeds: [web.url(0)],
    allowPrivate: true,
    scope: 'any',
    soft404Probe: false,
    trapDetectors: false,
    delayMs: 0,
    delayFactor: 0,
    concurrency: 4,
    politenessPerIp: false,
    ...input,
  });
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.config;
}

interface RoundFigures {
  requests: number;
  bytes: number;
  freshness: number;
  /** Mean age of the archived copies, in days (0 for a fresh copy). */
  age: number;
  /** Pages whose sitemap `<lastmod>` is later than their last visit (the hint for the next round). */
  hinted: number;
}

/** Freshness and age of the archive against the live web at the end of a round. */
function measure(outDir: string): Pick<RoundFigures, 'freshness' | 'age' | 'hinted'> {
  const archive = new RecrawlArchive(join(outDir, 'recrawl.sqlite'));
  try {
    let fresh = 0;
    let age = 0;
    let hinted = 0;
    for (let i = 0; i < PAGES; i++) {
      const page = archive.page(web.url(i));
      if (page?.history.lastmod !== undefined && page.history.lastmod > page.history.lastVisitAt) hinted += 1;
      const stored = page?.contentHash;
      if (stored === web.hashOf(i)) {
        fresh += 1;
        continue;
      }
      // The copy's version: the newest one whose hash matches; its successor made it stale.
      let v = web.version[i]!;
      const saved = web.version[i]!;
      while (v > 1) {
        web.version[i] = v - 1;
        const match = web.hashOf(i) === stored;
        v -= 1;
        if (match) break;
      }
      web.version[i] = saved;
      // A round's changes happen half a day before its recrawl.
      age += web.round - (web.changedAt[i]![v + 1] ?? web.round) + 0.5;
    }
    return { freshness: fresh / PAGES, age: age / PAGES, hinted };
  } finally {
    archive.close();
  }
}

async function firstCrawl(outDir: string, clock: RoundClock): Promise<{ requests: number; bytes: number }> {
  const cfg = config({});
  clock.at(0);
  const before = { requests: web.requests, bytes: web.bytes };
  const fetcher = roundFetcher(new UndiciFetcher(cfg), clock);
  try {
    await new EmbeddedCrawler({ config: cfg, outDir, fetcher, clock }).run();
  } finally {
    await fetcher.close();
  }
  return { requests: web.requests - before.requests, bytes: web.bytes - before.bytes };
}

async function runSchedule(schedule: RecrawlSchedule, budget: number | undefined, changes: boolean) {
  web.reset();
  const outDir = mkdtempSync(join(tmpdir(), `recrawl-bench-${schedule}-`));
  const clock = new RoundClock();
  const rounds: RoundFigures[] = [];
  try {
    const first = await firstCrawl(outDir, clock);
    for (let r = 1; r <= ROUNDS; r++) {
      if (changes) web.advance();
      else web.round += 1;
      clock.at(r);
      const before = { requests: web.requests, bytes: web.bytes };
      const overrides: Partial<CrawlConfigInput> = {
        recrawlSchedule: schedule,
        recrawlMinIntervalMs: DAY / 2,
        recrawlMaxIntervalMs: 4 * DAY,
      };
      if (budget !== undefined) overrides.recrawlBudget = budget;
      const fetcher = roundFetcher(new UndiciFetcher(config({})), clock);
      try {
        await recrawl({ outDir, overrides, fetcher, clock });
      } finally {
        await fetcher.close();
      }
      rounds.push({
        requests: web.requests - before.requests,
        bytes: web.bytes - before.bytes,
        ...measure(outDir),
      });
    }
    return { first, rounds };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

const web = new Web();
const servers: Server[] = [];
const started = Date.now();
try {
  for (const host of HOSTS) {
    const server = createServer((req, res) => web.route(req, res));
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    servers.push(server);
    web.origins.push(`http://${host}:${(server.address() as AddressInfo).port}`);
  }
  const half = Math.floor(PAGES / 2);
  console.log(`recrawl bench: ${PAGES} pages on ${HOSTS.length} hosts, ${ROUNDS} rounds (one a virtual day)`);
  console.log(
    'classes: 40% static, 15% hot (every round), 15% p=0.3, 15% p=0.1, 10% p=0.3 with sitemap lastmod, 5% lying validators\n',
  );

  const unchanged = await runSchedule('full', undefined, false);
  const ratio = mean(unchanged.rounds.map((r) => r.bytes)) / unchanged.first.bytes;
  console.log(
    `unchanged site, full recrawl: ${Math.round(mean(unchanged.rounds.map((r) => r.bytes)))} bytes a round vs ${unchanged.first.bytes} for the first crawl = ${pct(ratio)} (target <= 10%)\n`,
  );

  const rows: string[][] = [
    [
      'schedule',
      'budget',
      'requests/round',
      'bytes/round',
      'bytes saved',
      'requests saved',
      'freshness',
      'age (days)',
    ],
  ];
  let fullBytes = 0;
  let fullRequests = 0;
  const results: Record<string, number> = {};
  for (const [schedule, budget] of [
    ['full', undefined],
    ['uniform', half],
    ['adaptive', half],
  ] as const) {
    const { first, rounds } = await runSchedule(schedule, budget, true);
    if (args.verbose) {
      for (const [r, f] of rounds.entries()) {
        console.log(
          `${schedule} round ${r + 1}: ${f.requests} requests, ${f.bytes} bytes, freshness ${pct(f.freshness)}, age ${f.age.toFixed(2)}, lastmod hints ${f.hinted}`,
        );
      }
    }
    fullBytes = first.bytes;
    fullRequests = first.requests;
    const requests = mean(rounds.map((r) => r.requests));
    const bytes = mean(rounds.map((r) => r.bytes));
    const freshness = mean(rounds.map((r) => r.freshness));
    results[schedule] = freshness;
    rows.push([
      schedule,
      budget === undefined ? '-' : String(budget),
      requests.toFixed(0),
      bytes.toFixed(0),
      pct(1 - bytes / first.bytes),
      pct(1 - requests / first.requests),
      pct(freshness),
      mean(rounds.map((r) => r.age)).toFixed(2),
    ]);
  }
  rows.splice(1, 0, [
    're-crawl from nothing',
    '-',
    String(fullRequests),
    String(fullBytes),
    '0.0%',
    '0.0%',
    '100.0%',
    '0.00',
  ]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
  console.log(
    `\nadaptive vs uniform freshness at half the pages a round: ${pct(results.adaptive!)} vs ${pct(results.uniform!)} (${results.adaptive! > results.uniform! ? 'adaptive ahead' : 'adaptive NOT ahead'})`,
  );
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
} finally {
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
}
