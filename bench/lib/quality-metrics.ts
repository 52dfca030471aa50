/**
 * Crawl-quality numbers from the fixture web's server logs (the ground truth, in arrival order):
 * coverage of good pages, PageRank mass gathered after a share of the requests against the ideal
 * order, and the requests wasted on traps, duplicates, redirects and missing pages.
 */
import type { FixtureWeb, TrapKind } from '../../test/fixtures/web/generate-web.ts';
import { TRAP_KINDS } from '../../test/fixtures/web/generate-web.ts';
import type { DuplicateVariant, UrlClass } from '../../test/fixtures/web/resolve-url.ts';

/** How a duplicate fetch spelled a page already fetched: a duplicate form, or a good URL again. */
export type DuplicateFetchKind =
  | DuplicateVariant
  /** The page's own URL, after the page was fetched under another spelling. */
  | 'own-url'
  /** The page's own URL fetched a second time. */
  | 'refetch';

/** Every duplicate fetch kind, in report order. */
export const DUPLICATE_FETCH_KINDS: readonly DuplicateFetchKind[] = [
  'alias',
  'session',
  'tracking',
  'index-file',
  'no-slash',
  'case',
  'param',
  'prefix',
  'own-url',
  'refetch',
];

/** PageRank gathered by the crawl after its first `requests` requests, and by the ideal order. */
export interface MassPoint {
  /** Share of all requests (0.1 for the first 10%). */
  share: number;
  requests: number;
  /** PageRank of the distinct good pages fetched so far. */
  mass: number;
  /** PageRank of the `requests` best good pages: no crawler can do better in as many requests. */
  ideal: number;
  /** mass / ideal. */
  ratio: number;
}

/**
 * One host's part of the first mass mark's requests (the first 10%): where the early mass came
 * from, and how fast the crawl went at that host. Crawl orders are comparable only at the same
 * pace per host: with no politeness gap a loopback host answers a crawler that keeps one request
 * in flight some 100 times a second (docs/quality-bench.md, "the same pace per host").
 */
export interface EarlyHost {
  host: number;
  requests: number;
  /** PageRank of the distinct good pages this host's requests added in the window. */
  mass: number;
  /** Index of the host's first request in the log (it is within the window). */
  first: number;
  /** Its requests per second between its first and last request in the window (known times, 2+ requests). */
  perSecond?: number;
}

/** A logged request as the metrics read it: its label, and its host and start time (ms) when known. */
export interface MeasuredRequest {
  class: UrlClass;
  host?: number;
  start?: number;
}

/** What a crawl's requests did, by label. */
export interface QualityMetrics {
  requests: number;
  goodPages: number;
  /** Distinct good pages whose content was fetched (under their own URL or any exact-duplicate spelling). */
  goodFetched: number;
  /** goodFetched / goodPages. */
  coverage: number;
  mass: MassPoint[];
  /**
   * The requests up to the first mass mark (the first 10%), by their label's kind: where the
   * requests that did not fetch a new good page went while the early mass was gathered.
   */
  early: Partial<Record<UrlClass['kind'], number>>;
  /** The same window by host (logs that name hosts), the most mass first. */
  earlyHosts: EarlyHost[];
  trapRequests: number;
  byTrap: Record<TrapKind, number>;
  /**
   * Fetches of a page already fetched under another URL (or the same one again), by how the later
   * fetch spelled it (`exact`: their sum, the issue-11 measure), and `?print=1` near-duplicates
   * (`nearDuplicate`); `total` is both.
   */
  duplicates: Record<DuplicateFetchKind, number> & { exact: number; nearDuplicate: number; total: number };
  /** Requests for sitemap files (`served`: those the host has; the rest are misses). */
  sitemaps: { requests: number; served: number };
  /** Pages linked from nowhere but a sitemap: fetched (distinct) and in all. */
  sitemapOnly: { found: number; total: number; hostsFound: number; hosts: number };
  redirects: Record<'moved' | 'cross-host' | 'chain' | 'loop', number> & { total: number };
  soft404: number;
  notFound: number;
  /** Requests under a robots.txt Disallow prefix: a politeness bug when not zero. */
  disallowed: number;
  robots: number;
}

/** Shares of the requests at which the PageRank mass is reported. */
export const MASS_SHARES: readonly number[] = [0.1, 0.25, 0.5, 1];

