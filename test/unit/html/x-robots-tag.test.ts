import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseXRobotsTag } from '../../../functions/core/html/x-robots-tag.ts';

describe('parseXRobotsTag', () => {
  const none = { noindex: false, nofollow: false };
  const table: [values: string[], expected: { noindex: boolean; nofollow: boolean }][] = [
    [[], none],
    [['noindex'], { noindex: true, nofollow: false }],
    [['nofollow'], { noindex: false, nofollow: true }],
    [['NOINDEX, NOFOLLOW'], { noindex: true, nofollow: true }],
    [['none'], { noindex: true, nofollow: true }],
    [['noindex', 'nofollow'], { noindex: true, nofollow: true }],
    [['all'], none],
    [['noarchive, nosnippet'], none],
    [['crawlstack: noindex'], { noindex: true, nofollow: false }],
    [['CrawlStack: noindex, nofollow'], { noindex: true, nofollow: true }],
    [['crawlstack:none'], { noindex: true, nofollow: true }],
    [['googlebot: noindex'], none],
    [['googlebot: noindex, nofollow'], none],
    [['googlebot: noindex', 'crawlstack: nofollow'], { noindex: false, nofollow: true }],
    // Headers joined with ", " (as fetch's Headers does): the agent prefix resets.
    [['googlebot: noindex, crawlstack: nofollow'], { noindex: false, nofollow: true }],
    [['nofollow', 'googlebot: noindex'], { noindex: false, nofollow: true }],
    [['unavailable_after: 25 Jun 2010 15:00:00 PST'], none],
    [['unavailable_after: Friday, 25-Jun-2010 15:00:00 PST, noindex'], { noindex: true, nofollow: false }],
    [['crawlstack: unavailable_after: 25 Jun 2010 15:00:00 PST'], none],
    [['max-snippet: 20, noindex'], { noindex: true, nofollow: false }],
    [['  noindex  ,  '], { noindex: true, nofollow: false }],
    [['noindex nofollow'], { noindex: true, nofollow: true }],
    [[''], none],
  ];
  for (const [values, expected] of table) {
    it(JSON.stringify(values), () => assert.deepEqual(parseXRobotsTag(values, 'crawlstack'), expected));
  }

  it('the agent is matched case-insensitively', () => {
    assert.deepEqual(parseXRobotsTag(['crawlstack: noindex'], 'CrawlStack'), {
      noindex: true,
      nofollow: false,
    });
    assert.deepEqual(parseXRobotsTag(['otherbot: noindex'], 'CrawlStack'), {
      noindex: false,
      nofollow: false,
    });
  });
});
