/**
 * Where the frontier worker's time went, read from the EMF line each invocation writes
 * (functions/cloud/metrics.ts: WorkerSteps, WorkerStepMs, WorkerFetchMs, WorkerUrlSeenMs,
 * WorkerCommitMs). The worker is billed by its wall time, so this says what a crawl's worker row
 * pays for: requests, the URL-seen store's round trips, or the batches' commits. The same line
 * carries the capture messages' bytes (WorkerCaptureBytes, WorkerCaptureRecordBytes): what the
 * capture queue's row is made of; and a budgeted crawl's hold-back (WorkerHeldBack,
 * WorkerHeldBackReturned).
 */

/** The worker's time summed over a crawl's invocations. */
export interface WorkerTime {
  steps: number;
  stepMs: number;
  fetchMs: number;
  urlSeenMs: number;
  commitMs: number;
  captureBytes: number;
  captureRecordBytes: number;
  heldBack: number;
  heldBackReturned: number;
}

export function emptyWorkerTime(): WorkerTime {
  return {
    steps: 0,
    stepMs: 0,
    fetchMs: 0,
    urlSeenMs: 0,
    commitMs: 0,
    captureBytes: 0,
    captureRecordBytes: 0,
    heldBack: 0,
    heldBackReturned: 0,
  };
}

/** The fields of an EMF line, or undefined when it is not JSON. */
export function parseEmf(text: string): Record<string, number> | undefined {
  try {
    return JSON.parse(text) as Record<string, number>;
  } catch {
    return undefined;
  }
}

/** Adds one worker EMF line's figures to `time` (lines without them add nothing). */
export function addWorkerTime(time: WorkerTime, emf: Record<string, number>): void {
  time.steps += emf.WorkerSteps ?? 0;
  time.stepMs += emf.WorkerStepMs ?? 0;
  time.fetchMs += emf.WorkerFetchMs ?? 0;
  time.urlSeenMs += emf.WorkerUrlSeenMs ?? 0;
  time.commitMs += emf.WorkerCommitMs ?? 0;
  time.captureBytes += emf.WorkerCaptureBytes ?? 0;
  time.captureRecordBytes += emf.WorkerCaptureRecordBytes ?? 0;
  time.heldBack += emf.WorkerHeldBack ?? 0;
  time.heldBackReturned += emf.WorkerHeldBackReturned ?? 0;
}

/** One line for a report: records the hold-back held, and of them given back to their back queue. */
export function describeHoldBack(time: WorkerTime): string {
  return (
    `hold-back: ${time.heldBack} records held (${(time.heldBack / Math.max(1, time.steps)).toFixed(2)} per crawl step), ` +
    `of which ${time.heldBackReturned} given back to their host's back queue`
  );
}

/** One line for a report: the capture messages' bytes per page fetched, and the WARC records' share. */
export function describeCaptureBytes(time: WorkerTime, pages: number): string {
  if (time.captureBytes === 0) return 'capture messages: not measured (no WorkerCaptureBytes EMF line)';
  const kb = (bytes: number) => (bytes / Math.max(1, pages) / 1000).toFixed(1);
  const share = ((100 * time.captureRecordBytes) / time.captureBytes).toFixed(0);
  return (
    `capture messages: ${kb(time.captureBytes)} KB per page fetched, of which the WARC records ` +
    `(gzipped, in base64) ${kb(time.captureRecordBytes)} KB (${share}%)`
  );
}

/** One line for a report: ms per crawl step in the step, its requests, its claims, and commits. */
export function describeWorkerTime(time: WorkerTime): string {
  if (time.steps === 0) return 'worker time: not measured (no WorkerSteps EMF line)';
  const per = (ms: number) => (ms / time.steps).toFixed(0);
  const share = (ms: number) => `${((100 * ms) / Math.max(1, time.stepMs)).toFixed(0)}%`;
  return (
    `worker time per crawl step (${time.steps} steps): ${per(time.stepMs)} ms in the step, of which ` +
    `requests ${per(time.fetchMs)} ms (${share(time.fetchMs)}) and URL-seen claims ` +
    `${per(time.urlSeenMs)} ms (${share(time.urlSeenMs)}); commits ${per(time.commitMs)} ms per step`
  );
}
