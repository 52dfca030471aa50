import type { FetchResponse, RobotsEntry } from '../ports.ts';
import { robotsUrlFor, rulesFromEntry } from '../robots/policy.ts';
import type { CashFlow } from '../scheduling/aopic.ts';
import { type Admission, admitUrls, type Followed, knownForm, linkSkip } from '../step/admit-urls.ts';
import type { AdmissionDeps, FetchDeps, LinkPathDeps, StepBasics } from '../step/step-deps.ts';
import type { CrawlTask, OutLink, PageRecord, SitemapFileRecord, SkipReason } from '../types.ts';
import { fingerprint } from '../url/fingerprint.ts';
import { sitemapEntryShares } from './sitemap-cash.ts';
import { followSitemap, readsFirst, type SitemapFetch, sitemapPlan } from './sitemap-plan.ts';
import { readSitemap, type SitemapRead } from './sitemap-reader.ts';

/** What planning a site's sitemap files reads: the settings and the gates of a link. */
export type SitemapPlanDeps = Pick<StepBasics, 'config'> & Pick<AdmissionDeps, 'canonicalizer' | 'scope'>;

/** What queueing a site's sitemap files touches: the plan, then the URL-seen claim. */
export type SitemapQueueDeps = SitemapPlanDeps & Pick<AdmissionDeps, 'seen'>;

/** What a sitemap file's step touches: the link path, and the inflater of a gzipped file. */
export type SitemapStepDeps = LinkPathDeps & Pick<FetchDeps, 'gunzip'>;
/** Depth of a site's own sitemap files: virtual pages linked from the site's root page. */
const SITEMAP_DEPTH = 1;

/**
 * The sitemap files of the site at `origin` whose robots.txt is `entry`, as canonical URLs:
 * none when sitemaps are off, robots.txt disallowed everything, or the crawl's scope does not
 * take the site's host (a CDN host met through a sitemap plans none of its own). A file passes
 * the gates of a link (`ScopeRules.check`: scope, include/exclude, depth, URL length), so that
 * nothing is asked of a host the crawl leaves out, not even its robots.txt.
 */
export function plannedSitemaps(deps: SitemapPlanDeps, origin: string, entry: RobotsEntry): SitemapFetch[] {
  const { config } = deps;
  if (!config.sitemaps || entry.status === 'disallow-all') return [];
  if (!deps.scope.hostInScope(new URL(origin).hostname)) return [];
  const named =
    entry.status === 'rules' ? rulesFromEntry(entry, config.robotsAgent, config.maxRobotsBytes).sitemaps : [];
  const out: SitemapFetch[] = [];
  const seen = new Set<string>();
  for (const fetch of sitemapPlan(origin, named, config)) {
    const canonical = deps.canonicalizer.canonicalize(fetch.url);
    if (!canonical.ok || seen.has(canonical.url)) continue;
    seen.add(canonical.url);
    if (sitemapFileSkip(deps, canonical.url, canonical.host, SITEMAP_DEPTH) === undefined)
      out.push({ ...fetch, url: canonical.url });
  }
  return out;
}

/**
 * Why a sitemap file may not be fetched, if it may not: the gates of a link (`ScopeRules.check`),
 * applied before anything is asked of its host, with the scope lifted for the hosts the user
 * named for sitemaps (`sitemapHosts`).
 */
function sitemapFileSkip(
  deps: Pick<SitemapPlanDeps, 'config' | 'scope'>,
  url: string,
  host: string,
  depth: number,
): SkipReason | undefined {
  return deps.scope.check(url, host, depth, deps.config.sitemapHosts.includes(host));
}

/**
 * Queues the sitemap files the site names (its robots.txt `Sitemap:` lines) when its robots.txt
 * is first read: claimed through the URL-seen test with robots.txt as their owner, holding no
 * cash (the lambda page's redistributions give them some), read before the site's pages (see
 * readsFirst). The guessed `/sitemap.xml` is not among them: it is a link of the root page
 * (`rootSitemaps`, `admitRootSitemaps`). Returns the tasks to queue.
 */
