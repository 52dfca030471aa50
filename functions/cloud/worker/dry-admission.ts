/**
 * Admission of parked URLs by the worker, when its batch may have left a crawl's frontier dry.
 *
 * AOPIC parks links to a page's own path pattern (`/p/1` -> `/p/2`) and the scheduler admits
 * them, richest first, once the frontier has run dry. The scheduler runs once a minute: a chain of
 * numbered pages then advanced one page per tick (a 112-URL, 2-host crawl took 14 minutes instead
 * of about 2). The batch that finishes a crawl's last queued URL knows it first: after its writes,
 * a crawl whose batch finished URLs and queued none reads its running totals (one strongly
 * consistent Query of the counter shards, about 1 read unit), and when nothing of it is queued and
 * something is parked, it admits the richest parked URLs itself, as the scheduler's step would.
 *
 * Bounded: at most {@link WORKER_ADMISSION_LIMIT} URLs per batch (the scheduler tops up the
 * rest), never past the crawl's page budget. Idempotent: see `admitParked` (send, then unpark,
 * count what this call unparked). Batches that finish at the same moment may both find the
 * frontier dry; the second finds the URLs unparked and counts nothing. A failure is logged, not
 * thrown: the batch's own work is durable, and the next tick admits what this did not.
 */
import { judgeError } from '../../core/step/error-policy.ts';
import { aggregateCounters } from '../messages/crawl-records.ts';
import type { CrawlAopicStore, CrawlCounterStore, ParkedUrl } from '../ports/cloud-ports.ts';
import { admitParked } from '../use-cases/redistribute-credit.ts';
import type { BatchPlan, CrawlBatch, FrontierWorkerDeps } from './batch-model.ts';

/** Parked URLs a batch admits at most (a few pages' worth of unpark writes). */
export const WORKER_ADMISSION_LIMIT = 100;

/** Crawls of the batch that may be dry now: they park links, and the batch finished URLs and queued none. */
export function mayBeDry(plan: BatchPlan): CrawlBatch[] {
  const sending = new Set(plan.sends.map((t) => t.crawlId));
  return [...plan.crawls.values()].filter(
    ({ crawl, ctx, finished }) =>
      crawl.status === 'running' &&
      ctx.config.order === 'aopic' &&
      ctx.config.aopicAdmitShare > 0 &&
      finished.size > 0 &&
      !sending.has(crawl.id),
  );
}

/**
 * For each crawl the batch may have left dry: reads its running totals and admits parked URLs
 * when none is queued. Resolves how many URLs were admitted.
 */
export async function admitWhenDry(
  deps: Pick<FrontierWorkerDeps, 'parked' | 'frontier'> & { table: CrawlCounterStore & CrawlAopicStore },
  plan: BatchPlan,
  log: (line: string) => void,
): Promise<number> {
  let admitted = 0;
  for (const batch of mayBeDry(plan)) {
    const { crawl } = batch;
    try {
      const shards = await deps.table.counterShards(crawl.id);
      const { counters } = aggregateCounters(crawl.seeds, shards, crawl.aopic?.admitted ?? 0);
      if (counters.queued > 0 || counters.parked <= 0) continue;
      const budget =
        crawl.config.maxPages === undefined
          ? Number.POSITIVE_INFINITY
          : crawl.config.maxPages - counters.fetched - counters.queued;
      const room = Math.min(WORKER_ADMISSION_LIMIT, budget);
      if (room <= 0) continue;
      const entries = richestWith(await deps.parked.richest(crawl.id, room), batch.parks, room);
      const n = await admitParked(deps, crawl.id, entries);
      if (n > 0) log(`crawl ${crawl.id}: frontier dry, admitted ${n} parked URLs`);
      admitted += n;
    } catch (error) {
      log(
        `crawl ${crawl.id}: admitting parked URLs failed (the scheduler will): ${judgeError(error).message}`,
      );
    }
  }
  return admitted;
}

/**
 * The richest `limit` of the parked index's answer and the URLs this batch parked itself (a
 * secondary index is eventually consistent: the batch's own parks may not be in it yet).
 */
function richestWith(found: readonly ParkedUrl[], own: CrawlBatch['parks'], limit: number): ParkedUrl[] {
  const byFp = new Map<string, ParkedUrl>();
  for (const entry of found) byFp.set(entry.task.fp, entry);
  for (const { task, key } of own) if (!byFp.has(task.fp)) byFp.set(task.fp, { task, key });
  return [...byFp.values()].sort((a, b) => b.key - a.key).slice(0, limit);
}
