/**
 * The frontier worker's Lambda handler: SQS event in, partial batch response out. The batch
 * logic is the use case in functions/cloud/worker/; this file only translates, and applies the
 * FIFO rule of the response (fifo-groups.ts): a record that fails fails every later record of its
 * group, and they are all listed in `batchItemFailures`.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { FrontierMessage, FrontierWorkerDeps } from '../cloud/worker/batch-model.ts';
import { fifoResponse } from '../cloud/worker/fifo-groups.ts';
import { createFrontierBatchProcessor } from '../cloud/worker/process-frontier-batch.ts';
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
 * robots entries, fetchers). Deferred and failed records get their visibility set before the
 * response lists them, so a host waits without the function waiting.
 */
export function createFrontierWorker(
  deps: FrontierWorkerDeps,
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const processBatch = createFrontierBatchProcessor(deps);
  const log = deps.log ?? (() => {});
  return async (event, context) => {
    const messages = event.Records.map(frontierMessage);
    const remaining = context === undefined ? undefined : () => context.getRemainingTimeInMillis();
    const { verdicts } = await processBatch(messages, remaining);
    const { failed, changes } = fifoResponse(messages, verdicts);
    if (changes.length > 0) {
      try {
        const refused = await deps.messages.changeVisibility(changes);
        if (refused > 0)
          log(`${refused} visibility changes refused; those messages return after the queue's timeout`);
      } catch (error) {
        log(`visibility changes failed (${String(error)}); the messages return after the queue's timeout`);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
