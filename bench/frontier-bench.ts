/**
 * `npm run bench:frontier`: a crawl whose frontier grows to about one million URLs, to show that
 * the embedded crawler's memory does not grow with the crawl (the frontier and the URL-seen set
 * live in SQLite; memory holds a fixed-size CLOCK cache and per-host scheduling state).
 *
 * A generated site on loopback serves /p/<n> with `--fanout` links to /p/<n*fanout+1..n*fanout+fanout>,
 * an endless tree; crawling `--pages` pages breadth-first discovers pages × fanout URLs.
 *
 *   npm run bench:frontier                          1,001 pages × 1,000 links ≈ 1,000,000 URLs
 *   npm run bench:frontier -- --pages 101 --fanout 1000
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '1001' },
    fanout: { type: 'string', default: '1000' },
    keep: { type: 'boolean', default: false },
  },
});
const pages = Number(values.pages);
const fanout = Number(values.fanout);

// The generator runs in this process; the crawler is a separate process measured on its own.
const server = createServer((req, res) => {
  const match = /^\/p\/(\d+)$/.exec(req.url ?? '');
  if (match === null) {
    res.writeHead(404).end();
    return;
  }
  const n = Number(match[1]);
  const links: string[] = [];
  for (let i = 1; i <= fanout; i++) links.push(`<a href="/p/${n * fanout + i}">${i}</a>`);
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<!doctype html><title>p${n}</title><body>${links.join('\n')}</body>`);
});
await new Promise<void>((done) => server.listen(0, '127.0.0.31', done));
const { port } = server.address() as AddressInfo;

const work = mkdtempSync(join(tmpdir(), 'bench-frontier-'));
const usageFile = join(work, 'usage.json');
const started = performance.now();
const stdout = await new Promise<string>((done, fail) => {
  const child = spawn(
    join(ROOT, 'bin/crawlstack.mjs'),
    [
      'crawl',
      `http://127.0.0.31:${port}/p/0`,
      '--allow-private',
      '--delay',
      '0',
      '--delay-factor',
      '0',
      '--max-pages',
      String(pages),
      '--max-pages-per-host',
      String(pages * fanout * 2),
      '--no-warc',
      // Every generated page is a list of look-alike links to more of the same pattern: the trap
      // detectors rightly call that a link generator and stop. This benchmark measures memory.
      '--no-trap-detectors',
      '--out',
      join(work, 'out'),
      '--quiet',
      '--json',
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        BENCH_USAGE_FILE: usageFile,
        NODE_OPTIONS: `--import=${join(ROOT, 'bench/lib/report-usage.mjs')}`,
      },
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.once('exit', (code) => (code === 0 ? done(out) : fail(new Error(`crawlstack exited with ${code}`))));
});
const wallMs = performance.now() - started;
server.close();
const summary = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
  pages: number;
  discovered: number;
  queued: number;
  urlSeen: { hitRate: number; lookups: number };
};
const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { cpuMs: number; maxRssBytes: number };
const dbBytes = ['state.sqlite', 'state.sqlite-wal']
  .map((f) => {
    try {
      return statSync(join(work, 'out', f)).size;
    } catch {
      return 0;
    }
  })
  .reduce((a, b) => a + b, 0);
if (!values.keep) rmSync(work, { recursive: true, force: true });

console.log(`pages fetched        ${summary.pages}`);
console.log(`URLs discovered      ${summary.discovered.toLocaleString('en')}`);
console.log(`frontier at the end  ${summary.queued.toLocaleString('en')} queued`);
console.log(
  `URL-seen look-ups    ${summary.urlSeen.lookups.toLocaleString('en')} (${(summary.urlSeen.hitRate * 100).toFixed(1)}% cache hits)`,
);
console.log(`peak RSS             ${(usage.maxRssBytes / 1024 / 1024).toFixed(0)} MB (target < 300 MB)`);
console.log(`state on disk        ${(dbBytes / 1024 / 1024).toFixed(0)} MB`);
console.log(`wall time            ${(wallMs / 1000).toFixed(1)} s, CPU ${(usage.cpuMs / 1000).toFixed(1)} s`);
