/**
 * How the embedded crawler orders its frontier and applies AOPIC between steps (docs/aopic.md):
 * the priority of a new frontier row, a task's cash at dispatch, the two rules that keep free
 * slots from being filled from hosts with nothing good left, and the periodic work (the lambda
 * page's redistribution, credits to known URLs applied in sorted batches).
 */
import { breadthFirst, type Prioritize, type QueuedTask } from '../adapters/local/crawl-db.ts';
import type { CrawlConfig } from '../core/config.ts';
import { type AopicLedger, type CashFlow, holdsBack } from '../core/scheduling/aopic.ts';
import { readsFirst } from '../core/sitemap/sitemap-plan.ts';
import type { CrawlTask, Fingerprint } from '../core/types.ts';

/** Credits wait at most this long (ms), or until this many URLs have one, before they are applied. */
const CREDIT_FLUSH_MS = 50;
const CREDIT_FLUSH_SIZE = 4096;

/** Where credits to known URLs are applied (the crawl's frontier and seen set). */
export interface CreditSink {
  /** `ordinary`: URLs an ordinary link credited (no longer only a generator's: see waitsForDry). */
  credit(
    credits: ReadonlyMap<Fingerprint, number>,
    byCash: boolean,
    ordinary: ReadonlySet<Fingerprint>,
  ): void;
}

export type DispatchSettings = Pick<CrawlConfig, 'order' | 'maxPages' | 'redistributeEveryMs'>;

export class AopicDispatchPolicy {
  readonly #settings: DispatchSettings;
  readonly #ledger: AopicLedger;
  /** AOPIC credits for known URLs, applied to the database in sorted batches. */
  readonly #credits = new Map<Fingerprint, number>();
  /** Of those, the URLs an ordinary link credited; and the hosts all of them are on. */
  readonly #ordinary = new Set<Fingerprint>();
  #creditedHosts = new Set<string>();
  #lastRedistribution: number;
  #lastFlush: number;
  /** Moving average of the cash of the URLs dispatched (see holdBack). */
  #cashAverage = 0;

  constructor(settings: DispatchSettings, ledger: AopicLedger, now: number) {
    this.#settings = settings;
    this.#ledger = ledger;
    this.#lastRedistribution = now;
    this.#lastFlush = now;
  }

  /** The ledger this policy reads and moves cash through. */
  get ledger(): AopicLedger {
    return this.#ledger;
  }

  /**
   * The value of a new frontier row. AOPIC serves the most cash first; the key is the cash minus
   * the ledger's bonus (see aopic.ts). Breadth-first keeps discovery order and the key for accounting.
   */
  readonly prioritize: Prioritize = (task, seq, front) => {
    const key = this.#ledger.keyFor(task.cash);
    // A sitemap the site names goes before the host's pages, in either order (see readsFirst).
    if (task.sitemap !== undefined && readsFirst(task.sitemap))
      return { ...breadthFirst(task, seq, true), cashKey: key };
    return this.#settings.order === 'aopic'
      ? { prio: key, cashKey: key }
      : { ...breadthFirst(task, seq, front), cashKey: key };
  };

  /** The task as dispatched: its cash now is its share at discovery, the credits since, the lambda page's bonus. */
  taskOf(head: QueuedTask): QueuedTask {
    return { ...head, cash: this.#ledger.cashOf(head.cashKey) };
  }

  /**
   * With a page budget and AOPIC order, a URL a generator made (a link to its page's own path
   * pattern: the next month, the next listing page) waits for a dry frontier, as the cloud parks
   * it: the crawler sends it only when nothing runs and no ready host has another URL. Its cash
   * alone does not keep it back: the lambda page's redistribution gives every known URL the same
   * bonus, which late in a crawl outweighs a link's own share, and on a generated web the second
   * page of every trap was fetched that way (1.1% of the requests).
   */
  waitsForDry(task: CrawlTask): boolean {
    return (
      task.generated === true && this.#settings.order === 'aopic' && this.#settings.maxPages !== undefined
    );
  }

  /**
   * With a page budget and AOPIC order, a URL whose cash is far below what the crawl has been
   * fetching waits while other requests are in flight: greedy-by-cash within politeness would
   * otherwise fill every free slot from hosts that have nothing better left (on a generated web,
   * small hosts' traps took 9% of a 3,000-page budget at concurrency 16, 2% at concurrency 1).
   * When nothing is in flight it goes ahead, so the crawl always progresses. A sitemap file is
   * never held back and leaves the average alone: a rich one counted in the average held every
   * page back for a while (when the guessed `/sitemap.xml` took a fifth of a seed's root page,
   * the early PageRank mass fell from 72% to 55% of the ideal in one of three runs of the quality
   * bench). Nor is a URL a sitemap listed (`listed`): the site says it is a page, and it holds
   * little cash of its own (docs/sitemaps.md).
   */
  holdBack(task: CrawlTask, running: number): boolean {
    if (this.#settings.order !== 'aopic' || this.#settings.maxPages === undefined) return false;
    if (task.sitemap !== undefined || task.listed === true) return false;
    const cash = task.cash;
    const average = this.#cashAverage;
    if (running > 0 && holdsBack(cash, average)) return true;
    // Only what is dispatched moves the average: a URL held back and looked at again on every
    // dispatch would otherwise drag it down until it passed.
    this.#cashAverage = average === 0 ? cash : average * 0.95 + cash * 0.05;
    return false;
  }

  /**
   * Periodic work between steps: AOPIC's lambda-page redistribution (O(1): a bonus every page
   * holds) and applying the credits that steps gave to already-known URLs. Returns the hosts
   * whose URLs were credited when credits were applied (queued priorities changed), else
   * undefined.
   */
  maintain(now: number, sink: CreditSink): ReadonlySet<string> | undefined {
    if (now - this.#lastRedistribution >= this.#settings.redistributeEveryMs) {
      this.#ledger.redistribute();
      this.#lastRedistribution = now;
    }
    const size = this.#credits.size;
    if (size >= CREDIT_FLUSH_SIZE || (size > 0 && now - this.#lastFlush >= CREDIT_FLUSH_MS)) {
      this.#lastFlush = now;
      return this.flush(sink);
    }
    return undefined;
  }

  /** Applies every pending credit; returns the hosts of the URLs credited. */
  flush(sink: CreditSink): ReadonlySet<string> {
    sink.credit(this.#credits, this.#settings.order === 'aopic', this.#ordinary);
    this.#credits.clear();
    this.#ordinary.clear();
    const hosts = this.#creditedHosts;
    this.#creditedHosts = new Set();
    return hosts;
  }

  /**
   * Books a finished step: its new URLs became known (they carry their share in their tasks),
   * taxes and dropped cash go to the lambda page, shares to known URLs wait as credits. Returns
   * the fetched page's history and cash key for the seen set, when a page was fetched.
   */
  book(
    enqueued: number,
    flow: CashFlow | undefined,
    fetched: boolean,
  ): { history: number; key: number } | undefined {
    this.#ledger.discovered(enqueued);
    if (flow === undefined) return undefined;
    this.#ledger.collect(flow.toLambda);
    for (const { fp, amount, host, generated } of flow.credits) {
      this.#credits.set(fp, (this.#credits.get(fp) ?? 0) + amount);
      if (generated !== true) this.#ordinary.add(fp);
      if (host !== undefined) this.#creditedHosts.add(host);
    }
    return fetched ? { history: flow.cash, key: this.#ledger.keyFor(0) } : undefined;
  }
}
