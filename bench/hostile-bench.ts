/**
 * `npx tsx bench/hostile-bench.ts [case...]`: what one hostile page costs the crawler, measured on
 * the real CLI (the bundle in dist/, built first) crawling fixture servers on loopback. Each case
 * is one crawl in its own process; the figures are that process's peak RSS and CPU (from its
 * summary.json) and what it wrote (pages.jsonl, links.jsonl, the WARC). Cases:
 *
 *   base-href-1k     a 100 KB <base href> and 1,000 short relative links (a 118 KB page)
 *   base-href-4k     the same base and 4,000 links (a 175 KB page)
 *   chunked-1byte    an 11 MiB body in 1-byte chunks (chunked transfer coding)
 *   chunked-1byte-x2 the same from two hosts at once
 *   tcp-1byte        a 2 MiB body written one byte per TCP write
 *   many-links       a page of 200,000 distinct links
 *   extract-deep     --extract on 280,000 nested <div>s (a 1.4 MB page)
 *   extract-broad    --extract of `div` on 2,000 nested divs with text (a 70 KB page)
 *   gzip-trailing    a gzip body followed by "\r\n"
 *   trickle          a body at 1 byte/s, default timeouts
 *   warc-headers     mixed-case header names and obs-text bytes, as stored in the WARC
 *
 * `--no-build` runs dist/ as it is: build another commit there first to measure it.
 *
 * Wall time is printed for information only; the bounds are in bytes, links and RSS.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  baseHrefAmplifier,
  deeplyNested,
  exceptRobots,
  gzipWithTrailing,
  manyLinks,
  nestedText,
  oneByteChunks,
  oneByteWrites,
  rawHeaderResponse,
  startRawServer,
  trickle,
} from '../test/fixtures/hostile-routes.ts';
import { routes, startSite } from '../test/fixtures/site-server.ts';

const ROOT = resolve(import.meta.dirname, '..');
const MiB = 1024 * 1024;

interface Server {
  origin: string;
  close(): Promise<void>;
}

interface Case {
  /** Servers to crawl; each one's origin + `path` is a seed. */
  servers(): Promise<Server[]>;
  path: string;
  /** Extra crawl settings (the --config file). */
  config?: Record<string, unknown>;
  /** Extra figures read from the crawl's output. */
  extra?(out: CrawlOutput): Record<string, string | number>;
}

interface CrawlOutput {
  dir: string;
  pages: Record<string, unknown>[];
  linksBytes: number;
  pagesBytes: number;
}

const site = (route: Parameters<typeof routes>[0][string], host = '127.0.0.2') =>
  startSite(routes({ '/page': route }), host);

const CASES: Record<string, Case> = {
  // One page: the figures are what that page costs, not the crawl of its links.
  'base-href-1k': {
    servers: async () => [await site(baseHrefAmplifier(100_000, 1000))],
    path: '/page',
    config: { maxPages: 1 },
  },
  'base-href-4k': {
    servers: async () => [await site(baseHrefAmplifier(100_000, 4000))],
    path: '/page',
    config: { maxPages: 1 },
  },
  'chunked-1byte': {
    servers: async () => [await startRawServer(exceptRobots(oneByteChunks(11 * MiB)), '127.0.0.2')],
    path: '/page',
  },
  'chunked-1byte-x2': {
    servers: async () => [
      await startRawServer(exceptRobots(oneByteChunks(11 * MiB)), '127.0.0.2'),
      await startRawServer(exceptRobots(oneByteChunks(11 * MiB)), '127.0.0.3'),
    ],
    path: '/page',
  },
  'tcp-1byte': {
    servers: async () => [await startRawServer(exceptRobots(oneByteWrites(2 * MiB)), '127.0.0.2')],
    path: '/page',
  },
  'many-links': {
    servers: async () => [await startSite(routes({ '/page': manyLinks(200_000) }), '127.0.0.2')],
    path: '/page',
    config: { maxPages: 3 },
  },
  'extract-deep': {
    servers: async () => [await site(deeplyNested(280_000))],
    path: '/page',
    config: { extract: { title: 'title', bottom: 'div:empty' } },
  },
  'extract-broad': {
    servers: async () => [await site(nestedText(2000, 5))],
    path: '/page',
    config: { extract: { divs: 'div' } },
  },
  'gzip-trailing': {
    servers: async () => [
      await site(gzipWithTrailing(`<html><title>gz</title><body>${'x'.repeat(5000)}</body></html>`)),
    ],
    path: '/page',
  },
  trickle: {
    servers: async () => [await site(trickle(1000))],
    path: '/page',
    config: {},
  },
  'warc-headers': {
    servers: async () => [await startRawServer(exceptRobots(rawHeaderResponse), '127.0.0.2')],
    path: '/page',
    extra: (out) => ({ 'stored header names': warcHeaderNames(out.dir).join(' ') }),
  },
};

