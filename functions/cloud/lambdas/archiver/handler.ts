/**
 * The archiver's Lambda handler: an SQS event of capture messages (a large batch gathered over
 * the event source's batching window) in, a partial batch response out. The work is the use case
 * in functions/cloud/use-cases/archive-captures.ts; this file only translates.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type ArchiverDeps, createCaptureArchiver } from '../../use-cases/archive-captures.ts';

/**
 * Builds the handler; call once per container (its closure remembers which URLs it indexed).
 * Messages whose crawl's objects could not be written are listed in `batchItemFailures` and come
 * back after the queue's visibility timeout; everything else is deleted by the event source.
 */
export function createArchiver(deps: ArchiverDeps): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const archive = createCaptureArchiver(deps);
  return async (event) => {
    const { failed } = await archive(
      event.Records.map((record) => ({
        messageId: record.messageId,
        body: record.body,
        receiveCount: Number(record.attributes.ApproximateReceiveCount ?? 1),
        sentTimestamp: Number(record.attributes.SentTimestamp ?? 0),
      })),
    );
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
