/**
 * Lambda's SQS event source mapping, in process: pollers long-poll the queue, hand each batch to
 * the function as a real-shaped `SQSEvent`, and delete what {@link settleSqsBatch} says succeeded.
 * Records whose chain of events has invoked a `Terminate` function its recursion limit's number
 * of times are not handed to it: they stay on the queue, return after their visibility timeout
 * and reach the dead-letter queue after `maxReceiveCount` receives, as on AWS
 * (recursion-detection.ts). The invocation's trace header carries the lineage on.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import type { LocalLambda } from './local-lambda.ts';
import { invocationTrace, lineageCount } from './recursion-detection.ts';
import { settleSqsBatch } from './sqs-batch-settlement.ts';

export interface SqsEventSourceOptions {
  lambda: LocalLambda;
  /**
   * The client the poller receives and deletes with. Lambda polls with the function's execution
   * role, so `cloud-local.ts` passes a client with the function's credentials.
   */
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  /** Records per invocation (Lambda's default and the SQS receive maximum: 10). */
  batchSize?: number;
  /** `FunctionResponseTypes: [ReportBatchItemFailures]`; off by default, as in Lambda. */
  reportBatchItemFailures?: boolean;
  /**
   * Concurrent pollers, each running one invocation at a time: `ScalingConfig.MaximumConcurrency`
   * (Lambda starts 5 pollers without it). Capped by the function's reserved concurrency.
   */
  maxConcurrency?: number;
  /** `MaximumBatchingWindowInSeconds`: gather up to this long for a fuller batch. */
  batchingWindowSeconds?: number;
  /**
   * Lambda's invocation payload limit (6 MB): a batch is cut there, and the messages beyond it
   * start the poller's next batch (they stay in flight meanwhile, as with Lambda's poller).
   */
  maxPayloadBytes?: number;
  /** Long-poll wait per receive (Lambda uses 20 s). */
  waitTimeSeconds?: number;
  region?: string;
  log?: (message: string) => void;
}

/** Counters for tests and the cost benchmark. */
export interface EventSourceStats {
  receives: number;
  /** Receives that returned nothing (idle long polls, and the end of a batching window). */
  emptyReceives: number;
  batches: number;
  records: number;
  deleted: number;
  /** Records left on the queue after a failed or partly failed batch. */
  retried: number;
  failedBatches: number;
  /** Records not handed to the function: its recursive loop detection stopped them. */
  recursionStopped: number;
  /** Invocations the account's (or the function's reserved) concurrency throttled. */
  throttled: number;
  receiveErrors: number;
  deleteErrors: number;
}

/** How long a poller waits after a throttled invocation before it receives again. */
const THROTTLE_BACKOFF_MS = 200;

function recordAttributes(message: Message): SQSRecord['attributes'] {
  const a = message.Attributes ?? {};
  const attributes: SQSRecord['attributes'] = {
    ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
    SentTimestamp: a.SentTimestamp ?? '0',
    SenderId: a.SenderId ?? '000000000000',
    ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? a.SentTimestamp ?? '0',
  };
  if (a.AWSTraceHeader !== undefined) attributes.AWSTraceHeader = a.AWSTraceHeader;
  if (a.SequenceNumber !== undefined) attributes.SequenceNumber = a.SequenceNumber;
  if (a.MessageGroupId !== undefined) attributes.MessageGroupId = a.MessageGroupId;
  if (a.MessageDeduplicationId !== undefined) attributes.MessageDeduplicationId = a.MessageDeduplicationId;
  if (a.DeadLetterQueueSourceArn !== undefined)
    attributes.DeadLetterQueueSourceArn = a.DeadLetterQueueSourceArn;
  return attributes;
}

function recordMessageAttributes(
  values: Record<string, MessageAttributeValue> | undefined,
): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(values ?? {})) {
    out[name] = {
      dataType: value.DataType ?? 'String',
      stringListValues: [],
      binaryListValues: [],
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      ...(value.BinaryValue === undefined
        ? {}
        : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
    };
  }
  return out;
}

/** A message's share of an invocation payload: its body plus the record's other fields, roughly. */
function messageBytes(message: Message): number {
  return Buffer.byteLength(message.Body ?? '', 'utf8') + 600;
}

