/**
 * AOPIC accounting (Abiteboul, Preda, Cobena, "Adaptive On-Line Page Importance Computation",
 * WWW 2003). Every known page holds cash; the seeds share the initial 1.0. Fetching a page moves
 * its cash, less a tax, in equal shares to its distinct in-scope out-links, and the tax to a
 * virtual "lambda page"; the page's cash becomes its history. A scheduled step spreads the lambda
 * page's cash over all known pages. Pages that only link among themselves (traps) leak the tax on
 * every fetch and dilute their cash over ever more URLs, so a greedy-by-cash crawl starves them;
 * (history + cash), normalized, estimates PageRank.
 *
 * Redistribution is O(1): instead of adding Λ/N to N pages, the ledger raises a per-page `bonus`
 * that every page implicitly holds. A page that became known when the bonus was b0 holds
 * `cash + (bonus - b0)`; so a frontier can order by `key = cash - b0` (the common bonus cancels)
 * and credits simply add to the key.
 */
import type { Fingerprint } from '../types.ts';

/** How a fetched page's cash leaves it. */
export interface CashSplit {
  /** Added to each eligible out-link. */
  share: number;
  /** Goes to the lambda page (the tax, or all of it when no out-link can take it). */
  toLambda: number;
}

/** Splits `cash` over `links` out-links with tax `tax` (0..1). */
export function splitCash(cash: number, links: number, tax: number): CashSplit {
  if (!(cash > 0)) return { share: 0, toLambda: 0 };
  if (links <= 0) return { share: 0, toLambda: cash };
  const toLambda = cash * tax;
  return { share: (cash - toLambda) / links, toLambda };
}

/** Cash a page holds now, given its stored key (its cash minus the bonus when it became known). */
export function cashOf(key: number, bonus: number): number {
  return key + bonus;
}

/** The key to store for a page that holds `cash` now, when every known page has received `bonus`. */
export function keyOf(cash: number, bonus: number): number {
  return cash - bonus;
}

/**
 * A page's importance estimate: (its history + its cash) over all history plus the cash in
 * circulation (1.0, the seeds' initial cash, conserved by every movement).
 */
export function importanceOf(pageHistoryAndCash: number, allHistory: number): number {
  return pageHistoryAndCash / (allHistory + 1);
}

/** A step's cash movements, for the runtime to apply with its own storage. */
export interface CashFlow {
  /** Cash the fetched (or dropped) page held. */
  cash: number;
  toLambda: number;
  /**
   * Shares for eligible out-links that were already known, for the runtime to add. (New links
   * carry their share in the `cash` of the tasks the step enqueued.) `host`: the URL's host, for a
   * runtime that keeps credits per host (the cloud's back queues). `generated`: the link went to
   * its page's own path pattern (see SELF_LINK_SHARE); an ordinary link says the URL is more
   * than a generator's next step. `root`: the URL is its host's root page (`/`, no query), where
   * the cloud can deliver another host's credit (docs/cloud.md, "Credits to another host's root").
   */
  credits: { fp: Fingerprint; amount: number; host?: string; generated?: true; root?: true }[];
}

/**
 * Share of the normal per-link cash that a link to its page's own path pattern, on the same host,
 * receives (the rest goes to the lambda page). Generators of endless URLs — calendars, "next page" lists, faceted
 * search, session trails, serial chains — are all pages linking to more of their own pattern
 * (`/calendar/2026/11` -> `/calendar/2026/12`), and a page with few links passes a large share
 * down each hop (a chain passes 90% per hop at the default tax), so plain AOPIC lets them keep
 * pace with real content. Taxing self-pattern links makes such sequences lose 90% per hop; a
 * legitimate page of the same pattern (the next page of a listing, a related product) is still
 * reached, just not ahead of pages other pages point to.
 */
export const SELF_LINK_SHARE = 0.1;

/**
 * What an ordinary link of a fetched page received: the page's cash less the tax, split over
 * every candidate link, new (`newLinks`) or already known (the flow's credits).
 */
