/**
 * The one-page link-generator rule (CrawlQuality.checkLink: a page that nearly duplicates an
 * earlier page of its own path pattern does not get its links to that pattern followed) must not
 * fire on a page that reads like a page of another pattern (issue 8, item 10): a home page served
 * again as `/p0` stopped the whole `/p#` chain (18 of 110 pages fetched), and a blog's index
 * served again as `/blog/page/1.html` stopped the pagination after one page. Crawled here with the
 * shared step (`crawlPage`, as both runtimes run it), an in-memory fetcher and a near-duplicate
 * index.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentNearDuplicates } from '../../../functions/cloud/worker/recent-near-duplicates.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import type { RobotsEntry } from '../../../functions/core/ports.ts';
import { CrawlQuality } from '../../../functions/core/quality/crawl-quality.ts';
import { crawlPage, seedTasks } from '../../../functions/core/step/crawl-page.ts';
import type { CrawlTask, PageRecord } from '../../../functions/core/types.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import { ScopeRules } from '../../../functions/core/url/scope.ts';
import { ClockCache } from '../../../functions/core/url-seen/clock-cache.ts';
import { UrlSeen } from '../../../functions/core/url-seen/url-seen.ts';
import { MemoryContentSeen, MemorySeenStore } from '../cloud/memory-cloud.ts';
import { MemoryFetcher, type Routes } from '../cloud/memory-fetcher.ts';

const SITE = 'http://a.example';
const WORDS =
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu'.split(
    ' ',
  );

/** A page of its own text: `n` picks a different run of words, so pages differ from each other. */
function article(title: string, n: number, links: string[]): string {
  const words = Array.from({ length: 120 }, (_, i) => WORDS[(i * (n + 3) + n * 7) % WORDS.length]).join(' ');
  return `<!doctype html><title>${title}</title><body><h1>${title}</h1><p>${words} ${title}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body>`;
}

/** Crawls `seed` to the end with crawlPage; resolves the records. */
async function crawlAll(routes: Routes, seed: string): Promise<PageRecord[]> {
  const parsed = parseCrawlConfig({ seeds: [seed], scope: 'host', soft404Probe: false });
  assert.ok(parsed.ok);
  const config = parsed.config;
  const canonicalizer = new UrlCanonicalizer(config);
  const robots = new Map<string, RobotsEntry>();
  const records: PageRecord[] = [];
  const queue: CrawlTask[] = seedTasks('c', [seed], canonicalizer).tasks;
  const deps = {
    config,
    clock: { now: () => 0 },
    random: () => 0.5,
    fetcher: new MemoryFetcher({ [`${SITE}/robots.txt`]: { status: 404 }, ...routes }),
    robots: { get: async (o: string) => robots.get(o) },
    seen: new UrlSeen(new ClockCache(1024), new MemorySeenStore(new Map(), new Set())),
    contentSeen: new MemoryContentSeen(),
    canonicalizer,
    scope: new ScopeRules(config, [seed]),
    quality: new CrawlQuality(config, {
      index: new RecentNearDuplicates(config.nearDuplicateDistance, 1000),
      random: () => 0.5,
    }),
  };
  for (let task = queue.shift(); task !== undefined; task = queue.shift()) {
    const outcome = await crawlPage(deps, task);
    // the step's effects, committed as a runtime would
    if (outcome.storeRobots !== undefined) robots.set(outcome.storeRobots.origin, outcome.storeRobots.entry);
    queue.push(...outcome.enqueued);
    if (outcome.kind === 'done') records.push(outcome.record);
    else queue.unshift(task);
  }
  return records;
}

describe('the one-page link-generator rule', () => {
  it('follows /p1 ... from a /p0 that repeats the home page', async () => {
    const routes: Routes = {};
    const home = article('Home', 0, ['/p0']);
    routes[`${SITE}/`] = { status: 200, body: home };
    routes[`${SITE}/p0`] = { status: 200, body: home.replace('href="/p0"', 'href="/p1"') };
    for (let i = 1; i <= 20; i++) {
      routes[`${SITE}/p${i}`] = { status: 200, body: article(`Part ${i}`, i, i < 20 ? [`/p${i + 1}`] : []) };
    }
    const records = await crawlAll(routes, `${SITE}/`);
    const fetched = records.filter((r) => r.status === 200).map((r) => r.url);
    assert.equal(
      fetched.length,
      22,
      `every page: ${records.map((r) => `${r.url} ${r.reason ?? ''} ${r.outLinks}`).join('\n')}`,
    );
    assert.ok(
      records.find((r) => r.url === `${SITE}/p0`)?.nearDuplicateOf === `${SITE}/`,
      'p0 reads like home',
    );
  });

  it('follows blog pagination from a page 1 that repeats the blog index', async () => {
    const routes: Routes = {};
    const index = article('Blog', 0, ['/blog/page/2.html']);
    routes[`${SITE}/blog/`] = {
      status: 200,
      body: index.replace('</body>', '<a href="/blog/page/1.html">1</a></body>'),
    };
    routes[`${SITE}/blog/page/1.html`] = { status: 200, body: index };
    for (let i = 2; i <= 12; i++) {
      routes[`${SITE}/blog/page/${i}.html`] = {
        status: 200,
        body: article(`Blog page ${i}`, i, i < 12 ? [`/blog/page/${i + 1}.html`] : []),
      };
    }
    const records = await crawlAll(routes, `${SITE}/blog/`);
    const pages = records.filter((r) => r.status === 200 && r.url.includes('/page/'));
    assert.equal(pages.length, 12, records.map((r) => `${r.url} ${r.reason ?? ''}`).join('\n'));
  });

  it('still stops faceted search whose next facet reads like an earlier one', async () => {
    const quality = new CrawlQuality(
      { nearDuplicateDistance: 3, trapDetectors: true, soft404Probe: false },
      { random: () => 0.5 },
    );
    const parent: CrawlTask = {
      crawlId: 'c',
      url: `${SITE}/search?color=red&size=m`,
      fp: '0123456789abcdef',
      host: 'a.example',
      depth: 3,
      redirects: 0,
      attempt: 0,
      cash: 0,
    };
    const next = `${SITE}/search?color=red&size=m&sort=up`;
    const now = Date.UTC(2026, 10, 26);
    assert.equal(quality.checkLink(next, parent, now, `${SITE}/search?color=red`), 'link-generator');
    assert.equal(quality.checkLink(next, parent, now, `${SITE}/`), undefined);
  });
});
