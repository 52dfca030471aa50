/**
 * `<base href>` amplification: a long base turns every short relative link into a long URL. The
 * crawl must keep what it holds and writes per page a small multiple of the page, whatever the
 * base: an over-long base is ignored (counted), and links whose resolved URL is longer than
 * `maxUrlLength` are dropped (counted), never kept in memory or written to links.jsonl.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { extractPage } from '../../functions/core/html/extract.ts';
import { crawl } from '../e2e/helpers.ts';
import { baseHrefAmplifier } from '../fixtures/hostile-routes.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';

const MiB = 1024 * 1024;

describe('<base href> amplification', () => {
  test('a 100 KB base and 1,000 short links: the base is ignored, links.jsonl stays the size of the links', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/page': baseHrefAmplifier(100_000, 1000) }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/page`], maxPages: 1 });
      const page = run.page(`${o}/page`);
      assert.equal(page.status, 200);
      assert.deepEqual(page.dropped, { base: 1 }, 'the base is ignored, with its reason counted');
      assert.equal(page.outLinks, 1000);
      const links = run.linksOf(`${o}/page`);
      assert.equal(links.size, 1000);
      // Resolved against the page URL, as when a base cannot be used.
      assert.ok(links.has(`${o}/p999`));
      for (const url of links.keys()) assert.ok(url.length < 100, url.slice(0, 100));
      const linksBytes = statSync(join(run.outDir, 'links.jsonl')).size;
      assert.ok(linksBytes < page.bytes, `links.jsonl is ${linksBytes} bytes for a ${page.bytes}-byte page`);
      assert.ok(
        run.summary.peakRssBytes < 400 * MiB,
        `peak RSS ${(run.summary.peakRssBytes / MiB).toFixed(0)} MiB (was 484 MiB on this page)`,
      );
    } finally {
      await closeAll([site!]);
    }
  });

  test('a base just under maxUrlLength: links that resolve past it are dropped and counted', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/page': baseHrefAmplifier(1000, 500) }),
    ]);
    try {
      const o = site!.origin;
      // The base (origin + "/" + 1,000 a's + "/") fits; with "p0".."p9" a link just fits; "p10" on do not.
      const maxUrlLength = o.length + 1002 + 2;
      const run = await crawl({ seeds: [`${o}/page`], maxPages: 1, maxUrlLength });
      const page = run.page(`${o}/page`);
      assert.deepEqual(page.dropped, { longUrls: 490 });
      const links = run.linksOf(`${o}/page`);
      assert.equal(links.size, 10);
      for (const url of links.keys()) assert.ok(url.length <= maxUrlLength);
    } finally {
      await closeAll([site!]);
    }
  });

  test('extractPage ignores a base whose URL is longer than maxUrlLength and says so', () => {
    const page = 'https://example.test/dir/page.html';
    const html = `<base href="/${'x'.repeat(5000)}/"><a href="a.html">a</a>`;
    const facts = extractPage(html, page, { maxUrlLength: 2048 });
    assert.equal(facts.base, page);
    assert.equal(facts.baseIgnored, true);
    const unbounded = extractPage(html, page);
    assert.equal(unbounded.baseIgnored, false);
    assert.equal(unbounded.base.length, 'https://example.test/'.length + 5001);
  });
});
