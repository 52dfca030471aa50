/**
 * The sitemap plan (which files, with which scope and share of the site's budget, down to which
 * index level) and the AOPIC cash of sitemaps (conserved, weighted by priority).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { rootCashSplit, sitemapEntryShares } from '../../../functions/core/sitemap/sitemap-cash.ts';
import {
  directoryOf,
  followSitemap,
  type SitemapFetch,
  sitemapPlan,
} from '../../../functions/core/sitemap/sitemap-plan.ts';
import { readSitemap, type SitemapRead } from '../../../functions/core/sitemap/sitemap-reader.ts';

const settings = { maxSitemapFiles: 10, maxSitemapUrls: 1000, maxSitemapDepth: 2 };
const ORIGIN = 'http://h.example';

function index(urls: string[]): SitemapRead {
  return {
    kind: 'index',
    entries: urls.map((url) => ({ url })),
    stats: { bytes: 0, outOfScope: 0, invalid: 0, tooDeep: 0 },
  };
}

describe('sitemapPlan', () => {
  test('sitemapHosts: host names, lowercased; anything else is refused with the reason', () => {
    const parsed = parseCrawlConfig({
      seeds: ['http://h.example/'],
      sitemapHosts: ['CDN.Example.com', '[::1]'],
    });
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.config.sitemapHosts, ['cdn.example.com', '[::1]']);
    for (const bad of ['https://cdn.example/', 'cdn.example:8080', 'cdn.example/sitemaps']) {
      const refused = parseCrawlConfig({ seeds: ['http://h.example/'], sitemapHosts: [bad] });
      assert.ok(!refused.ok);
      assert.match(
        refused.problems.join(),
        /sitemapHosts\.0: a sitemap host is a host name without scheme, port or path/,
      );
    }
  });

  test('the defaults come from the crawl configuration', () => {
    const parsed = parseCrawlConfig({ seeds: ['http://h.example/'] });
    assert.ok(parsed.ok);
    const { sitemaps, maxSitemapFiles, maxSitemapUrls, maxSitemapDepth, maxSitemapBytes, sitemapShare } =
      parsed.config;
    assert.deepEqual(
      { sitemaps, maxSitemapFiles, maxSitemapUrls, maxSitemapDepth, maxSitemapBytes, sitemapShare },
      {
        sitemaps: true,
        maxSitemapFiles: 100,
        maxSitemapUrls: 100_000,
        maxSitemapDepth: 2,
        maxSitemapBytes: 52_428_800,
        sitemapShare: 0.1,
      },
    );
    assert.deepEqual(sitemapPlan(ORIGIN, [], parsed.config), [
      {
        url: 'http://h.example/sitemap.xml',
        scope: 'http://h.example/',
        granted: false,
        level: 0,
        from: 'default',
        files: 100,
        entries: 100_000,
      },
    ]);
    assert.ok(!parseCrawlConfig({ seeds: ['http://h.example/'], maxSitemapBytes: 1 }).ok);
  });

  test("robots.txt's Sitemap lines: deduplicated, read against the site, http(s) only, sharing the budget", () => {
    const plan = sitemapPlan(
      ORIGIN,
      [
        'http://h.example/a.xml',
        'http://h.example/a.xml',
        '/b.xml.gz',
        'ftp://h.example/c.xml',
        'https://cdn.example/h/sitemap.txt#x',
      ],
      settings,
    );
    assert.deepEqual(
      plan.map((f) => [f.url, f.scope, f.granted, f.from, f.files, f.entries]),
      [
        ['http://h.example/a.xml', 'http://h.example/', true, 'robots', 4, 334],
        ['http://h.example/b.xml.gz', 'http://h.example/', true, 'robots', 3, 333],
        ['https://cdn.example/h/sitemap.txt', 'http://h.example/', true, 'robots', 3, 333],
      ],
    );
    const many = sitemapPlan(
      ORIGIN,
      Array.from({ length: 30 }, (_, i) => `${ORIGIN}/s${i}.xml`),
      settings,
    );
    assert.equal(many.length, 10);
    assert.ok(many.every((f) => f.files === 1));
  });
});

describe('followSitemap', () => {
  const root: SitemapFetch = {
    url: 'http://h.example/sitemap.xml',
    scope: 'http://h.example/',
    granted: false,
    level: 0,
    from: 'default',
    files: 5,
    entries: 100,
  };

  test("a urlset's pages, within the file's share of the entries", () => {
    const read = readSitemap(Array.from({ length: 150 }, (_, i) => `http://h.example/p${i}`).join('\n'), {
      url: root.url,
      scope: root.scope,
    });
    const next = followSitemap(root, read, settings);
    assert.equal(next.pages.length, 100);
    assert.equal(next.dropped, 50);
    assert.deepEqual(next.sitemaps, []);
  });

  test("an index's children: same site only, budget shared, own directory as scope unless granted", () => {
    const next = followSitemap(
      root,
      index([
        'http://h.example/maps/a.xml',
        'http://h.example/maps/a.xml',
        'http://other.example/b.xml',
        'http://h.example/c.xml',
        'http://h.example/sitemap.xml',
        'http://h.example/d.xml',
        'http://h.example/e.xml',
        'http://h.example/f.xml',
      ]),
      settings,
    );
    assert.deepEqual(
      next.sitemaps.map((s) => [s.url, s.scope, s.level, s.files, s.entries]),
      [
        ['http://h.example/maps/a.xml', 'http://h.example/maps/', 1, 1, 25],
        ['http://h.example/c.xml', 'http://h.example/', 1, 1, 25],
        ['http://h.example/d.xml', 'http://h.example/', 1, 1, 25],
        ['http://h.example/e.xml', 'http://h.example/', 1, 1, 25],
      ],
    );
    assert.equal(next.dropped, 4);
    const granted = followSitemap(
      { ...root, granted: true, from: 'robots' },
      index(['http://h.example/maps/a.xml']),
      settings,
    );
    assert.equal(granted.sitemaps[0]?.scope, 'http://h.example/');
    assert.equal(granted.sitemaps[0]?.files, 4);
  });

  test('indexes are followed down to maxSitemapDepth levels', () => {
    const deep = { ...root, level: 2 };
    const next = followSitemap(deep, index(['http://h.example/x.xml']), settings);
    assert.deepEqual(next, { pages: [], sitemaps: [], dropped: 1 });
    assert.equal(
      followSitemap(root, index(['http://h.example/x.xml']), { ...settings, maxSitemapDepth: 0 }).dropped,
      1,
    );
    assert.equal(
      followSitemap({ ...root, level: 1 }, index(['http://h.example/x.xml']), settings).sitemaps.length,
      1,
    );
  });

  test('a sitemap that is not one leads nowhere', () => {
    assert.deepEqual(followSitemap(root, { kind: 'not-a-sitemap', reason: 'x' }, settings), {
      pages: [],
      sitemaps: [],
      dropped: 0,
    });
    assert.equal(directoryOf('http://h.example/a/b/c.xml?x=1'), 'http://h.example/a/b/');
  });
});

describe('sitemap cash', () => {
  test("the root page's cash: the tax, a guessed sitemap worth a share of a link, the rest to its links; conserved", () => {
    const split = rootCashSplit(1, 8, 2, 0.1, 0.5);
    assert.ok(Math.abs(split.toLambda - 0.1) < 1e-12);
    // 8 links and 2 sitemaps of half a link each: 9 parts of 0.1
    assert.ok(Math.abs(split.linkShare - 0.1) < 1e-12);
    assert.ok(Math.abs(split.sitemapShare - 0.05) < 1e-12);
    assert.ok(Math.abs(split.toLambda + 2 * split.sitemapShare + 8 * split.linkShare - 1) < 1e-12);
    assert.deepEqual(rootCashSplit(1, 0, 0, 0.1, 0.2), { linkShare: 0, sitemapShare: 0, toLambda: 1 });
    const onlySitemaps = rootCashSplit(1, 0, 1, 0.1, 0.2);
    assert.ok(Math.abs(onlySitemaps.sitemapShare - 0.9) < 1e-12);
    const noSitemap = rootCashSplit(1, 4, 0, 0.1, 0.2);
    assert.ok(Math.abs(noSitemap.linkShare - 0.225) < 1e-12);
  });

  test("a sitemap's cash goes to its URLs by priority, the default 0.5, never nothing", () => {
    const { shares, toLambda } = sitemapEntryShares(1, [1, undefined, 0, 0.5], 0.1);
    assert.ok(Math.abs(toLambda - 0.1) < 1e-12);
    assert.ok(Math.abs(shares.reduce((a, b) => a + b, 0) - 0.9) < 1e-12);
    assert.ok(Math.abs(shares[0]! / shares[1]! - 2) < 1e-12);
    assert.equal(shares[1], shares[3]);
    assert.ok(shares[2]! > 0 && shares[2]! < shares[1]! / 5);
    assert.deepEqual(sitemapEntryShares(1, [], 0.1), { shares: [], toLambda: 1 });
    assert.deepEqual(sitemapEntryShares(0, [1], 0.1), { shares: [0], toLambda: 0 });
  });
});
