/**
 * AOPIC cash for sitemaps (docs/sitemaps.md). The files a site names become known (holding no
 * cash) when its robots.txt is read and receive the lambda page's redistributions like every
 * known page. The guessed `/sitemap.xml` of a site that names none is a link of the root page `/`,
 * worth `sitemapShare` of one of its links (a guess, a 404 on most sites, comes after them).
 * A fetched sitemap passes its cash on like a page, less the tax: an index in equal shares to its
 * child sitemaps, a urlset to its URLs in proportion to their `<priority>`. Cash is conserved:
 * every amount comes out of a page that held it, and what nobody takes goes to the lambda page.
 */

/** How a root page's cash leaves it when its site has sitemaps. */
export interface RootCashSplit {
  /** Added to each of the page's eligible links. */
  linkShare: number;
  /** Added to each of the site's sitemaps. */
  sitemapShare: number;
  /** The tax, or everything when there is nowhere to send it. */
  toLambda: number;
}

/**
 * Splits the root page's `cash` between its `links` eligible links and the site's guessed
 * `sitemaps`, after the tax `tax`: a sitemap weighs `share` of a link (all of the cash when the
 * page has no link, none when there is no sitemap).
 */
export function rootCashSplit(
  cash: number,
  links: number,
  sitemaps: number,
  tax: number,
  share: number,
): RootCashSplit {
  if (!(cash > 0)) return { linkShare: 0, sitemapShare: 0, toLambda: 0 };
  if (links <= 0 && sitemaps <= 0) return { linkShare: 0, sitemapShare: 0, toLambda: cash };
  const distributable = cash * (1 - tax);
  const weight = sitemaps * share;
  const toSitemaps =
    sitemaps <= 0 ? 0 : links <= 0 ? distributable : (distributable * weight) / (links + weight);
  return {
    linkShare: links <= 0 ? 0 : (distributable - toSitemaps) / links,
    sitemapShare: sitemaps <= 0 ? 0 : toSitemaps / sitemaps,
    toLambda: cash - distributable,
  };
}

/** A URL's weight in its sitemap when it states no priority (the protocol's default). */
export const DEFAULT_PRIORITY = 0.5;
/** The least weight: a `<priority>0.0</priority>` URL still gets a little. */
const MIN_WEIGHT = 0.05;

/**
 * Splits a fetched sitemap's `cash` over its entries, after the tax: in proportion to each
 * entry's priority (0.5 when absent, at least 0.05), so the pages a site marks as its most
 * important come first among its sitemap-only pages. For an index, pass no priorities: equal shares.
 */
export function sitemapEntryShares(
  cash: number,
  priorities: readonly (number | undefined)[],
  tax: number,
): { shares: number[]; toLambda: number } {
  if (!(cash > 0)) return { shares: priorities.map(() => 0), toLambda: 0 };
  if (priorities.length === 0) return { shares: [], toLambda: cash };
  const weights = priorities.map((p) => Math.max(MIN_WEIGHT, p ?? DEFAULT_PRIORITY));
  const total = weights.reduce((a, b) => a + b, 0);
  const distributable = cash * (1 - tax);
  return { shares: weights.map((w) => (distributable * w) / total), toLambda: cash - distributable };
}
