import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import {
  type ChangeHistory,
  changeProbability,
  changeRate,
  revisitInterval,
} from '../../../functions/core/recrawl/change-rate.ts';
import { type KnownPage, recrawlOrder } from '../../../functions/core/recrawl/recrawl-order.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const bounds = { minIntervalMs: HOUR, maxIntervalMs: 30 * DAY };

function history(visits: number, changes: number, lastVisitAt = visits * DAY): ChangeHistory {
  return { visits, changes, firstVisitAt: 0, lastVisitAt };
}

describe('change rate and interval', () => {
  test('no revisit yet: no estimate, the shortest interval, even odds', () => {
    assert.equal(changeRate(history(0, 0)), undefined);
    assert.equal(revisitInterval(history(0, 0), bounds), HOUR);
    assert.equal(changeProbability(history(0, 0), DAY), 0.5);
  });

  test('never changed: rate 0, the longest interval', () => {
    assert.equal(changeRate(history(10, 0)), 0);
    assert.equal(revisitInterval(history(10, 0), bounds), 30 * DAY);
  });

  test('changed at every daily visit: finite, more than one per day, the interval under a day', () => {
    const rate = changeRate(history(10, 10))!;
    assert.ok(Number.isFinite(rate));
    assert.ok(rate > 1 / DAY, `${rate * DAY} per day`);
    assert.ok(revisitInterval(history(10, 10), bounds) < DAY);
  });

  test('more changes observed, a shorter interval (monotone)', () => {
    const intervals = [0, 2, 5, 8, 10].map((x) => revisitInterval(history(10, x), bounds));
    for (let i = 1; i < intervals.length; i++)
      assert.ok(intervals[i]! < intervals[i - 1]!, String(intervals));
  });

  test('the interval stays within the bounds', () => {
    const tight = { minIntervalMs: 2 * DAY, maxIntervalMs: 3 * DAY };
    assert.equal(revisitInterval(history(10, 10), tight), 2 * DAY);
    assert.equal(revisitInterval(history(10, 1), tight), 3 * DAY);
  });

  test('a sitemap lastmod later than the last visit makes the change certain', () => {
    assert.equal(changeProbability({ ...history(10, 0), lastmod: 11 * DAY }, 12 * DAY), 1);
    assert.equal(changeProbability({ ...history(10, 0), lastmod: 5 * DAY }, 12 * DAY), 0);
  });
});

describe('recrawlOrder', () => {
  const now = 20 * DAY;
  const pages: KnownPage[] = [
    { url: 'never', history: history(10, 0, 19 * DAY) },
    { url: 'always', history: history(10, 10, 19 * DAY) },
    { url: 'sometimes', history: history(10, 3, 10 * DAY) },
    { url: 'old', history: history(10, 0, 1 * DAY) },
    { url: 'removed', history: history(10, 10, 19 * DAY), gone: true },
  ];
  const options = { ...bounds, now };

  test('adaptive: due pages only, likeliest changed first, within the budget', () => {
    const plan = recrawlOrder(pages, { ...options, schedule: 'adaptive' });
    assert.deepEqual(
      plan.map((v) => v.url),
      // sometimes: ~0.34 changes a day, unvisited for 10 days (P 0.97); always: ~1.6 a day, 1 day (P 0.8)
      ['sometimes', 'always'],
    );
    assert.deepEqual(
      recrawlOrder(pages, { ...options, schedule: 'adaptive', budget: 1 }).map((v) => v.url),
      ['sometimes'],
    );
    // A budget left over goes to the pages past the shortest interval: no change expected, oldest first.
    assert.deepEqual(
      recrawlOrder(pages, { ...options, schedule: 'adaptive', budget: 10 }).map((v) => v.url),
      ['sometimes', 'always', 'old', 'never'],
    );
  });

  test('adaptive: the shortest interval holds even with budget left; the longest one forces a visit', () => {
    const recent: KnownPage[] = [
      { url: 'just-visited', history: history(10, 10, now - HOUR / 2) },
      { url: 'overdue', history: history(10, 0, now - 31 * DAY) },
      { url: 'likely', history: history(10, 9, 19 * DAY) },
    ];
    assert.deepEqual(
      recrawlOrder(recent, { ...options, schedule: 'adaptive', budget: 5 }).map((v) => v.url),
      ['overdue', 'likely'],
    );
  });

  test('uniform: least recently visited first; full: every live page; gone pages never', () => {
    assert.deepEqual(
      recrawlOrder(pages, { ...options, schedule: 'uniform', budget: 2 }).map((v) => v.url),
      ['old', 'sometimes'],
    );
    assert.deepEqual(
      recrawlOrder(pages, { ...options, schedule: 'full' }).map((v) => v.url),
      ['never', 'always', 'sometimes', 'old'],
    );
  });
});

describe('recrawl settings in the one schema', () => {
  test('defaults, and bounds that name the setting', () => {
    const ok = parseCrawlConfig({ seeds: ['http://example.com/'] });
    assert.ok(ok.ok);
    assert.equal(ok.config.recrawlSchedule, 'adaptive');
    assert.equal(ok.config.recrawlMinIntervalMs, HOUR);
    assert.equal(ok.config.recrawlMaxIntervalMs, 30 * DAY);
    const crossed = parseCrawlConfig({
      seeds: ['http://example.com/'],
      recrawlMinIntervalMs: 2 * DAY,
      recrawlMaxIntervalMs: DAY,
    });
    assert.ok(!crossed.ok);
    assert.match(crossed.problems.join('\n'), /recrawlMinIntervalMs/);
    const schedule = parseCrawlConfig({ seeds: ['http://example.com/'], recrawlSchedule: 'weekly' });
    assert.ok(!schedule.ok);
    assert.match(schedule.problems.join('\n'), /^recrawlSchedule: /m);
  });
});
