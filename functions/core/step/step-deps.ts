/**
 * The crawl step's dependencies, grouped by what they serve, so that each part of the step (and
 * each test or runtime that calls one part) names only the group it uses. `CrawlPageDeps` is their
 * union: what a runtime hands `crawlPage`.
 */

import type { CrawlConfig } from '../config.ts';
import type { Clock, ContentSeenStore, Fetcher, Gunzip, RevisitLookup, RobotsCache } from '../ports.ts';
import type { QualityChecks } from '../quality/crawl-quality.ts';
import type { RequestFeedback } from '../scheduling/politeness.ts';
import type { UrlCanonicalizer } from '../url/canonicalize.ts';
import type { ScopeRules } from '../url/scope.ts';
import type { UrlSeen } from '../url-seen/url-seen.ts';
import type { UrlRuleChecks, UrlRuleLookup } from './admit-urls.ts';

/** What every part of the step reads: the crawl's settings and the time. */
export interface StepBasics {
  config: CrawlConfig;
  clock: Clock;
}

/** Fetching: the step's one request, and the runtime's hooks around it. */
export interface FetchDeps {
  fetcher: Fetcher;
  /** Jitter of retry back-off. */
  random: () => number;
  /**
   * Called once the page's response is in and the step needs nothing more from the host (no
   * retry, no Retry-After): the runtime may start the host's next request, after the gap this
   * feedback gives, while this step stores and parses the page. The step's outcome carries the
   * same feedback. The step waits for the returned promise (a runtime can yield to its event loop
   * so that the next request goes out before this step's CPU work).
   */
  hostReleased?: (feedback: RequestFeedback) => void | Promise<void>;
  /**
   * A recrawl: the archive's last fetch of each page. Its validators are sent back, the response
   * is judged against it (`record.change`), an unchanged payload comes as a revisit capture,
   * and a 304's links are those of the last fetch (docs/recrawl.md).
   */
  revisits?: RevisitLookup;
  /** Inflates a sitemap that came gzipped (`.xml.gz`); absent: such sitemaps are recorded, not read. */
  gunzip?: Gunzip;
}

/**
 * Politeness: each origin's robots.txt, read once and cached. The step only reads the cache: an
 * entry it fetches comes back as its `storeRobots` effect, its responses as `robotsCaptures`
 * (step-effects.ts).
 */
export interface RobotsDeps {
  robots: Pick<RobotsCache, 'get'>;
}

/**
 * URL-seen and admission: the link path from a URL's canonical form to its claim. The claim stays
 * a call (its answer decides admission); the admitted tasks are the step's `enqueued` effect.
 */
export interface AdmissionDeps {
  canonicalizer: UrlCanonicalizer;
  scope: ScopeRules;
  seen: UrlSeen;
}

/**
 * Quality and defences: trap checks, content-seen, the duplicate-URL rules. What the defences
 * learn without the step using the answer (a soft-404 probe's) is the step's `lessons` effect.
 */
export interface DefenceDeps {
  /** Trap and near-duplicate defences; absent = none. */
  quality?: QualityChecks;
  contentSeen: ContentSeenStore;
  /** The hosts' duplicate-URL rules, applied and taught (docs/duplicate-urls.md); absent = none. */
  urlRules?: UrlRuleChecks;
}

/**
 * Output: what the record carries from the runtime's state. The page record, the links and the
 * capture to archive are the step's effects (step-effects.ts), not written here.
 */
export interface OutputDeps {
  /** AOPIC importance estimate of a page fetched holding `cash` (from the crawl's ledger). */
  importanceOf?: (cash: number) => number;
}

/**
 * The link path of a page, a redirect, a sitemap's entries or a rule's readmitted URLs: canonical
 * form, the rule book's lookups, scope and trap checks, and the URL-seen claim.
 */
export type LinkPathDeps = StepBasics &
  AdmissionDeps & {
    /** Trap and near-duplicate defences; absent = none. */
    quality?: QualityChecks;
    /** The hosts' duplicate-URL rule book (docs/duplicate-urls.md); absent = none applied. */
    urlRules?: UrlRuleLookup;
  };

/** Everything a crawl step touches. Time, randomness and I/O all come in here. */
export type CrawlPageDeps = StepBasics & FetchDeps & RobotsDeps & AdmissionDeps & DefenceDeps & OutputDeps;
