/**
 * The one counters shape (OutcomeCounts, functions/core/step/page-record.ts): what a finished URL
 * adds, how counts add up, and that both runtimes' counters are built from it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  aggregateCounters,
  countFinished,
  emptyHostCounts,
} from '../../../functions/cloud/messages/crawl-records.ts';
import {
  addOutcomeCounts,
  countOutcome,
  emptyOutcomeCounts,
  type OutcomeCounts,
} from '../../../functions/core/step/page-record.ts';
import { emptyCounters } from '../../../functions/embedded/crawl-counters.ts';

const FINISHED = [
  { status: 200, bytes: 100 },
  { status: 200, bytes: 50, duplicateOf: 'http://a.test/' },
  { status: 404, bytes: 9 },
  { status: null, bytes: 0, reason: 'robots' },
  { status: null, bytes: 0, reason: 'connect' },
  { status: 503, bytes: 3, reason: 'gave-up' },
] as const;

function counted(finished: readonly (typeof FINISHED)[number][]): OutcomeCounts {
  const counts = emptyOutcomeCounts();
  for (const f of finished) countOutcome(counts, { ...f });
  return counts;
}

describe('OutcomeCounts', () => {
  it('counts finished URLs by status and reason, with bytes, failures and duplicates', () => {
    assert.deepEqual(counted(FINISHED), {
      finished: 6,
      fetched: 4,
      bytes: 162,
      failed: 2,
      duplicates: 1,
      byStatus: { '200': 2, '404': 1, '503': 1 },
      byReason: { robots: 1, connect: 1, 'gave-up': 1 },
    });
  });

  it('adds up: two halves added equal the whole', () => {
    const sum = emptyOutcomeCounts();
    addOutcomeCounts(sum, counted(FINISHED.slice(0, 3)));
    addOutcomeCounts(sum, counted(FINISHED.slice(3)));
    assert.deepEqual(sum, counted(FINISHED));
  });

  it("is the shape of both runtimes' counters: the cloud's host ledgers sum to it, the embedded starts from it", () => {
    const hosts = [emptyHostCounts(), emptyHostCounts()];
    for (const [i, f] of FINISHED.entries()) countFinished(hosts[i % 2]!, { ...f, enqueued: 0 });
    const { counters } = aggregateCounters(0, hosts);
    const whole = counted(FINISHED);
    for (const key of Object.keys(whole) as (keyof OutcomeCounts)[])
      assert.deepEqual(counters[key], whole[key], key);
    const embedded = emptyCounters();
    for (const [key, value] of Object.entries(emptyOutcomeCounts()))
      assert.deepEqual(embedded[key as keyof OutcomeCounts], value, key);
  });
});
