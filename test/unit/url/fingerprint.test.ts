import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  FingerprintFormatError,
  fingerprint,
  fingerprintFromInt64,
  fingerprintToInt64,
} from '../../../functions/core/url/fingerprint.ts';

// Computed once (and checked with `printf ... | sha256sum`). These values are stored in every
// seen-set: if this test fails, the fingerprint changed and old crawls can no longer be resumed.
const VECTORS: [url: string, fp: string, int64: bigint][] = [
  ['http://example.com/', '2a1b402420ef4657', 3034089297879713367n],
  ['https://www.example.com/a?b=1', 'ca9b6721fc64eaa7', -3847368060991903065n],
  ['', 'e3b0c44298fc1c14', -2039914840885289964n],
  ['http://xn--bcher-kva.example/', 'ef6bde6ded919b75', -1194616712418190475n],
  // UTF-8 bytes of the string, not UTF-16 or Latin-1
  ['https://example.com/ü', '32ce9dc0169552a6', 3661036995436958374n],
];

describe('fingerprint', () => {
  it('is the first 8 bytes of SHA-256 over the UTF-8 bytes, in lowercase hex', () => {
    for (const [url, fp] of VECTORS) assert.equal(fingerprint(url), fp, url);
  });

  it('stays the same however often and after however many other URLs it is asked for', () => {
    const direct = (url: string) => createHash('sha256').update(url).digest('hex').slice(0, 16);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 10_000; i++) {
        const url = `http://h.test/p/${i % 5000}`;
        assert.equal(fingerprint(url), direct(url));
      }
    }
    for (const [url, fp] of VECTORS) assert.equal(fingerprint(url), fp, url);
  });

  it('is 16 lowercase hex characters for any input', () => {
    for (const url of ['a', 'http://example.com/'.repeat(500), '\u{1f600}']) {
      assert.match(fingerprint(url), /^[0-9a-f]{16}$/);
    }
  });
});

describe('fingerprint <-> signed 64-bit integer', () => {
  it('maps the fixed vectors both ways (two complement, big-endian)', () => {
    for (const [, fp, int64] of VECTORS) {
      assert.equal(fingerprintToInt64(fp), int64, fp);
      assert.equal(fingerprintFromInt64(int64), fp, fp);
    }
  });

  it('covers the ends of the range and keeps leading zeros', () => {
    const cases: [string, bigint][] = [
      ['0000000000000000', 0n],
      ['0000000000000001', 1n],
      ['7fffffffffffffff', 2n ** 63n - 1n],
      ['8000000000000000', -(2n ** 63n)],
      ['ffffffffffffffff', -1n],
    ];
    for (const [fp, int64] of cases) {
      assert.equal(fingerprintToInt64(fp), int64);
      assert.equal(fingerprintFromInt64(int64), fp);
    }
  });

  it('rejects what is not a fingerprint', () => {
    for (const bad of ['', '2A1B402420EF4657', '2a1b402420ef465', '2a1b402420ef46570', 'zz1b402420ef4657']) {
      assert.throws(() => fingerprintToInt64(bad), FingerprintFormatError, bad);
    }
    assert.throws(() => fingerprintFromInt64(2n ** 63n), { code: 'FINGERPRINT_FORMAT' });
    assert.throws(() => fingerprintFromInt64(-(2n ** 63n) - 1n), { code: 'FINGERPRINT_FORMAT' });
  });
});
