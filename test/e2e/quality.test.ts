/**
 * Crawl quality with the defaults on: AOPIC order (important pages first), the soft-404 probe,
 * near-duplicates by SimHash, calendar and link-generator traps, the traps report, and
 * `crawlstack rank` (AOPIC importance against PageRank of the crawled graph).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { rankCrawl } from '../../functions/cli/cli-rank.ts';
import type { TrapFinding } from '../../functions/core/quality/trap-findings.ts';
import { closeAll, type PageSpec, prose, siteRoutes, startSites } from '../fixtures/sites.ts';
import { crawl, isProbe, pagePaths, tempDir } from './helpers.ts';

/** The defaults the FAST test profile turns off. */
const QUALITY = { soft404Probe: true, trapDetectors: true } as const;

describe('crawl quality', () => {
  test('a soft-404 site: probed once, pages that answer like the probe are recorded soft-404 and not followed', async () => {
    const notFound = `<!doctype html><html><head><title>Oops</title></head><body><h1>Page not found</h1><p>${prose(7, 80)}</p><a href="/">Home</a></body></html>`;
    const [site] = await startSites(['127.0.0.2'], () => [
      (req, res) => {
        const path = req.url ?? '/';
        const table: Record<string, PageSpec> = {
          '/': { title: 'Home', links: ['/a', '/gone', '/also-gone'], body: `<p>${prose(1, 60)}</p>` },
          '/a': { title: 'A', links: ['/'], body: `<p>${prose(2, 60)}</p>` },
        };
        if (path === '/robots.txt' || table[path] !== undefined) return siteRoutes(table)(req, res);
        // every unknown path: 200 with the same error page (and a link that must not be followed)
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(notFound.replace('</body>', '<a href="/only-from-error-pages">x</a></body>'));
      },
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], ...QUALITY });
      assert.equal(site!.paths().filter(isProbe).length, 1, 'one probe per site');
      assert.equal(
        site!.paths()[1]!.startsWith('/crawlstack-probe-'),
        true,
        'the probe comes right after robots.txt',
      );
      assert.equal(run.page(`${o}/gone`).reason, 'soft-404');
      assert.equal(run.page(`${o}/also-gone`).reason, 'soft-404');
      assert.equal(run.page(`${o}/a`).reason, undefined);
      assert.ok(!pagePaths(site!).includes('/only-from-error-pages'), 'links of a soft 404 are not followed');
      const traps = JSON.parse(readFileSync(join(run.outDir, 'traps.json'), 'utf8')) as TrapFinding[];
      assert.ok(traps.some((t) => t.reason === 'soft-404' && t.count === 2));
    } finally {
      await closeAll([site!]);
    }
  });

  test('near-duplicates are recorded with the page they resemble; distinct pages are not', async () => {
    const text = prose(3, 300);
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': {
          title: 'Home',
          links: ['/article', '/article-print', '/other'],
          body: `<p>${prose(4, 80)}</p>`,
        },
        '/article': { title: 'Article', body: `<p>${text}</p>` },
        // the same words with other markup: not byte-identical (no exact duplicate), same text
        '/article-print': {
          title: 'Article',
          head: '<meta name="media" content="print">',
          body: `<div class="print"><p>${text}</p></div>`,
        },
        '/other': { title: 'Other', body: `<p>${prose(5, 300)}</p>` },
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], ...QUALITY, order: 'bfs' });
      assert.match(run.page(`${o}/article`).simhash ?? '', /^[0-9a-f]{16}$/);
      assert.equal(run.page(`${o}/article-print`).nearDuplicateOf, `${o}/article`);
      assert.equal(run.page(`${o}/article-print`).duplicateOf, undefined, 'not an exact duplicate');
      assert.equal(run.page(`${o}/other`).nearDuplicateOf, undefined);
      assert.equal(run.page(`${o}/article`).nearDuplicateOf, undefined);
    } finally {
      await closeAll([site!]);
    }
  });

  test('an endless calendar costs a couple of requests: its look-alike months stop being followed', async () => {
    const month = (y: number, m: number) => `/calendar/${y}/${String(m).padStart(2, '0')}`;
    const [site] = await startSites(['127.0.0.2'], () => [
      (req, res) => {
        const path = req.url ?? '/';
        const match = /^\/calendar\/(\d{4})\/(\d{2})$/.exec(path);
        if (match === null) {
          return siteRoutes({
            '/': { title: 'Home', links: ['/calendar/2026/11', '/about'], body: `<p>${prose(8, 80)}</p>` },
            '/about': { title: 'About', body: `<p>${prose(9, 120)}</p>` },
          })(req, res);
        }
        const y = Number(match[1]);
        const m = Number(match[2]);
        const prev = m === 1 ? month(y - 1, 12) : month(y, m - 1);
        const next = m === 12 ? month(y + 1, 1) : month(y, m + 1);
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          `<!doctype html><html><head><title>Events</title></head><body><h1>Events ${y}-${m}</h1>` +
            `<p>No events this month. ${prose(10, 150)}</p><a href="${prev}">prev</a> <a href="${next}">next</a></body></html>`,
        );
      },
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], ...QUALITY, maxPages: 40 });
      const calendarRequests = pagePaths(site!).filter((p) => p.startsWith('/calendar/'));
      assert.ok(calendarRequests.length <= 4, `calendar pages fetched: ${calendarRequests.join(' ')}`);
      assert.equal(run.summary.state, 'done', 'the crawl ran out of work, not out of budget');
      const skipped = Object.keys(run.summary.linksSkipped);
      assert.ok(
        skipped.includes('link-generator') || skipped.includes('calendar'),
        JSON.stringify(run.summary.linksSkipped),
      );
      assert.ok(run.summary.traps.length > 0, 'the traps report names the pattern');
      assert.ok(run.page(`${o}/about`).status === 200);
    } finally {
      await closeAll([site!]);
    }
  });

  test('AOPIC fetches the page many pages link to before pages linked once; breadth-first does not', async () => {
    // Home links to twelve "news" pages (in that order) and to "popular" last; every news page
    // links to popular and to one leaf of its own.
    const homeLinks: string[] = [];
    const table: Record<string, PageSpec> = {
      '/popular': { title: 'Popular', body: `<p>${prose(21, 80)}</p>` },
    };
    for (let i = 0; i < 12; i++) {
      homeLinks.push(`/news/${i}`);
      table[`/news/${i}`] = {
        title: `News ${i}`,
        links: ['/popular', `/leaf/${i}`],
        body: `<p>${prose(30 + i, 60)}</p>`,
      };
      table[`/leaf/${i}`] = { title: `Leaf ${i}`, body: `<p>${prose(50 + i, 60)}</p>` };
    }
    homeLinks.push('/popular');
    table['/'] = { title: 'Home', body: `<p>${prose(20, 40)}</p>`, links: homeLinks };
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes(table)]);
    try {
      const o = site!.origin;
      const seeds = [`${o}/`];
      const aopic = await crawl({ seeds, ...QUALITY, order: 'aopic', concurrency: 1 });
      const bfs = await crawl({ seeds, ...QUALITY, order: 'bfs', concurrency: 1 });
      const position = (run: typeof aopic, path: string) =>
        run.pages.findIndex((p) => p.url === `${o}${path}`);
      assert.ok(
        position(aopic, '/popular') < position(aopic, '/leaf/0'),
        'AOPIC: the popular page before the leaves',
      );
      assert.ok(position(bfs, '/popular') > position(bfs, '/news/11'), 'breadth-first: in discovery order');
      const popular = aopic.page(`${o}/popular`);
      assert.ok(
        (popular.cash ?? 0) > (aopic.page(`${o}/leaf/0`).cash ?? 0),
        'it held more cash when fetched',
      );
      assert.ok((popular.importance ?? 0) > 0);

      const ranking = rankCrawl(aopic.outDir);
      assert.equal(ranking.pages.length, 26);
      // The seed holds the initial cash, so it leads AOPIC's one-pass estimate; PageRank (no
      // in-links) puts it last. The popular page leads PageRank and follows the seed in AOPIC.
      assert.deepEqual(
        ranking.pages.slice(0, 2).map((p) => p.url),
        [`${o}/`, `${o}/popular`],
      );
      const byPageRank = [...ranking.pages].sort((a, b) => b.pageRank - a.pageRank);
      assert.equal(byPageRank[0]!.url, `${o}/popular`);
      assert.ok(ranking.spearman !== null && ranking.spearman >= -1 && ranking.spearman <= 1);
      const sum = ranking.pages.reduce((a, p) => a + p.importance, 0);
      assert.ok(Math.abs(sum - 1) < 1e-9, 'importance is normalized');
      const pageRankSum = ranking.pages.reduce((a, p) => a + p.pageRank, 0);
      assert.ok(Math.abs(pageRankSum - 1) < 1e-6, 'PageRank sums to 1');
      // HITS: every news page and the home page link to /popular, the best authority; the leaves
      // link nowhere (hub 0) and the home page has no in-links (authority 0).
      const byAuthority = [...ranking.pages].sort((a, b) => b.authority - a.authority);
      assert.equal(byAuthority[0]!.url, `${o}/popular`);
      const home = ranking.pages.find((p) => p.url === `${o}/`)!;
      assert.equal(home.authority, 0);
      assert.equal(ranking.pages.find((p) => p.url === `${o}/leaf/0`)!.hub, 0);
      assert.ok(Math.abs(ranking.pages.reduce((a, p) => a + p.hub, 0) - 1) < 1e-9, 'hubs sum to 1');
      assert.equal(ranking.hits.converged, true);
      for (const rho of [ranking.spearmanAuthority, ranking.spearmanHub])
        assert.ok(rho !== null && rho >= -1 && rho <= 1);
    } finally {
      await closeAll([site!]);
    }
  });

  test("with a budget, a rich page's print twin waits while another host has pages ready, even when nothing runs", async () => {
    // Host A's seed links only to its own print twin (a link to its own path pattern: generated,
    // a tenth of a share, still richer than each of host B's twenty pages). B's pages are poor
    // enough to be held back while anything runs, so the crawl sends them one at a time and
    // nothing runs between two of them: the twin must still wait until no other URL is ready.
    const [a, b] = await startSites(['127.0.0.2', '127.0.0.3'], () => {
      const table = twentyPoorPages();
      return [
        siteRoutes({
          '/a': { title: 'A', links: ['/a?print=1'], body: `<p>${prose(40, 120)}</p>` },
          '/a?print=1': { title: 'A (print)', body: `<p>${prose(40, 120)}</p>` },
        }),
        siteRoutes(table),
      ];
    });
    try {
      const seeds = [`${a!.origin}/a`, `${b!.origin}/`];
      const budgeted = await crawl({ seeds, order: 'aopic', concurrency: 2, maxPages: 10 });
      assert.equal(budgeted.summary.pages, 10);
      assert.deepEqual(pagePaths(a!), ['/a'], 'the twin waits: B had pages ready all along');
      assert.equal(pagePaths(b!).length, 9);
      // Once nothing else is left, it goes.
      const whole = await crawl({ seeds, order: 'aopic', concurrency: 2, maxPages: 30 });
      assert.equal(whole.pages.at(-1)!.url, `${a!.origin}/a?print=1`, 'last, when the frontier ran dry');
    } finally {
      await closeAll([a!, b!]);
    }
  });

  test('a URL first found through a link to its own path, then linked from other pages, does not wait for a dry frontier', async () => {
    // Host A's hub is first found on `/hub?ref=home`, a spelling of itself (a link to the page's own
    // path pattern: generated), then linked by A's other pages. Those links make it an ordinary page,
    // and A's richest: it must go within the budget while B still has pages ready. (On the quality
    // bench a seed host's hub found this way held its whole host back for the rest of the crawl.)
    const [a, b] = await startSites(['127.0.0.2', '127.0.0.3'], () => [
      siteRoutes({
        '/': { title: 'A', links: ['/hub?ref=home', '/one', '/two'], body: `<p>${prose(40, 120)}</p>` },
        '/hub?ref=home': { title: 'Hub', links: ['/hub'], body: `<p>${prose(41, 120)}</p>` },
        '/one': { title: 'One', links: ['/hub'], body: `<p>${prose(42, 120)}</p>` },
        '/two': { title: 'Two', links: ['/hub'], body: `<p>${prose(43, 120)}</p>` },
        '/hub': { title: 'Hub', body: `<p>${prose(41, 120)}</p>` },
      }),
      // B's pages take 30 ms each, so credits are applied (every 50 ms) while B still has pages:
      // a crawl over in 44 ms ended before the first flush.
      siteRoutes(
        Object.fromEntries(
          Object.entries(twentyPoorPages()).map(([path, spec]) => [path, { ...spec, delayMs: 30 }]),
        ),
      ),
    ]);
    try {
      const seeds = [`${a!.origin}/`, `${b!.origin}/`];
      const run = await crawl({ seeds, order: 'aopic', concurrency: 1, maxPages: 10 });
      assert.equal(run.summary.pages, 10);
      assert.ok(
        pagePaths(a!).includes('/hub'),
        `/hub fetched within the budget (A: ${pagePaths(a!).join(', ')})`,
      );
      assert.ok(pagePaths(b!).length < 9, 'while B still had pages ready');
    } finally {
      await closeAll([a!, b!]);
    }
  });

  test('a host whose best URL waits for a dry frontier still sends the pages its sitemap lists', async () => {
    // Host A's seed links only to its print twin (generated: it waits while B has pages), and its
    // robots.txt names a sitemap of three pages no link reaches, poorer than the twin. They must
    // not wait behind the twin: the site says they exist, and only the sitemap leads there.
    const [a, b] = await startSites(['127.0.0.2', '127.0.0.3'], ([originA]) => {
      const table = twentyPoorPages();
      const hidden = [1, 2, 3].map((i) => `${originA}/hidden/${i}`);
      const text = (type: string, body: string) => (_req: unknown, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': type });
        res.end(body);
      };
      return [
        siteRoutes({
          '/robots.txt': text('text/plain', `User-agent: *\nAllow: /\nSitemap: ${originA}/listed.xml\n`),
          '/listed.xml': text(
            'application/xml',
            `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${hidden
              .map((u) => `<url><loc>${u}</loc></url>`)
              .join('')}</urlset>`,
          ),
          '/a': { title: 'A', links: ['/a?print=1'], body: `<p>${prose(40, 120)}</p>` },
          '/a?print=1': { title: 'A (print)', body: `<p>${prose(40, 120)}</p>` },
          '/hidden/1': { title: 'H1', body: `<p>${prose(90, 60)}</p>` },
          '/hidden/2': { title: 'H2', body: `<p>${prose(91, 60)}</p>` },
          '/hidden/3': { title: 'H3', body: `<p>${prose(92, 60)}</p>` },
        }),
        siteRoutes(table),
      ];
    });
    try {
      const seeds = [`${a!.origin}/a`, `${b!.origin}/`];
      await crawl({ seeds, order: 'aopic', concurrency: 2, maxPages: 14, sitemaps: true });
      const fetched = pagePaths(a!);
      for (const path of ['/hidden/1', '/hidden/2', '/hidden/3']) {
        assert.ok(
          fetched.includes(path),
          `${path} fetched within the budget (A fetched ${fetched.join(', ')})`,
        );
      }
      assert.ok(!fetched.includes('/a?print=1'), 'the twin still waits');
    } finally {
      await closeAll([a!, b!]);
    }
  });

  test('rank refuses a folder without a crawl', () => {
    assert.throws(() => rankCrawl(tempDir()), /holds no crawl/);
  });
});

/** Host B of the dry-frontier tests: a root page and twenty pages, each poorer than a rich page's print twin. */
function twentyPoorPages(): Record<string, PageSpec> {
  const table: Record<string, PageSpec> = {
    '/': {
      title: 'B',
      links: Array.from({ length: 20 }, (_, i) => `/p/${i}`),
      body: `<p>${prose(60, 80)}</p>`,
    },
  };
  for (let i = 0; i < 20; i++) table[`/p/${i}`] = { title: `P${i}`, body: `<p>${prose(61 + i, 60)}</p>` };
  return table;
}
