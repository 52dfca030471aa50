import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { RateSeries, TopPages } from '../../../functions/embedded/crawl-snapshot.ts';
import { type CrawlSnapshot, EmbeddedCrawler } from '../../../functions/embedded/embedded-crawler.ts';
import { tempDir, testConfig } from '../../e2e/helpers.ts';
import type { SiteServer } from '../../fixtures/site-server.ts';
import { closeAll, robotsTxt, siteRoutes, startSites, statusRoute } from '../../fixtures/sites.ts';

describe('RateSeries', () => {
  test('the rate is pages over the last 10 s of crawl time, however bursty the pages', () => {
    const series = new RateSeries();
    // 8 pages/s, finishing in bursts of 16 every 2 s (what 16 requests in flight look like).
    let pages = 0;
    for (let t = 0; t <= 30_000; t += 250) {
      if (t > 0 && t % 2000 === 0) pages += 16;
      series.sample(t, pages);
      if (t >= 10_000) {
        const rate = series.rate(t, pages);
        assert.ok(Math.abs(rate - 8) <= 8 * 0.2, `at ${t} ms: ${rate}/s for 8/s`);
      }
    }
    assert.equal(series.rate(30_000, pages), 8);
  });

  test('keeps a bounded history at a coarser grain as the crawl runs', () => {
    const series = new RateSeries();
    for (let t = 0; t <= 3_600_000; t += 100) series.sample(t, t / 100);
    const points = series.points();
    assert.ok(points.length < 512 && points.length > 100, `${points.length} points`);
    assert.equal(points[0]?.elapsedMs, 0);
    assert.ok(points.at(-1)!.elapsedMs > 3_500_000);
    for (const p of points.slice(1)) assert.equal(p.pagesPerSecond, 10);
  });
});

describe('TopPages', () => {
  test('keeps the most important pages, highest first, as copies', () => {
    const top = new TopPages(3);
    for (const [url, importance] of [
      ['a', 0.1],
      ['b', 0.5],
      ['c', 0.3],
      ['d', 0.05],
      ['e', 0.4],
    ] as const) {
      top.offer({ url, importance, cash: 0 });
    }
    const list = top.list(10);
    assert.deepEqual(
      list.map((p) => p.url),
      ['b', 'e', 'c'],
    );
    list[0]!.url = 'changed';
    assert.equal(top.list(1)[0]?.url, 'b');
  });
});

describe('EmbeddedCrawler.snapshot', () => {
  const sites: SiteServer[] = [];
  after(() => closeAll(sites));

  test('a running crawl shows its hosts, statuses, reasons, traps, top pages, cache and memory', async () => {
    const [a, b] = await startSites(['127.0.0.61', '127.0.0.62'], (origins) => [
      siteRoutes({
        '/robots.txt': robotsTxt('User-agent: *\nCrawl-delay: 0.01\nDisallow: /private\n'),
        '/': { title: 'home', links: ['/one', '/two', '/private/x', `${origins[1]}/`] },
        '/one': { title: 'one', links: ['/', '/two'] },
        '/two': { title: 'two', links: ['/missing', '/moved'] },
        '/moved': statusRoute(301, { location: '/one' }),
      }),
      siteRoutes({ '/': { title: 'b', links: ['/fail'] }, '/fail': statusRoute(500) }),
    ]);
    sites.push(a!, b!);
    const snapshots: CrawlSnapshot[] = [];
    const crawler = new EmbeddedCrawler({
      config: testConfig({ seeds: [`${a!.origin}/`], scope: 'any', maxRetries: 1 }),
      outDir: tempDir(),
      onPage: () => {
        const s = crawler.snapshot();
        if (s !== undefined) snapshots.push(s);
        return undefined;
      },
    });
    assert.equal(crawler.snapshot(), undefined, 'nothing before run');
    const summary = await crawler.run();
    assert.ok(snapshots.length >= 4);
    const during = snapshots[1]!;
    assert.equal(during.state, 'running');
    assert.ok(during.running >= 1, 'the step calling back is in flight');
    assert.ok(during.memory.rssBytes > 0 && during.memory.heapUsedBytes > 0);

    const end = crawler.snapshot()!;
    assert.equal(end.pages, summary.pages);
    assert.equal(end.skipped, summary.skipped);
    assert.deepEqual(end.byStatus, summary.byStatus);
    assert.equal(end.byReason.robots, 1, 'the disallowed URL');
    assert.equal(end.byStatus['500'], 1);
    assert.equal(end.errors, 2, 'the 500 and its retry');
    assert.ok(end.urlSeen.lookups > 0 && end.urlSeen.hitRate >= 0 && end.urlSeen.hitRate <= 1);
    assert.ok(end.rate.length >= 1);
    const hostA = end.hostTable.find((h) => h.host === '127.0.0.61');
    const hostB = end.hostTable.find((h) => h.host === '127.0.0.62');
    assert.equal(hostA?.crawlDelayMs, 10);
    assert.equal(hostA?.robots?.status, 'rules');
    assert.equal(hostA?.robots?.origin, a!.origin);
    assert.ok((hostA?.lastResponseMs ?? -1) >= 0);
    assert.equal(hostA?.errors, 0);
    assert.equal(hostB?.errors, 2);
    assert.equal(hostB?.lastError, 'http-500');
    assert.equal(hostB?.robots?.status, 'allow-all');
    assert.equal(end.topPages[0]?.url, `${a!.origin}/`, 'the seed holds the most cash');
    assert.equal(end.byStatus['404'], 1);
    assert.equal(end.byStatus['301'], 1);
    const listed = end.topPages.map((p) => new URL(p.url).pathname);
    for (const path of ['/missing', '/moved', '/fail'])
      assert.ok(!listed.includes(path), `${path} (not a 2xx) is not listed: ${listed.join(' ')}`);
    for (let i = 1; i < end.topPages.length; i++) {
      assert.ok(end.topPages[i - 1]!.importance >= end.topPages[i]!.importance);
    }
    assert.deepEqual(crawler.snapshot({ hosts: 0, topPages: 0, traps: false })?.hostTable, []);
    end.byStatus['200'] = -1;
    assert.notEqual(crawler.snapshot()?.byStatus['200'], -1, 'a copy');
  });

  test('says which host it waits for, and why, while a retry backs off', async () => {
    let failures = 0;
    const [site] = await startSites(['127.0.0.63'], () => [
      siteRoutes({
        '/': (_req, res) => {
          failures += 1;
          if (failures === 1) {
            res.writeHead(503, { 'retry-after': '2' });
            res.end('busy');
            return;
          }
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<title>ok</title>');
        },
      }),
    ]);
    sites.push(site!);
    const crawler = new EmbeddedCrawler({
      config: testConfig({ seeds: [`${site!.origin}/`], maxRetries: 2 }),
      outDir: tempDir(),
    });
    const running = crawler.run();
    let waiting: CrawlSnapshot['waitingFor'];
    const deadline = Date.now() + 10_000;
    while (waiting === undefined && Date.now() < deadline) {
      waiting = crawler.snapshot()?.waitingFor;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const summary = await running;
    assert.equal(waiting?.host, '127.0.0.63');
    assert.match(waiting?.reason ?? '', /retry 1 of 2 after http-503/);
    assert.ok(waiting!.until > Date.now() - 5000);
    assert.equal(summary.pages, 1);
    assert.equal(summary.failedRequests, 1);
  });
});
