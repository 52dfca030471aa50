/**
 * The summary a local crawl prints: its buckets mean what their labels say (the same function
 * builds the cloud's, see cloud-cli.test.ts), the requests line's words match its numbers, and
 * there is no CPU per page without a page.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatSummary, type SummaryView } from '../../../functions/cli/progress.ts';

function summary(overrides: Partial<SummaryView>): SummaryView {
  return {
    state: 'done',
    resumed: false,
    seeds: ['http://127.0.0.1:9/'],
    outDir: 'out',
    startedAt: '2026-11-28T10:00:00.000Z',
    finishedAt: '2026-11-28T10:00:05.000Z',
    durationMs: 5000,
    totalDurationMs: 5000,
    pages: 0,
    skipped: 0,
    byStatus: {},
    byReason: {},
    bytes: 0,
    hosts: 0,
    requests: 0,
    failedRequests: 0,
    retries: 0,
    duplicates: 0,
    discovered: 1,
    queued: 0,
    pagesPerSecond: 0,
    urlSeen: { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0, hitRate: 0 },
    peakRssBytes: 50 * 1024 * 1024,
    cpuMs: 537,
    order: 'aopic',
    linksSkipped: {},
    traps: [],
    ...overrides,
  };
}

const line = (text: string, label: string) => text.split('\n').find((l) => l.startsWith(`  ${label}`));

describe('the crawl summary', () => {
  test('a crawl whose seed refused connections: no CPU per page, a request and its retry both failed', () => {
    const text = formatSummary(
      summary({
        state: 'failed',
        stopReason: 'every request failed: 2 × connection refused from 127.0.0.1:9',
        skipped: 1,
        byStatus: { none: 1 },
        byReason: { 'robots-unreachable': 1 },
        requests: 2,
        failedRequests: 2,
        retries: 1,
      }),
    );
    assert.equal(line(text, 'resources'), '  resources    537 CPU ms, peak RSS 50.0 MiB');
    assert.equal(line(text, 'requests'), '  requests     2 (2 failed); 1 retry scheduled');
    // The seed itself was never requested: its robots.txt was.
    assert.equal(line(text, 'by status'), '  by status    not requested: 1');
    assert.match(text, /^crawl failed \(every request failed: 2 × connection refused from 127\.0\.0\.1:9\)/);
  });

  test('"no response" is URLs requested without an answer; the never requested have their own label', () => {
    const text = formatSummary(
      summary({
        pages: 3,
        skipped: 4,
        byStatus: { '200': 2, '503': 1, none: 4 },
        byReason: { connect: 1, 'timeout-headers': 1, robots: 1, 'blocked-address': 1, 'gave-up': 1 },
        requests: 9,
        failedRequests: 6,
        retries: 3,
        cpuMs: 300,
      }),
    );
    assert.equal(line(text, 'by status'), '  by status    200: 2, 503: 1, no response: 2, not requested: 2');
    assert.equal(line(text, 'requests'), '  requests     9 (6 failed); 3 retries scheduled');
    assert.equal(line(text, 'resources'), '  resources    100.00 CPU ms/page, peak RSS 50.0 MiB');
  });
});
