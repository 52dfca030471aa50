/**
 * The frontier worker's Lambda handler: SQS event in, partial batch response out. The batch
 * logic is the use case in functions/cloud/worker/ (the runner, frontier-runner.ts, applies the
 * FIFO rule of the response: a record that fails fails every later record of its group, and they
 * are all listed in `batchItemFailures`); this file only translates.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { METRICS } from '../../metrics.ts';
import type { BatchStats, FrontierMessage, FrontierWorkerDeps } from '../../worker/batch-model.ts';
import { type RunnerDeps, type RunnerSettings, serveInvocation } from '../../worker/frontier-runner.ts';
import { createFrontierBatchProcessor } from '../../worker/process-frontier-batch.ts';
/** Maps an SQS record to the use case's message. */
export function frontierMessage(record: SQSRecord): FrontierMessage {
  const message: FrontierMessage = {
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    body: record.body,
    receiveCount: Number(record.attributes.ApproximateReceiveCount ?? 1),
  };
  if (record.attributes.MessageGroupId !== undefined) message.groupId = record.attributes.MessageGroupId;
  if (record.attributes.SequenceNumber !== undefined)
    message.sequenceNumber = record.attributes.SequenceNumber;
  return message;
}

/**
 * Builds the handler; call once per container (its closure is the warm state: URL-seen caches,
 * robots entries, fetchers). The invocation serves its batch and, with time left, more hosts it
 * receives itself (frontier-runner.ts). Deferred and failed records of the batch get their
 * visibility set before the response lists them, so a host waits without the function waiting.
 */
export function createFrontierWorker(
  deps: FrontierWorkerDeps,
  settings?: RunnerSettings,
  /**
   * Publishes the invocation's counts (functions/cloud/metrics.ts: URL-seen look-ups and this
   * container's cache hits, so the hit rate is known per container, as each has its own cache).
   */
  metrics?: (values: Record<string, number>) => void,
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const processBatch = createFrontierBatchProcessor(deps);
  const runner: RunnerDeps = { messages: deps.messages };
  if (deps.receiver !== undefined) runner.receiver = deps.receiver;
  if (deps.log !== undefined) runner.log = deps.log;
  return async (event, context) => {
    const messages = event.Records.map(frontierMessage);
    const remaining = context === undefined ? undefined : () => context.getRemainingTimeInMillis();
    const { failed, rounds } = await serveInvocation(processBatch, runner, messages, remaining, settings);
    const sum = (field: keyof BatchStats) => rounds.reduce((n, r) => n + r[field], 0);
    if (metrics !== undefined && (sum('seenLookups') > 0 || sum('crawled') > 0 || sum('heldBack') > 0)) {
      metrics({
        [METRICS.urlSeenLookups]: sum('seenLookups'),
        [METRICS.urlSeenCacheHits]: sum('seenCacheHits'),
        [METRICS.workerSteps]: sum('crawled'),
        [METRICS.workerStepMs]: sum('stepMs'),
        [METRICS.workerFetchMs]: sum('fetchMs'),
        [METRICS.workerUrlSeenMs]: sum('urlSeenMs'),
        [METRICS.workerCommitMs]: sum('commitMs'),
        [METRICS.workerCaptureBytes]: sum('captureBytes'),
        [METRICS.workerCaptureRecordBytes]: sum('captureRecordBytes'),
        [METRICS.workerHeldBack]: sum('heldBack'),
        [METRICS.workerHeldBackReturned]: sum('heldBackReturned'),
      });
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
