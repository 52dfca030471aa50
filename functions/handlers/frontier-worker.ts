/**
 * The frontier worker's Lambda handler: SQS event in, partial batch response out. The batch
 * logic is the use case in functions/cloud/frontier-batch.ts; this file only translates.
 *
 * Not Powertools' SqsFifoPartialProcessor: it runs the whole batch one record at a time (a
 * failure short-circuits everything after it, or skips its group), while this worker fetches
 * different hosts concurrently and must write the batch's WARC object and ledgers after all
 * records ran and before any is acknowledged. The FIFO rule is the same: a record that fails
 * fails every later record of its group, and they are all listed in `batchItemFailures`.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import {
  createFrontierBatchProcessor,
  type FrontierMessage,
  type FrontierWorkerDeps,
} from '../cloud/worker/frontier-batch.ts';

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
    const failed = new Set<string>();
    const changes: { receiptHandle: string; seconds: number }[] = [];
    const blockedGroups = new Map<string, number>();
    for (const message of messages) {
      const verdict = verdicts.get(message.messageId);
      const groupBlock = message.groupId === undefined ? undefined : blockedGroups.get(message.groupId);
      if (verdict?.kind === 'ack' && groupBlock === undefined) continue;
      // No verdict (should not happen) or behind a failed record of its group: fail it too.
      const seconds = verdict?.kind === 'retry' ? verdict.seconds : (groupBlock ?? 0);
      failed.add(message.messageId);
      changes.push({ receiptHandle: message.receiptHandle, seconds });
      if (message.groupId !== undefined && groupBlock === undefined)
        blockedGroups.set(message.groupId, seconds);
    }
    if (changes.length > 0) {
      try {
        const refused = await deps.messages.changeVisibility(changes);
        if (refused > 0)
          log(`${refused} visibility changes refused; those messages return after the queue's timeout`);
      } catch (error) {
        log(`visibility changes failed (${String(error)}); the messages return after the queue's timeout`);
      }
    }
    return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
