/**
 * AOPIC in the cloud worker (SQS has no priorities, so the worker decides whether a URL is queued
 * now, not where): the cash a task holds when fetched, which of a page's new links are queued and
 * which are parked, where the page's cash goes, and the credits to parked URLs. The arithmetic is
 * the core's (functions/core/scheduling/aopic.ts); this file applies it to the batch's buffers.
 */

import type { CrawlConfig } from '../../core/config.ts';
import {
  admitsNow,
  type CashFlow,
  cashOf,
  holdsBack,
  keyOf,
  ordinaryShare,
} from '../../core/scheduling/aopic.ts';
import { judgeError } from '../../core/step/error-policy.ts';
import type { CrawlTask, Fingerprint, PageRecord } from '../../core/types.ts';
import type { CrawlRecord, HostCounts } from '../messages/crawl-records.ts';
import type { HostItems, ParkedUrls } from '../ports/cloud-ports.ts';
import type { CrawlContext } from './container-state.ts';

/** The crawl's AOPIC bonus as its item was read (0 before the scheduler's first step). */
export function bonusOf(crawl: CrawlRecord | undefined): number {
  return crawl?.aopic?.bonus ?? 0;
}

/**
 * Whether the crawl's order decides which pages are fetched at all (AOPIC with a page budget): then
 * the frontier follows cash more closely at some cost (refills by task, groups weighed by cash,
 * held tasks given back); without a budget every URL is fetched and the order only says when
 * (docs/cloud.md, "Bounded back queues").
 */
export function followsCash(config: CrawlConfig | undefined): boolean {
  return config?.order === 'aopic' && config.maxPages !== undefined;
}

/** The cash a task holds now: its key plus the lambda page's redistributions since it was sent. */
export function cashNow(task: CrawlTask, crawl: CrawlRecord): number {
  return cashOf(task.cash, bonusOf(crawl));
}

/**
 * How long the crawl's dispatch cash counts as "better URLs are being fetched now" after a batch
 * last set it: a rich host's batches commit every second or two while it has work. (5 s held the
 * whole crawl back for minutes after its seeds: docs/quality-bench.md, issue 21 item 8.)
 */
export const HOLD_BACK_FRESH_MS = 2_000;
/** How long a held-back record waits (its message's visibility) before it is looked at again. */
export const HOLD_BACK_WAIT_S = 1;

/**
 * What the hold-back reads and sets: a batch's view of the cash its crawl's batches have been
 * fetching (the budget item's, then the mean of the batch's own fetches).
 */
export interface DispatchView {
  crawl: CrawlRecord;
  ctx: Pick<CrawlContext, 'config'>;
  /** The cash as this batch sees it, 0 = none yet. */
  dispatchCash: number;
  /** When a batch last set it (epoch ms), 0 = never. */
  dispatchAt: number;
  /** Pages this batch fetched so far (their mean replaces the cash it read). */
  dispatched: number;
}

/**
 * AOPIC's hold-back, crawl-wide (the embedded crawler's rule, AopicDispatchPolicy.holdBack, with
 * the crawl's batches for "in flight"): with a page budget, a task whose cash is below half of
 * what the crawl's batches have been fetching waits while they go on (a batch set it less than
 * HOLD_BACK_FRESH_MS ago), so the workers do not spend the budget's early requests on every host
 * they found at once. The reference is the last fetching batch's mean, not a moving average: one
 * decays only as fast as batches pass, a few a second, and held the crawl back for minutes after
 * its seeds. When no batch fetches, it goes stale and the task goes ahead. Sitemap files and the
 * pages a sitemap listed are never held (docs/sitemaps.md).
 */
export function heldBack(view: DispatchView, task: CrawlTask, now: number): boolean {
  if (!followsCash(view.ctx.config)) return false;
  if (task.sitemap !== undefined || task.listed === true) return false;
  if (view.dispatchCash === 0 || now - view.dispatchAt >= HOLD_BACK_FRESH_MS) return false;
  return holdsBack(cashNow(task, view.crawl), view.dispatchCash);
}

