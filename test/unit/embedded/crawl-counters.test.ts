/**
 * The embedded crawl's counters are the core's outcome counts plus its own (issue 12): a finished
 * URL adds to them by the rule the cloud's host ledgers use, and a checkpoint written before
 * (with `pages` and `skipped`) still resumes with the right totals.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countFinished, emptyHostCounts } from '../../../functions/cloud/messages/crawl-records.ts';
import type { CrawlPageOutcome } from '../../../functions/core/step/crawl-page.ts';
import { unfetchedRecord } from '../../../functions/core/step/page-record.ts';
import type { PageRecord } from '../../../functions/core/types.ts';
import {
  countStep,
  emptyCounters,
  notFetched,
  restoreCounters,
} from '../../../functions/embedded/crawl-counters.ts';

const task = { url: 'http://a.test/x', depth: 1 };

function fetched(status: number, bytes: number, extra: Partial<PageRecord> = {}): CrawlPageOutcome {
  const record: PageRecord = { ...unfetchedRecord(task, 'robots'), status, bytes, ...extra };
  delete record.reason;
  if (extra.reason !== undefined) record.reason = extra.reason;
  return { kind: 'done', record, enqueued: [] };
}

describe('embedded crawl counters', () => {
  it('count a finished URL as the cloud does (the core rule), plus "no response" by status', () => {
    const outcomes: CrawlPageOutcome[] = [
      fetched(200, 1000),
      fetched(200, 500, { duplicateOf: 'http://a.test/' }),
      fetched(404, 20),
      { kind: 'done', record: unfetchedRecord(task, 'robots'), enqueued: [] },
      { kind: 'done', record: unfetchedRecord(task, 'timeout-total'), enqueued: [] },
      { kind: 'done', record: unfetchedRecord(task, 'dlq'), enqueued: [] },
    ];
    const embedded = emptyCounters();
    const cloud = emptyHostCounts();
    for (const outcome of outcomes) {
      countStep(embedded, outcome, 0, new Map());
      if (outcome.kind !== 'done') continue;
      const { record } = outcome;
      countFinished(cloud, {
        status: record.status,
        bytes: record.bytes,
        enqueued: 0,
        ...(record.reason === undefined ? {} : { reason: record.reason }),
        ...(record.duplicateOf === undefined ? {} : { duplicateOf: record.duplicateOf }),
      });
    }
    const { none, ...statuses } = embedded.byStatus;
    for (const key of ['finished', 'fetched', 'bytes', 'failed', 'duplicates'] as const) {
      assert.equal(embedded[key], cloud[key], key);
    }
    assert.deepEqual(statuses, cloud.byStatus);
    assert.deepEqual(embedded.byReason, cloud.byReason);
    assert.equal(none, 3);
    assert.equal(embedded.failed, 2, 'timeout-total and dlq are failures, robots is a skip');
    assert.equal(notFetched(embedded), 3);
  });

  it('resume a checkpoint written with pages and skipped', () => {
    const restored = restoreCounters({
      pages: 5,
      skipped: 3,
      byStatus: { '200': 5, none: 3 },
      byReason: { robots: 1, dns: 1, 'gave-up': 1 },
      requests: 9,
    } as Parameters<typeof restoreCounters>[0]);
    assert.equal(restored.fetched, 5);
    assert.equal(restored.finished, 8);
    assert.equal(restored.failed, 2);
    assert.equal(restored.requests, 9);
    assert.equal('pages' in restored, false);
    const current = restoreCounters({ ...emptyCounters(), finished: 4, fetched: 4 });
    assert.equal(current.finished, 4);
  });
});
