/**
 * Custom CloudWatch metrics the functions publish, as CloudWatch embedded metric format (EMF) log
 * lines: Lambda sends stdout to the function's log group, and CloudWatch turns each such line
 * into a metric point, with no API call and no extra permission. lib/alarms.ts alarms on the same
 * names, so both sides import them from here. Bundled into every Lambda: imports nothing.
 */

/** Namespace of every crawlstack metric. */
export const METRIC_NAMESPACE = 'crawlstack';

/** Metrics by name. */
export const METRICS = {
  /**
   * A request the API answered with 500 (an unexpected error: a denied call, a bug). Hono turns
   * the error into a response, so Lambda's `Errors` metric never counts it; this does.
   */
  apiInternalErrors: 'ApiInternalErrors',
  /** URL-seen look-ups of one worker invocation's pages, and those its container's cache answered. */
  urlSeenLookups: 'UrlSeenLookups',
  urlSeenCacheHits: 'UrlSeenCacheHits',
  /**
   * Where a worker invocation's time went (the worker is billed by its wall time): crawl steps
   * (a page, or a host's robots.txt), and ms summed over them in the steps, in their requests,
   * in their URL-seen claims, and in the batches' commits (BatchStats in
   * functions/cloud/worker/batch-model.ts).
   */
  workerSteps: 'WorkerSteps',
  workerStepMs: 'WorkerStepMs',
  workerFetchMs: 'WorkerFetchMs',
  workerUrlSeenMs: 'WorkerUrlSeenMs',
  workerCommitMs: 'WorkerCommitMs',
  /**
   * Bytes of the capture messages a worker invocation sent (what SQS bills, per 64 KiB), and of
   * them the WARC records carried inline: the archive's own bytes, which no encoding removes.
   */
  workerCaptureBytes: 'WorkerCaptureBytes',
  workerCaptureRecordBytes: 'WorkerCaptureRecordBytes',
  /**
   * Records a worker invocation held back (a budgeted crawl's AOPIC hold-back), and of them those
   * given back to their host's back queue instead of waiting: each costs a receive and a
   * visibility change, or, given back, a back-queue write, so many per page say the budget's
   * order is paying for itself in requests.
   */
  workerHeldBack: 'WorkerHeldBack',
  workerHeldBackReturned: 'WorkerHeldBackReturned',
} as const;

/** A metric's CloudWatch unit: names ending in `Ms` are durations, in `Bytes` sizes, the others counts. */
function unitOf(name: string): 'Milliseconds' | 'Bytes' | 'Count' {
  if (name.endsWith('Ms')) return 'Milliseconds';
  return name.endsWith('Bytes') ? 'Bytes' : 'Count';
}

/** One EMF log line: `value` of metric `name` at `timestamp` (epoch ms), with `dimensions`. */
export function emfLine(
  name: string,
  value: number,
  timestamp: number,
  dimensions: Record<string, string>,
): string {
  return emfCounts({ [name]: value }, timestamp, dimensions);
}

/** One EMF log line of several values (counts, or durations: unitOf) at `timestamp` (epoch ms). */
export function emfCounts(
  values: Record<string, number>,
  timestamp: number,
  dimensions: Record<string, string>,
): string {
  return JSON.stringify({
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: METRIC_NAMESPACE,
          Dimensions: [Object.keys(dimensions)],
          Metrics: Object.keys(values).map((name) => ({ Name: name, Unit: unitOf(name) })),
        },
      ],
    },
    ...dimensions,
    ...values,
  });
}