export async function queueSitemaps(
  deps: SitemapQueueDeps,
  task: CrawlTask,
  origin: string,
  entry: RobotsEntry,
): Promise<CrawlTask[]> {
  const plan = plannedSitemaps(deps, origin, entry).filter(readsFirst);
  if (plan.length === 0) return [];
  // robots.txt names them: it is the owner of their claims (a page of the site may link one too)
  const robots: CrawlTask = { ...task, fp: fingerprint(robotsUrlFor(task.url)) };
  const { enqueued } = await admitUrls(deps, robots, SITEMAP_DEPTH, sitemapAdmissions(plan, 0));
  return enqueued;
}

/**
 * The guessed `/sitemap.xml` of the site when `task` is its root page `/` and robots.txt names
 * no sitemap: a link of the root page, with `share` of the cash (see rootCashSplit), claimed
 * and queued after the page's links. A guess is a 404 on most sites (17 of the quality bench's
 * 20 hosts): read at robots.txt time, it took a request from each site before its first pages,
 * and cost the early PageRank mass 1-2 points (docs/quality-bench.md, issue 11's third pass).
 */
export async function admitRootSitemaps(
  deps: Pick<AdmissionDeps, 'seen'>,
  task: CrawlTask,
  sitemaps: readonly SitemapFetch[],
  share: number,
): Promise<{ enqueued: CrawlTask[]; credits: CashFlow['credits'] }> {
  return admitUrls(deps, task, SITEMAP_DEPTH, sitemapAdmissions(sitemaps, share));
}

/** Sitemap files as admissions, each holding `cash`. */
function sitemapAdmissions(files: readonly SitemapFetch[], cash: number): Admission[] {
  return files.map(
    (fetch): Admission => ({
      url: fetch.url,
      host: new URL(fetch.url).hostname,
      fp: fingerprint(fetch.url),
      cash,
      fields: { sitemap: fetch },
    }),
  );
}

/**
 * The site's sitemap files that are links of its root page when `task` is that page `/`: the
 * guessed `/sitemap.xml` (files the site names are queued when robots.txt is read), else none.
 */
export function rootSitemaps(
  deps: SitemapPlanDeps,
  task: CrawlTask,
  origin: string,
  entry: RobotsEntry,
): SitemapFetch[] {
  if (task.url !== `${origin}/` || task.sitemap !== undefined) return [];
  return plannedSitemaps(deps, origin, entry).filter((fetch) => !readsFirst(fetch));
}

/**
 * Reads a fetched sitemap file (a 2xx response to a sitemap task): inflates it when it came
 * gzipped, follows what it leads to within its budget, and records what it gave on `record`.
 * A urlset's entries go down the link path with shares of the file's cash by priority; an index's
 * children are queued as sitemap tasks with equal shares. The file's entries, with why each is
 * not followed, come back as `links`.
 */
