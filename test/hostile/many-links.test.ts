/**
 * A page with a huge number of links: at most `maxLinksPerPage` distinct links are recorded and
 * followed, the rest counted on the page record; no step may crash on any link count.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CrawlDb } from '../../functions/adapters/local/crawl-db.ts';
import { PendingClaims, StepUnit } from '../../functions/adapters/local/step-unit.ts';
import { extractPage } from '../../functions/core/html/extract.ts';
import type { CrawlTask } from '../../functions/core/types.ts';
import { crawl, tempDir } from '../e2e/helpers.ts';
import { manyLinks } from '../fixtures/hostile-routes.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';

const LINKS = 200_000;

describe('a page of 200,000 links', () => {
  test('the first 6,000 (maxLinksPerPage) are recorded and followed, the rest counted', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes({ '/many': manyLinks(LINKS) })]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/many`], maxPages: 3 });
      const page = run.page(`${o}/many`);
      assert.equal(page.status, 200);
      assert.equal(page.reason, undefined, 'no internal error');
      assert.equal(page.outLinks, LINKS, 'every link found is counted');
      assert.deepEqual(page.dropped, { links: LINKS - 6000 });
      const links = run.linksOf(`${o}/many`);
      assert.equal(links.size, 6000);
      assert.ok(links.has(`${o}/page/0`) && links.has(`${o}/page/5999`) && !links.has(`${o}/page/6000`));
      assert.equal(run.summary.discovered, 6001);
      assert.ok(statSync(join(run.outDir, 'links.jsonl')).size < 400_000);
    } finally {
      await closeAll([site!]);
    }
  });

  test('with maxLinksPerPage at its upper bound, 100,000 links are queued in one step', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes({ '/many': manyLinks(LINKS) })]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/many`], maxPages: 2, maxLinksPerPage: 100_000 });
      const page = run.page(`${o}/many`);
      assert.equal(page.reason, undefined);
      assert.deepEqual(page.dropped, { links: LINKS - 100_000 });
      assert.equal(run.linksOf(`${o}/many`).size, 100_000);
      assert.equal(run.summary.discovered, 100_001);
    } finally {
      await closeAll([site!]);
    }
  });

  test('StepUnit.enqueue takes 200,000 tasks in one call (a spread into push overflowed the stack)', async () => {
    const db = new CrawlDb(join(tempDir('crawlstack-hostile-'), 'state.sqlite'));
    try {
      const unit = new StepUnit(db, new PendingClaims());
      const task: CrawlTask = {
        crawlId: 'c',
        url: 'http://example.test/',
        fp: '0000000000000001',
        host: 'example.test',
        depth: 1,
        redirects: 0,
        attempt: 0,
        cash: 0,
      };
      await unit.enqueue(Array.from({ length: LINKS }, () => task));
      assert.equal(unit.enqueued.length, LINKS);
    } finally {
      db.close();
    }
  });

  test('extractPage keeps each href once, at most maxLinks of them, and counts the rest', () => {
    const html = `${'<a href=/same>x</a>'.repeat(100_000)}${Array.from({ length: 50 }, (_, i) => `<a href=/p${i}>`).join('')}`;
    const facts = extractPage(html, 'http://example.test/', { maxLinks: 20 });
    assert.equal(facts.links.length, 20);
    assert.equal(facts.links[0]!.href, '/same');
    assert.equal(facts.links[19]!.href, '/p18');
    assert.equal(facts.linkCount, 100_050);
    assert.equal(facts.linksDropped, 31);
  });
});