/** Turns received SQS messages into the records of an `SQSEvent`, as Lambda shapes them. */
export function toSqsRecords(messages: Message[], queueArn: string, region: string): SQSRecord[] {
  return messages.map((message) => {
    const record: SQSRecord = {
      messageId: message.MessageId ?? '',
      receiptHandle: message.ReceiptHandle ?? '',
      body: message.Body ?? '',
      attributes: recordAttributes(message),
      messageAttributes: recordMessageAttributes(message.MessageAttributes),
      md5OfBody: message.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: region,
    };
    if (message.MD5OfMessageAttributes !== undefined)
      record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
    return record;
  });
}

/** Polls one queue for one function until {@link SqsEventSource.stop}. */
export class SqsEventSource {
  readonly #options: SqsEventSourceOptions;
  readonly #fifo: boolean;
  readonly #region: string;
  readonly #abort = new AbortController();
  #pollers: Promise<void>[] = [];
  #stopping = false;
  #stats: EventSourceStats = {
    receives: 0,
    emptyReceives: 0,
    batches: 0,
    records: 0,
    deleted: 0,
    retried: 0,
    failedBatches: 0,
    recursionStopped: 0,
    throttled: 0,
    receiveErrors: 0,
    deleteErrors: 0,
  };

  constructor(options: SqsEventSourceOptions) {
    this.#options = options;
    this.#fifo = options.queueArn.endsWith('.fifo') || options.queueUrl.endsWith('.fifo');
    this.#region = options.region ?? options.queueArn.split(':')[3] ?? 'us-east-1';
  }

  stats(): EventSourceStats {
    return { ...this.#stats };
  }

  /** Starts the pollers (idempotent). */
  start(): this {
    if (this.#pollers.length > 0 || this.#stopping) return this;
    const reserved = this.#options.lambda.reservedConcurrency;
    let pollers = Math.max(1, this.#options.maxConcurrency ?? 5);
    if (reserved !== undefined) pollers = Math.min(pollers, reserved);
    for (let i = 0; i < pollers; i++) this.#pollers.push(this.#poll());
    return this;
  }

  /**
   * Stops polling: waiting receives are aborted, batches already handed to the function finish
   * (bounded by the function timeout) and are settled before this resolves. A receive aborted
   * on the client may still have taken messages on the server; they return after their
   * visibility timeout, as with any consumer that disappears.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#abort.abort();
    await Promise.all(this.#pollers);
  }

  async #poll(): Promise<void> {
    // Messages received beyond the payload limit of the previous batch: the next batch's start.
    const carry: Message[] = [];
    while (!this.#stopping) {
      let messages: Message[];
      try {
        messages = await this.#gather(carry);
      } catch (error) {
        if (this.#stopping) return;
        this.#stats.receiveErrors += 1;
        this.#options.log?.(`receive from ${this.#options.queueUrl} failed: ${String(error)}`);
        await this.#pause(1000);
        continue;
      }
      if (messages.length > 0) await this.#process(messages);
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.#abort.signal;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  async #receive(max: number, waitSeconds: number): Promise<Message[]> {
    this.#stats.receives += 1;
    const response = await this.#options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.#options.queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: this.#abort.signal },
    );
    const messages = response.Messages ?? [];
    if (messages.length === 0) this.#stats.emptyReceives += 1;
    return messages;
  }

  /**
   * One long-polled receive (or the carried-over messages), then more while a batching window is
   * open or receives come back full, up to the batch size; cut at the payload limit.
   */
  async #gather(carry: Message[]): Promise<Message[]> {
    const batchSize = Math.max(1, this.#options.batchSize ?? 10);
    const batch = carry.splice(0, batchSize);
    if (batch.length === 0) {
      batch.push(...(await this.#receive(batchSize, this.#options.waitTimeSeconds ?? 20)));
      if (batch.length === 0) return batch;
    }
    const limit = this.#options.maxPayloadBytes ?? 6 * 1024 * 1024;
    let size = batch.reduce((n, m) => n + messageBytes(m), 0);
    const windowEnd = Date.now() + (this.#options.batchingWindowSeconds ?? 0) * 1000;
    let last = batch.length;
    while (batch.length < batchSize && size <= limit && !this.#stopping) {
      const remainingMs = windowEnd - Date.now();
      if (remainingMs <= 0 && last < 10) break;
      // Long polls are whole seconds: the window may be overshot by less than one.
      const wait = remainingMs <= 0 ? 0 : Math.min(20, Math.ceil(remainingMs / 1000));
      const more = await this.#receive(batchSize - batch.length, wait);
      last = more.length;
      batch.push(...more);
      for (const m of more) size += messageBytes(m);
      if (more.length === 0 && remainingMs <= 0) break;
    }
    // Over Lambda's payload limit: the tail waits for the next batch (at least one message goes).
    let total = 0;
    for (let i = 0; i < batch.length; i++) {
      total += messageBytes(batch[i]!);
      if (total > limit && i > 0) {
        carry.push(...batch.splice(i));
        break;
      }
    }
    return batch;
  }

  /**
   * The records past the function's recursion limit (with `Terminate`), and in a FIFO queue every
   * later record of their groups (their order must hold); the rest go to the function.
   */
  #recursionCut(records: SQSRecord[]): { invoke: SQSRecord[]; stopped: SQSRecord[] } {
    const { lambda } = this.#options;
    if (lambda.recursiveLoop === 'Allow') return { invoke: records, stopped: [] };
    const invoke: SQSRecord[] = [];
    const stopped: SQSRecord[] = [];
    const blocked = new Set<string>();
    for (const record of records) {
      const group = this.#fifo ? record.attributes.MessageGroupId : undefined;
      const past = lineageCount(record.attributes.AWSTraceHeader, lambda.arn) >= lambda.recursionLimit;
      if (past || (group !== undefined && blocked.has(group))) {
        stopped.push(record);
        if (group !== undefined) blocked.add(group);
      } else {
        invoke.push(record);
      }
    }
    return { invoke, stopped };
  }

  async #process(messages: Message[]): Promise<void> {
    const { invoke: records, stopped } = this.#recursionCut(
      toSqsRecords(messages, this.#options.queueArn, this.#region),
    );
    if (stopped.length > 0) {
      this.#stats.recursionStopped += stopped.length;
      this.#stats.retried += stopped.length;
      this.#options.log?.(
        `${this.#options.lambda.name}: recursive loop detected, ${stopped.length} record(s) not invoked (RecursiveLoop: Terminate)`,
      );
    }
    if (records.length === 0) return;
    const event: SQSEvent = { Records: records };
    this.#stats.batches += 1;
    this.#stats.records += records.length;
    const traceId = invocationTrace(
      records.map((r) => r.attributes.AWSTraceHeader),
      this.#options.lambda.arn,
    );
    const outcome = await this.#options.lambda.invoke(event, { traceId });
    if (outcome.kind === 'throttled') {
      this.#stats.throttled += 1;
      // Lambda's poller backs off when throttled; the batch returns after its visibility timeout.
      await this.#pause(THROTTLE_BACKOFF_MS);
    }
    const settlement = settleSqsBatch(records, outcome, {
      reportBatchItemFailures: this.#options.reportBatchItemFailures ?? false,
      fifo: this.#fifo,
    });
    if (settlement.kind === 'batch-failed') this.#stats.failedBatches += 1;
    this.#stats.retried += settlement.keep.length;
    if (settlement.reason?.startsWith('invalid-response')) {
      this.#options.log?.(`${this.#options.lambda.name}: ${settlement.reason}; the whole batch is retried`);
    }
    for (let i = 0; i < settlement.remove.length; i += 10) {
      const chunk = settlement.remove.slice(i, i + 10);
      try {
        // Not aborted on stop: a settled batch is always acknowledged.
        const response = await this.#options.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: this.#options.queueUrl,
            Entries: chunk.map((record, n) => ({ Id: String(n), ReceiptHandle: record.receiptHandle })),
          }),
        );
        this.#stats.deleted += response.Successful?.length ?? 0;
        this.#stats.deleteErrors += response.Failed?.length ?? 0;
      } catch (error) {
        this.#stats.deleteErrors += chunk.length;
        this.#options.log?.(`delete from ${this.#options.queueUrl} failed: ${String(error)}`);
      }
    }
  }
}
