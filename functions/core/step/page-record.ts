/**
 * What both runtimes record when a URL is finished: the reasons a URL can end with (one union),
 * the record of a URL that was never fetched, which reasons are failures, and the counts every
 * finished URL adds to. The embedded crawler and the cloud worker both use these, so a reason or
 * a counting rule exists once.
 */

import { classifyLink } from '../html/classify.ts';
import type { FetchErrorCode } from '../ports.ts';
import type { CrawlTask, PageRecord, SkipReason } from '../types.ts';

/**
 * Why a URL finished without a normal page: a deliberate skip ({@link SkipReason}), a network
 * failure (the fetcher's codes), or a failure of the crawler itself. Stable strings: they are
 * keys of `byReason` counters and values of `reason` in page records.
 */
export type FinishReason =
  | SkipReason
  | FetchErrorCode
  /** A bug or a storage failure while crawling the URL (embedded). */
  | 'internal-error'
  /** The embedded crawl process died this many times while the URL was in progress: not tried again. */
  | 'crashed'
  /** Given up on by the cloud worker, or by SQS's redrive: the message went to the dead-letter queue. */
  | 'dlq';

/**
 * Reasons of a URL whose own request was sent and got no HTTP response (refused, unreachable,
 * timed out, broken TLS or HTTP). Every other URL finished without a response was never requested:
 * skipped (robots.txt, scope, limits, traps), refused by the SSRF guard, or its robots.txt failed.
 */
export const NO_RESPONSE_REASONS: ReadonlySet<string> = new Set<FinishReason>([
  'dns',
  'connect',
  'tls',
  'protocol',
  'timeout-connect',
  'timeout-headers',
  'timeout-idle',
  'timeout-total',
]);

/** Reasons that mean something went wrong (as opposed to a deliberate skip). */
export const ERROR_REASONS: ReadonlySet<string> = new Set<string>([
  ...(['gave-up', 'robots-unreachable', 'internal-error', 'dlq'] satisfies FinishReason[]),
  ...NO_RESPONSE_REASONS,
]);

/**
 * The finished URLs by what came back, as every report shows them (the CLI's summary of a local
 * or a cloud crawl): one entry per HTTP status, `no response` (requested, no answer) and `not
 * requested` (the rest of the URLs finished without a response). Read from the counts both
 * runtimes keep, so the buckets mean the same everywhere.
 */
export function outcomeBuckets(
  counts: Pick<OutcomeCounts, 'byStatus' | 'byReason'> & { notFetched: number },
): [label: string, n: number][] {
  const buckets: [string, number][] = Object.entries(counts.byStatus)
    .filter(([status]) => /^\d+$/.test(status))
    .sort(([a], [b]) => Number(a) - Number(b));
  let noResponse = 0;
  for (const [reason, n] of Object.entries(counts.byReason))
    if (NO_RESPONSE_REASONS.has(reason)) noResponse += n;
  noResponse = Math.min(noResponse, counts.notFetched);
  if (noResponse > 0) buckets.push(['no response', noResponse]);
  if (counts.notFetched > noResponse) buckets.push(['not requested', counts.notFetched - noResponse]);
  return buckets;
}

/** True when a finished URL's reason is a failure (it counts in `failed`). */
export function isErrorReason(reason: string | undefined): boolean {
  return reason !== undefined && ERROR_REASONS.has(reason);
}

/**
 * The record of a URL that was never fetched (skipped, dropped, failed before a response, given
 * up on). Its kind comes from the URL, as for a link.
 */
export function unfetchedRecord(
  task: Pick<CrawlTask, 'url' | 'depth'>,
  reason: FinishReason,
  detail?: string,
): PageRecord {
  const record: PageRecord = {
    url: task.url,
    finalUrl: task.url,
    status: null,
    contentType: null,
    kind: classifyLink('a', task.url),
    depth: task.depth,
    bytes: 0,
    fetchedAt: null,
    durationMs: null,
    title: null,
    contentHash: null,
    outLinks: 0,
    reason,
  };
  if (detail !== undefined) record.detail = detail;
  return record;
}

/** What finished URLs add up to, in both runtimes. */
export interface OutcomeCounts {
  /** URLs finished (fetched, skipped, failed for good, dropped, dead-lettered). */
  finished: number;
  /** Finished with an HTTP response. */
  fetched: number;
  /** Decoded body bytes of the fetched ones. */
  bytes: number;
  /** Finished with an error reason (see {@link ERROR_REASONS}). */
  failed: number;
  /** Exact content duplicates found. */
  duplicates: number;
  /** Finished URLs by HTTP status. */
  byStatus: Record<string, number>;
  /** Finished URLs by reason (skips, failures, drops). */
  byReason: Record<string, number>;
}

/** Counts of nothing finished yet. */
export function emptyOutcomeCounts(): OutcomeCounts {
  return { finished: 0, fetched: 0, bytes: 0, failed: 0, duplicates: 0, byStatus: {}, byReason: {} };
}

/** Adds `add`'s outcome counts into `into` (numbers, and the per-status and per-reason maps). */
export function addOutcomeCounts(into: OutcomeCounts, add: OutcomeCounts): void {
  into.finished += add.finished;
  into.fetched += add.fetched;
  into.bytes += add.bytes;
  into.failed += add.failed;
  into.duplicates += add.duplicates;
  for (const [k, n] of Object.entries(add.byStatus)) into.byStatus[k] = (into.byStatus[k] ?? 0) + n;
  for (const [k, n] of Object.entries(add.byReason)) into.byReason[k] = (into.byReason[k] ?? 0) + n;
}

/** What one finished URL contributes to {@link OutcomeCounts}. */
export interface FinishedOutcome {
  status: number | null;
  bytes: number;
  reason?: string;
  duplicateOf?: string;
}

/** Adds one finished URL to `counts`. */
export function countOutcome(counts: OutcomeCounts, finished: FinishedOutcome): void {
  counts.finished += 1;
  if (finished.status !== null) {
    counts.fetched += 1;
    counts.bytes += finished.bytes;
    const key = String(finished.status);
    counts.byStatus[key] = (counts.byStatus[key] ?? 0) + 1;
  }
  if (finished.reason !== undefined) {
    counts.byReason[finished.reason] = (counts.byReason[finished.reason] ?? 0) + 1;
    if (isErrorReason(finished.reason)) counts.failed += 1;
  }
  if (finished.duplicateOf !== undefined) counts.duplicates += 1;
}
