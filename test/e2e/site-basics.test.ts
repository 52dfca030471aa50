/**
 * A small site crawled end to end: every reachable page once, breadth-first depths, titles, the
 * link graph, the summary's counts and WARC records that match pages.jsonl.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { binary, PNG_BYTES } from '../fixtures/hostile-routes.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { assertUnique, assertWarcMatchesPages, type CrawlRun, crawl, pagePaths } from './helpers.ts';

describe('a small site', () => {
  let site: SiteServer;
  let run: CrawlRun;
  let o: string;

  before(async () => {
    site = (
      await startSites(['127.0.0.2'], () => [
        siteRoutes({
          '/': {
            title: 'Home',
            // relative, absolute-path, fragment, tracking parameter and repeated spellings of one page
            links: ['/a', 'b', '/c#top', '/a?utm_source=news', '/a#again', '/logo.png', '/missing'],
          },
          '/a': { title: 'Page A', links: ['/a/1', '/a/2', '/', '/b'] },
          '/b': { title: 'Page B', links: ['/b/1', '/a'] },
          '/c': { title: 'Page C', links: ['/c/deep'] },
          '/a/1': { title: 'A one' },
          '/a/2': { title: 'A two', links: ['../c'] },
          '/b/1': { title: 'B one' },
          '/c/deep': { title: 'Deep', links: ['/c/deep/er'] },
          '/c/deep/er': { title: 'Deeper' },
          '/logo.png': binary(PNG_BYTES, 'image/png'),
        }),
      ])
    )[0]!;
    o = site.origin;
    run = await crawl({ seeds: [`${o}/`], scope: 'host', order: 'bfs' });
  });
  after(() => closeAll([site]));

  const expected = () =>
    new Map<string, { depth: number; title: string | null; status: number }>([
      [`${o}/`, { depth: 0, title: 'Home', status: 200 }],
      [`${o}/a`, { depth: 1, title: 'Page A', status: 200 }],
      [`${o}/b`, { depth: 1, title: 'Page B', status: 200 }],
      [`${o}/c`, { depth: 1, title: 'Page C', status: 200 }],
      // error pages are archived but not parsed
      [`${o}/missing`, { depth: 1, title: null, status: 404 }],
      [`${o}/a/1`, { depth: 2, title: 'A one', status: 200 }],
      [`${o}/a/2`, { depth: 2, title: 'A two', status: 200 }],
      [`${o}/b/1`, { depth: 2, title: 'B one', status: 200 }],
      [`${o}/c/deep`, { depth: 2, title: 'Deep', status: 200 }],
      [`${o}/c/deep/er`, { depth: 3, title: 'Deeper', status: 200 }],
    ]);

  test('every reachable page is in pages.jsonl exactly once, with its depth, title and status', () => {
    const urls = assertUnique(
      run.pages.map((p) => p.url),
      'pages.jsonl URLs',
    );
    assert.deepEqual([...urls].sort(), [...expected().keys()].sort());
    for (const [url, want] of expected()) {
      const page = run.page(url);
      assert.equal(page.depth, want.depth, `${url} depth`);
      assert.equal(page.title, want.title, `${url} title`);
      assert.equal(page.status, want.status, `${url} status`);
      assert.equal(page.kind, 'page');
      assert.equal(page.reason, undefined, `${url} reason`);
      assert.match(page.contentHash ?? '', /^[0-9a-f]{64}$/);
      assert.ok(page.bytes > 0);
    }
  });

  test('the server saw robots.txt first and every page path exactly once', () => {
    assert.equal(site.paths()[0], '/robots.txt');
    assert.equal(site.paths().filter((p) => p === '/robots.txt').length, 1);
    const paths = assertUnique(pagePaths(site), 'requested paths');
    assert.deepEqual([...paths].sort(), [...expected().keys()].map((u) => new URL(u).pathname).sort());
    assert.ok(!paths.has('/logo.png'), 'images are recorded, not fetched (follow: page)');
  });

  test('with order bfs, one host is crawled breadth-first: depths never go down in pages.jsonl', () => {
    const depths = run.pages.map((p) => p.depth);
    assert.deepEqual(
      depths,
      [...depths].sort((a, b) => a - b),
    );
  });

  test('links.jsonl holds the link graph: canonical targets, one record per HTML page', () => {
    const from = assertUnique(
      run.links.map((l) => l.from),
      'links.jsonl pages',
    );
    const htmlPages = run.pages.filter((p) => p.status === 200).map((p) => p.url);
    assert.deepEqual([...from].sort(), htmlPages.sort());
    const home = run.linksOf(`${o}/`);
    // '/a', '/a?utm_source=news' and '/a#again' are one URL; 'b' resolves against the page
    assert.deepEqual(
      [...home.keys()].sort(),
      [`${o}/a`, `${o}/b`, `${o}/c`, `${o}/logo.png`, `${o}/missing`].sort(),
    );
    assert.deepEqual(home.get(`${o}/logo.png`), { url: `${o}/logo.png`, kind: 'image', skipped: 'kind' });
    assert.equal(home.get(`${o}/a`)?.skipped, undefined);
    assert.equal(run.page(`${o}/`).outLinks, 7);
    assert.deepEqual([...run.linksOf(`${o}/a/2`).keys()], [`${o}/c`]);
  });

  test('the summary counts what pages.jsonl holds', () => {
    const s = run.summary;
    assert.equal(s.state, 'done');
    assert.equal(s.pages, 10);
    assert.equal(s.skipped, 0);
    assert.deepEqual(s.byStatus, { '200': 9, '404': 1 });
    assert.equal(s.requests, 11, 'ten pages and one robots.txt');
    assert.equal(s.discovered, 10);
    assert.equal(s.queued, 0);
    assert.equal(s.hosts, 1);
    assert.equal(s.retries, 0);
    assert.equal(
      s.bytes,
      run.pages.reduce((n, p) => n + p.bytes, 0),
    );
    assert.ok(s.urlSeen.lookups > 0 && s.urlSeen.cacheHits > 0, 'repeat links are answered by the cache');
  });

  test('the WARC files read cleanly with warcio and match the pages.jsonl refs', async () => {
    const entries = await assertWarcMatchesPages(run.outDir, run.pages);
    const responses = entries.filter((e) => e.type === 'response');
    const requests = entries.filter((e) => e.type === 'request');
    assert.equal(entries.filter((e) => e.type === 'warcinfo').length, 1);
    // every page, and the robots.txt response (a 404 here) as Heritrix archives it
    assert.equal(responses.length, 11);
    assert.equal(requests.length, 11);
    assertUnique(
      responses.map((e) => e.uri),
      'archived URLs',
    );
    assert.ok(
      responses.some((e) => e.uri === `${o}/robots.txt`),
      'robots.txt is archived',
    );
    const index = readFileSync(join(run.outDir, 'warc', 'index.cdxj'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(index.length, 11);
  });

  test('without WARC files (--no-warc), records carry no WARC reference', async () => {
    const bare = await crawl({ seeds: [`${o}/`], scope: 'host', order: 'bfs' }, { warc: false });
    assert.equal(bare.pages.length, run.pages.length);
    assert.deepEqual(
      bare.pages.filter((p) => p.warc !== undefined).map((p) => p.url),
      [],
    );
  });
});