/** Header names of the first response record's HTTP head, and whether obs-text bytes survived. */
function warcHeaderNames(dir: string): string[] {
  const warcDir = join(dir, 'warc');
  const file = readdirSync(warcDir).find((f) => f.endsWith('.warc.gz'));
  if (file === undefined) return ['(no WARC)'];
  const text = gunzipSync(readFileSync(join(warcDir, file))).toString('latin1');
  const start = text.indexOf('WARC-Type: response');
  const http = text.indexOf('HTTP/1.1', start);
  const head = text.slice(http, text.indexOf('\r\n\r\n', http));
  const names = head
    .split('\r\n')
    .slice(1)
    .map((line) => line.slice(0, line.indexOf(':')))
    .filter((name) => !name.startsWith('X-Crawlstack'));
  const obs = /caf\xe9 \xff/.test(head)
    ? 'obs-text kept'
    : /caf\xef\xbf\xbd/.test(head)
      ? 'obs-text replaced'
      : 'obs-text ?';
  return [...names, `(${obs})`];
}

function fileBytes(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

async function runCase(name: string, spec: Case): Promise<Record<string, string | number>> {
  const servers = await spec.servers();
  const dir = mkdtempSync(join(tmpdir(), `hostile-bench-${name}-`));
  try {
    const config = {
      allowPrivate: true,
      scope: 'any',
      delayMs: 0,
      delayFactor: 0,
      soft404Probe: false,
      maxRetries: 0,
      ...spec.config,
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    const seeds = servers.map((s) => `${s.origin}${spec.path}`);
    const started = performance.now();
    // spawn, not spawnSync: the fixture servers answer from this process's event loop.
    const child = await new Promise<{ status: number | null; stderr: string }>((done) => {
      const proc = spawn(
        process.execPath,
        [
          join(ROOT, 'bin/crawlstack.mjs'),
          'crawl',
          ...seeds,
          '--out',
          join(dir, 'out'),
          '--config',
          join(dir, 'config.json'),
          '--quiet',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      proc.stderr?.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      proc.on('close', (status: number | null) => done({ status, stderr }));
    });
    const wallMs = performance.now() - started;
    const out = join(dir, 'out');
    const summaryPath = join(out, 'summary.json');
    const summary = existsSync(summaryPath)
      ? (JSON.parse(readFileSync(summaryPath, 'utf8')) as { peakRssBytes: number; cpuMs: number })
      : undefined;
    const pagesText = existsSync(join(out, 'pages.jsonl'))
      ? readFileSync(join(out, 'pages.jsonl'), 'utf8')
      : '';
    const pages = pagesText
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const linksPath = join(out, 'links.jsonl');
    let linksRecorded = 0;
    if (existsSync(linksPath)) {
      for (const line of readFileSync(linksPath, 'utf8').split('\n')) {
        if (line !== '') linksRecorded += (JSON.parse(line) as { links: unknown[] }).links.length;
      }
    }
    const output: CrawlOutput = {
      dir: out,
      pages,
      linksBytes: fileBytes(linksPath),
      pagesBytes: fileBytes(join(out, 'pages.jsonl')),
    };
    const seedPages = pages.filter((p) => seeds.includes(String(p.url)));
    const row: Record<string, string | number> = {
      case: name,
      exit: child.status ?? -1,
      'peak RSS MB': summary === undefined ? '-' : (summary.peakRssBytes / MiB).toFixed(0),
      'CPU ms': summary?.cpuMs ?? '-',
      'wall s': (wallMs / 1000).toFixed(1),
      'pages.jsonl bytes': output.pagesBytes,
      'links.jsonl bytes': output.linksBytes,
      'links recorded': linksRecorded,
      page: seedPages
        .map((p) =>
          [
            `status ${p.status}`,
            `${p.bytes} bytes`,
            p.truncated ? `truncated ${p.truncated}` : '',
            p.reason ? `reason ${p.reason}` : '',
            p.dropped ? `dropped ${JSON.stringify(p.dropped)}` : '',
            p.durationMs !== null ? `${p.durationMs} ms` : '',
          ]
            .filter((s) => s !== '')
            .join(', '),
        )
        .join(' | '),
      ...spec.extra?.(output),
    };
    if (child.status !== 0) row.stderr = child.stderr.trim().split('\n').slice(-3).join(' / ').slice(0, 300);
    return row;
  } finally {
    await Promise.all(servers.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
// --no-build: run the dist/ bundle as it is (to measure a bundle built from another commit).
const noBuild = args.includes('--no-build');
const wanted = args.filter((a) => !a.startsWith('--'));
for (const name of wanted) {
  if (!(name in CASES)) {
    console.error(`unknown case ${name}; cases: ${Object.keys(CASES).join(', ')}`);
    process.exit(1);
  }
}
if (!noBuild) {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--quiet'], {
    stdio: 'inherit',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(CASES)) {
  const row = await runCase(name, CASES[name]!);
  console.log(JSON.stringify(row));
}
