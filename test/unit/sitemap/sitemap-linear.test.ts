/**
 * Reading a sitemap is linear in its size and bounded in memory, whatever its shape (issue 24):
 * elements nested deep, each declaring a namespace; one tag with a huge attribute; an index of
 * many children; megabytes of elements nested without end. Speed is compared, not timed: the
 * same shape doubled three times (eight times the size) must take less than 24 times as long, under
 * 2.9x per doubling (linear: 2, so 8 in all; quadratic: 4, so 64), in CPU time, the best of
 * several runs each taken in turns, so that neither a loaded machine nor caches and garbage
 * collection decide (in wall time, with a load average of 10 on two cores, one doubling of the
 * linear code read anywhere from 4.0x to 11x).
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

/** CPU milliseconds (user and system, this process's) to read `body` `times` times: other jobs on the machine do not count. */
function cpuMs(body: string, times: number): number {
  const before = process.cpuUsage();
  for (let i = 0; i < times; i++) readAndFollow(body);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/**
 * CPU milliseconds per read of `small` and of `large` (`factor` times its size): the best of
 * `runs` timings taken in turns, after one read of the larger to warm the code up (read first
 * while it was cold, the smaller took twice its time). The smaller is read `factor` times as often
 * as the larger, so that both timings last as long and meet the same caches and collections, and
 * each timing lasts at least 20 ms; one turn only when the larger takes over a second.
 */
function bestMs(small: string, large: string, factor: number, runs = 5): [number, number] {
  readAndFollow(large);
  let times = 1;
  while (times < 1000 && cpuMs(large, times) < 20) times *= 2;
  let [bestSmall, bestLarge] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (let i = 0; i < runs && (i === 0 || bestLarge < 1000); i++) {
    bestSmall = Math.min(bestSmall, cpuMs(small, times * factor) / (times * factor));
    bestLarge = Math.min(bestLarge, cpuMs(large, times) / times);
  }
  return [bestSmall, bestLarge];
}

/** Each shape at a size, then eight times it: the quadratic reading took 8-74 s on the larger one. */
const SIZES: [SitemapShape, number][] = [
  ['deep', 10_000],
  ['attribute', 10_000],
  ['index', 6_250],
];

describe('sitemap reading is linear in the input', () => {
  for (const [shape, size] of SIZES) {
    test(`${shape}: eight times the input takes less than 24 times as long`, (t) => {
      const [small, large] = bestMs(sitemapShape(shape, size), sitemapShape(shape, size * 8), 8);
      const said = `${size} took ${small.toFixed(2)} ms of CPU, ${size * 8} took ${large.toFixed(2)} ms (${(large / small).toFixed(1)}x)`;
      t.diagnostic(said);
      assert.ok(large < 24 * small, `${shape}: ${said}`);
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
