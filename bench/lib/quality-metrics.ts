/**
 * Crawl-quality numbers from the fixture web's server logs (the ground truth, in arrival order):
 * coverage of good pages, PageRank mass gathered after a share of the requests against the ideal
 * order, and the requests wasted on traps, duplicates, redirects and missing pages.
 */
import type { FixtureWeb, TrapKind } from '../../test/fixtures/web/generate-web.ts';
import { TRAP_KINDS } from '../../test/fixtures/web/generate-web.ts';
import type { UrlClass } from '../../test/fixtures/web/resolve-url.ts';

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

/** What a crawl's requests did, by label. */
export interface QualityMetrics {
  requests: number;
  goodPages: number;
  /** Distinct good pages fetched. */
  goodFetched: number;
  /** goodFetched / goodPages. */
  coverage: number;
  mass: MassPoint[];
  trapRequests: number;
  byTrap: Record<TrapKind, number>;
  /** Fetches of content already fetched or fetchable under its good URL. */
  duplicates: {
    alias: number;
    session: number;
    tracking: number;
    /** `?print=1` near-duplicates. */
    nearDuplicate: number;
    /** The same good page fetched again under its own URL. */
    refetch: number;
    total: number;
  };
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
export function qualityMetrics(web: FixtureWeb, requests: readonly { class: UrlClass }[]): QualityMetrics {
  const ideal = [...web.pageRank].sort((a, b) => b - a);
  const idealPrefix = new Float64Array(ideal.length + 1);
  for (let i = 0; i < ideal.length; i++) idealPrefix[i + 1] = idealPrefix[i]! + ideal[i]!;

  const n = requests.length;
  const marks = MASS_SHARES.map((share) => ({ share, requests: Math.max(1, Math.ceil(share * n)) }));
  const mass: MassPoint[] = [];
  const fetched = new Uint8Array(web.pageCount);
  let goodFetched = 0;
  let gathered = 0;
  const byTrap = Object.fromEntries(TRAP_KINDS.map((t) => [t, 0])) as Record<TrapKind, number>;
  const duplicates = { alias: 0, session: 0, tracking: 0, nearDuplicate: 0, refetch: 0, total: 0 };
  const redirects = { moved: 0, 'cross-host': 0, chain: 0, loop: 0, total: 0 };
  let trapRequests = 0;
  let soft404 = 0;
  let notFound = 0;
  let disallowed = 0;
  let robots = 0;
  let mark = 0;
  for (let i = 0; i < n; i++) {
    const cls = requests[i]!.class;
    switch (cls.kind) {
      case 'good':
        if (fetched[cls.page] === 1) {
          duplicates.refetch += 1;
        } else {
          fetched[cls.page] = 1;
          goodFetched += 1;
          gathered += cls.rank;
        }
        break;
      case 'duplicate':
        duplicates[cls.variant] += 1;
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
    }
    while (mark < marks.length && marks[mark]!.requests === i + 1) {
      const { share, requests: k } = marks[mark]!;
      const best = idealPrefix[Math.min(k, web.pageCount)]!;
      mass.push({ share, requests: k, mass: gathered, ideal: best, ratio: best === 0 ? 0 : gathered / best });
      mark++;
    }
  }
  duplicates.total =
    duplicates.alias +
    duplicates.session +
    duplicates.tracking +
    duplicates.nearDuplicate +
    duplicates.refetch;
  return {
    requests: n,
    goodPages: web.pageCount,
    goodFetched,
    coverage: goodFetched / web.pageCount,
    mass,
    trapRequests,
    byTrap,
    duplicates,
    redirects,
    soft404,
    notFound,
    disallowed,
    robots,
  };
}

/** The targets, checked against one crawl's metrics. */
export interface TargetCheck {
  name: string;
  pass: boolean;
}

/** Issue 4's targets: traps <= 1% of requests, >= 75% of good pages, >= 60% of the ideal mass at 10%. */
export function checkTargets(metrics: QualityMetrics): TargetCheck[] {
  const at10 = metrics.mass.find((m) => m.share === 0.1);
  return [
    { name: 'trap requests <= 1%', pass: metrics.trapRequests <= 0.01 * metrics.requests },
    { name: 'good pages covered >= 75%', pass: metrics.coverage >= 0.75 },
    { name: 'PageRank mass at 10% >= 60% of ideal', pass: at10 !== undefined && at10.ratio >= 0.6 },
  ];
}
