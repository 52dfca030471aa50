/**
 * `npm run bench:worker-memory`: what a frontier worker container holds in memory per host in
 * flight (issue 22, lever 3), to size `WORKER_MEMORY_MODEL` (functions/cloud/lambda-settings.ts).
 *
 *   npm run bench:worker-memory                          # 10, 20, 40, 80 hosts; with and without a budget
 *   npm run bench:worker-memory -- --hosts 40,80 --pages-per-host 8
 *   npm run bench:worker-memory -- --hostile-every 5     # one host in 5 serves 10.5 MiB pages
 *   npm run bench:worker-memory -- --budget-mb 100 --cost-per-byte 5   # the large-body budget (default 50 MiB at 5: 1 slot)
 *   npm run bench:worker-memory -- --page-kb 200-250     # pages just below the 256 KiB threshold
 *
 * The web is the realistic bench's (test/fixtures/web: 30-100 KB pages), one real server per host
 * on its own loopback address, in this process. One host in `--hostile-every` serves instead
 * pages of 10.5 MiB of HTML (cut at the default 10 MiB cap), `--hostile-pages` of them per host.
 * Each scale runs in a fresh child process (RSS never shrinks, so runs must not share one), which
 * does what a worker does for its hosts, all at once and without politeness waits (the worst case
 * for memory: every host has a request in flight, always): per host, one page at a time, the
 * shared crawl step (`crawlPage`: the real UndiciFetcher, robots.txt, parse, extract links,
 * content hash) with the worker's capture buffer (each page's WARC records gzipped in memory, kept
 * until the host's batch of 10 pages is "committed"), and in-memory stores. It samples
 * `process.memoryUsage()` every 10 ms and prints, per scale and mode ("none": every body may grow
 * to its cap at once, as before; "budget": bodies past 256 KiB share `--budget-mb`, each charged
 * `--cost-per-byte` × its 10 MiB cap until its crawl step ends), the peak RSS
 * above the child's baseline (its RSS after imports and setup), the peak V8 heap + external
 * memory above baseline, and the pages crawled.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { BODY_THRESHOLD_BYTES, BodyBudget } from '../functions/adapters/http/body-budget.ts';
import { withBodyShareScope } from '../functions/adapters/http/body-share-scope.ts';
import { UndiciFetcher } from '../functions/adapters/http/undici-fetcher.ts';
import { cloudFetchSettings } from '../functions/cloud/fetch-budget.ts';
import { CaptureBuffer } from '../functions/cloud/worker/capture-buffer.ts';
import { parseCrawlConfig } from '../functions/core/config.ts';
import type { PageStore, RobotsEntry } from '../functions/core/ports.ts';
import { archiveCaptures } from '../functions/core/step/commit-effects.ts';
import { type CrawlPageDeps, crawlPage, seedTasks } from '../functions/core/step/crawl-page.ts';
import type { CrawlTask } from '../functions/core/types.ts';
import { UrlCanonicalizer } from '../functions/core/url/canonicalize.ts';
import { ScopeRules } from '../functions/core/url/scope.ts';
import { ClockCache } from '../functions/core/url-seen/clock-cache.ts';
import { UrlSeen } from '../functions/core/url-seen/url-seen.ts';
import { generateWeb, TRAP_KINDS, type TrapKind } from '../test/fixtures/web/generate-web.ts';
import { serveWeb } from '../test/fixtures/web/serve-web.ts';
import { MemoryContentSeen, MemorySeenStore } from '../test/unit/cloud/memory-cloud.ts';

const MiB = 1024 * 1024;
/** Pages a host's batch holds before its commit drops its captures (a frontier batch is 10). */
const BATCH_PAGES = 10;

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '10,20,40,80' },
    'pages-per-host': { type: 'string', default: '6' },
    'hostile-every': { type: 'string', default: '10' },
    'hostile-pages': { type: 'string', default: '2' },
    'budget-mb': { type: 'string', default: '50' },
    'cost-per-byte': { type: 'string', default: '5' },
    'page-kb': { type: 'string', default: '30-100' },
    modes: { type: 'string', default: 'none,budget' },
    child: { type: 'string' },
  },
});

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} ${text}: expected a whole number of at least 1`);
  return n;
}

/** What the parent tells a child. */
interface ChildJob {
  origins: string[];
  hostile: boolean[];
  pagesPerHost: number;
  hostilePages: number;
  budgetMb: number | undefined;
  costPerByte: number;
}

/** What a child reports. */
interface ChildResult {
  baseRssMb: number;
  peakRssMb: number;
  peakHeapExternalMb: number;
  pages: number;
  largeBodies: number;
  seconds: number;
}

const mb = (bytes: number) => bytes / MiB;

async function runChild(job: ChildJob): Promise<ChildResult> {
  const parsed = parseCrawlConfig({
    seeds: job.origins.map((o) => `${o}/`),
    scope: 'any',
    allowPrivate: true,
  });
  if (!parsed.ok) throw new Error(`bad crawl config: ${JSON.stringify(parsed)}`);
  const config = parsed.config;
  const budget =
    job.budgetMb === undefined
      ? undefined
      : new BodyBudget({ budgetBytes: Math.round(job.budgetMb * MiB), costPerByte: job.costPerByte });
  const fetcher = new UndiciFetcher({
    ...cloudFetchSettings(config),
    ...(budget === undefined ? {} : { bodyBudget: budget }),
  });
  const canonicalizer = new UrlCanonicalizer(config);
  const clock = { now: () => Date.now() };
  globalThis.gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeapExternal = base.heapUsed + base.external;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeapExternal = Math.max(peakHeapExternal, m.heapUsed + m.external);
  };
  const sampler = setInterval(sample, 10);
  const started = Date.now();
  let pages = 0;
  let largeBodies = 0;

  const crawlHost = async (origin: string, hostile: boolean) => {
    const queue: CrawlTask[] = [...seedTasks('bench', [`${origin}/`], canonicalizer).tasks];
    const robots = new Map<string, RobotsEntry>();
    let captures = new CaptureBuffer({ newId: randomUUID });
    const pageStore: PageStore = { put: (c) => captures.put(c), flush: async () => {} };
    const deps: CrawlPageDeps = {
      config,
      clock,
      random: Math.random,
      fetcher,
      robots: { get: async (o) => robots.get(o) },
      seen: new UrlSeen(new ClockCache(4096), new MemorySeenStore(new Map(), new Set())),
      contentSeen: new MemoryContentSeen(),
      canonicalizer,
      scope: new ScopeRules(config, [`${origin}/`]),
    };
    const limit = hostile ? job.hostilePages : job.pagesPerHost;
    for (let done = 0; done < limit; ) {
      const task = queue.shift();
      if (task === undefined) break;
      // As the worker's record step does: a large body's share lasts until its capture is buffered.
      const outcome = await withBodyShareScope(async () => {
        const stepped = await crawlPage(deps, task);
        await archiveCaptures(
          { pages: pageStore },
          stepped,
          stepped.kind === 'done' ? stepped.record : undefined,
        );
        return stepped;
      });
      // As a runtime commits the step's effects: the robots.txt entry, the host's own links.
      const { storeRobots, enqueued } = outcome;
      if (storeRobots !== undefined) robots.set(storeRobots.origin, storeRobots.entry);
      for (const t of enqueued) if (t.url.startsWith(`${origin}/`)) queue.push(t);
      if (outcome.kind === 'robots') {
        queue.unshift(task); // robots.txt was this step's request: the same task again
        continue;
      }
      if (outcome.kind !== 'done' || outcome.record.status === null) continue;
      done += 1;
      pages += 1;
      if (outcome.record.bytes > BODY_THRESHOLD_BYTES) largeBodies += 1;
      // The batch commit sends the captures and drops them.
      if (done % BATCH_PAGES === 0) captures = new CaptureBuffer({ newId: randomUUID });
    }
  };
  await Promise.all(job.origins.map((origin, i) => crawlHost(origin, job.hostile[i] === true)));
  sample();
  clearInterval(sampler);
  await fetcher.close();
  return {
    baseRssMb: mb(base.rss),
    peakRssMb: mb(peakRss - base.rss),
    peakHeapExternalMb: mb(peakHeapExternal - base.heapUsed - base.external),
    pages,
    largeBodies,
    seconds: (Date.now() - started) / 1000,
  };
}

/** A host that serves 10.5 MiB pages of HTML, each linking to the next. */
async function startHostileHost(address: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const words = ['lorem', 'ipsum', 'dolor', 'amet', 'crawl', 'frontier', 'worker', 'memory', 'budget'];
  const parts: string[] = ['<!doctype html><html><body>'];
  let length = 0;
  let seed = 7;
  while (length < 10.5 * MiB) {
    const para: string[] = [];
    for (let i = 0; i < 40; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      para.push(`${words[seed % words.length]}${seed % 997}`);
    }
    const p = `<p>${para.join(' ')}</p>\n`;
    parts.push(p);
    length += p.length;
  }
  const filler = parts.join('');
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') {
      res.writeHead(404);
      res.end();
      return;
    }
    const n = Number(/^\/p(\d+)$/.exec(req.url ?? '')?.[1] ?? 0);
    const body = Buffer.from(`<a href="/p${n + 1}">next</a>${filler}</body></html>`);
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(body.length) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${address}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function spawnChild(job: ChildJob): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...process.execArgv, '--expose-gc', import.meta.filename, '--child', JSON.stringify(job)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`child exited with ${code}: ${out}`));
      else resolve(JSON.parse(line) as ChildResult);
    });
  });
}

async function main(): Promise<void> {
  if (values.child !== undefined) {
    const result = await runChild(JSON.parse(values.child) as ChildJob);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const scales = values.hosts.split(',').map((h) => positive('hosts', h));
  const pagesPerHost = positive('pages-per-host', values['pages-per-host']);
  const hostileEvery = positive('hostile-every', values['hostile-every']);
  const hostilePages = positive('hostile-pages', values['hostile-pages']);
  const budgetMb = positive('budget-mb', values['budget-mb']);
  const costPerByte = Number(values['cost-per-byte']);
  if (!(costPerByte >= 1))
    throw new Error(`--cost-per-byte ${values['cost-per-byte']}: expected a number of at least 1`);
  const modes = values.modes.split(',');
  for (const m of modes)
    if (m !== 'none' && m !== 'budget') throw new Error(`--modes ${values.modes}: each is none or budget`);
  const maxHosts = Math.max(...scales);
  const [minKb, maxKb] = values['page-kb'].split('-').map((k) => positive('page-kb', k));
  if (minKb === undefined || maxKb === undefined || maxKb < minKb)
    throw new Error(`--page-kb ${values['page-kb']}: expected MIN-MAX in KB`);
  const noTraps = Object.fromEntries(TRAP_KINDS.map((t) => [t, 0])) as Record<TrapKind, number>;
  const web = generateWeb({
    seed: 1,
    hosts: maxHosts,
    goodPages: maxHosts * (pagesPerHost + 4),
    seedHosts: Math.min(3, maxHosts),
    hostSizeExponent: 0,
    trapHosts: noTraps,
    pageBytes: { min: minKb * 1000, max: maxKb * 1000 },
  });
  const served = await serveWeb(web, { seed: 1 });
  const hostile = await Promise.all(
    served.hosts.map((h, i) => ((i + 1) % hostileEvery === 0 ? startHostileHost(h.address) : undefined)),
  );
  try {
    console.log(
      `worker memory per host in flight: ${pagesPerHost} pages per host (${values['page-kb']} KB), ` +
        `one host in ${hostileEvery} serving ${hostilePages} pages of 10.5 MiB (cap 10 MiB); ` +
        `budget mode: ${budgetMb} MiB shared by bodies past ${BODY_THRESHOLD_BYTES / 1024} KiB, each charged ${costPerByte} × its cap ` +
        `until its step ends (${Math.floor(budgetMb / (costPerByte * 10)) || 1} at once)`,
    );
    console.log(
      '| hosts | mode | peak RSS above base, MiB | peak heap+external above base, MiB | pages | bodies past the threshold | s | base RSS, MiB |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const n of scales) {
      const origins = served.hosts.slice(0, n).map((h, i) => hostile[i]?.origin ?? h.origin);
      const isHostile = origins.map((_, i) => hostile[i] !== undefined);
      for (const mode of modes) {
        const r = await spawnChild({
          origins,
          hostile: isHostile,
          pagesPerHost,
          hostilePages,
          budgetMb: mode === 'budget' ? budgetMb : undefined,
          costPerByte,
        });
        console.log(
          `| ${n} | ${mode} | ${r.peakRssMb.toFixed(0)} | ${r.peakHeapExternalMb.toFixed(0)} | ${r.pages} | ` +
            `${r.largeBodies} | ${r.seconds.toFixed(1)} | ${r.baseRssMb.toFixed(0)} |`,
        );
      }
    }
  } finally {
    await Promise.all(hostile.map((h) => h?.close()));
    await served.close();
  }
}

await main();
