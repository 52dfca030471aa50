import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  conditionalHeaders,
  httpDate,
  imfFixdate,
  validatorsOf,
} from '../../../functions/core/recrawl/validators.ts';

/** RFC 9110 §5.6.7's IMF-fixdate, the only form a sender may generate. */
const IMF =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/;

describe('validators and the conditional request', () => {
  test('imfFixdate writes the exact IMF-fixdate form (two-digit day, GMT)', () => {
    assert.equal(imfFixdate(Date.UTC(1994, 10, 6, 8, 49, 37)), 'Sun, 06 Nov 1994 08:49:37 GMT');
    assert.equal(imfFixdate(Date.UTC(2026, 0, 1, 0, 0, 0)), 'Thu, 01 Jan 2026 00:00:00 GMT');
    assert.match(imfFixdate(Date.UTC(2031, 1, 3, 4, 5, 6)), IMF);
  });

  test('an IMF-fixdate Last-Modified is sent back byte for byte', () => {
    const headers = conditionalHeaders(validatorsOf([['last-modified', 'Tue, 03 Nov 2026 10:00:00 GMT']]));
    assert.deepEqual(headers, { 'If-Modified-Since': 'Tue, 03 Nov 2026 10:00:00 GMT' });
  });

  test('obsolete forms are rewritten as an IMF-fixdate; what is not a date is not sent', () => {
    assert.equal(httpDate('Sunday, 06-Nov-94 08:49:37 GMT'), 'Sun, 06 Nov 1994 08:49:37 GMT');
    assert.equal(httpDate('Sun Nov  6 08:49:37 1994'), 'Sun, 06 Nov 1994 08:49:37 GMT');
    assert.equal(httpDate('2026-11-03T10:00:00Z'), undefined, 'ISO 8601 is not an HTTP date');
    assert.equal(httpDate('yesterday'), undefined);
    assert.equal(httpDate('Tue, 3 Nov 2026 10:00:00 GMT'), undefined, 'one-digit day');
    assert.deepEqual(conditionalHeaders(validatorsOf([['last-modified', '1700000000']])), {});
  });

  test('the ETag goes back as If-None-Match, as received (weak prefix and quotes kept)', () => {
    const validators = validatorsOf([
      ['ETag', 'W/"abc"'],
      ['etag', '"second"'],
      ['Last-Modified', 'Tue, 03 Nov 2026 10:00:00 GMT'],
    ]);
    assert.deepEqual(conditionalHeaders(validators), {
      'If-None-Match': 'W/"abc"',
      'If-Modified-Since': 'Tue, 03 Nov 2026 10:00:00 GMT',
    });
    assert.deepEqual(conditionalHeaders(validatorsOf([])), {});
  });
});
