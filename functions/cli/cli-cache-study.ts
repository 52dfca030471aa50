import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CACHE_POLICIES } from '../cache-study/cache-policies.ts';
import { type CacheStudy, runCacheStudy } from '../cache-study/cache-study.ts';
import { missRateChartSvg, sizeLabel } from '../cache-study/miss-rate-chart.ts';
import { crawlConfigSchema } from '../core/config.ts';
import { safeJson } from '../core/text/safe-text.ts';
import { denseTrace, TRACE_RECORD_BYTES } from '../core/url-seen/url-seen-trace.ts';
import { folderOptions, optionsHelp, parseFolderCommand, UsageError } from './cli-options.ts';
import { print } from './terminal-text.ts';

const CACHE_STUDY_OPTIONS = folderOptions({
  sizes: { type: 'string', arg: 'A-B', help: 'cache sizes 2^A .. 2^B (default 8-20)' },
  seed: { type: 'string', arg: 'N', help: "RANDOM's seed (default 1)" },
  label: { type: 'string', arg: 'TEXT', help: 'names the crawl on the chart' },
  chart: { type: 'string', arg: 'FILE', help: 'where the SVG goes (default DIR/cache-study.svg)' },
  json: { type: 'boolean', help: 'print the study as JSON' },
});

export const CACHE_STUDY_HELP = `usage: crawlstack cache-study --out DIR [--sizes 8-20] [--seed N] [--label TEXT] [--chart FILE] [--json]

Replays the crawl's URL-seen trace (DIR/url-seen.trace: every fingerprint looked up, in order)
through the cache policies LRU, CLOCK, RANDOM, STATIC and the clairvoyant MIN at cache sizes
2^8 .. 2^20 URLs, prints the miss rates and writes a chart (DIR/cache-study.svg).

options:
${optionsHelp(CACHE_STUDY_OPTIONS)}`;

/** What `cache-study` computed and where it wrote the chart. */
export interface CacheStudyReport {
  trace: string;
  /** Bytes at the end of the trace that were not a whole record (a crawl appending right now). */
  ignoredBytes: number;
  chart: string;
  study: CacheStudy;
}

/** `crawlstack cache-study --out DIR ...` */
export function cacheStudyCommand(argv: string[]): number {
  const command = parseFolderCommand(argv, 'cache-study', CACHE_STUDY_OPTIONS, CACHE_STUDY_HELP);
  if (command === undefined) return 0;
  const { out, values } = command;
  const report = studyCrawl(out, {
    sizes: values.sizes as string | undefined,
    seed: values.seed as string | undefined,
    label: values.label as string | undefined,
    chart: values.chart as string | undefined,
  });
  if (values.json) {
    print(safeJson(report, 2));
    return 0;
  }
  print(formatStudy(report, readCrawlHitRate(out)));
  return 0;
}

/** Reads the trace, runs the study, writes the chart. */
export function studyCrawl(
  outDir: string,
  options: {
    sizes?: string | undefined;
    seed?: string | undefined;
    label?: string | undefined;
    chart?: string | undefined;
  } = {},
): CacheStudyReport {
  const tracePath = join(outDir, 'url-seen.trace');
  if (!existsSync(tracePath)) {
    throw new UsageError(
      `cache-study: ${outDir} has no url-seen.trace (not a crawl folder, or crawled with --no-seen-trace ` +
        'or by a crawlstack without the trace)',
    );
  }
  const [minLog2, maxLog2] = parseSizes(options.sizes ?? '8-20');
  const seed = options.seed === undefined ? 1 : Number(options.seed);
  if (!Number.isInteger(seed) || seed < 0)
    throw new UsageError(`--seed expects a whole number >= 0, got "${options.seed}"`);
  const bytes = readFileSync(tracePath);
  // A running crawl may be half-way through appending a step's records.
  const whole = bytes.length - (bytes.length % TRACE_RECORD_BYTES);
  const study = runCacheStudy(denseTrace(bytes.subarray(0, whole)), { minLog2, maxLog2, seed });
  const chart = resolve(options.chart ?? join(outDir, 'cache-study.svg'));
  const markSize = crawlConfigSchema.shape.seenCacheSize.parse(undefined);
  writeFileSync(
    chart,
    missRateChartSvg(study, { ...(options.label ? { label: options.label } : {}), markSize }),
  );
  return { trace: resolve(tracePath), ignoredBytes: bytes.length - whole, chart, study };
}

function parseSizes(text: string): [number, number] {
  const match = /^(\d{1,2})-(\d{1,2})$/.exec(text);
  const low = Number(match?.[1]);
  const high = Number(match?.[2]);
  if (match === null || low > high || high > 30) {
    throw new UsageError(
      `cache-study: --sizes expects A-B with 0 <= A <= B <= 30 (powers of two), got "${text}"`,
    );
  }
  return [low, high];
}

/** The crawl's own URL-seen hit rate, from summary.json, when there is one. */
function readCrawlHitRate(outDir: string): number | undefined {
  try {
    const summary = JSON.parse(readFileSync(join(outDir, 'summary.json'), 'utf8')) as {
      urlSeen?: { hitRate?: number };
    };
    return summary.urlSeen?.hitRate;
  } catch {
    return undefined;
  }
}

/** The study as a text table: one row per cache size, one column per policy. */
export function formatStudy(report: CacheStudyReport, crawlHitRate?: number): string {
  const { study } = report;
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const lines = [
    `URL-seen trace: ${study.lookups.toLocaleString('en-US')} look-ups of ${study.distinct.toLocaleString('en-US')} URLs (${report.trace})`,
  ];
  if (report.ignoredBytes > 0)
    lines.push(`(${report.ignoredBytes} bytes of a record being written were left out)`);
  lines.push(
    `miss rate by cache size (URLs; RANDOM seed ${study.seed}):`,
    ['     size', ...study.policies.map((p) => p.padStart(8))].join(''),
  );
  for (const row of study.rows) {
    lines.push(
      [
        `${sizeLabel(row.size).padStart(9)}`,
        ...CACHE_POLICIES.filter((p) => study.policies.includes(p)).map((p) =>
          pct(row.missRate[p] ?? 0).padStart(8),
        ),
      ].join(''),
    );
  }
  lines.push(`infinite cache (each URL's first look-up): ${pct(study.compulsoryMissRate)}`);
  if (crawlHitRate !== undefined)
    lines.push(`the crawl itself (summary.json): ${pct(1 - crawlHitRate)} misses`);
  lines.push(`chart: ${report.chart}`);
  return lines.join('\n');
}