/** Computes the metrics from the labels of all requests, in the order they reached the servers. */
export function qualityMetrics(web: FixtureWeb, requests: readonly MeasuredRequest[]): QualityMetrics {
  const ideal = [...web.pageRank].sort((a, b) => b - a);
  const idealPrefix = new Float64Array(ideal.length + 1);
  for (let i = 0; i < ideal.length; i++) idealPrefix[i + 1] = idealPrefix[i]! + ideal[i]!;

  const n = requests.length;
  const marks = MASS_SHARES.map((share) => ({ share, requests: Math.max(1, Math.ceil(share * n)) }));
  const mass: MassPoint[] = [];
  /** 0: not fetched; 1: fetched under its own URL first; 2: under another spelling first. */
  const fetched = new Uint8Array(web.pageCount);
  let goodFetched = 0;
  let gathered = 0;
  const byTrap = Object.fromEntries(TRAP_KINDS.map((t) => [t, 0])) as Record<TrapKind, number>;
  const duplicates = {
    ...(Object.fromEntries(DUPLICATE_FETCH_KINDS.map((k) => [k, 0])) as Record<DuplicateFetchKind, number>),
    exact: 0,
    nearDuplicate: 0,
    total: 0,
  };
  const redirects = { moved: 0, 'cross-host': 0, chain: 0, loop: 0, total: 0 };
  const sitemaps = { requests: 0, served: 0 };
  const onlyTotal = web.hosts.reduce((sum, h) => sum + h.sitemapOnly.length, 0);
  const onlyFound = new Set<string>();
  let trapRequests = 0;
  let soft404 = 0;
  let notFound = 0;
  let disallowed = 0;
  let robots = 0;
  let mark = 0;
  const early: Partial<Record<UrlClass['kind'], number>> = {};
  const hosts = new Map<number, EarlyHost & { from?: number; to?: number }>();
  /** PageRank the request being read added (a good page's first fetch). */
  let added = 0;
  const content = (page: number, via: DuplicateFetchKind | 'good') => {
    if (fetched[page] === 0) {
      fetched[page] = via === 'good' ? 1 : 2;
      goodFetched += 1;
      added = web.pageRank[page]!;
      gathered += added;
      return;
    }
    const kind: DuplicateFetchKind = via !== 'good' ? via : fetched[page] === 1 ? 'refetch' : 'own-url';
    duplicates[kind] += 1;
    duplicates.exact += 1;
  };
  for (let i = 0; i < n; i++) {
    const request = requests[i]!;
    const cls = request.class;
    const inEarly = i < marks[0]!.requests;
    if (inEarly) early[cls.kind] = (early[cls.kind] ?? 0) + 1;
    added = 0;
    switch (cls.kind) {
      case 'good':
        content(cls.page, 'good');
        break;
      case 'duplicate':
        content(cls.of, cls.variant);
        break;
      case 'near-duplicate':
        duplicates.nearDuplicate += 1;
        break;
      case 'redirect':
        redirects[cls.variant] += 1;
        redirects.total += 1;
        break;
      case 'trap':
        byTrap[cls.trap] += 1;
        trapRequests += 1;
        break;
      case 'soft-404':
        soft404 += 1;
        break;
      case 'not-found':
        notFound += 1;
        break;
      case 'disallowed':
        disallowed += 1;
        break;
      case 'robots':
        robots += 1;
        break;
      case 'sitemap':
        sitemaps.requests += 1;
        if (cls.served) sitemaps.served += 1;
        break;
      case 'sitemap-only':
        onlyFound.add(`${cls.host} ${cls.index}`);
        break;
    }
    if (inEarly && request.host !== undefined) {
      const host = hosts.get(request.host) ?? { host: request.host, requests: 0, mass: 0, first: i };
      hosts.set(request.host, host);
      host.requests += 1;
      host.mass += added;
      if (request.start !== undefined) {
        host.from ??= request.start;
        host.to = request.start;
      }
    }
    while (mark < marks.length && marks[mark]!.requests === i + 1) {
      const { share, requests: k } = marks[mark]!;
      const best = idealPrefix[Math.min(k, web.pageCount)]!;
      mass.push({ share, requests: k, mass: gathered, ideal: best, ratio: best === 0 ? 0 : gathered / best });
      mark++;
    }
  }
  duplicates.total = duplicates.exact + duplicates.nearDuplicate;
  const earlyHosts: EarlyHost[] = [...hosts.values()]
    .map(({ from, to, ...host }) =>
      from !== undefined && to !== undefined && to > from && host.requests > 1
        ? { ...host, perSecond: ((host.requests - 1) * 1000) / (to - from) }
        : host,
    )
    .sort((a, b) => b.mass - a.mass || b.requests - a.requests);
  const onlyHosts = web.hosts.filter((h) => h.sitemapOnly.length > 0);
  const hostsFound = onlyHosts.filter((h) =>
    h.sitemapOnly.some((_, index) => onlyFound.has(`${h.index} ${index}`)),
  ).length;
  return {
    requests: n,
    goodPages: web.pageCount,
    goodFetched,
    coverage: goodFetched / web.pageCount,
    mass,
    early,
    earlyHosts,
    trapRequests,
    byTrap,
    duplicates,
    redirects,
    soft404,
    notFound,
    disallowed,
    robots,
    sitemaps,
    sitemapOnly: { found: onlyFound.size, total: onlyTotal, hostsFound, hosts: onlyHosts.length },
  };
}

/** The targets, checked against one crawl's metrics. */
export interface TargetCheck {
  name: string;
  pass: boolean;
}

/**
 * Issue 4's targets (traps <= 1% of requests, >= 75% of good pages, >= 60% of the ideal mass at
 * 10%) and issue 11's (duplicate fetches <= 1% of requests; every host's sitemap-only section
 * found, i.e. at least one of its pages fetched: nothing links to them).
 */
export function checkTargets(metrics: QualityMetrics): TargetCheck[] {
  const at10 = metrics.mass.find((m) => m.share === 0.1);
  const only = metrics.sitemapOnly;
  return [
    { name: 'trap requests <= 1%', pass: metrics.trapRequests <= 0.01 * metrics.requests },
    { name: 'good pages covered >= 75%', pass: metrics.coverage >= 0.75 },
    { name: 'PageRank mass at 10% >= 60% of ideal', pass: at10 !== undefined && at10.ratio >= 0.6 },
    { name: 'duplicate fetches <= 1%', pass: metrics.duplicates.exact <= 0.01 * metrics.requests },
    { name: 'sitemap-only sections found', pass: only.hosts > 0 && only.hostsFound === only.hosts },
  ];
}
