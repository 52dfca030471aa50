import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CrawlDb } from '../../adapters/local/crawl-db.ts';
import { AopicLedger, type AopicState } from '../../core/aopic.ts';
import { hitsIndexed } from '../../core/quality/hits.ts';
import { pageRankIndexed } from '../../core/quality/pagerank.ts';
import { spearman } from '../../core/quality/spearman.ts';
import type { LinkRecord, PageRecord } from '../../core/types.ts';
import { fingerprint } from '../../core/url/fingerprint.ts';
import { UsageError } from './cli-options.ts';

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
  /** Spearman rank correlation between `importance` and `pageRank` (1 = same order). */
  spearman: number;
  /** Spearman rank correlation between `importance` and HITS `authority`. */
  spearmanAuthority: number;
  /** Spearman rank correlation between `importance` and HITS `hub`. */
  spearmanHub: number;
  /** HITS power iterations, and whether they met the tolerance. */
  hits: { iterations: number; converged: boolean };
}

/**
 * Ranks the pages a crawl fetched (HTML pages with a 2xx answer) by their AOPIC importance
 * estimate, read from the crawl's state, and computes true PageRank over the crawled link graph
 * (links.jsonl, edges between crawled pages) to compare the two orders.
 */
export function rankCrawl(outDir: string): Ranking {
  const statePath = join(outDir, 'state.sqlite');
  if (!existsSync(statePath) || !existsSync(join(outDir, 'pages.jsonl'))) {
    throw new UsageError(
      `${outDir} holds no crawl (no state.sqlite or pages.jsonl); give the --out of a crawl`,
    );
  }
  const pages: PageRecord[] = readLines<PageRecord>(join(outDir, 'pages.jsonl')).filter(
    (p) => p.status !== null && p.status >= 200 && p.status < 300 && p.kind === 'page',
  );
  const index = new Map<string, number>();
  for (const page of pages) if (!index.has(page.url)) index.set(page.url, index.size);
  const urls = [...index.keys()];

  const db = new CrawlDb(statePath);
  let estimates: number[];
  try {
    const ledger = new AopicLedger(db.getMeta<{ aopic?: AopicState }>('checkpoint')?.aopic);
    estimates = urls.map((url) => {
      const cash = db.pageCash(fingerprint(url));
      return cash === undefined ? 0 : cash.history + Math.max(0, ledger.cashOf(cash.key));
    });
  } finally {
    db.close();
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
    ranked.length < 2 ? 1 : spearman(estimates, Array.from(scores));
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
  let values: { out?: string | undefined; top?: string | undefined; json?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { out: { type: 'string', short: 'o' }, top: { type: 'string' }, json: { type: 'boolean' } },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`rank: ${(error as Error).message}`);
  }
  if (values.out === undefined)
    throw new UsageError('rank: usage: crawlstack rank --out DIR [--top N] [--json]');
  const top = values.top === undefined ? 50 : Number(values.top);
  if (!Number.isInteger(top) || top < 1)
    throw new UsageError(`rank: --top expects a positive whole number, got "${values.top}"`);
  const ranking = rankCrawl(values.out);
  if (values.json) {
    console.log(JSON.stringify({ ...ranking, pages: ranking.pages.slice(0, top) }, null, 2));
    return 0;
  }
  console.log('rank  importance  pagerank  authority       hub  url');
  ranking.pages.slice(0, top).forEach((page, i) => {
    const figures = [page.importance, page.pageRank, page.authority, page.hub].map((x, j) =>
      x.toFixed(6).padStart(j === 0 ? 10 : j === 1 ? 8 : 9),
    );
    console.log(`${String(i + 1).padStart(4)}  ${figures.join('  ')}  ${page.url}`);
  });
  const rho = (x: number) => (Number.isNaN(x) ? 'n/a (constant scores)' : x.toFixed(3));
  console.log(
    `\n${ranking.pages.length} pages, ${ranking.edges} links between them; ` +
      `Spearman correlation of AOPIC importance with PageRank: ${rho(ranking.spearman)}, ` +
      `with HITS authority: ${rho(ranking.spearmanAuthority)}, with HITS hub: ${rho(ranking.spearmanHub)}` +
      (ranking.hits.converged
        ? ''
        : ` (HITS stopped after ${ranking.hits.iterations} iterations, not converged)`),
  );
  return 0;
}

function readLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const out: T[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n'))
    if (line.length > 0) out.push(JSON.parse(line) as T);
  return out;
}
