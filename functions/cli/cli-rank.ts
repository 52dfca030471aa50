import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrawlDb } from '../adapters/local/crawl-db.ts';
import { hitsIndexed } from '../core/quality/hits.ts';
import { pageRankIndexed } from '../core/quality/pagerank.ts';
import { spearman } from '../core/quality/spearman.ts';
import { AopicLedger, type AopicState } from '../core/scheduling/aopic.ts';
import { safeJson } from '../core/text/safe-text.ts';
import type { LinkRecord, PageRecord } from '../core/types.ts';
import { fingerprint } from '../core/url/fingerprint.ts';
import { folderOptions, optionsHelp, parseFolderCommand, UsageError } from './cli-options.ts';
import { print } from './terminal-text.ts';

const RANK_OPTIONS = folderOptions(
  {
    top: { type: 'string', arg: 'N', help: 'pages listed (default 50)' },
    json: { type: 'boolean', help: 'print the ranking as JSON' },
  },
  'the --out folder of a crawl (finished or interrupted)',
);

export const RANK_HELP = `usage: crawlstack rank --out DIR [--top N] [--json]

Lists the pages a crawl fetched by the AOPIC importance recorded when each was fetched, computes
the true PageRank of the crawled link graph (damping 0.85) and the Spearman correlation of the two.

options:
${optionsHelp(RANK_OPTIONS)}`;

/** One crawled page with both importance figures. */
export interface RankedPage {
  url: string;
  /** AOPIC estimate: (history + cash) of the page over that of all crawled pages. */
  importance: number;
  /** PageRank over the crawled link graph (damping 0.85). */
  pageRank: number;
  /** HITS authority score over the same graph (sums to 1 over the pages). */
  authority: number;
  /** HITS hub score over the same graph (sums to 1 over the pages). */
  hub: number;
}

export interface Ranking {
  pages: RankedPage[];
  edges: number;
  /** Spearman rank correlation between `importance` and `pageRank` (1 = same order); null under 2 pages. */
  spearman: number | null;
  /** Spearman rank correlation between `importance` and HITS `authority`; null under 2 pages. */
  spearmanAuthority: number | null;
  /** Spearman rank correlation between `importance` and HITS `hub`; null under 2 pages. */
  spearmanHub: number | null;
  /** HITS power iterations, and whether they met the tolerance. */
  hits: { iterations: number; converged: boolean };
}

/**
 * Ranks the pages a crawl fetched (HTML pages with a 2xx answer) by their AOPIC importance
 * estimate, read from the crawl's state (or, for a downloaded cloud crawl, which has none, the
 * estimate each page recorded in pages.jsonl when fetched), and computes true PageRank over the crawled link graph
 * (links.jsonl, edges between crawled pages) to compare the two orders.
 */