/** A page fetched: its cash at the fetch joins the batch's mean (see DispatchView). */
export function noteDispatch(view: DispatchView, task: CrawlTask, now: number): void {
  if (task.sitemap !== undefined || task.listed === true) return;
  const cash = cashNow(task, view.crawl);
  // The batch's own fetches replace what it read: the mean of what it fetched.
  view.dispatched += 1;
  view.dispatchCash =
    view.dispatched === 1 ? cash : view.dispatchCash + (cash - view.dispatchCash) / view.dispatched;
  view.dispatchAt = now;
}

/** A message carries a task's key: its cash less the crawl's bonus when it is sent. */
export function messageTask(task: CrawlTask, crawl: CrawlRecord | undefined): CrawlTask {
  return { ...task, cash: keyOf(task.cash, bonusOf(crawl)) };
}

/**
 * Entries of one sitemap file sent to the frontier at once (the richest); the rest are parked.
 * About the links of a content page: the quality bench's whole-site sitemaps (1,000 entries) cost
 * 7-12 points of the PageRank mass gathered early when sent whole, and parking them all lost the
 * pages only a sitemap lists (docs/quality-bench.md).
 */
export const SITEMAP_ENTRIES_SENT = 50;

/** A new URL to park: its task, the claim owner, and its key. */
export interface ParkEntry {
  task: CrawlTask;
  owner: string;
  key: number;
}

/**
 * Sorts a page's new links into those queued now and those parked: a link is queued when it
 * received at least `aopicAdmitShare` of what an ordinary link of its page received (see
 * `admitsNow`). What this parks are the links a page makes to its own path pattern (a tenth of a
 * share): the next month of a calendar, the next page of a list, the next facet. Breadth-first
 * crawls, `aopicAdmitShare: 0`, and steps without a cash flow queue everything.
 */
export function admitLinks(
  links: readonly CrawlTask[],
  flow: CashFlow | undefined,
  config: CrawlConfig,
  bonus: number,
  owner: string,
  fromSitemap = false,
): { queue: CrawlTask[]; parks: ParkEntry[] } {
  if (links.length === 0) return { queue: [], parks: [] };
  if (config.order !== 'aopic' || config.aopicAdmitShare <= 0 || flow === undefined) {
    return { queue: [...links], parks: [] };
  }
  // A sitemap that lists a whole site, hundreds of pages in its own order, would fill the host's
  // FIFO ahead of what links make important (SQS cannot reorder them). Its richest entries go
  // now, as many as a page has links; the rest are parked and admitted by cash like any parked
  // URL (as rich as what the crawl fetches, at the scheduler's step; the rest when the frontier
  // runs dry). A small sitemap, such as one of pages no link reaches, is sent whole.
  if (fromSitemap) {
    const byCash = [...links].sort((a, b) => b.cash - a.cash);
    const now = byCash.slice(0, SITEMAP_ENTRIES_SENT);
    const later = byCash.slice(SITEMAP_ENTRIES_SENT);
    return { queue: now, parks: later.map((task) => ({ task, owner, key: keyOf(task.cash, bonus) })) };
  }
  const ordinary = ordinaryShare(flow, links.length, config.aopicTax);
  const queue: CrawlTask[] = [];
  const parks: ParkEntry[] = [];
  for (const task of links) {
    // The root page's guessed sitemap weighs less than a link (sitemapShare) but is not parked:
    // it is queued behind the page's links, after the site's first pages.
    if (task.sitemap !== undefined || admitsNow(task.cash, ordinary, config.aopicAdmitShare))
      queue.push(task);
    else parks.push({ task, owner, key: keyOf(task.cash, bonus) });
  }
  return { queue, parks };
}

