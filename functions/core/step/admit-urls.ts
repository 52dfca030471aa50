/**
 * The link path's rules, written once for every URL a step may queue: a page's links, a sitemap's
 * entries, a redirect's target and a queued URL that a duplicate-URL rule merged into another.
 * `knownForm` and `linkSkip` judge one link (the form the crawl knows it by, and why it is not
 * followed); `admitUrls` is the last part: the URL-seen claim (with the page, sitemap, redirected
 * or merged task as owner), the new URLs returned as tasks carrying their AOPIC cash (the step's
 * `enqueued` effect: the runtime queues them), and the known ones listed with theirs for the
 * runtime to credit.
 */

import type { Clock } from '../ports.ts';
import type { QualityChecks } from '../quality/crawl-quality.ts';
import { DUPLICATE_URL_RULE_REASON, type UrlRuleBook } from '../quality/duplicate-url-rule-book.ts';
import type { UrlRuleLearner } from '../quality/duplicate-url-rule-learner.ts';
import type { CashFlow } from '../scheduling/aopic.ts';
import type { CrawlTask, Fingerprint, LinkRecord, SkipReason } from '../types.ts';
import { isRootUrl } from '../url/canonicalize.ts';
import type { ScopeRules } from '../url/scope.ts';
import type { UrlSeen } from '../url-seen/url-seen.ts';

/** What a link's path asks of the duplicate-URL rule book: the form a URL is known by, and whether a rule holds it. */
export type UrlRuleLookup = Pick<UrlRuleBook, 'rewrite' | 'heldAs' | 'aliasNamespace'>;

/**
 * What the crawl step asks of the duplicate-URL rules (DuplicateUrlRules, or a runtime's wrapper
 * of it): the rule book's lookups, and the learner's lessons from the page it fetched.
 */
export type UrlRuleChecks = UrlRuleLookup &
  Pick<UrlRuleLearner, 'observePage' | 'observeRedirect' | 'observeDeclared' | 'takeGivenBack'>;

/** A URL that passed canonicalization, the duplicate-URL rules, scope and the trap checks. */
export interface Admission {
  /** Canonical URL (rewritten by the host's rules when they apply). */
  url: string;
  host: string;
  fp: Fingerprint;
  /** AOPIC cash it receives: carried by its task when new, credited when known. */
  cash: number;
  /** Fields of its task when it is new (`redirects`: hops followed to reach it, 0 when absent). */
  fields?: Pick<CrawlTask, 'generated' | 'parentSimhash' | 'lastmod' | 'sitemap' | 'listed'> &
    Partial<Pick<CrawlTask, 'redirects'>>;
}

/** What a page's links (or a redirect's target, or a sitemap's entries) received. */
export interface Followed {
  /** The tasks admitted, in admission order (the step's `enqueued` effect). */
  enqueued: CrawlTask[];
  cashFlow: CashFlow;
  /** Links left out because their resolved URL is longer than `maxUrlLength`. */
  longUrls?: number;
  /** The out-links read, with why each is not followed (the step's `links` effect). */
  links?: LinkRecord;
}

/**
 * Claims the admitted URLs for `from` (the claim owner and the new tasks' parent) and returns the
 * new ones as tasks at `depth`, for the runtime to queue, with the credits owed to the known ones.
 */
export async function admitUrls(
  deps: { seen: UrlSeen },
  from: CrawlTask,
  depth: number,
  admissions: readonly Admission[],
): Promise<{ enqueued: CrawlTask[]; credits: CashFlow['credits'] }> {
  const credits: CashFlow['credits'] = [];
  if (admissions.length === 0) return { enqueued: [], credits };
  const claimed = await deps.seen.claim(
    admissions.map((a) => a.fp),
    from.fp,
    admissions.map((a) => a.host),
  );
  const tasks: CrawlTask[] = [];
  for (let i = 0; i < admissions.length; i++) {
    const a = admissions[i]!;
    if (!claimed[i]) {
      credits.push({
        fp: a.fp,
        amount: a.cash,
        host: a.host,
        ...(a.fields?.generated ? { generated: true } : {}),
        ...(isRootUrl(a.url) ? { root: true } : {}),
      });
      continue;
    }
    const next: CrawlTask = {
      crawlId: from.crawlId,
      url: a.url,
      fp: a.fp,
      host: a.host,
      depth,
      parent: from.fp,
      redirects: a.fields?.redirects ?? 0,
      attempt: 0,
      cash: a.cash,
    };
    if (a.fields !== undefined) {
      const { generated, parentSimhash, lastmod, sitemap, listed } = a.fields;
      if (parentSimhash !== undefined) next.parentSimhash = parentSimhash;
      if (generated) next.generated = true;
      if (lastmod !== undefined) next.lastmod = lastmod;
      if (sitemap !== undefined) next.sitemap = sitemap;
      if (listed) next.listed = true;
    }
    tasks.push(next);
  }
  if (tasks.length > 0) deps.seen.remember(tasks.map((t) => t.fp));
  return { enqueued: tasks, credits };
}

/**
 * `duplicate-url-rule` for a link to a page already fetched under another form, which the host's
 * rules merge into this URL (see `UrlRuleBook.heldAs`), or to a URL of one of the host's
 * alias namespaces (`aliasNamespace`): not claimed, not fetched.
 */
export function heldLink(rules: UrlRuleLookup | undefined, url: string): SkipReason | undefined {
  if (rules === undefined) return undefined;
  return rules.heldAs(url) === undefined && rules.aliasNamespace(url) === undefined
    ? undefined
    : DUPLICATE_URL_RULE_REASON;
}

/**
 * The form the crawl knows a link by: the host's duplicate-URL rules may rewrite it
 * (`linkedAs` is then the form the page or sitemap named).
 */
export function knownForm(
  rules: Pick<UrlRuleBook, 'rewrite'> | undefined,
  canonical: { url: string; host: string },
): { url: string; linkedAs?: string } {
  const rewritten = rules?.rewrite(canonical.url);
  return rewritten === undefined ? { url: canonical.url } : { url: rewritten.url, linkedAs: canonical.url };
}

/** What {@link linkSkip} reads. */
export interface LinkRuleDeps {
  clock: Clock;
  scope: ScopeRules;
  urlRules?: UrlRuleLookup;
  quality?: Pick<QualityChecks, 'checkLink'>;
}

/**
 * Why a link of `from` (a page's out-link or a sitemap's entry, in its known form) is not
 * followed, or undefined when it is: the crawl's scope and depth, a form the host's duplicate-URL
 * rules hold, then the trap checks (a link from a near duplicate of `nearDuplicateOf`, a calendar,
 * a link generator).
 */
export function linkSkip(
  deps: LinkRuleDeps,
  from: CrawlTask,
  url: string,
  host: string,
  depth: number,
  nearDuplicateOf?: string,
): SkipReason | undefined {
  return (
    deps.scope.check(url, host, depth) ??
    heldLink(deps.urlRules, url) ??
    deps.quality?.checkLink(url, from, deps.clock.now(), nearDuplicateOf)
  );
}
