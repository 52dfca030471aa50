/**
 * The frontier on SQS FIFO: one message per task, grouped by crawl and host.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { deduplicationId, encodeTask, messageGroupId } from '../../cloud/messages/task-message.ts';
import type {
  CloudFrontier,
  DeadLetter,
  DeadLetterSink,
  FrontierReceiver,
  MessageVisibility,
  QueueDepth,
  ReceivedMessage,
  VisibilityChange,
} from '../../cloud/ports/cloud-ports.ts';
import type { CrawlTask } from '../../core/types.ts';

const SEND_CHUNK = 10;
const MAX_ROUNDS = 4;

/** SQS refused some entries of a batch call again and again; the tasks were not all queued. */
export class SqsSendError extends Error {
  readonly code = 'SQS_SEND_FAILED' as const;
  readonly retryable = true;
  constructor(operation: string, failures: { Id?: string; Code?: string; Message?: string }[]) {
    super(
      `${operation}: ${failures.length} entries failed (${failures
        .slice(0, 3)
        .map((f) => `${f.Code}: ${f.Message}`)
        .join('; ')})`,
    );
    this.name = 'SqsSendError';
  }
}

/**
 * Frontier over an SQS FIFO queue. `MessageGroupId` = `<crawlId>#<host>` (the queue keeps one
 * message per host in flight), `MessageDeduplicationId` = `<crawlId>#<fp>` (`#a<attempt>` for a
 * retry), so a task sent twice within five minutes (a redelivered parent) is queued once.
 * Within a host, tasks come out in the order they were sent.
 */
export class SqsFrontier implements CloudFrontier {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;

  constructor(sqs: SQSClient, queueUrl: string) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
  }

  /** Sends in batches of 10; entries SQS refuses are sent again, and a call that keeps failing throws. */
  async enqueue(tasks: readonly CrawlTask[]): Promise<void> {
    const chunks: CrawlTask[][] = [];
    for (let i = 0; i < tasks.length; i += SEND_CHUNK) chunks.push(tasks.slice(i, i + SEND_CHUNK));
    // Chunks in order: a host's tasks keep their order across chunks only if chunks go one by one.
    for (const chunk of chunks) await this.#send(chunk);
  }

  /** Approximate message counts and the visibility timeout (for the scheduler's cross-checks). */
  depth(): Promise<QueueDepth> {
    return queueDepth(this.#sqs, this.#queueUrl);
  }

  #send(chunk: CrawlTask[]): Promise<void> {
    return sendMessageBatch(
      this.#sqs,
      this.#queueUrl,
      chunk.map((task, i) => ({
        Id: String(i),
        MessageBody: encodeTask(task),
        MessageGroupId: messageGroupId(task),
        MessageDeduplicationId: deduplicationId(task),
      })),
    );
  }
}

/**
 * One SendMessageBatch call (at most 10 entries); entries SQS refuses are sent again, and a call
 * that keeps failing, or fails for the sender's fault (a malformed entry will not pass on a
 * second try), throws SqsSendError.
 */
export async function sendMessageBatch(
  sqs: SQSClient,
  queueUrl: string,
  entries: SendMessageBatchRequestEntry[],
): Promise<void> {
  let pending = entries;
  for (let round = 0; ; round++) {
    const response = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: pending }));
    const failed = response.Failed ?? [];
    if (failed.length === 0) return;
    if (round + 1 >= MAX_ROUNDS || failed.some((f) => f.SenderFault)) {
      throw new SqsSendError('SendMessageBatch', failed);
    }
    const ids = new Set(failed.map((f) => f.Id));
    pending = pending.filter((e) => ids.has(e.Id));
  }
}

/** Approximate message counts of any queue and its visibility timeout (GetQueueAttributes). */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const response = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
        'VisibilityTimeout',
      ],
    }),
  );
  const a = response.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    visibilityTimeoutSeconds: Number(a.VisibilityTimeout ?? 30),
  };
}

/** The depth of a queue the caller only watches (the scheduler and the capture queue). */
export class SqsQueueDepth {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;

  constructor(sqs: SQSClient, queueUrl: string) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
  }

  depth(): Promise<QueueDepth> {
    return queueDepth(this.#sqs, this.#queueUrl);
  }
}

