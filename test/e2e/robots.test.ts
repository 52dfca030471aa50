/**
 * robots.txt in real crawls (docs/robots.md): fetched first on every host, rules applied, failures
 * retried and given up, Crawl-delay honoured, redirects and agent groups — all checked against the
 * servers' request logs.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { redirect, slowHeaders } from '../fixtures/hostile-routes.ts';
import { closeAll, robotsTxt, siteRoutes, startSites, statusRoute } from '../fixtures/sites.ts';
import { crawl, gaps, pagePaths, readJsonl, readWarc } from './helpers.ts';

describe('robots.txt', () => {
  test('is the first request to every host, and disallowed paths are never requested', async () => {
    const sites = await startSites(['127.0.0.2', '127.0.0.3', '127.0.0.4'], (o) => [
      siteRoutes({
        '/robots.txt': robotsTxt('User-agent: *\nDisallow: /private\n'),
        '/': { links: ['/public', '/private/x', '/private', '/privateer', `${o[1]}/`, `${o[2]}/`] },
        '/public': { title: 'public' },
      }),
      siteRoutes({
        '/robots.txt': robotsTxt('User-agent: *\nDisallow: /*.pdf$\n'),
        '/': { links: ['/doc.pdf', '/doc.pdf?x=1', '/b'] },
        '/b': { title: 'b' },
        '/doc.pdf?x=1': { title: 'not a pdf after all' },
      }),
      siteRoutes({ '/': { title: 'no robots.txt here (404)', links: ['/c'] }, '/c': { title: 'c' } }),
    ]);
    try {
      const [a, b, c] = sites.map((s) => s.origin) as [string, string, string];
      const run = await crawl({ seeds: [`${a}/`], scope: 'any', follow: ['page', 'document'] });
      for (const site of sites) {
        assert.equal(site.paths()[0], '/robots.txt', `${site.origin}: robots.txt first`);
        assert.equal(site.paths().filter((p) => p === '/robots.txt').length, 1, 'fetched once per host');
      }
      assert.deepEqual(pagePaths(sites[0]!).sort(), ['/', '/public']);
      assert.deepEqual(pagePaths(sites[1]!).sort(), ['/', '/b', '/doc.pdf?x=1']);
      assert.deepEqual(pagePaths(sites[2]!).sort(), ['/', '/c']);
      for (const url of [`${a}/private/x`, `${a}/private`, `${a}/privateer`, `${b}/doc.pdf`]) {
        const page = run.page(url);
        assert.equal(page.reason, 'robots', url);
        assert.equal(page.status, null);
        assert.equal(page.fetchedAt, null);
        assert.equal(page.warc, undefined);
      }
      assert.equal(run.page(`${c}/c`).status, 200, 'a 404 robots.txt allows everything');
      assert.equal(run.summary.byReason.robots, 4);
      assert.equal(run.summary.requests, 3 + 7, 'three robots.txt and seven pages');
    } finally {
      await closeAll(sites);
    }
  });

  test('a group for our product token replaces the * group', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/robots.txt': robotsTxt(
          'User-agent: *\nDisallow: /\n\nUser-agent: otherbot\nAllow: /\n\nUser-agent: CrawlStack/2.0\nDisallow: /secret\nAllow: /secret/open\n',
        ),
        '/': { links: ['/a', '/secret', '/secret/open', '/secret/closed'] },
        '/a': {},
        '/secret/open': {},
      }),
    ]);
    try {
      const run = await crawl({ seeds: [`${site!.origin}/`] });
      assert.deepEqual(pagePaths(site!).sort(), ['/', '/a', '/secret/open']);
      assert.equal(run.page(`${site!.origin}/secret`).reason, 'robots');
      assert.equal(run.page(`${site!.origin}/secret/closed`).reason, 'robots');
      // the same site seen by an agent the file does not name: the * group forbids everything
      const other = await crawl({ seeds: [`${site!.origin}/`], robotsAgent: 'somebot' });
      assert.equal(other.page(`${site!.origin}/`).reason, 'robots');
      assert.equal(other.summary.pages, 0);
    } finally {
      await closeAll([site!]);
    }
  });

  for (const status of [500, 503]) {
    test(`a ${status} robots.txt blocks the host: retried after robotsErrorTtlMs, then robots-unreachable`, async () => {
      const sites = await startSites(['127.0.0.2', '127.0.0.3'], (o) => [
        siteRoutes({ '/robots.txt': statusRoute(status), '/': { links: ['/x'] }, '/x': {} }),
        siteRoutes({ '/': { links: ['/y', `${o[0]}/z`] }, '/y': {} }),
      ]);
      try {
        const [down, up] = sites as [(typeof sites)[0], (typeof sites)[0]];
        const run = await crawl({
          seeds: [`${down.origin}/`, `${down.origin}/other`, `${up.origin}/`],
          scope: 'any',
          maxRetries: 2,
          robotsErrorTtlMs: 80,
        });
        // nothing but robots.txt, once per attempt, spaced by the error TTL
        assert.deepEqual(down.paths(), ['/robots.txt', '/robots.txt', '/robots.txt']);
        for (const { gap } of gaps(down)) assert.ok(gap >= 75, `robots.txt retried after ${gap} ms`);
        for (const url of [`${down.origin}/`, `${down.origin}/other`, `${down.origin}/z`]) {
          const page = run.page(url);
          assert.equal(page.reason, 'robots-unreachable', url);
          assert.equal(page.status, null);
        }
        assert.match(run.page(`${down.origin}/`).detail ?? '', new RegExp(`robots.txt: ${status}`));
        // the other host is crawled as usual
        assert.deepEqual(up.paths(), ['/robots.txt', '/', '/y']);
        assert.equal(run.summary.state, 'done');
      } finally {
        await closeAll(sites);
      }
    });
  }

  test('an unreachable robots.txt gives up even when the host gap outlasts robotsErrorTtlMs', async () => {
    // Regression: each step found the entry expired again and refetched robots.txt forever.
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/robots.txt': statusRoute(500), '/': {} }),
    ]);
    try {
      const run = await crawl({
        seeds: [`${site!.origin}/`],
        delayMs: 120,
        robotsErrorTtlMs: 30,
        maxRetries: 1,
      });
      assert.deepEqual(site!.paths(), ['/robots.txt', '/robots.txt']);
      assert.equal(run.page(`${site!.origin}/`).reason, 'robots-unreachable');
      for (const { gap } of gaps(site!)) assert.ok(gap >= 115, `gap ${gap} ms`);
    } finally {
      await closeAll([site!]);
    }
  });

  test('a robots.txt that times out blocks the host until it gives up', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/robots.txt': slowHeaders(), '/': {} }),
    ]);
    try {
      const started = performance.now();
      const run = await crawl({
        seeds: [`${site!.origin}/`],
        totalTimeoutMs: 250,
        maxRetries: 1,
        robotsErrorTtlMs: 50,
      });
      assert.deepEqual(site!.paths(), ['/robots.txt', '/robots.txt']);
      const page = run.page(`${site!.origin}/`);
      assert.equal(page.reason, 'robots-unreachable');
      assert.match(page.detail ?? '', /timeout/);
      assert.ok(performance.now() - started < 3000, 'bounded by the timeouts');
    } finally {
      await closeAll([site!]);
    }
  });

  test('Crawl-delay spaces every request to the host, robots.txt included', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/robots.txt': robotsTxt('User-agent: *\nCrawl-delay: 0.15\nDisallow: /no\n'),
        '/': { links: ['/a', '/b', '/no'] },
        '/a': {},
        '/b': {},
      }),
    ]);
    try {
      const run = await crawl({ seeds: [`${site!.origin}/`] });
      assert.deepEqual(site!.paths(), ['/robots.txt', '/', '/a', '/b']);
      const measured = gaps(site!);
      assert.equal(measured.length, 3);
      for (const { gap, next } of measured)
        assert.ok(gap >= 147, `${next.path} came ${gap.toFixed(1)} ms after the last`);
      assert.equal(
        run.page(`${site!.origin}/no`).reason,
        'robots',
        'robots-skipped URLs cost no request or delay',
      );
    } finally {
      await closeAll([site!]);
    }
  });

  test('a Crawl-delay above maxCrawlDelayMs is capped', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/robots.txt': robotsTxt('User-agent: *\nCrawl-delay: 3600\n'),
        '/': { links: ['/a'] },
        '/a': {},
      }),
    ]);
    try {
      const started = performance.now();
      await crawl({ seeds: [`${site!.origin}/`], maxCrawlDelayMs: 60 });
      assert.deepEqual(site!.paths(), ['/robots.txt', '/', '/a']);
      for (const { gap } of gaps(site!)) assert.ok(gap >= 58, `gap ${gap}`);
      assert.ok(performance.now() - started < 2000);
    } finally {
      await closeAll([site!]);
    }
  });

  test('redirected robots.txt: the rules found at the end apply to the origin first asked', async () => {
    const sites = await startSites(['127.0.0.2', '127.0.0.3', '127.0.0.4'], (o) => [
      // host A: robots.txt moved to another host
      siteRoutes({
        '/robots.txt': redirect(`${o[1]}/shared-rules.txt`, 301),
        '/': { links: ['/open', '/blocked-on-a'] },
        '/open': {},
      }),
      siteRoutes({ '/shared-rules.txt': robotsTxt('User-agent: *\nDisallow: /blocked-on-a\n') }),
      // host C: robots.txt moved to another path of the same host, in two hops
      siteRoutes({
        '/robots.txt': redirect('/moved', 302),
        '/moved': redirect('/robots/real.txt', 307),
        '/robots/real.txt': robotsTxt('User-agent: crawlstack\nDisallow: /c-blocked\n'),
        '/': { links: ['/c-open', '/c-blocked'] },
        '/c-open': {},
      }),
    ]);
    try {
      const [a, b, c] = sites as [(typeof sites)[0], (typeof sites)[0], (typeof sites)[0]];
      const run = await crawl({ seeds: [`${a.origin}/`, `${c.origin}/`], scope: 'host' });
      assert.deepEqual(a.paths(), ['/robots.txt', '/', '/open']);
      assert.deepEqual(b.paths(), ['/shared-rules.txt'], 'the target host only served the file');
      assert.deepEqual(c.paths(), ['/robots.txt', '/moved', '/robots/real.txt', '/', '/c-open']);
      assert.equal(run.page(`${a.origin}/blocked-on-a`).reason, 'robots');
      assert.equal(run.page(`${c.origin}/c-blocked`).reason, 'robots');
    } finally {
      await closeAll(sites);
    }
  });

  test('more than five robots.txt redirects count as unavailable: everything allowed', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/robots.txt': redirect('/r1'),
        '/r1': redirect('/r2'),
        '/r2': redirect('/r3'),
        '/r3': redirect('/r4'),
        '/r4': redirect('/r5'),
        '/r5': redirect('/r6'),
        '/r6': robotsTxt('User-agent: *\nDisallow: /\n'),
        '/': {},
      }),
    ]);
    try {
      const run = await crawl({ seeds: [`${site!.origin}/`] });
      assert.deepEqual(site!.paths(), ['/robots.txt', '/r1', '/r2', '/r3', '/r4', '/r5', '/']);
      assert.equal(run.page(`${site!.origin}/`).status, 200);
    } finally {
      await closeAll([site!]);
    }
  });

  test('each robots.txt response is archived in the WARC, and the sitemaps it names are listed', async () => {
    const robots =
      'User-agent: *\nDisallow: /x\nSitemap: /sitemap.xml\nSitemap: https://cdn.example/s2.xml.gz\n';
    const sites = await startSites(['127.0.0.2', '127.0.0.3'], (o) => [
      siteRoutes({ '/robots.txt': robotsTxt(robots), '/': { title: 'a', links: [`${o[1]}/`] } }),
      siteRoutes({ '/robots.txt': robotsTxt('User-agent: *\nAllow: /\n'), '/': { title: 'b' } }),
    ]);
    try {
      const [a, b] = sites.map((s) => s.origin) as [string, string];
      const run = await crawl({ seeds: [`${a}/`], scope: 'any' });
      const entries = await readWarc(run.outDir);
      const archived = entries.filter((e) => e.type === 'response' && e.uri?.endsWith('/robots.txt'));
      assert.deepEqual(archived.map((e) => e.uri).sort(), [`${a}/robots.txt`, `${b}/robots.txt`]);
      assert.equal(
        Buffer.from(archived.find((e) => e.uri === `${a}/robots.txt`)!.payload).toString(),
        robots,
      );
      assert.equal(entries.filter((e) => e.type === 'request' && e.uri?.endsWith('/robots.txt')).length, 2);
      assert.deepEqual(
        readJsonl<{ robotsUrl: string; sitemaps: string[] }>(join(run.outDir, 'sitemaps.jsonl')).map((l) => [
          l.robotsUrl,
          l.sitemaps,
        ]),
        [[`${a}/robots.txt`, [`${a}/sitemap.xml`, 'https://cdn.example/s2.xml.gz']]],
      );
    } finally {
      await closeAll(sites);
    }
  });
});