export async function readSitemapFile(
  deps: SitemapStepDeps,
  task: CrawlTask,
  fetch: SitemapFetch,
  response: FetchResponse,
  record: PageRecord,
): Promise<Followed> {
  const { config } = deps;
  record.kind = 'other';
  const none: Followed = { enqueued: [], cashFlow: { cash: task.cash, toLambda: task.cash, credits: [] } };
  if (response.status < 200 || response.status >= 300) return none;
  const limits = { maxBytes: config.maxSitemapBytes };
  let read: SitemapRead = readSitemap(response.body, fetch, limits);
  let cut = response.truncated === 'length';
  let gzip = false;
  if (read.kind === 'gzip') {
    gzip = true;
    const inflated =
      deps.gunzip === undefined
        ? { ok: false as const, message: 'gzipped, and this runtime cannot inflate it' }
        : await deps.gunzip(response.body, config.maxSitemapBytes);
    if (!inflated.ok) {
      record.sitemap = notSitemap(inflated.message, gzip);
      return none;
    }
    cut ||= inflated.truncated;
    read = readSitemap(inflated.bytes, fetch, limits);
    if (read.kind === 'gzip') read = { kind: 'not-a-sitemap', reason: 'gzip inside gzip' };
  }
  if (read.kind === 'not-a-sitemap') {
    record.sitemap = notSitemap(read.reason, gzip);
    return none;
  }
  const follow = followSitemap(fetch, read, config);
  const summary: SitemapFileRecord = {
    kind: read.kind,
    entries: read.entries.length,
    queued: 0,
    outOfScope: read.stats.outOfScope,
    invalid: read.stats.invalid,
    dropped: follow.dropped,
  };
  if (gzip) summary.gzip = true;
  if (read.stats.tooDeep > 0) summary.tooDeep = read.stats.tooDeep;
  const truncated = read.stats.truncated ?? (cut ? 'bytes' : undefined);
  if (truncated !== undefined) summary.truncated = truncated;
  record.sitemap = summary;
  record.outLinks = read.entries.length;
  const depth = task.depth + 1;
  let followed: Followed;
  if (read.kind === 'index') {
    const children: { fetch: SitemapFetch; host: string }[] = [];
    const links: OutLink[] = [];
    const inFile = new Set<string>();
    for (const child of follow.sitemaps) {
      const canonical = deps.canonicalizer.canonicalize(child.url);
      if (!canonical.ok) {
        summary.invalid += 1;
        continue;
      }
      if (inFile.has(canonical.url)) continue;
      inFile.add(canonical.url);
      const out: OutLink = { url: canonical.url, kind: 'other' };
      const skip = sitemapFileSkip(deps, canonical.url, canonical.host, depth);
      if (skip !== undefined) {
        out.skipped = skip;
        summary.outOfScope += 1;
      } else children.push({ fetch: { ...child, url: canonical.url }, host: canonical.host });
      links.push(out);
    }
    const { shares, toLambda } = sitemapEntryShares(
      task.cash,
      children.map(() => undefined),
      config.aopicTax,
    );
    const admissions = children.map(
      (c, i): Admission => ({
        url: c.fetch.url,
        host: c.host,
        fp: fingerprint(c.fetch.url),
        cash: shares[i]!,
        fields: { sitemap: c.fetch },
      }),
    );
    const { enqueued, credits } = await admitUrls(deps, task, depth, admissions);
    followed = {
      enqueued,
      cashFlow: { cash: task.cash, toLambda, credits },
      links: { from: task.url, links },
    };
  } else {
    followed = await followEntries(deps, task, follow.pages, depth, summary);
  }
  summary.queued = followed.enqueued.length;
  return followed;
}

/** A urlset's page URLs down the link path; their shares of the file's cash follow their priorities. */
async function followEntries(
  deps: SitemapStepDeps,
  task: CrawlTask,
  entries: readonly { url: string; lastmod?: string; priority?: number }[],
  depth: number,
  summary: SitemapFileRecord,
): Promise<Followed> {
  const links: OutLink[] = [];
  const inFile = new Set<string>();
  const accepted: { url: string; host: string; lastmod?: string; priority?: number }[] = [];
  for (const entry of entries) {
    const canonical = deps.canonicalizer.canonicalize(entry.url);
    if (!canonical.ok) {
      summary.invalid += 1;
      continue;
    }
    const { url, linkedAs } = knownForm(deps.urlRules, canonical);
    const out: OutLink = { url, kind: 'page' };
    if (entry.lastmod !== undefined) out.lastmod = entry.lastmod;
    if (linkedAs !== undefined) out.linkedAs = linkedAs;
    if (inFile.has(url)) continue;
    inFile.add(url);
    const skip = linkSkip(deps, task, url, canonical.host, depth);
    if (skip !== undefined) {
      out.skipped = skip;
      summary.outOfScope += 1;
    } else {
      const kept: (typeof accepted)[number] = { url, host: canonical.host };
      if (entry.lastmod !== undefined) kept.lastmod = entry.lastmod;
      if (entry.priority !== undefined) kept.priority = entry.priority;
      accepted.push(kept);
    }
    links.push(out);
  }
  const { shares, toLambda } = sitemapEntryShares(
    task.cash,
    accepted.map((a) => a.priority),
    deps.config.aopicTax,
  );
  const admissions = accepted.map(
    (a, i): Admission => ({
      url: a.url,
      host: a.host,
      fp: fingerprint(a.url),
      cash: shares[i]!,
      fields: a.lastmod === undefined ? { listed: true } : { listed: true, lastmod: a.lastmod },
    }),
  );
  const { enqueued, credits } = await admitUrls(deps, task, depth, admissions);
  return { enqueued, cashFlow: { cash: task.cash, toLambda, credits }, links: { from: task.url, links } };
}

function notSitemap(reason: string, gzip: boolean): SitemapFileRecord {
  return {
    kind: 'not-a-sitemap',
    reason,
    ...(gzip ? { gzip } : {}),
    entries: 0,
    queued: 0,
    outOfScope: 0,
    invalid: 0,
    dropped: 0,
  };
}