export function rankCrawl(outDir: string): Ranking {
  const statePath = join(outDir, 'state.sqlite');
  if (!existsSync(join(outDir, 'pages.jsonl'))) {
    throw new UsageError(`${outDir} holds no crawl (no pages.jsonl); give the --out of a crawl`);
  }
  const pages: PageRecord[] = readLines<PageRecord>(join(outDir, 'pages.jsonl')).filter(
    (p) => p.status !== null && p.status >= 200 && p.status < 300 && p.kind === 'page',
  );
  const index = new Map<string, number>();
  for (const page of pages) if (!index.has(page.url)) index.set(page.url, index.size);
  const urls = [...index.keys()];

  let estimates: number[];
  if (existsSync(statePath)) {
    const db = new CrawlDb(statePath);
    try {
      const ledger = new AopicLedger(db.getMeta<{ aopic?: AopicState }>('checkpoint')?.aopic);
      estimates = urls.map((url) => {
        const cash = db.pageCash(fingerprint(url));
        return cash === undefined ? 0 : cash.history + Math.max(0, ledger.cashOf(cash.key));
      });
    } finally {
      db.close();
    }
  } else {
    // A downloaded cloud crawl has no local state: the estimate each page recorded when fetched.
    const recorded = new Map<string, number>();
    for (const page of pages) if (!recorded.has(page.url)) recorded.set(page.url, page.importance ?? 0);
    estimates = urls.map((url) => recorded.get(url) ?? 0);
  }
  const total = estimates.reduce((a, b) => a + b, 0) || 1;

  const from: number[] = [];
  const to: number[] = [];
  for (const record of readLines<LinkRecord>(join(outDir, 'links.jsonl'))) {
    const source = index.get(record.from);
    if (source === undefined) continue;
    for (const link of record.links) {
      const target = index.get(link.url);
      if (target !== undefined && target !== source) {
        from.push(source);
        to.push(target);
      }
    }
  }
  const ranks = pageRankIndexed(urls.length, from, to).scores;
  const hits = hitsIndexed(urls.length, from, to);
  const ranked = urls.map((url, i) => ({
    url,
    importance: estimates[i]! / total,
    pageRank: ranks[i] ?? 0,
    authority: hits.authorities[i] ?? 0,
    hub: hits.hubs[i] ?? 0,
  }));
  const correlate = (scores: Float64Array) =>
    ranked.length < 2 ? null : spearman(estimates, Array.from(scores));
  ranked.sort((a, b) => b.importance - a.importance || b.pageRank - a.pageRank);
  return {
    pages: ranked,
    edges: from.length,
    spearman: correlate(ranks),
    spearmanAuthority: correlate(hits.authorities),
    spearmanHub: correlate(hits.hubs),
    hits: { iterations: hits.iterations, converged: hits.converged },
  };
}

/** `crawlstack rank --out DIR [--top N] [--json]` */
export function rankCommand(argv: string[]): number {
  const command = parseFolderCommand(
    argv,
    'rank',
    RANK_OPTIONS,
    RANK_HELP,
    'usage: crawlstack rank --out DIR [--top N] [--json]',
  );
  if (command === undefined) return 0;
  const { out, values } = command;
  const top = values.top === undefined ? 50 : Number(values.top);
  if (!Number.isInteger(top) || top < 1)
    throw new UsageError(`--top expects a positive whole number, got "${values.top}"`);
  const ranking = rankCrawl(out);
  if (values.json) {
    print(safeJson({ ...ranking, pages: ranking.pages.slice(0, top) }, 2));
    return 0;
  }
  if (ranking.pages.length === 0) {
    print(`nothing to rank: ${values.out} holds no fetched HTML page yet`);
    return 0;
  }
  print('rank  importance  pagerank  authority       hub  url');
  ranking.pages.slice(0, top).forEach((page, i) => {
    const figures = [page.importance, page.pageRank, page.authority, page.hub].map((x, j) =>
      x.toFixed(6).padStart(j === 0 ? 10 : j === 1 ? 8 : 9),
    );
    print(`${String(i + 1).padStart(4)}  ${figures.join('  ')}  ${page.url}`);
  });
  const rho = (x: number | null) =>
    x === null ? 'n/a' : Number.isNaN(x) ? 'n/a (constant scores)' : x.toFixed(3);
  const correlation =
    ranking.spearman === null
      ? 'one page: no correlation to compute'
      : `Spearman correlation of AOPIC importance with PageRank: ${rho(ranking.spearman)}, ` +
        `with HITS authority: ${rho(ranking.spearmanAuthority)}, with HITS hub: ${rho(ranking.spearmanHub)}` +
        (ranking.hits.converged
          ? ''
          : ` (HITS stopped after ${ranking.hits.iterations} iterations, not converged)`);
  print(`\n${ranking.pages.length} pages, ${ranking.edges} links between them; ${correlation}`);
  return 0;
}

function readLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const out: T[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n'))
    if (line.length > 0) out.push(JSON.parse(line) as T);
  return out;
}
