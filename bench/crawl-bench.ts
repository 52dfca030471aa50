/**
 * `npm run bench`: crawls real documentation sites served by nginx on loopback with crawlstack and,
 * side by side, with Crawlee's CheerioCrawler (in-memory storage), and prints pages found,
 * duplicates, wall time, pages/s, CPU ms per page, peak RSS and the URL-seen cache hit rate.
 *
 * Needs Debian's python3-doc, postgresql-doc-15 and nginx (installed with apt-get when missing and
 * running as root), and Crawlee in .bench-cache/crawlee (installed on first run; it is a
 * benchmark-only install, not a dependency). Both crawlers run as child processes measured the
 * same way (bench/lib/report-usage.mjs). crawlstack keeps one request in flight per host; the
 * benchmark sets its politeness delays to 0, as the issue allows.
 *
 *   npm run bench                      both sites, both crawlers
 *   npm run bench -- --site postgresql --only crawlstack
 *
 * crawlstack runs twice per site: as a user runs it (writing WARC: request and response records,
 * two SHA-1 digests and a gzip member each, about a sixth of its CPU on the PostgreSQL docs) and
 * with --no-warc, which stores what Crawlee stores (no page bodies), for a like-for-like figure.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureSystemPackages, run, DOC_SITES as SITES, type Site, startNginx } from './lib/doc-sites.ts';

const ROOT = resolve(import.meta.dirname, '..');
const CRAWLEE_DIR = join(ROOT, '.bench-cache', 'crawlee');
const CRAWLEE_VERSION = '3.18.1';

interface RunResult {
  crawler: 'crawlstack' | 'crawlstack-nowarc' | 'crawlee';
  site: string;
  pages: number;
  uniquePaths: number;
  duplicateRequests: number;
  htmlPaths: Set<string>;
  wallMs: number;
  cpuMs: number;
  maxRssBytes: number;
  hitRate: number | null;
  /** TCP connections the crawler opened (HTTP/1.1, no pipelining: >= requests in flight at once). */
  connections: number;
}

const { values } = parseArgs({
  options: {
    site: { type: 'string', multiple: true },
    only: { type: 'string' },
    concurrency: { type: 'string', default: '16' },
    keep: { type: 'boolean', default: false },
  },
});

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

async function main(): Promise<void> {
  const sites = SITES.filter((s) => !values.site || values.site.some((name) => s.name.includes(name)));
  ensureSystemPackages(sites);
  const crawlers = (
    values.only ? [values.only] : ['crawlstack', 'crawlstack-nowarc', 'crawlee']
  ) as RunResult['crawler'][];
  if (crawlers.includes('crawlee')) ensureCrawlee();
  console.error('building crawlstack...');
  run('node', ['scripts/build.mjs', '--quiet']);

  const results: RunResult[] = [];
  for (const site of sites) {
    for (const crawler of crawlers) {
      console.error(`crawling ${site.name} with ${crawler}...`);
      results.push(await crawlSite(site, crawler));
    }
  }
  printTable(sites, results);
}

function ensureCrawlee(): void {
  const pkg = join(CRAWLEE_DIR, 'node_modules', 'crawlee', 'package.json');
  if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).version === CRAWLEE_VERSION) return;
  console.error(`installing crawlee@${CRAWLEE_VERSION} into ${CRAWLEE_DIR} (benchmark only)...`);
  mkdirSync(CRAWLEE_DIR, { recursive: true });
  // linkedom 0.18.15 cannot install (its dependency cssomnom is missing from the registry).
  writeFileSync(
    join(CRAWLEE_DIR, 'package.json'),
    JSON.stringify({
      name: 'bench-crawlee',
      private: true,
      type: 'module',
      overrides: { linkedom: '0.18.14' },
    }),
  );
  run('npm', ['install', '--no-audit', '--no-fund', `crawlee@${CRAWLEE_VERSION}`], CRAWLEE_DIR);
}

