/**
 * Shared pieces of the e2e tier: run a crawl in-process with test-friendly settings and read back
 * everything it wrote (pages.jsonl, links.jsonl, WARC), measure politeness from the servers' own
 * request logs, and run the real CLI (bundled once per test file) as a child process.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { WARCParser } from 'warcio';
import { type CrawlConfigInput, parseCrawlConfig } from '../../functions/core/config.ts';
import type { LinkRecord, OutLink, PageRecord } from '../../functions/core/types.ts';
import {
  type CrawlSummary,
  EmbeddedCrawler,
  type EmbeddedCrawlerOptions,
} from '../../functions/embedded/embedded-crawler.ts';
import type { LoggedRequest, SiteServer } from '../fixtures/site-server.ts';

/** Project root (the CLI bundle and the bin shim are resolved from here). */
export const ROOT = resolve(import.meta.dirname, '../..');

const temps: string[] = [];
process.on('exit', () => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** A port on `address` that nothing listens on (it was free a moment ago): connections are refused. */
export function freePort(address: string): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, address, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A fresh temporary folder, removed when the test process exits. */
export function tempDir(prefix = 'crawlstack-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/**
 * Settings that keep e2e crawls fast and bounded: private addresses allowed (fixtures live on
 * loopback), no politeness delay unless a test asks, short retries and timeouts.
 */
export const FAST: Omit<CrawlConfigInput, 'seeds'> = {
  allowPrivate: true,
  // The soft-404 probe adds one request per site, and the link-generator detector stops
  // following the look-alike pages these small fixture sites are made of; these tests count
  // requests exactly. test/e2e/quality.test.ts covers both, with the defaults.
  soft404Probe: false,
  trapDetectors: false,
  // Sitemaps add a /sitemap.xml request per site; test/e2e/sitemaps.test.ts turns them on.
  sitemaps: false,
  delayMs: 0,
  delayFactor: 0,
  retryBaseDelayMs: 20,
  robotsErrorTtlMs: 100,
  connectTimeoutMs: 2000,
  headersTimeoutMs: 2000,
  idleTimeoutMs: 2000,
  totalTimeoutMs: 3000,
};

/** What an in-process crawl left behind. */
export interface CrawlRun {
  summary: CrawlSummary;
  outDir: string;
  pages: PageRecord[];
  links: LinkRecord[];
  /** pages.jsonl by URL (asserts each URL appears once). */
  page(url: string): PageRecord;
  /** The out-links recorded for a page (links.jsonl), by target URL. */
  linksOf(url: string): Map<string, OutLink>;
}

/** Validates a config with FAST defaults under `input`. */
export function testConfig(input: CrawlConfigInput) {
  const result = parseCrawlConfig({ ...FAST, ...input });
  if (!result.ok) throw new Error(`bad test config: ${result.problems.join('; ')}`);
  return result.config;
}

/** Runs an embedded crawl to its end and reads its output. */
export async function crawl(
  input: CrawlConfigInput,
  options: Partial<Omit<EmbeddedCrawlerOptions, 'config'>> = {},
): Promise<CrawlRun> {
  const outDir = options.outDir ?? tempDir();
  const crawler = new EmbeddedCrawler({ ...options, config: testConfig(input), outDir });
  const summary = await crawler.run();
  return readRun(outDir, summary);
}

/** Reads a crawl's output folder. */
export function readRun(outDir: string, summary: CrawlSummary): CrawlRun {
  const pages = readJsonl<PageRecord>(join(outDir, 'pages.jsonl'));
  const links = readJsonl<LinkRecord>(join(outDir, 'links.jsonl'));
  return {
    summary,
    outDir,
    pages,
    links,
    page(url) {
      const found = pages.filter((p) => p.url === url);
      assert.equal(
        found.length,
        1,
        `pages.jsonl should hold ${url} exactly once, holds it ${found.length} times`,
      );
      return found[0]!;
    },
    linksOf(url) {
      const records = links.filter((l) => l.from === url);
      assert.equal(records.length, 1, `links.jsonl should hold the links of ${url} once`);
      return new Map(records[0]!.links.map((l) => [l.url, l]));
    },
  };
}

/** Parses a JSON Lines file; every line must be complete JSON and the file must end with a newline. */
export function readJsonl<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  if (text.length === 0) return [];
  assert.ok(text.endsWith('\n'), `${path} ends in the middle of a line`);
  const records: T[] = [];
  const lines = text.slice(0, -1).split('\n');
  for (const [i, line] of lines.entries()) {
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      assert.fail(`${path} line ${i + 1} is not JSON: ${line.slice(0, 200)}`);
    }
  }
  return records;
}

/** Asserts the list has no repeated value and returns it as a set. */
export function assertUnique<T>(values: readonly T[], what: string): Set<T> {
  const set = new Set(values);
  if (set.size !== values.length) {
    const counts = new Map<T, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    const repeated = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
    assert.fail(`${what} repeats ${JSON.stringify(repeated.slice(0, 10))}`);
  }
  return set;
}

/** How many times a server was asked for each path (query included). */
export function pathCounts(site: SiteServer): Map<string, number> {
  const out = new Map<string, number>();
  for (const path of site.paths()) out.set(path, (out.get(path) ?? 0) + 1);
  return out;
}

/** Paths a server was asked for, robots.txt left out. */
export function pagePaths(site: SiteServer): string[] {
  return site.paths().filter((p) => p !== '/robots.txt' && !isProbe(p));
}

/** The soft-404 probe's made-up path (one request per site when the probe is on). */
export function isProbe(path: string): boolean {
  return path.startsWith('/crawlstack-probe-');
}

