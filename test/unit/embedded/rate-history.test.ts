/**
 * The cloud dashboard's chart (functions/dashboard/rate-history.ts): pages per second over the
 * whole crawl from the pages counter of each view, bounded in points, without 0 pages/s dips that
 * only say a poll came before the counter moved.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DashboardRatePoint } from '../../../functions/core/dashboard-snapshot.ts';
import { RateHistory } from '../../../functions/dashboard/rate-history.ts';

const MINUTE = 60_000;

/** A view of a running crawl at `elapsedMs` with `pages` counted. */
const view = (elapsedMs: number, pages: number, state = 'running') => ({ elapsedMs, pages, state });

describe('RateHistory', () => {
  test('two hours at 10 pages/s, polled every 2 s, the counter moving every 3 s: no dip, whole crawl, bounded', () => {
    const history = new RateHistory();
    let points: DashboardRatePoint[] = [];
    for (let t = 2000; t <= 120 * MINUTE; t += 2000) {
      // The counter shards are updated in batches: a poll often sees the count of 1-2 s ago.
      points = history.add(view(t, Math.floor(t / 3000) * 30));
    }
    assert.ok(points.length <= 240, `${points.length} points`);
    assert.ok(points.length >= 120, `${points.length} points`);
    assert.ok(points[0]!.elapsedMs <= MINUTE, `starts at ${points[0]!.elapsedMs} ms: the whole crawl`);
    const last = points.at(-1)!;
    assert.ok(last.elapsedMs > 120 * MINUTE - 5000, 'up to the last view, within the 5 s gap');
    assert.equal(last.pages, Math.floor(last.elapsedMs / 3000) * 30);
    const rates = points.map((p) => p.pagesPerSecond);
    assert.ok(Math.min(...rates) >= 7, `lowest ${Math.min(...rates)} pages/s: no dip to 0`);
    assert.ok(Math.max(...rates) <= 13, `highest ${Math.max(...rates)} pages/s`);
    // Points of about the same width over the whole crawl: none wider than a minute.
    const widths = points.map((p, i) => p.elapsedMs - (i === 0 ? 0 : points[i - 1]!.elapsedMs));
    assert.ok(Math.max(...widths) <= MINUTE, `widest ${Math.max(...widths)} ms`);
  });

  test('a real stall of a minute shows as 0 pages/s', () => {
    const history = new RateHistory();
    let pages = 0;
    let points: DashboardRatePoint[] = [];
    for (let t = 2000; t <= 5 * MINUTE; t += 2000) {
      if (t <= 2 * MINUTE || t > 3 * MINUTE) pages += 20;
      points = history.add(view(t, pages));
    }
    const stalled = points.filter((p) => p.elapsedMs > 2 * MINUTE + 5000 && p.elapsedMs <= 3 * MINUTE);
    assert.ok(stalled.length > 0 && stalled.every((p) => p.pagesPerSecond === 0));
    assert.ok(points.filter((p) => p.elapsedMs > 3 * MINUTE + 5000).every((p) => p.pagesPerSecond > 5));
  });

  test('opened late: the time before the first view is one average from the crawl start', () => {
    const history = new RateHistory();
    assert.deepEqual(history.add(view(20 * MINUTE, 12_000)), [
      { elapsedMs: 20 * MINUTE, pages: 12_000, pagesPerSecond: 10 },
    ]);
    const points = history.add(view(20 * MINUTE + 6000, 12_030));
    assert.deepEqual(points.at(-1), { elapsedMs: 20 * MINUTE + 6000, pages: 12_030, pagesPerSecond: 5 });
  });

  test('a finished crawl gets its last counter whatever the gap, then no more points', () => {
    const history = new RateHistory();
    history.add(view(10_000, 100));
    assert.equal(history.add(view(11_000, 110)).length, 1, 'a poll 1 s later adds no point');
    const done = history.add(view(12_000, 120, 'done'));
    assert.deepEqual(done.at(-1), { elapsedMs: 12_000, pages: 120, pagesPerSecond: 10 });
    assert.equal(history.add(view(12_000, 120, 'done')).length, 2);
  });
});
