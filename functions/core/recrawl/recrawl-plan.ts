/**
 * A recrawl round's start, the same in both runtimes: the archive's pages chosen by the crawl's
 * schedule (recrawl-order.ts), as tasks whose AOPIC cash is their share of the round's expected
 * gain (each host's queue then serves the likeliest changed first), and the known pages left out,
 * which the round marks seen without queueing them (a link to one does not spend the budget).
 */
import type { CrawlConfig } from '../config.ts';
import type { CrawlTask, Fingerprint } from '../types.ts';
import { fingerprint } from '../url/fingerprint.ts';
import type { ArchivedPage } from './archived-page.ts';
import { type PlannedVisit, recrawlOrder } from './recrawl-order.ts';

/** The round's tasks (without their crawl id) and the known pages not queued (fingerprint and host). */
export interface RecrawlPlan {
  planned: PlannedVisit[];
  tasks: Omit<CrawlTask, 'crawlId'>[];
  known: { fp: Fingerprint; host: string }[];
}

/** Plans a round over the archive's `pages` at `now` with the crawl's recrawl settings. */
export function planRecrawl(
  pages: readonly ArchivedPage[],
  config: Pick<
    CrawlConfig,
    'recrawlSchedule' | 'recrawlBudget' | 'recrawlMinIntervalMs' | 'recrawlMaxIntervalMs'
  >,
  now: number,
): RecrawlPlan {
  const planned = recrawlOrder(
    pages.map((page) => ({ url: page.url, history: page.history, ...(page.gone ? { gone: true } : {}) })),
    {
      schedule: config.recrawlSchedule,
      now,
      minIntervalMs: config.recrawlMinIntervalMs,
      maxIntervalMs: config.recrawlMaxIntervalMs,
      ...(config.recrawlBudget === undefined ? {} : { budget: config.recrawlBudget }),
    },
  );
  const depthOf = new Map(pages.map((page) => [page.url, page.depth]));
  const total = planned.reduce((sum, visit) => sum + visit.gain, 0);
  const chosen = new Set(planned.map((visit) => visit.url));
  const tasks = planned.map((visit) => ({
    url: visit.url,
    fp: fingerprint(visit.url),
    host: hostOf(visit.url),
    depth: depthOf.get(visit.url) ?? 0,
    redirects: 0,
    attempt: 0,
    // AOPIC orders each host's queue by cash: the likeliest changed go first.
    cash: total > 0 ? visit.gain / total : 1 / planned.length,
  }));
  // Gone pages are known too: a link to a removed page does not spend the budget on it again.
  const known = pages
    .filter((page) => !chosen.has(page.url))
    .map((page) => ({ fp: fingerprint(page.url), host: hostOf(page.url) }));
  return { planned, tasks, known };
}

function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase();
}