export function ordinaryShare(flow: CashFlow, newLinks: number, tax: number): number {
  return splitCash(flow.cash, newLinks + flow.credits.length, tax).share;
}

/**
 * AOPIC admission where the frontier has no priorities (cloud): a new link is queued at once when
 * it received at least `admitShare` of an ordinary link's share of its page, and waits (parked)
 * otherwise. Compared within the page, the rule does not drift as cash thins out with depth.
 */
export function admitsNow(linkCash: number, ordinary: number, admitShare: number): boolean {
  return linkCash >= admitShare * ordinary;
}

/**
 * AOPIC's hold-back with a page budget (both modes): a URL whose cash is below this share of the
 * average cash of the URLs the crawl has been fetching waits while better ones are being fetched,
 * so free capacity is not spent on hosts with nothing good left (docs/aopic.md).
 */
export const HOLD_BACK_SHARE = 0.5;

/** True when a URL holding `cash` waits behind fetches averaging `average` (see HOLD_BACK_SHARE). */
export function holdsBack(cash: number, average: number): boolean {
  return cash < average * HOLD_BACK_SHARE;
}

/**
 * The path of an absolute URL with every run of digits replaced by `#`: `/calendar/2026/11` and
 * `/calendar/2026/12` share `/calendar/#/#`; the query is ignored (`/search?color=red`).
 */
export function pathShape(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  let end = url.indexOf('?', start);
  if (end < 0) end = url.length;
  return url.slice(start, end).replace(/\d+/g, '#');
}

/** The ledger's state, JSON-safe (kept in checkpoints, or summed from host items in the cloud). */
export interface AopicState {
  /** Cash held by the lambda page. */
  lambda: number;
  /** Cash every known page received from redistributions so far (see the module comment). */
  bonus: number;
  /** Pages known (claimed): redistribution divides by this. */
  known: number;
  /** Sum of all pages' history: cash that passed through fetched pages. */
  history: number;
}

/**
 * The crawl-wide part of AOPIC: the lambda page, the redistribution bonus and the totals that
 * normalize importance. Pure: the caller decides when to redistribute (a timer locally, the
 * scheduler Lambda in the cloud) and persists `state`.
 */
export class AopicLedger {
  readonly state: AopicState;

  constructor(state?: AopicState) {
    this.state = state ? { ...state } : { lambda: 0, bonus: 0, known: 0, history: 0 };
  }

  /** New pages became known (seeds included). */
  discovered(count: number): void {
    this.state.known += count;
  }

  /** A page was fetched holding `cash`; returns its importance estimate at that moment. */
  fetched(cash: number): number {
    this.state.history += cash;
    return this.importance(cash, 0);
  }

  /** Cash that leaves circulation (taxes, dangling pages, dropped URLs) goes to the lambda page. */
  collect(amount: number): void {
    if (amount > 0) this.state.lambda += amount;
  }

  /**
   * Takes back from the lambda page up to `amount` (a URL that failed gave it all its cash; queued
   * again, it gets that cash back while the lambda page still holds it); returns what it took.
   */
  reclaim(amount: number): number {
    const taken = Math.min(Math.max(amount, 0), this.state.lambda);
    this.state.lambda -= taken;
    return taken;
  }

  /** Spreads the lambda page's cash over all known pages; returns the per-page amount. */
  redistribute(): number {
    const { lambda, known } = this.state;
    if (lambda <= 0 || known <= 0) return 0;
    const perPage = lambda / known;
    this.state.bonus += perPage;
    this.state.lambda = 0;
    return perPage;
  }

  /**
   * (history + cash) / total, where total = all history + all cash in circulation (1.0, the
   * seeds' initial cash, conserved by every movement).
   */
  importance(history: number, cash: number): number {
    return importanceOf(history + cash, this.state.history);
  }

  /** Cash a page holds now, given its stored key (cash minus the bonus when it became known). */
  cashOf(key: number): number {
    return cashOf(key, this.state.bonus);
  }

  /** The key to store for a page that becomes known now holding `cash`. */
  keyFor(cash: number): number {
    return keyOf(cash, this.state.bonus);
  }
}