/**
 * The worker's hand on received frontier messages: changes their visibility (how it defers a host
 * without waiting), and receives and deletes messages itself (the runner, frontier-runner.ts). The
 * event source's grants cover all three (ReceiveMessage, DeleteMessage, ChangeMessageVisibility).
 */
export class SqsMessageControl implements MessageVisibility, FrontierReceiver {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;

  constructor(sqs: SQSClient, queueUrl: string) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
  }

  /** ChangeMessageVisibilityBatch in chunks of 10; resolves the number of entries SQS refused. */
  async changeVisibility(changes: readonly VisibilityChange[]): Promise<number> {
    let failed = 0;
    for (let i = 0; i < changes.length; i += SEND_CHUNK) {
      const chunk = changes.slice(i, i + SEND_CHUNK);
      const response = await this.#sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.#queueUrl,
          Entries: chunk.map((c, n) => ({
            Id: String(n),
            ReceiptHandle: c.receiptHandle,
            VisibilityTimeout: Math.max(0, Math.min(43_200, Math.ceil(c.seconds))),
          })),
        }),
      );
      failed += response.Failed?.length ?? 0;
    }
    return failed;
  }

  /** One short poll (no wait: an empty queue must not hold the invocation). */
  async receive(max: number): Promise<ReceivedMessage[]> {
    const response = await this.#sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.#queueUrl,
        MaxNumberOfMessages: Math.max(1, Math.min(10, max)),
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId', 'SequenceNumber'],
      }),
    );
    const received: ReceivedMessage[] = [];
    for (const m of response.Messages ?? []) {
      if (m.MessageId === undefined || m.ReceiptHandle === undefined) continue;
      const a = m.Attributes ?? {};
      const message: ReceivedMessage = {
        messageId: m.MessageId,
        receiptHandle: m.ReceiptHandle,
        body: m.Body ?? '',
        receiveCount: Number(a.ApproximateReceiveCount ?? 1),
      };
      if (a.MessageGroupId !== undefined) message.groupId = a.MessageGroupId;
      if (a.SequenceNumber !== undefined) message.sequenceNumber = a.SequenceNumber;
      received.push(message);
    }
    return received;
  }

  /** DeleteMessageBatch in chunks of 10; resolves the number of entries SQS refused. */
  async remove(receiptHandles: readonly string[]): Promise<number> {
    let failed = 0;
    for (let i = 0; i < receiptHandles.length; i += SEND_CHUNK) {
      const chunk = receiptHandles.slice(i, i + SEND_CHUNK);
      const response = await this.#sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.#queueUrl,
          Entries: chunk.map((receiptHandle, n) => ({ Id: String(n), ReceiptHandle: receiptHandle })),
        }),
      );
      failed += response.Failed?.length ?? 0;
    }
    return failed;
  }
}

/**
 * A worker's own way to a dead-letter queue (the frontier's, FIFO; the capture queue's,
 * standard): the original body plus `reason`, `detail`, `sourceMessageId` and `receiveCount`
 * message attributes; on a FIFO queue, grouped as the source and deduplicated by its message id.
 */
export class SqsDeadLetterQueue implements DeadLetterSink {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;

  constructor(sqs: SQSClient, queueUrl: string) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
  }

  async send(letter: DeadLetter): Promise<void> {
    const text = (value: string) => ({ DataType: 'String', StringValue: value.slice(0, 1000) || '-' });
    await this.#sqs.send(
      new SendMessageCommand({
        QueueUrl: this.#queueUrl,
        MessageBody: letter.body === '' ? '(empty)' : letter.body,
        ...(this.#queueUrl.endsWith('.fifo')
          ? {
              MessageGroupId: letter.groupId.slice(0, 128),
              MessageDeduplicationId: letter.messageId.slice(0, 128),
            }
          : {}),
        MessageAttributes: {
          reason: text(letter.reason),
          detail: text(letter.detail ?? ''),
          sourceMessageId: text(letter.messageId),
          receiveCount: { DataType: 'Number', StringValue: String(letter.receiveCount) },
        },
      }),
    );
  }
}
