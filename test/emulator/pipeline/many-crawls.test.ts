/**
 * Many crawls at once (issue 8, "What must exist" 4): twelve crawls of twelve different sites
 * started together through the API, at the default politeness (1 s per host, delay factor 5, the
 * soft-404 probe on), over the synthesized stack on the stand-in. Every crawl must end `done` on
 * its own, every page be fetched exactly once (the fixture servers' logs), nothing lost, and each
 * crawl's counters add up: every claimed URL in exactly one terminal state.
 *
 * The first build kept eight crawls per container: a ninth evicted one, whose rebuilt context
 * probed its sites again and again (10 crawls: 8 ended `failed`, the others lost URLs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SiteServer } from '../../fixtures/site-server.ts';
import type { ListedPage, Pipeline } from './helpers.ts';
import { startFixtureSite, startPipeline } from './helpers.ts';

const CRAWLS = 12;
/** Pages per site: a home page linking five, one of which links a sixth. */
const PATHS = ['/', '/p1', '/p2', '/p3', '/p4', '/p5', '/deep'];

function isProbe(path: string): boolean {
  return path.startsWith('/crawlstack-probe-');
}

describe('pipeline: twelve crawls at once at the default politeness', () => {
  let pipeline: Pipeline;
  const sites: SiteServer[] = [];
  before(async () => {
    pipeline = await startPipeline();
    for (let i = 0; i < CRAWLS; i++) {
      sites.push(
        await startFixtureSite(
          {
            host: `127.0.0.${40 + i}`,
            pages: {
              '/': ['/p1', '/p2', '/p3', '/p4', '/p5'],
              '/p1': ['/', '/p2'],
              '/p2': ['/deep'],
              '/p3': ['/p1'],
              '/p4': [],
              '/p5': ['/p4'],
              '/deep': ['/'],
            },
          },
          (link) => link,
        ),
      );
    }
  });
  after(async () => {
    await pipeline?.stop();
    for (const site of sites) await site.close();
  });

  it('ends every crawl done, fetches every page once, loses nothing, counters add up', async () => {
    // Only the loopback addresses need allowing; politeness is the default. No sitemaps: the
    // counts below are the sites' pages.
    const ids = await Promise.all(
      sites.map((site) =>
        pipeline.startCrawl({ seeds: [`${site.origin}/`], allowPrivate: true, sitemaps: false }),
      ),
    );
    const ends = await Promise.all(ids.map((id) => pipeline.waitForStatus(id, ['done', 'failed'], 240_000)));
    for (const [i, end] of ends.entries()) {
      const site = sites[i]!;
      assert.equal(end.status, 'done', `crawl ${i}: ${JSON.stringify(end.counters)}`);
      const c = end.counters;
      assert.equal(end.lost, undefined, `crawl ${i}: nothing lost`);
      assert.equal(c.discovered, PATHS.length, `crawl ${i}: discovered`);
      assert.equal(c.finished, c.discovered, `crawl ${i}: every claimed URL finished`);
      assert.equal(c.fetched, PATHS.length);
      assert.equal(c.queued, 0);
      assert.equal(c.parked, 0);
      assert.equal(c.dlq, 0);
      assert.equal(c.failed, 0);
      // Each URL in exactly one terminal state: the statuses and reasons add up to `finished`.
      const terminal =
        Object.values(c.byStatus).reduce((n, k) => n + k, 0) +
        Object.entries(c.byReason)
          .filter(([reason]) => reason !== 'soft-404')
          .reduce((n, [, k]) => n + k, 0);
      assert.equal(terminal, c.finished, `crawl ${i}: ${JSON.stringify(c)}`);
      const paths = site.log.map((r) => r.path).filter((p) => p !== '/robots.txt' && !isProbe(p));
      assert.deepEqual([...paths].sort(), [...PATHS].sort(), `crawl ${i}: every page fetched once`);
      assert.equal(site.log.filter((r) => isProbe(r.path)).length, 1, `crawl ${i}: one soft-404 probe`);
      assert.equal(site.log.filter((r) => r.path === '/robots.txt').length, 1, `crawl ${i}: one robots.txt`);
      assert.equal(site.maxInFlight(), 1);
      const listed: ListedPage[] = await pipeline.pages(end.id, 100);
      assert.equal(listed.length, PATHS.length, `crawl ${i}: every page listed once`);
    }
  });
});
