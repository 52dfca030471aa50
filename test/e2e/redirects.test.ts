/**
 * Redirects in real crawls: every hop recorded and the target fetched once, loops end, the hop
 * limit holds, scope applies to targets, and a seed that moves takes the scope with it (also
 * across a restart).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redirect } from '../fixtures/hostile-routes.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { crawl, pagePaths, tempDir } from './helpers.ts';

describe('redirects', () => {
  test('a 301 chain: each hop recorded with redirectTo, the target fetched once', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': { links: ['/old', '/new', '/short'] },
        '/old': redirect('/older-still', 301),
        '/older-still': redirect('/new?utm_source=redirect', 308),
        '/short': redirect('/new', 302),
        '/new': { title: 'new home', links: ['/old'] },
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`] });
      assert.equal(pagePaths(site!).filter((p) => p.startsWith('/new')).length, 1, 'target fetched once');
      assert.deepEqual(pagePaths(site!).sort(), ['/', '/new', '/old', '/older-still', '/short']);
      const old = run.page(`${o}/old`);
      assert.equal(old.status, 301);
      assert.equal(old.redirectTo, `${o}/older-still`);
      assert.equal(old.finalUrl, `${o}/older-still`);
      assert.ok(old.warc, 'redirect responses are archived');
      const older = run.page(`${o}/older-still`);
      assert.equal(older.status, 308);
      assert.equal(older.redirectTo, `${o}/new`, 'the Location is canonicalized');
      assert.equal(older.depth, 1, 'a hop keeps the depth of the link');
      assert.equal(run.page(`${o}/short`).redirectTo, `${o}/new`);
      assert.equal(run.page(`${o}/new`).title, 'new home');
    } finally {
      await closeAll([site!]);
    }
  });

  test('a redirect loop A -> B -> A ends', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/a': redirect('/b', 302), '/b': redirect('/a', 302) }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/a`] });
      assert.deepEqual(pagePaths(site!), ['/a', '/b']);
      assert.equal(run.page(`${o}/b`).redirectTo, `${o}/a`);
      assert.match(run.page(`${o}/b`).detail ?? '', /already seen/);
      assert.equal(run.summary.state, 'done');
    } finally {
      await closeAll([site!]);
    }
  });

  test('more than maxRedirects hops stop with too-many-redirects', async () => {
    const table: Record<string, ReturnType<typeof redirect>> = {};
    for (let i = 1; i <= 10; i++) table[`/r/${i}`] = redirect(`/r/${i + 1}`, 301);
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes(table)]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/r/1`], maxRedirects: 3 });
      assert.deepEqual(pagePaths(site!), ['/r/1', '/r/2', '/r/3', '/r/4']);
      const last = run.page(`${o}/r/4`);
      assert.equal(last.reason, 'too-many-redirects');
      assert.equal(last.redirectTo, `${o}/r/5`);
    } finally {
      await closeAll([site!]);
    }
  });

  test('a redirect to a host out of scope is recorded, not followed', async () => {
    const sites = await startSites(['127.0.0.2', '127.0.0.3'], (o) => [
      siteRoutes({ '/': { links: ['/away'] }, '/away': redirect(`${o[1]}/elsewhere`, 302) }),
      siteRoutes({ '/elsewhere': { title: 'elsewhere' } }),
    ]);
    try {
      const [a, b] = sites.map((s) => s.origin) as [string, string];
      const run = await crawl({ seeds: [`${a}/`], scope: 'host' });
      const away = run.page(`${a}/away`);
      assert.equal(away.reason, 'redirect-out-of-scope');
      assert.equal(away.redirectTo, `${b}/elsewhere`);
      assert.deepEqual(sites[1]!.paths(), []);
    } finally {
      await closeAll(sites);
    }
  });

  test('a seed that redirects to another host takes the scope with it, also after a restart', async () => {
    const sites = await startSites(['127.0.0.2', '127.0.0.3', '127.0.0.4'], (o) => [
      siteRoutes({ '/': redirect(`${o[1]}/home`, 301) }),
      siteRoutes({
        '/home': { title: 'moved home', links: ['/a', `${o[2]}/third`] },
        '/a': { title: 'a', links: ['/b'] },
        '/b': { title: 'b' },
      }),
      siteRoutes({ '/third': { title: 'third' } }),
    ]);
    try {
      const [a, b] = sites.map((s) => s.origin) as [string, string];
      const outDir = tempDir();
      // first run stops after the redirect and the moved home page; the second resumes
      const first = await crawl({ seeds: [`${a}/`], scope: 'host', maxPages: 2 }, { outDir });
      assert.equal(first.summary.state, 'max-pages');
      assert.deepEqual(pagePaths(sites[1]!), ['/home']);
      const second = await crawl({ seeds: [`${a}/`], scope: 'host' }, { outDir });
      assert.equal(second.summary.state, 'done');
      assert.equal(second.summary.resumed, true);
      assert.deepEqual(
        pagePaths(sites[1]!),
        ['/home', '/a', '/b'],
        'the moved site is crawled after the restart',
      );
      assert.deepEqual(sites[2]!.paths(), [], 'other hosts stay out of scope');
      assert.equal(second.page(`${a}/`).redirectTo, `${b}/home`);
      assert.equal(second.page(`${b}/home`).depth, 0);
      assert.equal(second.page(`${b}/b`).depth, 2);
    } finally {
      await closeAll(sites);
    }
  });
});
