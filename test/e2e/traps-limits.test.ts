/**
 * Traps and limits in real crawls: repeated path segments, endless chains cut by depth, per-host
 * budgets, max-pages, URL length, include/exclude patterns and scope across several hosts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { closeAll, endlessChain, pageHtml, siteRoutes, startSites } from '../fixtures/sites.ts';
import { crawl, pagePaths, tempDir } from './helpers.ts';

describe('traps and limits', () => {
  test('a path that repeats its segments (/a/a/a/) is cut at maxSegmentRepeats', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/': { links: ['a/'] } }, (path, _req, res) => {
        // every /a/.../a/ page links one level deeper, relatively: the classic calendar trap
        if (!/^(\/a)+\/$/.test(path)) return false;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(pageHtml({ title: path, links: ['a/', 'b/'] }));
        return true;
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], maxSegmentRepeats: 2 });
      assert.deepEqual(pagePaths(site!), ['/', '/a/', '/a/a/', '/a/b/', '/a/a/b/']);
      assert.equal(run.linksOf(`${o}/a/a/`).get(`${o}/a/a/a/`)?.skipped, 'repeated-segments');
      assert.equal(run.summary.state, 'done');
    } finally {
      await closeAll([site!]);
    }
  });

  test('an endless chain of unique URLs stops at maxDepth', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/': { links: ['/chain/1'] } }, (path, req, res) => {
        if (!path.startsWith('/chain/')) return false;
        endlessChain()(req, res);
        return true;
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], maxDepth: 5 });
      assert.deepEqual(pagePaths(site!), ['/', '/chain/1', '/chain/2', '/chain/3', '/chain/4', '/chain/5']);
      assert.deepEqual(
        run.pages.map((p) => p.depth),
        [0, 1, 2, 3, 4, 5],
      );
      assert.deepEqual(run.linksOf(`${o}/chain/5`).get(`${o}/chain/6`), {
        url: `${o}/chain/6`,
        kind: 'page',
        skipped: 'max-depth',
      });
    } finally {
      await closeAll([site!]);
    }
  });

  test('maxPagesPerHost: each host stops at its budget, the rest are recorded without a request', async () => {
    const tenPages = (name: string, other?: string) => {
      const links = Array.from({ length: 9 }, (_, i) => `/p${i}`);
      if (other) links.push(`${other}/`);
      const table: Record<string, { title: string; links?: string[] }> = {
        '/': { title: `${name} home`, links },
      };
      for (let i = 0; i < 9; i++) table[`/p${i}`] = { title: `${name} ${i}` };
      return siteRoutes(table);
    };
    const sites = await startSites(['127.0.0.2', '127.0.0.3'], (o) => [tenPages('a', o[1]), tenPages('b')]);
    try {
      const run = await crawl({ seeds: [`${sites[0]!.origin}/`], scope: 'any', maxPagesPerHost: 3 });
      for (const site of sites) {
        assert.equal(pagePaths(site).length, 3, `${site.origin} asked for ${pagePaths(site).length} pages`);
        const budget = run.pages.filter((p) => p.url.startsWith(site.origin) && p.reason === 'host-budget');
        assert.equal(budget.length, 7);
        for (const page of budget) assert.equal(page.fetchedAt, null);
      }
      assert.equal(run.summary.pages, 6);
      assert.equal(run.summary.byReason['host-budget'], 14);
    } finally {
      await closeAll(sites);
    }
  });

  test('the per-host budget holds across a restart', async () => {
    const table: Record<string, { title: string; links?: string[] }> = {
      '/': { title: 'home', links: Array.from({ length: 9 }, (_, i) => `/p${i}`) },
    };
    for (let i = 0; i < 9; i++) table[`/p${i}`] = { title: `p${i}` };
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes(table)]);
    try {
      const outDir = tempDir();
      const seeds = [`${site!.origin}/`];
      const first = await crawl({ seeds, maxPages: 2, maxPagesPerHost: 4 }, { outDir });
      assert.equal(first.summary.state, 'max-pages');
      const second = await crawl({ seeds, maxPagesPerHost: 4 }, { outDir });
      assert.equal(second.summary.state, 'done');
      assert.deepEqual(pagePaths(site!), ['/', '/p0', '/p1', '/p2']);
      assert.equal(second.summary.pages, 4);
      assert.equal(second.summary.byReason['host-budget'], 6);
      assert.equal(second.pages.length, 10, 'every URL recorded once over both runs');
    } finally {
      await closeAll([site!]);
    }
  });

  test('maxPages stops after exactly that many responses, across hosts and in parallel', async () => {
    const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
    const sites = await startSites(addresses, (o) =>
      o.map((_origin, h) => {
        const table: Record<string, { title: string; links: string[] }> = {};
        for (let i = 0; i < 10; i++) {
          table[`/p${i}`] = { title: `${h}-${i}`, links: [`/p${i + 1}`, ...o.map((x) => `${x}/p${i + 2}`)] };
        }
        table['/'] = { title: `${h}`, links: ['/p0'] };
        return siteRoutes(table);
      }),
    );
    try {
      const run = await crawl({
        seeds: sites.map((s) => `${s.origin}/`),
        scope: 'any',
        maxPages: 7,
        concurrency: 8,
      });
      assert.equal(run.summary.state, 'max-pages');
      assert.equal(run.summary.pages, 7);
      assert.equal(run.pages.filter((p) => p.status !== null).length, 7);
      const requested = sites.reduce((n, s) => n + pagePaths(s).length, 0);
      assert.equal(requested, 7, 'the servers saw exactly seven page requests');
      assert.ok(run.summary.queued > 0, 'work was left in the frontier');
    } finally {
      await closeAll(sites);
    }
  });

  test('links longer than maxUrlLength are neither fetched nor recorded, only counted', async () => {
    const long = `/${'x'.repeat(120)}`;
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/': { links: [long, '/short'] }, '/short': {}, [long]: {} }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], maxUrlLength: 100 });
      assert.deepEqual(pagePaths(site!), ['/', '/short']);
      // Not kept: a long <base href> could otherwise make every link on a page 100 KB long.
      assert.equal(run.linksOf(`${o}/`).has(`${o}${long}`), false);
      assert.deepEqual(run.page(`${o}/`).dropped, { longUrls: 1 });
    } finally {
      await closeAll([site!]);
    }
  });

  test('include and exclude patterns decide which links are followed', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': { links: ['/docs/a', '/docs/b?print=1', '/docs/private/c', '/blog/x'] },
        '/docs/a': { links: ['/docs/a2', '/blog/y'] },
        '/docs/a2': {},
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({
        seeds: [`${o}/`],
        include: ['/docs/'],
        exclude: ['[?&]print=1', '/private/'],
      });
      assert.deepEqual(
        pagePaths(site!),
        ['/', '/docs/a', '/docs/a2'],
        'the seed is fetched though it does not match',
      );
      const home = run.linksOf(`${o}/`);
      assert.equal(home.get(`${o}/docs/b?print=1`)?.skipped, 'exclude');
      assert.equal(home.get(`${o}/docs/private/c`)?.skipped, 'exclude');
      assert.equal(home.get(`${o}/blog/x`)?.skipped, 'include');
      assert.equal(home.get(`${o}/docs/a`)?.skipped, undefined);
    } finally {
      await closeAll([site!]);
    }
  });

  for (const scope of ['host', 'domain', 'any'] as const) {
    test(`scope ${scope} with links to two other hosts`, async () => {
      const sites = await startSites(['127.0.0.2', '127.0.0.3', '127.0.0.4'], (o) => [
        siteRoutes({ '/': { title: 'seed', links: ['/a', `${o[1]}/`, `${o[2]}/x`] }, '/a': { title: 'a' } }),
        siteRoutes({ '/': { title: 'second', links: ['/b'] }, '/b': { title: 'b' } }),
        siteRoutes({ '/x': { title: 'third' } }),
      ]);
      try {
        const [seed, second, third] = sites.map((s) => s.origin) as [string, string, string];
        const run = await crawl({ seeds: [`${seed}/`], scope });
        assert.deepEqual(pagePaths(sites[0]!), ['/', '/a']);
        if (scope === 'any') {
          assert.deepEqual(pagePaths(sites[1]!), ['/', '/b']);
          assert.deepEqual(pagePaths(sites[2]!), ['/x']);
          assert.equal(run.summary.hosts, 3);
        } else {
          // an IP address is its own registrable domain, so 'domain' acts like 'host' here
          assert.deepEqual(sites[1]!.paths(), [], 'not even robots.txt');
          assert.deepEqual(sites[2]!.paths(), []);
          assert.equal(run.linksOf(`${seed}/`).get(`${second}/`)?.skipped, 'scope');
          assert.equal(run.linksOf(`${seed}/`).get(`${third}/x`)?.skipped, 'scope');
        }
      } finally {
        await closeAll(sites);
      }
    });
  }
});
