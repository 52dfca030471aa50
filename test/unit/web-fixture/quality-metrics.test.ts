/**
 * The bench's arithmetic (bench/lib/quality-metrics.ts) on a hand-made request log: coverage,
 * PageRank mass against the ideal order, and the waste counters.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkTargets, qualityMetrics } from '../../../bench/lib/quality-metrics.ts';
import { generateWeb } from '../../fixtures/web/generate-web.ts';
import type { UrlClass } from '../../fixtures/web/resolve-url.ts';

const web = generateWeb({ seed: 2, hosts: 3, goodPages: 40 });
const byRank = [...web.pageRank.keys()].sort((a, b) => web.pageRank[b]! - web.pageRank[a]!);
const good = (page: number): { class: UrlClass } => ({
  class: { kind: 'good', page, rank: web.pageRank[page]! },
});
const rank = (pages: number[]) => pages.reduce((sum, p) => sum + web.pageRank[p]!, 0);

describe('qualityMetrics', () => {
  test('the ideal order scores 100% at every mark', () => {
    const metrics = qualityMetrics(web, byRank.slice(0, 20).map(good));
    assert.deepEqual(
      metrics.mass.map((m) => m.requests),
      [2, 5, 10, 20],
    );
    for (const m of metrics.mass) assert.ok(Math.abs(m.ratio - 1) < 1e-12, `${m.share}: ${m.ratio}`);
    assert.equal(metrics.goodFetched, 20);
    assert.equal(metrics.coverage, 0.5);
  });

  test('wasted requests are counted by kind and do not add mass', () => {
    const [a, b, c] = [byRank[0]!, byRank[5]!, byRank[30]!];
    const log: { class: UrlClass }[] = [
      { class: { kind: 'robots' } },
      good(c),
      { class: { kind: 'trap', trap: 'calendar' } },
      { class: { kind: 'trap', trap: 'facets' } },
      { class: { kind: 'duplicate', of: a, variant: 'alias' } },
      { class: { kind: 'duplicate', of: a, variant: 'tracking' } },
      { class: { kind: 'near-duplicate', of: a, variant: 'print' } },
      good(c),
      { class: { kind: 'redirect', variant: 'moved', to: a } },
      good(a),
      { class: { kind: 'soft-404' } },
      { class: { kind: 'not-found' } },
      { class: { kind: 'disallowed' } },
      { class: { kind: 'redirect', variant: 'loop' } },
      { class: { kind: 'duplicate', of: b, variant: 'session' } },
      good(b),
      { class: { kind: 'trap', trap: 'calendar' } },
      { class: { kind: 'trap', trap: 'deep-chain' } },
      { class: { kind: 'robots' } },
      { class: { kind: 'trap', trap: 'long-url' } },
    ];
    const m = qualityMetrics(web, log);
    assert.equal(m.requests, 20);
    assert.equal(m.goodFetched, 3);
    // a page counts when its content first arrives, under any exact-duplicate spelling (a's alias)
    assert.deepEqual(
      m.mass.map((p) => [p.requests, p.mass]),
      [
        [2, rank([c])],
        [5, rank([c, a])],
        [10, rank([c, a])],
        [20, rank([c, a, b])],
      ],
    );
    assert.equal(m.mass[1]!.ideal, rank(byRank.slice(0, 5)));
    // the first 10% (2 requests): robots.txt and a good page
    assert.deepEqual(m.early, { robots: 1, good: 1 });
    assert.equal(m.trapRequests, 5);
    assert.deepEqual(m.byTrap, {
      calendar: 2,
      facets: 1,
      'endless-list': 0,
      'repeated-segments': 0,
      'long-url': 1,
      'deep-chain': 1,
    });
    // later fetches of content already held, by the spelling of the later fetch
    assert.deepEqual(m.duplicates, {
      alias: 0,
      session: 0,
      tracking: 1,
      'index-file': 0,
      'no-slash': 0,
      case: 0,
      param: 0,
      prefix: 0,
      'own-url': 2,
      refetch: 1,
      exact: 4,
      nearDuplicate: 1,
      total: 5,
    });
    assert.deepEqual(m.redirects, { moved: 1, 'cross-host': 0, chain: 0, loop: 1, total: 2 });
    assert.equal(m.soft404, 1);
    assert.equal(m.notFound, 1);
    assert.equal(m.disallowed, 1);
    assert.equal(m.robots, 2);
    assert.deepEqual(
      checkTargets(m).map((t) => t.pass),
      [false, false, false, false, false],
    );
  });

  test('the first 10% by host: requests, the mass each added, first request and pace', () => {
    const [a, b, c] = [byRank[0]!, byRank[1]!, byRank[2]!];
    const at = (host: number, start: number, page?: number) => ({
      host,
      start,
      class: page === undefined ? ({ kind: 'robots' } as UrlClass) : good(page).class,
    });
    // 30 requests: the first 10% is the first 3; host 1's second request and host 2 come later
    const log = [
      at(0, 0),
      at(0, 10, a),
      at(1, 15, b),
      at(0, 20, a),
      at(1, 30, c),
      ...Array.from({ length: 24 }, (_, i) => at(2, 40 + i, byRank[10 + i]!)),
      at(3, 100),
    ];
    const m = qualityMetrics(web, log);
    assert.equal(m.mass[0]!.requests, 3);
    assert.deepEqual(m.earlyHosts, [
      { host: 0, requests: 2, mass: rank([a]), first: 0, perSecond: 100 },
      { host: 1, requests: 1, mass: rank([b]), first: 2 },
    ]);
    // a log without hosts (the older form) has no breakdown
    assert.deepEqual(qualityMetrics(web, [good(a)]).earlyHosts, []);
  });

  test('sitemap files and sitemap-only pages: requests counted, sections found per host', () => {
    const hosts = web.hosts.filter((h) => h.sitemapOnly.length > 0);
    assert.ok(hosts.length >= 1);
    const total = hosts.reduce((sum, h) => sum + h.sitemapOnly.length, 0);
    const first = hosts[0]!.index;
    const log: { class: UrlClass }[] = [
      { class: { kind: 'sitemap', served: true } },
      { class: { kind: 'sitemap', served: false } },
      { class: { kind: 'sitemap-only', host: first, index: 0 } },
      { class: { kind: 'sitemap-only', host: first, index: 0 } },
      { class: { kind: 'sitemap-only', host: first, index: 1 } },
      ...Array.from({ length: 495 }, (_, i) => good(i % web.pageCount)),
    ];
    const m = qualityMetrics(web, log);
    assert.deepEqual(m.sitemaps, { requests: 2, served: 1 });
    assert.deepEqual(m.sitemapOnly, { found: 2, total, hostsFound: 1, hosts: hosts.length });
    assert.equal(checkTargets(m)[4]!.pass, hosts.length === 1);
  });
});