async function crawlSite(site: Site, crawler: RunResult['crawler']): Promise<RunResult> {
  const work = mkdtempSync(join(tmpdir(), `bench-${crawler}-`));
  const nginx = await startNginx(site.dir, work);
  const usageFile = join(work, 'usage.json');
  const startUrl = `${nginx.origin}${site.start}`;
  const started = performance.now();
  let stdout: string;
  const preload = `--import=${join(ROOT, 'bench/lib/report-usage.mjs')}`;
  const env = { ...process.env, BENCH_USAGE_FILE: usageFile, NODE_OPTIONS: preload };
  if (crawler !== 'crawlee') {
    // Run the bin the way a user does (its shebang carries crawlstack's runtime flags).
    stdout = await runChild(
      join(ROOT, 'bin/crawlstack.mjs'),
      [
        'crawl',
        startUrl,
        '--allow-private',
        '--delay',
        '0',
        '--delay-factor',
        '0',
        '--concurrency',
        values.concurrency ?? '16',
        '--max-pages-per-host',
        '1000000',
        '--out',
        join(work, 'out'),
        '--quiet',
        '--json',
        ...(crawler === 'crawlstack-nowarc' ? ['--no-warc'] : []),
      ],
      env,
    );
  } else {
    stdout = await runChild(
      process.execPath,
      [join(ROOT, 'bench/lib/crawlee-runner.mjs'), startUrl, CRAWLEE_DIR],
      { ...env, CRAWLEE_STORAGE_DIR: join(work, 'crawlee-storage') },
    );
  }
  const wallMs = performance.now() - started;
  await nginx.stop();
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { cpuMs: number; maxRssBytes: number };
  const log = readAccessLog(join(work, 'access.log'));
  // crawlstack prints its summary as JSON; Crawlee may log to stdout before the runner's last line.
  const json = crawler === 'crawlee' ? stdout.trim().split('\n').at(-1)! : stdout.slice(stdout.indexOf('{'));
  const summary = JSON.parse(json) as { pages: number; urlSeen?: { hitRate: number } };
  if (!values.keep) rmSync(work, { recursive: true, force: true });
  return {
    crawler,
    site: site.name,
    pages: summary.pages,
    uniquePaths: log.counts.size,
    duplicateRequests: [...log.counts.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0),
    htmlPaths: log.html,
    wallMs,
    cpuMs: usage.cpuMs,
    maxRssBytes: usage.maxRssBytes,
    hitRate: summary.urlSeen?.hitRate ?? null,
    connections: log.connections,
  };
}

function readAccessLog(path: string): {
  counts: Map<string, number>;
  html: Set<string>;
  connections: number;
} {
  const counts = new Map<string, number>();
  const html = new Set<string>();
  const connections = new Set<string>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [connection, uri, status, type] = line.split(' ');
    if (connection === undefined || uri === undefined || status === undefined) continue;
    connections.add(connection);
    counts.set(uri, (counts.get(uri) ?? 0) + 1);
    if (status === '200' && type?.startsWith('text/html')) html.add(uri);
  }
  return { counts, html, connections: connections.size };
}

function printTable(sites: Site[], results: RunResult[]): void {
  const rows = [
    [
      'site',
      'crawler',
      'pages',
      'expected',
      'dup req',
      'wall s',
      'pages/s',
      'CPU ms/page',
      'peak RSS MB',
      'URL-seen hits',
      'connections',
    ],
  ];
  for (const r of results) {
    const site = sites.find((s) => s.name === r.site)!;
    rows.push([
      r.site,
      r.crawler,
      String(r.htmlPaths.size),
      String(site.expected),
      String(r.duplicateRequests),
      (r.wallMs / 1000).toFixed(2),
      (r.htmlPaths.size / (r.wallMs / 1000)).toFixed(0),
      (r.cpuMs / Math.max(1, r.htmlPaths.size)).toFixed(2),
      (r.maxRssBytes / 1024 / 1024).toFixed(0),
      r.hitRate === null ? '-' : `${(r.hitRate * 100).toFixed(1)}%`,
      String(r.connections),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  console.log();
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
  console.log();
  for (const site of sites) {
    const ours = results.find((r) => r.site === site.name && r.crawler === 'crawlstack');
    const theirs = results.find((r) => r.site === site.name && r.crawler === 'crawlee');
    if (!ours || !theirs) continue;
    const missing = [...theirs.htmlPaths].filter((p) => !ours.htmlPaths.has(p));
    const cpuRatio = ours.cpuMs / ours.htmlPaths.size / (theirs.cpuMs / theirs.htmlPaths.size);
    const speedRatio = ours.htmlPaths.size / ours.wallMs / (theirs.htmlPaths.size / theirs.wallMs);
    const bare = results.find((r) => r.site === site.name && r.crawler === 'crawlstack-nowarc');
    const bareRatio =
      bare === undefined
        ? ''
        : ` (${((bare.cpuMs / bare.htmlPaths.size / (theirs.cpuMs / theirs.htmlPaths.size)) * 100).toFixed(0)}% without WARC, storing what Crawlee stores)`;
    console.log(
      `${site.name}: crawlstack uses ${(cpuRatio * 100).toFixed(0)}% of Crawlee's CPU per page${bareRatio} ` +
        `(target <= 20%), crawls ${speedRatio.toFixed(1)}x its pages/s (target >= 3x), ` +
        `peak RSS ${(ours.maxRssBytes / 1024 / 1024).toFixed(0)} MB (target < 150), ` +
        `${missing.length} pages Crawlee found that crawlstack did not${missing.length ? `: ${missing.slice(0, 5).join(' ')}` : ''}`,
    );
  }
}

function runChild(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done(out) : fail(new Error(`${command} ${args[0]} exited with ${code}`)),
    );
  });
}
