/**
 * The embedded recrawl: one round of revisits of a finished crawl's folder. The archive's state
 * (recrawl.sqlite: each URL's validators, last copy, links and change history) picks the pages
 * the round visits (core/recrawl/recrawl-order.ts); the round itself is an ordinary embedded
 * crawl in `<out>/recrawls/round-NNNN/` seeded with those pages, whose step sends their
 * validators back and writes revisit records. When the round ends its pages are folded into the
 * archive's state in one transaction. A round interrupted (Ctrl-C, kill -9) is resumed by the
 * same command, as a crawl is; the first round first folds in the crawl itself (round 0).
 */
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { LookupFunction } from '../adapters/http/address-guard.ts';
import { CrawlDb } from '../adapters/local/crawl-db.ts';
import { RecrawlArchive } from '../adapters/local/recrawl-archive.ts';
import { WARC_INDEX_FILE } from '../adapters/local/warc-page-store.ts';
import { type CrawlConfig, type CrawlConfigInput, parseCrawlConfig } from '../core/config.ts';
import type { Clock, Fetcher } from '../core/ports.ts';
import { type ArchivedPage, foldVisit, withLastmod } from '../core/recrawl/archived-page.ts';
import { planRecrawl } from '../core/recrawl/recrawl-plan.ts';
import type { LinkRecord, OutLink, PageRecord } from '../core/types.ts';
import { CrawlFolderError } from './crawl-errors.ts';
import { type CrawlSummary, EmbeddedCrawler } from './embedded-crawler.ts';

/** What a recrawl round found, against the archive (also written to the round's recrawl-summary.json). */
export interface RecrawlSummary {
  round: number;
  /** The round's folder, under the crawl's. */
  roundDir: string;
  schedule: CrawlConfig['recrawlSchedule'];
  budget?: number;
  /** Pages the archive knew (gone ones included) and pages the round chose to revisit. */
  known: number;
  planned: number;
  /** Revisits by verdict: a 304, the same payload again, another one, 404/410. */
  notModified: number;
  unchanged: number;
  changed: number;
  gone: number;
  /** Pages fetched for the first time (found through links or sitemaps). */
  new: number;
  /** URLs of the changed, gone and new pages (the first 100 of each). */
  changedUrls: string[];
  goneUrls: string[];
  newUrls: string[];
  /** The round's crawl summary (requests, bytes, state...). */
  crawl: CrawlSummary;
}

export interface RecrawlOptions {
  /** The folder of a finished crawl. */
  outDir: string;
  /** Settings that differ from the crawl's own for this round (schedule, budget, intervals...). */
  overrides?: Partial<CrawlConfigInput>;
  fetcher?: Fetcher;
  clock?: Clock;
  log?: (line: string) => void;
  lookup?: LookupFunction;
  warc?: boolean;
  /** Called once the round's crawler exists (the CLI wires Ctrl-C to `stop`). */
  onCrawler?: (crawler: EmbeddedCrawler) => void;
}

/** Problems with a recrawl's settings. */
export class RecrawlConfigError extends Error {
  override readonly name = 'RecrawlConfigError';
  readonly code = 'RECRAWL_CONFIG';
  readonly retryable = false;
}

const URL_LIST_LIMIT = 100;
const systemClock: Clock = { now: () => Date.now() };

/**
 * Runs (or resumes) the next recrawl round of the crawl in `outDir`; resolves its summary, or
 * undefined-free: an interrupted round's summary has `crawl.state` 'stopped' and is not merged.
 * @throws CrawlFolderError when `outDir` holds no crawl; RecrawlConfigError for bad overrides.
 */
export async function recrawl(options: RecrawlOptions): Promise<RecrawlSummary> {
  const { outDir } = options;
  const clock = options.clock ?? systemClock;
  const config = crawlConfigOf(outDir, options.overrides ?? {});
  const archive = new RecrawlArchive(join(outDir, 'recrawl.sqlite'));
  try {
    let last = archive.lastRound();
    if (last === undefined || (last.n === 0 && !last.merged)) {
      archive.startRound(0);
      const merged = await readRound(outDir, '', archive);
      archive.mergeRound(0, merged.pages.values(), { round: 0, pages: merged.pages.size });
      last = { n: 0, merged: true };
    }
    const n = last.merged ? last.n + 1 : last.n;
    archive.startRound(n);
    const roundName = `recrawls/round-${String(n).padStart(4, '0')}`;
    const roundDir = join(outDir, roundName);
    const known = [...archive.pages()];
    const plan = planRecrawl(known, config, clock.now());
    const planned = plan.planned;
    const roundConfig: CrawlConfig = { ...config };
    // The budget is the round's page budget too: new pages found on the way share it.
    if (config.recrawlBudget !== undefined) roundConfig.maxPages = config.recrawlBudget;
    else delete roundConfig.maxPages;
    const crawler = new EmbeddedCrawler({
      config: roundConfig,
      outDir: roundDir,
      revisits: archive,
      seedPlan: { tasks: plan.tasks, known: plan.known.map((k) => k.fp) },
      ...(options.fetcher === undefined ? {} : { fetcher: options.fetcher }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.log === undefined ? {} : { log: options.log }),
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      ...(options.warc === undefined ? {} : { warc: options.warc }),
    });
    options.onCrawler?.(crawler);
    const crawl = await crawler.run();
    const byUrl = new Map(known.map((page) => [page.url, page]));
    const round = await readRound(roundDir, `${roundName}/`, archive);
    const summary: RecrawlSummary = {
      round: n,
      roundDir,
      schedule: config.recrawlSchedule,
      known: known.length,
      planned: planned.length,
      notModified: 0,
      unchanged: 0,
      changed: 0,
      gone: 0,
      new: 0,
      changedUrls: [],
      goneUrls: [],
      newUrls: [],
      crawl,
    };
    if (config.recrawlBudget !== undefined) summary.budget = config.recrawlBudget;
    for (const record of round.records.values()) tally(summary, record, byUrl.has(record.url));
    // An interrupted round is resumed by the next run, and merged when it ends.
    if (crawl.state === 'done' || crawl.state === 'max-pages') {
      const { crawl: _crawl, ...kept } = summary;
      archive.mergeRound(n, round.pages.values(), kept);
    }
    return summary;
  } finally {
    archive.close();
  }
}

