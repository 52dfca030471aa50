/**
 * Sites that try to poison the duplicate-URL rules (docs/duplicate-urls.md; issue 24, item 8): a
 * bait that teaches `ignore-param id` and `case-insensitive` through identical pages, and a victim
 * that serves distinct pages the poisoned rules would merge. Real loopback servers, embedded crawls,
 * the default audit. No distinct page may be lost.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { crawl, pathCounts } from '../e2e/helpers.ts';
import type { Route } from '../fixtures/site-server.ts';
import { closeAll, pageHtml, prose, siteRoutes, startSites } from '../fixtures/sites.ts';

/** The victim's distinct pages `/item?id=N`. */
const ITEMS = 20;
const ids = (from: number, count: number) => Array.from({ length: count }, (_, k) => from + k);

/** One request at a time in discovery order, so that the bait's rules are active before the victim's links. */
const IN_ORDER = { order: 'bfs', concurrency: 1, scope: 'any' } as const;

/** A page with its own text: distinct bytes for each `n`. */
function distinct(title: string, n: number): string {
  return pageHtml({ title, body: `<p>${prose(n, 40)}</p>` });
}

/** The same bytes under every URL that serves it (an "out of stock" page, a session wrapper). */
const BAIT = pageHtml({ title: 'Item', body: '<p>This item is not available.</p>' });
const DOC = pageHtml({ title: 'Doc', body: '<p>One document under two spellings.</p>' });

/** Serves `body` as HTML. */
function html(body: string): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  };
}

/** The bait's routes: identical pages under `/<path>?id=1..3` and under `/Doc-N` / `/doc-N`. */
function baitRoutes(path: string): Record<string, Route> {
  const routes: Record<string, Route> = {};
  for (const n of ids(1, 3)) routes[`${path}?id=${n}`] = html(BAIT);
  for (const n of ids(1, 2)) {
    routes[`/Doc-${n}`] = html(DOC.replace('One', `Doc ${n}:`));
    routes[`/doc-${n}`] = html(DOC.replace('One', `Doc ${n}:`));
  }
  return routes;
}

const BAIT_LINKS = (path: string) => [
  ...ids(1, 3).map((n) => `${path}?id=${n}`),
  ...ids(1, 2).flatMap((n) => [`/Doc-${n}`, `/doc-${n}`]),
];

/** The victim's routes: `/item?id=<ids>` distinct pages, and `/Notes` and `/notes`, two pages. */
function victimRoutes(items: readonly number[]): Record<string, Route> {
  const routes: Record<string, Route> = {};
  for (const n of items) routes[`/item?id=${n}`] = html(distinct(`Item ${n}`, n));
  routes['/Notes'] = html(distinct('Notes (upper)', 900));
  routes['/notes'] = html(distinct('notes (lower)', 901));
  return routes;
}

const VICTIM_LINKS = (items: readonly number[]) => [...items.map((n) => `/item?id=${n}`), '/Notes', '/notes'];

/** rules.json's lines as `<name> <status>` (any origin). */
function ruleStatuses(outDir: string): string[] {
  const rules = JSON.parse(readFileSync(join(outDir, 'rules.json'), 'utf8')) as {
    name: string;
    status: string;
  }[];
  return rules.map((r) => `${r.name} ${r.status}`);
}

/** The victim's paths that were never requested. */
function lost(asked: Map<string, number>, items: readonly number[]): string[] {
  return VICTIM_LINKS(items).filter((path) => (asked.get(path) ?? 0) === 0);
}

/**
 * Crawls one origin whose home page links the bait under `baitPath` first, then `/catalog`, which
 * links the victim's items; resolves the run, the paths asked for and the origin.
 */
async function crawlShop(baitPath: string, items: readonly number[]) {
  const [site] = await startSites(['127.0.0.5'], () => [
    siteRoutes({
      '/': { title: 'shop', links: [...BAIT_LINKS(baitPath), '/catalog'] },
      '/catalog': { title: 'catalog', links: VICTIM_LINKS(items) },
      ...baitRoutes(baitPath),
      ...victimRoutes(items),
    }),
  ]);
  try {
    const run = await crawl({ seeds: [`${site!.origin}/`], ...IN_ORDER });
    return { run, asked: pathCounts(site!), origin: site!.origin };
  } finally {
    await closeAll([site!]);
  }
}

describe('duplicate-URL rules under a bait-and-switch site', () => {
  test('rules a bait teaches on one port do not apply to another port of the same host name', async () => {
    const items = ids(1, ITEMS);
    const [bait, victim] = await startSites(['127.0.0.5', '127.0.0.5'], ([, victimOrigin]) => [
      siteRoutes({
        '/': { title: 'bait', links: [...BAIT_LINKS('/item'), '/more'] },
        // reached after the bait pages (breadth first): the rules are active by then
        '/more': { title: 'more', links: [`${victimOrigin}/`] },
        ...baitRoutes('/item'),
      }),
      siteRoutes({ '/': { title: 'victim', links: VICTIM_LINKS(items) }, ...victimRoutes(items) }),
    ]);
    try {
      const run = await crawl({ seeds: [`${bait!.origin}/`], ...IN_ORDER });
      assert.deepEqual(lost(pathCounts(victim!), items), [], 'victim pages never fetched');
      // the bait did teach its own origin, and its rules apply there
      const statuses = ruleStatuses(run.outDir);
      assert.ok(
        statuses.some((r) => /^ignore-param id\b.* active$/.test(r)),
        statuses.join('; '),
      );
      assert.ok(statuses.includes('case-insensitive active'), statuses.join('; '));
      const skipped = run.pages.filter((p) => p.reason === 'duplicate-url-rule').map((p) => p.url);
      assert.ok(
        skipped.every((url) => url.startsWith(bait!.origin)),
        `only the bait's URLs are merged: ${skipped}`,
      );
    } finally {
      await closeAll([bait!, victim!]);
    }
  });

  test('a parameter rule taught on one path does not apply to another path of the origin', async () => {
    const items = ids(1, ITEMS);
    const { run, asked } = await crawlShop('/teach', items);
    assert.deepEqual(
      lost(asked, items).filter((path) => path.startsWith('/item')),
      [],
      'items never fetched',
    );
    const statuses = ruleStatuses(run.outDir);
    assert.ok(
      statuses.some((r) => /^ignore-param id\b.* active$/.test(r)),
      statuses.join('; '),
    );
  });

  test('a rule the bait proves on the victim path itself: its audit refutes it, and the merged items are crawled after all', async () => {
    // /item?id=1..3 are the bait (one page); /item?id=4..23 are distinct pages linked after the
    // rule is active. Its first merges are audited: they differ, the rule is blocked, and the
    // items it had merged are queued again.
    const items = ids(4, ITEMS);
    const { run, asked, origin } = await crawlShop('/item', items);
    assert.deepEqual(lost(asked, items), [], 'victim pages never fetched');
    for (const n of items) assert.equal(asked.get(`/item?id=${n}`), 1, `/item?id=${n} fetched once`);
    // the rule did merge items before its audit refuted it: those were queued again
    const catalog = [...run.linksOf(`${origin}/catalog`).values()];
    assert.ok(
      catalog.some((link) => link.linkedAs?.includes('/item?id=') === true),
      "the catalog's items were merged while the rule was active",
    );
    const statuses = ruleStatuses(run.outDir);
    assert.ok(
      statuses.some((r) => /^ignore-param id\b.* blocked$/.test(r)),
      statuses.join('; '),
    );
  });
});