// ---------------------------------------------------------------------------------------------
// Politeness, from the server's side

/** Gaps (ms) between the end of each request to a server and the start of the next one. */
export function gaps(site: SiteServer): { gap: number; prev: LoggedRequest; next: LoggedRequest }[] {
  const log = [...site.log].sort((a, b) => a.start - b.start);
  const out: { gap: number; prev: LoggedRequest; next: LoggedRequest }[] = [];
  for (let i = 1; i < log.length; i++) {
    out.push({ gap: log[i]!.start - log[i - 1]!.end, prev: log[i - 1]!, next: log[i]! });
  }
  return out;
}

/** Highest number of requests in flight at once over all the servers together. */
export function overlapPeak(sites: readonly SiteServer[]): number {
  const events: [number, number][] = [];
  for (const site of sites) {
    for (const r of site.log) {
      events.push([r.start, 1], [r.end, -1]);
    }
  }
  // ends before starts at the same instant: touching intervals do not overlap
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, delta] of events) {
    now += delta;
    peak = Math.max(peak, now);
  }
  return peak;
}

// ---------------------------------------------------------------------------------------------
// WARC

/** One WARC record as warcio read it from a whole file. */
export interface WarcEntry {
  file: string;
  offset: number;
  length: number;
  type: string;
  uri: string | undefined;
  payload: Uint8Array;
}

/** Reads every `*.warc.gz` under outDir/warc with warcio, start to end. */
export async function readWarc(outDir: string): Promise<WarcEntry[]> {
  const dir = join(outDir, 'warc');
  if (!existsSync(dir)) return [];
  const entries: WarcEntry[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.warc.gz'))
    .sort()) {
    const parser = new WARCParser([readFileSync(join(dir, file))]);
    for await (const record of parser) {
      const payload = await record.readFully(false);
      entries.push({
        file,
        offset: parser.offset,
        length: parser.recordLength,
        type: record.warcType,
        uri: record.warcTargetURI ?? undefined,
        payload,
      });
    }
  }
  return entries;
}

/** Reads the single record a StoredRef points at, by inflating just that slice of the file. */
export async function readRef(outDir: string, ref: { file: string; offset: number; length: number }) {
  const bytes = readFileSync(join(outDir, 'warc', ref.file));
  const member = gunzipSync(bytes.subarray(ref.offset, ref.offset + ref.length));
  const record = await WARCParser.parse([member]);
  assert.ok(record, `no WARC record at ${ref.file}@${ref.offset}`);
  const payload = await record.readFully(false);
  return { type: record.warcType, uri: record.warcTargetURI, payload };
}

/**
 * Checks that the WARC files read cleanly with warcio and that every pages.jsonl `warc` ref points
 * at a response record for that page's URL whose payload matches the page's content hash.
 */
export async function assertWarcMatchesPages(
  outDir: string,
  pages: readonly PageRecord[],
): Promise<WarcEntry[]> {
  const entries = await readWarc(outDir);
  const responses = new Map(
    entries.filter((e) => e.type === 'response').map((e) => [`${e.file}@${e.offset}`, e] as const),
  );
  const { createHash } = await import('node:crypto');
  for (const page of pages) {
    if (page.status === null) {
      assert.equal(page.warc, undefined, `${page.url}: no response, no WARC record`);
      continue;
    }
    assert.ok(page.warc, `${page.url} has a response but no warc ref`);
    const whole = responses.get(`${page.warc.file}@${page.warc.offset}`);
    assert.ok(whole, `${page.url}: no response record at ${page.warc.file}@${page.warc.offset}`);
    assert.equal(whole.uri, page.url);
    assert.equal(whole.length, page.warc.length, `${page.url}: record length`);
    const single = await readRef(outDir, page.warc);
    assert.equal(single.type, 'response');
    assert.equal(single.uri, page.url);
    const hash = createHash('sha256').update(single.payload).digest('hex');
    if (page.contentHash !== null) assert.equal(hash, page.contentHash, `${page.url}: payload hash`);
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// The CLI as a child process

let cliBin: Promise<string> | undefined;

/**
 * Bundles the CLI the way scripts/build.mjs does, into a private folder next to a copy of the bin
 * shim, and returns the shim's path. Private, because test files run in parallel and a shared
 * dist/ rewritten by one while another's child process imports it can be read half-written.
 */
export function buildCli(): Promise<string> {
  cliBin ??= (async () => {
    const dir = tempDir('crawlstack-cli-');
    mkdirSync(join(dir, 'bin'));
    await build({
      entryPoints: { crawlstack: join(ROOT, 'functions/cli/cli.ts') },
      outdir: join(dir, 'dist'),
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'esm',
      logLevel: 'error',
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      },
    });
    copyFileSync(join(ROOT, 'bin/crawlstack.mjs'), join(dir, 'bin/crawlstack.mjs'));
    return join(dir, 'bin/crawlstack.mjs');
  })();
  return cliBin;
}

/** A running CLI process with its output collected. */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `crawlstack <args>` (the bundled CLI) with Node 22, in `cwd` (with `env`, else ours). */
export async function spawnCli(
  args: readonly string[],
  cwd = ROOT,
  env?: NodeJS.ProcessEnv,
): Promise<CliProcess> {
  const bin = await buildCli();
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(env === undefined ? {} : { env }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.on('close', (code, signal) => done({ code, signal }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs `crawlstack <args>` to its end (killed after `timeoutMs`). */
export async function runCli(
  args: readonly string[],
  options: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = await spawnCli(args, options.cwd, options.env);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  assert.equal(signal, null, `crawlstack ${args.join(' ')} was killed (timeout)\n${proc.stderr()}`);
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}
