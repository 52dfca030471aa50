import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCacheStudy } from '../../../functions/cache-study/cache-study.ts';
import { missRateChartSvg, sizeLabel } from '../../../functions/cache-study/miss-rate-chart.ts';
import { fingerprint } from '../../../functions/core/url/fingerprint.ts';
import {
  decodeTrace,
  denseTrace,
  encodeTrace,
  TraceFormatError,
} from '../../../functions/core/url-seen/url-seen-trace.ts';

describe('URL-seen trace format', () => {
  it('is each fingerprint as 8 big-endian bytes, nothing else', () => {
    const bytes = encodeTrace(['0123456789abcdef', 'ffffffff00000001']);
    assert.deepEqual(
      [...bytes],
      [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01],
    );
  });

  it('round-trips, and traces concatenate', () => {
    const a = Array.from({ length: 50 }, (_, i) => fingerprint(`https://example.com/${i}`));
    const b = Array.from({ length: 20 }, (_, i) => fingerprint(`https://example.org/${i % 7}`));
    assert.deepEqual(decodeTrace(encodeTrace(a)), a);
    const joined = new Uint8Array([...encodeTrace(a), ...encodeTrace(b)]);
    assert.deepEqual(decodeTrace(joined), [...a, ...b]);
  });

  it('refuses a partial record and a value that is not a fingerprint', () => {
    assert.throws(() => decodeTrace(new Uint8Array(12)), TraceFormatError);
    assert.throws(() => denseTrace(new Uint8Array(7)), /whole number of 8-byte records; got 7 bytes/);
    assert.throws(() => encodeTrace(['xyz']), TraceFormatError);
    assert.throws(() => encodeTrace(['0123456789ABCDEF']), TraceFormatError);
  });

  it('numbers distinct fingerprints in order of first look-up, through table growth', () => {
    const urls = Array.from({ length: 5000 }, (_, i) => fingerprint(`https://example.com/${i}`));
    const looked = [urls[3]!, urls[1]!, urls[3]!, ...urls, urls[4999]!, urls[1]!];
    const { ids, distinct } = denseTrace(encodeTrace(looked));
    assert.equal(distinct, 5000);
    assert.deepEqual([...ids.slice(0, 7)], [0, 1, 0, 2, 1, 3, 0]);
    assert.equal(ids[looked.length - 2], ids[looked.indexOf(urls[4999]!)]);
    assert.equal(ids.at(-1), 1);
    // fingerprints differing only in the high word are different URLs
    const near = denseTrace(encodeTrace(['00000001000000aa', '00000002000000aa', '00000001000000aa']));
    assert.deepEqual([...near.ids], [0, 1, 0]);
  });
});

describe('cache study', () => {
  const looked = 'ABCABDAEEABCF'.split('').map((c) => fingerprint(`https://example.com/${c}`));
  const trace = denseTrace(encodeTrace(looked));

  it('gives each policy a miss rate per power-of-two size, and the infinite cache floor', () => {
    const study = runCacheStudy(trace, { minLog2: 0, maxLog2: 3 });
    assert.equal(study.lookups, 13);
    assert.equal(study.distinct, 6);
    assert.equal(study.compulsoryMissRate, 6 / 13);
    assert.deepEqual(
      study.rows.map((r) => r.size),
      [1, 2, 4, 8],
    );
    for (const row of study.rows) {
      for (const policy of study.policies) {
        assert.ok(row.missRate[policy]! >= study.compulsoryMissRate - 1e-12, `${policy} at ${row.size}`);
        assert.ok(row.missRate.MIN! <= row.missRate[policy]!, `MIN at most ${policy}`);
      }
    }
    assert.deepEqual(study.rows.at(-1)!.missRate, {
      LRU: 6 / 13,
      CLOCK: 6 / 13,
      RANDOM: 6 / 13,
      STATIC: 6 / 13,
      MIN: 6 / 13,
    });
  });

  it('refuses sizes out of range', () => {
    assert.throws(() => runCacheStudy(trace, { minLog2: 9, maxLog2: 8 }), RangeError);
    assert.throws(() => runCacheStudy(trace, { maxLog2: 31 }), RangeError);
  });

  it('draws one line and one marker per point for each policy, with the floor and a legend', () => {
    const study = runCacheStudy(trace, { minLog2: 8, maxLog2: 20 });
    const svg = missRateChartSvg(study, { label: 'docs <&> "test"', markSize: 2 ** 18 });
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.ok(svg.trimEnd().endsWith('</svg>'));
    assert.equal(svg.match(/<polyline /g)?.length, 5);
    for (const points of svg.matchAll(/<polyline [^>]*points="([^"]*)"/g)) {
      assert.equal(points[1]!.split(' ').length, 13, '2^8 .. 2^20');
    }
    for (const name of [
      'LRU',
      'CLOCK',
      'RANDOM',
      'STATIC',
      'MIN (clairvoyant)',
      'infinite cache',
      '256',
      '1M',
    ]) {
      assert.ok(svg.includes(`>${name}<`), name);
    }
    assert.ok(svg.includes('docs &#60;&#38;&#62; &#34;test&#34;: 13 look-ups of 6 URLs'), 'label escaped');
    assert.ok(svg.includes('>default cache size<'), 'the default cache size is marked');
    assert.doesNotMatch(svg, /NaN|undefined/);
  });

  it('labels sizes in K and M', () => {
    assert.deepEqual([256, 1024, 65536, 2 ** 20, 3000].map(sizeLabel), ['256', '1K', '64K', '1M', '3000']);
  });
});
