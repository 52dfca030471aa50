/**
 * Reading a sitemap is linear in its size and bounded in memory, whatever its shape (issue 24):
 * elements nested deep, each declaring a namespace; one tag with a huge attribute; an index of
 * many children; megabytes of elements nested without end. Speed is compared, not timed: the
 * same shape at four times the size must take less than eight times as long (linear: 4, quadratic:
 * 16), the best of several runs each, so that a loaded machine does not decide.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { followSitemap } from '../../../functions/core/sitemap/sitemap-plan.ts';
import {
  readSitemap,
  SITEMAP_MAX_DEPTH,
  SITEMAP_MAX_MARKUP,
} from '../../../functions/core/sitemap/sitemap-reader.ts';
import { readInFreshProcess, type SitemapShape, sitemapShape } from '../../fixtures/sitemap-shapes.ts';

const SOURCE = { url: 'http://example.com/sitemap.xml', scope: 'http://example.com/' };
const FETCH = { ...SOURCE, granted: true, level: 0, from: 'robots' as const, files: 100, entries: 100_000 };
const SETTINGS = { maxSitemapFiles: 100, maxSitemapUrls: 100_000, maxSitemapDepth: 2 };
const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/** Reads and follows one sitemap, as the crawl step does. */
function readAndFollow(body: string): void {
  const read = readSitemap(body, SOURCE);
  followSitemap(FETCH, read, SETTINGS);
}

/** The best of `runs` timings of reading `body` (after one run to warm up); fewer runs once one takes over a second. */
function bestMs(body: string, runs = 5): number {
  readAndFollow(body);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs && (i === 0 || best < 1000); i++) {
    const started = performance.now();
    readAndFollow(body);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/** Each shape at a size where the quadratic reading took seconds (0.4-2.8 s), then four times it. */
const SIZES: [SitemapShape, number][] = [
  ['deep', 20_000],
  ['attribute', 40_000],
  ['index', 12_500],
];

describe('sitemap reading is linear in the input', () => {
  for (const [shape, size] of SIZES) {
    test(`${shape}: four times the input takes less than eight times as long`, () => {
      const small = bestMs(sitemapShape(shape, size));
      const large = bestMs(sitemapShape(shape, size * 4));
      assert.ok(
        large < 8 * small,
        `${shape}: ${size} took ${small.toFixed(1)} ms, ${size * 4} took ${large.toFixed(1)} ms (${(large / small).toFixed(1)}x)`,
      );
    });
  }
});

describe('sitemap reading is bounded', () => {
  test(`elements deeper than ${SITEMAP_MAX_DEPTH} are skipped and counted; what follows them is read`, () => {
    const read = readSitemap(sitemapShape('deep', 100), SOURCE);
    assert.equal(read.kind, 'urlset');
    if (read.kind !== 'urlset') return;
    // the entry before the nesting and the one after it
    assert.equal(read.entries.length, 2);
    // urlset and 31 of the <a> are open at once; the other 69 are skipped
    assert.equal(read.stats.tooDeep, 100 - (SITEMAP_MAX_DEPTH - 1));
    assert.equal(read.stats.truncated, undefined);
    // a namespace declared under the cap still holds; a deep element's declaration changes nothing
    const prefixed = readSitemap(
      `<s:urlset xmlns:s="${NS}">${'<a xmlns:s="urn:other">'.repeat(40)}${'</a>'.repeat(40)}<s:url><s:loc>http://example.com/x</s:loc></s:url></s:urlset>`,
      SOURCE,
    );
    assert.deepEqual(prefixed.kind === 'urlset' && prefixed.entries, [{ url: 'http://example.com/x' }]);
  });

  test('a tag longer than the markup cap after the root stops the read, said as truncated: markup', () => {
    const entry = '<url><loc>http://example.com/a</loc></url>';
    const body = `<urlset xmlns="${NS}">${entry}<url title="${'x'.repeat(SITEMAP_MAX_MARKUP)}">${entry}</urlset>`;
    const read = readSitemap(body, SOURCE);
    assert.equal(read.kind, 'urlset');
    if (read.kind !== 'urlset') return;
    assert.deepEqual(read.entries, [{ url: 'http://example.com/a' }]);
    assert.equal(read.stats.truncated, 'markup');
    // under the cap, the same tag is read
    const shorter = body.replace('x'.repeat(SITEMAP_MAX_MARKUP), 'x'.repeat(SITEMAP_MAX_MARKUP - 100));
    const whole = readSitemap(shorter, SOURCE);
    assert.equal(whole.kind === 'urlset' && whole.entries.length, 1);
    assert.equal(whole.kind === 'urlset' && whole.stats.truncated, undefined);
  });

  test('32 MiB of elements nested without end: peak RSS grows by less than 0.9x the body (docs/sitemaps.md)', () => {
    const r = readInFreshProcess(sitemapShape('nested', 32));
    assert.match(r.read, /^urlset: 1 entries/);
    assert.ok(r.growth < 0.9 * r.bytes, `peak RSS grew by ${(r.growth / 2 ** 20).toFixed(1)} MiB`);
  });
});
