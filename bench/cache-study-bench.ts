/**
 * `npm run bench:cache-study`: the URL-caching study (Broder, Najork and Wiener, WWW 2003) on three
 * crawls. Crawls the PostgreSQL and Python documentation (Debian packages served by nginx on
 * loopback, as `npm run bench` does) with the crawlstack CLI, and the quality benchmark's generated
 * web (20 hosts, traps, duplicates; `npm run bench:quality`) in-process with AOPIC order and its
 * 3,000-page budget; then replays each crawl's URL-seen trace through LRU, CLOCK, RANDOM, STATIC
 * and MIN at cache sizes 2^8 .. 2^20 and prints the miss rates. `--charts DIR` writes one SVG per
 * crawl (docs/img/cache-study-*.svg come from here).
 *
 *   npm run bench:cache-study
 *   npm run bench:cache-study -- --only web --web-pages 20000 --budget 20000
 *   npm run bench:cache-study -- --charts docs/img
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runCacheStudy } from '../functions/cache-study/cache-study.ts';
import { missRateChartSvg } from '../functions/cache-study/miss-rate-chart.ts';
import { formatStudy } from '../functions/cli/cli-cache-study.ts';
import { parseCrawlConfig } from '../functions/core/config.ts';
import { denseTrace } from '../functions/core/url-seen/url-seen-trace.ts';
import { EmbeddedCrawler } from '../functions/embedded/embedded-crawler.ts';
import { generateWeb } from '../test/fixtures/web/generate-web.ts';
import { serveWeb } from '../test/fixtures/web/serve-web.ts';
import { DOC_SITES, ensureSystemPackages, run, startNginx } from './lib/doc-sites.ts';

const ROOT = resolve(import.meta.dirname, '..');

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    charts: { type: 'string' },
    seed: { type: 'string', default: '1' },
    'web-pages': { type: 'string', default: '3700' },
    budget: { type: 'string', default: '3000' },
    keep: { type: 'boolean', default: false },
  },
});

interface Crawl {
  key: string;
  label: string;
  outDir: string;
  hitRate: number;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

async function main(): Promise<void> {
  const wanted = (key: string) => !values.only || values.only.some((o) => key.includes(o));
  const sites = DOC_SITES.filter((s) => wanted(s.name));
  if (sites.length > 0) {
    ensureSystemPackages(sites);
    console.error('building crawlstack...');
    run('node', ['scripts/build.mjs', '--quiet']);
  }
  const crawls: Crawl[] = [];
  const work = mkdtempSync(join(tmpdir(), 'bench-cache-study-'));
  try {
    for (const site of sites) {
      console.error(`crawling ${site.name}...`);
      const nginx = await startNginx(site.dir, join(work, site.name));
      const outDir = join(work, site.name, 'out');
      try {
        const stdout = await runCli([
          'crawl',
          `${nginx.origin}${site.start}`,
          '--allow-private',
          '--delay',
          '0',
          '--delay-factor',
          '0',
          '--max-pages-per-host',
          '1000000',
          '--no-warc',
          '--out',
          outDir,
          '--quiet',
          '--json',
        ]);
        const summary = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { urlSeen: { hitRate: number } };
        crawls.push({
          key: site.name,
          label: LABELS[site.name] ?? site.name,
          outDir,
          hitRate: summary.urlSeen.hitRate,
        });
      } finally {
        await nginx.stop();
      }
    }
    if (wanted('web')) crawls.push(await crawlWeb(join(work, 'web')));
    for (const crawl of crawls) report(crawl);
  } finally {
    if (values.keep) console.error(`crawl folders kept in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

const LABELS: Record<string, string> = {
  'postgresql-doc-15': 'PostgreSQL 15 docs',
  'python3-doc': 'Python 3 docs',
};

/** The quality benchmark's web, crawled as its AOPIC run is. */
async function crawlWeb(outDir: string): Promise<Crawl> {
  const pages = Number(values['web-pages']);
  const budget = Number(values.budget);
  const web = generateWeb({ seed: Number(values.seed), goodPages: pages });
  const served = await serveWeb(web);
  console.error(
    `crawling the generated web (${web.hosts.length} hosts, ${pages} good pages, budget ${budget})...`,
  );
  try {
    const parsed = parseCrawlConfig({
      seeds: served.seeds,
      scope: 'any',
      maxPages: budget,
      delayMs: 0,
      delayFactor: 0,
      allowPrivate: true,
      order: 'aopic',
    });
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    mkdirSync(outDir, { recursive: true });
    const summary = await new EmbeddedCrawler({ config: parsed.config, outDir, warc: false }).run();
    return {
      // the quality benchmark's own settings give cache-study-web.svg; others their budget
      key: pages === 3700 && budget === 3000 ? 'web' : `web-${budget}`,
      label: `generated web (${web.hosts.length} hosts, budget ${budget})`,
      outDir,
      hitRate: summary.urlSeen.hitRate,
    };
  } finally {
    await served.close();
  }
}

function report(crawl: Crawl): void {
  const tracePath = join(crawl.outDir, 'url-seen.trace');
  const started = performance.now();
  const study = runCacheStudy(denseTrace(readFileSync(tracePath)), { seed: 1 });
  const ms = performance.now() - started;
  let chart = '(no chart: give --charts DIR)';
  if (values.charts !== undefined) {
    mkdirSync(values.charts, { recursive: true });
    chart = resolve(values.charts, `cache-study-${crawl.key}.svg`);
    writeFileSync(chart, missRateChartSvg(study, { label: crawl.label, markSize: 2 ** 18 }));
  }
  console.log(`\n== ${crawl.label} (study ${ms.toFixed(0)} ms)`);
  console.log(formatStudy({ trace: tracePath, ignoredBytes: 0, chart, study }, crawl.hitRate));
}

function runCli(args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(join(ROOT, 'bin/crawlstack.mjs'), args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done(out) : fail(new Error(`crawlstack ${args[0]} exited with ${code}`)),
    );
  });
}