/**
 * Where a finished page's cash went: the tax to the host's lambda total; credits to parked URLs
 * to the crawl's pending credits, for the next flush; credits to other URLs of the page's own
 * host to the batch's credits for that host's back queue (`group`: its refill adds them to the
 * URLs that wait there, see back-queues.ts); in a budgeted crawl, credits to another host's root
 * page to the container's root credits, written to that host's item at the batch's end (its
 * batches add them to the root's cash: `flushRootCredits`), until the root is handled; other
 * credits to other hosts' URLs to the lambda total (SQS cannot reorder a message, and another
 * host's back queue is not this batch's to write: credit notes in it were tried,
 * docs/quality-bench.md). A fetched page's cash becomes history.
 */
export function routeCash(
  group: { host: string; counts: HostCounts; credits: Map<Fingerprint, number> },
  ctx: CrawlContext,
  record: PageRecord,
  flow: CashFlow | undefined,
  isParked: (fp: Fingerprint) => boolean,
  now: number,
): void {
  if (flow === undefined) return;
  const { counts } = group;
  counts.lambda += flow.toLambda;
  if (record.status !== null) counts.history += flow.cash;
  for (const { fp, amount, host, root } of flow.credits) {
    if (ctx.parked.has(fp) || isParked(fp)) {
      if (ctx.credits.size === 0) ctx.creditsSince = now;
      ctx.credits.set(fp, (ctx.credits.get(fp) ?? 0) + amount);
    } else if (host === group.host) {
      group.credits.set(fp, (group.credits.get(fp) ?? 0) + amount);
    } else if (
      root === true &&
      host !== undefined &&
      followsCash(ctx.config) &&
      !ctx.rootsHandled.has(host)
    ) {
      ctx.rootCredits.set(host, (ctx.rootCredits.get(host) ?? 0) + amount);
    } else {
      counts.lambda += amount;
    }
  }
}

/**
 * Writes the container's credits to other hosts' root pages (one UpdateItem per host, at the end
 * of each batch: a held root waits a second between looks, so a credit must not wait longer).
 * A host whose root was handled (or has no item) answers false: its credit is dropped, as one to a
 * page already fetched would be, and the container credits it no more. Only a budgeted crawl's
 * roots are credited, so the writes are at most one per batch and host whose root still waits.
 * A failed write is logged: credits refine the order, and a lost one costs accuracy, never a URL.
 */
export async function flushRootCredits(
  table: Pick<HostItems, 'addRootCredit'>,
  crawlId: string,
  ctx: CrawlContext,
  log: (line: string) => void,
): Promise<number> {
  const pending = ctx.rootCredits;
  if (pending.size === 0) return 0;
  ctx.rootCredits = new Map();
  await Promise.all(
    [...pending].map(async ([host, amount]) => {
      try {
        if (!(await table.addRootCredit(crawlId, host, amount))) ctx.rootsHandled.set(host, true);
      } catch (error) {
        log(`root credit for ${host} of ${crawlId} not written: ${judgeError(error).message}`);
      }
    }),
  );
  return pending.size;
}

/**
 * Credits for parked URLs are written at most this often (or sooner when this many wait): a
 * parked URL linked from many pages gets one write per flush, not one per link.
 */
export const CREDIT_FLUSH_MS = 10_000;
export const CREDIT_FLUSH_SIZE = 1_000;

/**
 * Writes the credits a crawl's parked URLs collected, when due (or always with `force`).
 * Resolves how many were written. A failed flush is logged, not thrown: credits refine the order
 * of parked URLs, and a lost flush costs accuracy, never a URL.
 */
export async function flushCredits(
  parked: ParkedUrls,
  crawlId: string,
  ctx: CrawlContext,
  options: { now: number; flushMs: number; force: boolean; log: (line: string) => void },
): Promise<number> {
  const size = ctx.credits.size;
  const due = size >= CREDIT_FLUSH_SIZE || options.now - ctx.creditsSince >= options.flushMs;
  if (size === 0 || !(due || options.force)) return 0;
  const credits = ctx.credits;
  ctx.credits = new Map();
  try {
    for (const fp of await parked.credit(crawlId, credits)) ctx.parked.delete(fp);
  } catch (error) {
    options.log(`credits for ${size} parked URLs of ${crawlId} not written: ${judgeError(error).message}`);
  }
  return size;
}