/** The crawl's own settings (as its last run stored them), with this round's overrides. */
function crawlConfigOf(outDir: string, overrides: Partial<CrawlConfigInput>): CrawlConfig {
  const statePath = join(outDir, 'state.sqlite');
  if (!existsSync(statePath)) {
    throw new CrawlFolderError(
      'CRAWL_FOLDER_NOT_A_CRAWL',
      `${outDir} holds no crawl (no state.sqlite): crawl it first with \`crawlstack crawl --out ${outDir} <seeds>\``,
    );
  }
  let db: CrawlDb;
  try {
    db = new CrawlDb(statePath);
  } catch (error) {
    throw new CrawlFolderError(
      'CRAWL_FOLDER_BUSY',
      `${outDir}: its crawl state cannot be opened (${(error as Error).message}); is the crawl still running?`,
      { cause: error },
    );
  }
  let stored: { settings?: Partial<CrawlConfig> } | undefined;
  try {
    stored = db.getMeta<{ settings?: Partial<CrawlConfig> }>('crawl');
  } finally {
    db.close();
  }
  if (stored?.settings === undefined) {
    throw new CrawlFolderError('CRAWL_FOLDER_NOT_A_CRAWL', `${outDir} holds no finished crawl to recrawl`);
  }
  const parsed = parseCrawlConfig({ ...stored.settings, ...overrides });
  if (!parsed.ok) throw new RecrawlConfigError(parsed.problems.join('\n'));
  return parsed.config;
}

/** Adds one of the round's records to the summary. */
function tally(summary: RecrawlSummary, record: PageRecord, wasKnown: boolean): void {
  const note = (list: string[]) => {
    if (list.length < URL_LIST_LIMIT) list.push(record.url);
  };
  switch (record.change) {
    case 'not-modified':
      summary.notModified += 1;
      return;
    case 'unchanged':
      summary.unchanged += 1;
      return;
    case 'changed':
      summary.changed += 1;
      note(summary.changedUrls);
      return;
    case 'gone':
      summary.gone += 1;
      note(summary.goneUrls);
      return;
    default:
      if (!wasKnown && record.status !== null && record.sitemap === undefined) {
        summary.new += 1;
        note(summary.newUrls);
      }
  }
}

/**
 * A round's folder read back: its last record per URL (pages.jsonl), each page's links
 * (links.jsonl) and payload digests (warc/index.cdxj), folded into the archive's states.
 * `prefix`: the folder's path under the archive, put before WARC file names.
 */
async function readRound(
  dir: string,
  prefix: string,
  archive: RecrawlArchive,
): Promise<{ records: Map<string, PageRecord>; pages: Map<string, ArchivedPage> }> {
  const records = new Map<string, PageRecord>();
  const sitemapFiles = new Set<string>();
  for await (const record of jsonLines<PageRecord>(join(dir, 'pages.jsonl'))) {
    if (record.sitemap === undefined) records.set(record.url, record);
    else sitemapFiles.add(record.url);
  }
  const links = new Map<string, OutLink[]>();
  for await (const line of jsonLines<LinkRecord>(join(dir, 'links.jsonl'))) links.set(line.from, line.links);
  // What the round's sitemaps say of each page's last change: a hint for the next plan.
  const lastmods = new Map<string, string>();
  for (const file of sitemapFiles) {
    for (const link of links.get(file) ?? [])
      if (link.lastmod !== undefined) lastmods.set(link.url, link.lastmod);
  }
  const digests = new Map<string, string>();
  for await (const line of lines(join(dir, 'warc', WARC_INDEX_FILE))) {
    const json = JSON.parse(line.slice(line.indexOf('{'))) as {
      digest?: string;
      filename: string;
      offset: string;
    };
    if (json.digest !== undefined && json.digest !== '-')
      digests.set(`${json.filename}@${json.offset}`, `sha1:${json.digest}`);
  }
  const pages = new Map<string, ArchivedPage>();
  for (const record of records.values()) {
    const extras: Parameters<typeof foldVisit>[2] = {};
    const pageLinks = links.get(record.url);
    if (pageLinks !== undefined) extras.links = pageLinks;
    if (record.warc !== undefined) {
      extras.ref = { ...record.warc, file: `${prefix}warc/${record.warc.file}` };
      const digest = digests.get(`${record.warc.file}@${record.warc.offset}`);
      if (digest !== undefined) extras.payloadDigest = digest;
    }
    const page = foldVisit(archive.page(record.url), record, extras);
    if (page !== undefined) pages.set(record.url, page);
  }
  for (const [url, lastmod] of lastmods) {
    const page = pages.get(url) ?? archive.page(url);
    if (page !== undefined) pages.set(url, withLastmod(page, lastmod));
  }
  return { records, pages };
}

async function* jsonLines<T>(path: string): AsyncGenerator<T> {
  for await (const line of lines(path)) yield JSON.parse(line) as T;
}

async function* lines(path: string): AsyncGenerator<string> {
  if (!existsSync(path)) return;
  const reader = createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of reader) if (line !== '') yield line;
}
