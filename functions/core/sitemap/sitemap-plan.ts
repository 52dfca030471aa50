/**
 * Which sitemap files a crawl fetches for a site, and what each file read leads to
 * (docs/sitemaps.md). Pure and stateless: every planned file carries its own share of the site's
 * budget (files and entries) and its index level, so a runtime needs no per-site counters, and the
 * same plan holds in a worker that sees one file of the site and nothing else.
 *
 * - A site's sitemaps are the `Sitemap:` lines of its robots.txt, else `/sitemap.xml`.
 * - Scope (sitemaps.org): a sitemap's entries must lie under its own directory, on its own scheme
 *   and host; a sitemap named in a site's robots.txt may list any URL of that site (the protocol's
 *   cross-submission), wherever the file itself lives. Children of an index inherit that grant.
 * - An index at level `maxSitemapDepth` leads nowhere: its children are counted, not fetched
 *   (the protocol allows one level; nested indexes exist, so the default tolerates two).
 */
import type { CrawlConfig } from '../config.ts';
import type { SitemapEntry, SitemapRead } from './sitemap-reader.ts';

/** One sitemap file to fetch. */
export interface SitemapFetch {
  /** Absolute URL of the file. */
  url: string;
  /** URL prefix its entries must start with. */
  scope: string;
  /** The scope is the whole site, granted by robots.txt (passed on to an index's children). */
  granted: boolean;
  /** 0 for a site's own sitemaps, one more per index level. */
  level: number;
  /** Where it was found. */
  from: 'robots' | 'default' | 'index';
  /** Files this one and all it leads to may use, itself included (at least 1). */
  files: number;
  /** Page URLs this one and all it leads to may contribute. */
  entries: number;
}

/** The settings the plan reads (crawl configuration keys). */
export type SitemapPlanSettings = Pick<CrawlConfig, 'maxSitemapFiles' | 'maxSitemapUrls' | 'maxSitemapDepth'>;

/** What one read file leads to. */
export interface SitemapFollowUp {
  /** Page URLs to crawl (a urlset's entries, within this file's budget). */
  pages: SitemapEntry[];
  /** Child sitemaps to fetch (an index's entries, within budget and depth). */
  sitemaps: SitemapFetch[];
  /** Entries not followed: over this file's budget, or an index too deep, or a child out of scope. */
  dropped: number;
}

/**
 * The sitemap files to fetch first for the site at `origin` (`http://host[:port]`), given the
 * `Sitemap:` values of its robots.txt (absolute URLs; a relative one is read against the origin,
 * anything but http(s) is ignored). The site's budget is shared out among them.
 */
export function sitemapPlan(
  origin: string,
  robotsSitemaps: readonly string[],
  settings: SitemapPlanSettings,
): SitemapFetch[] {
  const site = `${origin}/`;
  const named = new Set<string>();
  for (const value of robotsSitemaps) {
    const url = absoluteHttp(value, site);
    if (url !== undefined) named.add(url);
  }
  if (named.size === 0) {
    return [
      {
        url: `${origin}/sitemap.xml`,
        scope: site,
        granted: false,
        level: 0,
        from: 'default',
        files: settings.maxSitemapFiles,
        entries: settings.maxSitemapUrls,
      },
    ];
  }
  const take = [...named].slice(0, settings.maxSitemapFiles);
  const files = shareOut(settings.maxSitemapFiles, take.length);
  const entries = shareOut(settings.maxSitemapUrls, take.length);
  return take.map((url, i) => ({
    url,
    scope: site,
    granted: true,
    level: 0,
    from: 'robots',
    files: files[i]!,
    entries: entries[i]!,
  }));
}

/**
 * What a read sitemap leads to: a urlset's entries (at most `fetch.entries`), or an index's
 * children (each on the index's own origin or inside its scope, at most `fetch.files - 1` of them,
 * sharing the budget), none when the index is at the depth limit.
 */
export function followSitemap(
  fetch: SitemapFetch,
  read: SitemapRead,
  settings: SitemapPlanSettings,
): SitemapFollowUp {
  if (read.kind === 'urlset') {
    const pages = read.entries.slice(0, fetch.entries);
    return { pages, sitemaps: [], dropped: read.entries.length - pages.length };
  }
  if (read.kind !== 'index') return { pages: [], sitemaps: [], dropped: 0 };
  if (fetch.level + 1 > settings.maxSitemapDepth)
    return { pages: [], sitemaps: [], dropped: read.entries.length };
  const ownOrigin = new URL(fetch.url).origin;
  // a Set: a list searched for each child took 7.9 s on an index of 50,000
  const children = new Set<string>();
  for (const entry of read.entries) {
    const url = entry.url;
    if ((url.startsWith(fetch.scope) || new URL(url).origin === ownOrigin) && url !== fetch.url)
      children.add(url);
  }
  const take = [...children].slice(0, Math.max(0, fetch.files - 1));
  const files = shareOut(fetch.files - 1, take.length);
  const entries = shareOut(fetch.entries, take.length);
  return {
    pages: [],
    sitemaps: take.map((url, i) => ({
      url,
      scope: fetch.granted ? fetch.scope : directoryOf(url),
      granted: fetch.granted,
      level: fetch.level + 1,
      from: 'index',
      files: files[i]!,
      entries: entries[i]!,
    })),
    dropped: read.entries.length - take.length,
  };
}

/**
 * Whether a sitemap file is read as soon as its host allows, before the host's pages: one that
 * the site names (a robots.txt `Sitemap:` line, an index's child). Its entries then become known
 * early and gather the lambda page's redistributions like every known page, which is what gets
 * the pages only a sitemap lists fetched within a budget (docs/sitemaps.md, measured in
 * docs/quality-bench.md). The guessed `/sitemap.xml` is a 404 on most sites: it waits for its
 * share of the root page's cash like any URL.
 */
export function readsFirst(fetch: SitemapFetch): boolean {
  return fetch.from !== 'default';
}

/** The scope of a sitemap found where it lives: its own directory (`http://h/catalog/`). */
export function directoryOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname.slice(0, parsed.pathname.lastIndexOf('/') + 1)}`;
}

/** `total` shared among `parts` as evenly as whole numbers allow, the first ones taking the rest. */
function shareOut(total: number, parts: number): number[] {
  if (parts <= 0) return [];
  const base = Math.floor(total / parts);
  const extra = total - base * parts;
  return Array.from({ length: parts }, (_, i) => base + (i < extra ? 1 : 0));
}

function absoluteHttp(value: string, base: string): string | undefined {
  const parsed = URL.parse(value.trim(), base);
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return undefined;
  parsed.hash = '';
  return parsed.href;
}
