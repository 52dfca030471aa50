import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { LocalLambda } from '../../../localstack/local-lambda.ts';
import { settleSqsBatch } from '../../../localstack/sqs-batch-settlement.ts';
import { SqsEventSource } from '../../../localstack/sqs-event-source.ts';
import { eventually } from '../../fixtures/site-server.ts';
import { delay, openTestEndpoint, type TestEndpoint, uniquePrefix } from './helpers.ts';

interface Queue {
  url: string;
  arn: string;
  dlqUrl: string;
}

interface Seen {
  id: string;
  receives: number;
  group: string | undefined;
  at: number;
}

function record(id: string, group?: string): SQSRecord {
  return {
    messageId: id,
    receiptHandle: `rh-${id}`,
    body: id,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1',
      SenderId: 'x',
      ApproximateFirstReceiveTimestamp: '1',
      ...(group === undefined ? {} : { MessageGroupId: group }),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:q.fifo',
    awsRegion: 'us-east-1',
  };
}

const ok = (result: unknown) => ({ kind: 'ok' as const, result, billedMs: 1 });
const ids = (records: SQSRecord[]) => records.map((r) => r.messageId);

describe('settleSqsBatch', () => {
  const batch = [
    record('a1', 'a'),
    record('b1', 'b'),
    record('a2', 'a'),
    record('a3', 'a'),
    record('c1', 'c'),
  ];
  const fifo = { reportBatchItemFailures: true, fifo: true };

  it('treats a missing, null or empty failure list as complete success', () => {
    for (const result of [
      undefined,
      null,
      {},
      { batchItemFailures: null },
      { batchItemFailures: [] },
      'done',
    ]) {
      const settled = settleSqsBatch(batch, ok(result), fifo);
      assert.equal(settled.kind, 'success', JSON.stringify(result));
      assert.deepEqual(ids(settled.remove), ids(batch));
    }
  });

  it('keeps a failed FIFO record and every later record of its group', () => {
    const settled = settleSqsBatch(batch, ok({ batchItemFailures: [{ itemIdentifier: 'a2' }] }), fifo);
    assert.equal(settled.kind, 'partial');
    assert.deepEqual(ids(settled.remove), ['a1', 'b1', 'c1']);
    assert.deepEqual(ids(settled.keep), ['a2', 'a3']);
    const standard = settleSqsBatch(batch, ok({ batchItemFailures: [{ itemIdentifier: 'a2' }] }), {
      reportBatchItemFailures: true,
      fifo: false,
    });
    assert.deepEqual(ids(standard.keep), ['a2']);
  });

  it('fails the whole batch on a throw, a timeout, a throttle or a malformed list', () => {
    const malformed = [
      { batchItemFailures: 'a1' },
      { batchItemFailures: [{ itemIdentifier: '' }] },
      { batchItemFailures: [{ itemIdentifier: null }] },
      { batchItemFailures: [{ messageId: 'a1' }] },
      { batchItemFailures: [{ itemIdentifier: 'not-in-batch' }] },
    ];
    for (const result of malformed) {
      const settled = settleSqsBatch(batch, ok(result), fifo);
      assert.equal(settled.kind, 'batch-failed', JSON.stringify(result));
      assert.match(settled.reason ?? '', /^invalid-response/);
      assert.deepEqual(settled.remove, []);
    }
    for (const outcome of [
      { kind: 'error' as const, error: new Error('x'), billedMs: 1 },
      { kind: 'timeout' as const, billedMs: 3000 },
      { kind: 'throttled' as const },
    ]) {
      assert.deepEqual(ids(settleSqsBatch(batch, outcome, fifo).keep), ids(batch));
    }
  });

  it('deletes everything without ReportBatchItemFailures, whatever the function returns', () => {
    const settled = settleSqsBatch(batch, ok({ batchItemFailures: [{ itemIdentifier: 'a1' }] }), {
      reportBatchItemFailures: false,
      fifo: true,
    });
    assert.deepEqual(ids(settled.remove), ids(batch));
  });
});

describe('SqsEventSource', () => {
  let ep: TestEndpoint;
  before(async () => {
    ep = await openTestEndpoint();
  });
  after(() => ep.close());

  async function fifoQueue(maxReceiveCount = 5): Promise<Queue> {
    const prefix = uniquePrefix();
    const dlq = await ep.clients.sqs.send(
      new CreateQueueCommand({ QueueName: `${prefix}-dlq.fifo`, Attributes: { FifoQueue: 'true' } }),
    );
    const dlqArn = (
      await ep.clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn as string;
    const main = await ep.clients.sqs.send(
      new CreateQueueCommand({
        QueueName: `${prefix}-main.fifo`,
        Attributes: {
          FifoQueue: 'true',
          VisibilityTimeout: '1',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount }),
        },
      }),
    );
    const arn = (
      await ep.clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: main.QueueUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn as string;
    return { url: main.QueueUrl as string, arn, dlqUrl: dlq.QueueUrl as string };
  }

  async function send(queue: Queue, messages: { id: string; group: string }[]) {
    await ep.clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: messages.map((m, i) => ({
          Id: String(i),
          MessageBody: m.id,
          MessageGroupId: m.group,
          MessageDeduplicationId: m.id,
          MessageAttributes: { kind: { DataType: 'String', StringValue: 'page' } },
        })),
      }),
    );
  }

  async function queueIsEmpty(queue: Queue): Promise<true | undefined> {
    const { Attributes } = await ep.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return Attributes?.ApproximateNumberOfMessages === '0' &&
      Attributes.ApproximateNumberOfMessagesNotVisible === '0'
      ? true
      : undefined;
  }

  /** A function that records every record it sees and answers with `decide`. */
  function recordingLambda(
    decide: (
      records: SQSRecord[],
      call: number,
    ) => SQSBatchResponse | undefined | Promise<SQSBatchResponse | undefined>,
    options: { timeoutSeconds?: number } = {},
  ) {
    const seen: Seen[] = [];
    const events: SQSEvent[] = [];
    let calls = 0;
    const lambda = new LocalLambda({
      name: 'recorder',
      timeoutSeconds: options.timeoutSeconds ?? 5,
      handler: (async (event: SQSEvent) => {
        calls += 1;
        events.push(event);
        for (const r of event.Records) {
          seen.push({
            id: r.body,
            receives: Number(r.attributes.ApproximateReceiveCount),
            group: r.attributes.MessageGroupId,
            at: performance.now(),
          });
        }
        return decide(event.Records, calls);
      }) as never,
    });
    return { lambda, seen, events };
  }

  function source(
    queue: Queue,
    lambda: LocalLambda,
    extra: Partial<ConstructorParameters<typeof SqsEventSource>[0]> = {},
  ) {
    return new SqsEventSource({
      lambda,
      sqs: ep.clients.sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      reportBatchItemFailures: true,
      waitTimeSeconds: 1,
      maxConcurrency: 1,
      ...extra,
    }).start();
  }

  it('delivers real-shaped SQS events and deletes a batch that succeeded', async () => {
    const queue = await fifoQueue();
    const { lambda, seen, events } = recordingLambda(() => undefined);
    const es = source(queue, lambda);
    try {
      await send(
        queue,
        ['h1', 'h2', 'h3', 'h4', 'h5'].map((group, i) => ({ id: `m${i}`, group })),
      );
      await eventually(() => (seen.length >= 5 ? true : undefined), 10_000, 'five records');
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    assert.deepEqual(seen.map((s) => s.id).sort(), ['m0', 'm1', 'm2', 'm3', 'm4']);
    const first = events[0]?.Records[0];
    assert.ok(first);
    assert.equal(first.eventSource, 'aws:sqs');
    assert.equal(first.eventSourceARN, queue.arn);
    assert.equal(first.awsRegion, 'us-east-1');
    assert.match(first.attributes.MessageGroupId ?? '', /^h\d$/);
    assert.ok(first.attributes.SequenceNumber);
    assert.ok(first.attributes.SentTimestamp);
    assert.deepEqual(first.messageAttributes.kind, {
      dataType: 'String',
      stringValue: 'page',
      stringListValues: [],
      binaryListValues: [],
    });
    const stats = es.stats();
    assert.equal(stats.deleted, 5);
    assert.equal(stats.retried, 0);
    assert.ok(lambda.stats().invocations >= 1);
    assert.ok(
      Number.isInteger(lambda.stats().billedMs) && lambda.stats().billedMs >= lambda.stats().invocations,
    );
  });

  it('deletes only the records that did not fail', async () => {
    const queue = await fifoQueue();
    const { lambda, seen } = recordingLambda((records) => ({
      batchItemFailures: records
        .filter((r) => r.body === 'bad' && r.attributes.ApproximateReceiveCount === '1')
        .map((r) => ({ itemIdentifier: r.messageId })),
    }));
    const es = source(queue, lambda);
    try {
      await send(queue, [
        { id: 'good1', group: 'g1' },
        { id: 'bad', group: 'g2' },
        { id: 'good2', group: 'g3' },
      ]);
      await eventually(
        () => (seen.some((s) => s.id === 'bad' && s.receives === 2) ? true : undefined),
        10_000,
        'the failed record to come back',
      );
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    const count = (id: string) => seen.filter((s) => s.id === id).length;
    assert.equal(count('good1'), 1);
    assert.equal(count('good2'), 1);
    assert.equal(count('bad'), 2);
  });

  it('keeps a FIFO group in order when its first record fails', async () => {
    const queue = await fifoQueue();
    const { lambda, seen } = recordingLambda((records) => ({
      batchItemFailures: records
        .filter((r) => r.body === 'a1' && r.attributes.ApproximateReceiveCount === '1')
        .map((r) => ({ itemIdentifier: r.messageId })),
    }));
    const es = source(queue, lambda);
    try {
      await send(queue, [
        { id: 'a1', group: 'a' },
        { id: 'a2', group: 'a' },
        { id: 'b1', group: 'b' },
      ]);
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    const a1Done = seen.find((s) => s.id === 'a1' && s.receives === 2);
    const a2Last = seen.filter((s) => s.id === 'a2').at(-1);
    assert.ok(a1Done && a2Last);
    // a2 is (finally) handled only after a1 succeeded, whether or not it shared a1's first batch.
    assert.ok(a2Last.at > a1Done.at, JSON.stringify(seen));
  });

  it('retries the whole batch when the function throws', async () => {
    const queue = await fifoQueue();
    const { lambda, seen } = recordingLambda((_records, call) => {
      if (call === 1) throw new Error('boom');
      return undefined;
    });
    const es = source(queue, lambda);
    try {
      await send(queue, [
        { id: 'x', group: 'g1' },
        { id: 'y', group: 'g2' },
      ]);
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    const firstCall = seen.filter((s) => s.receives === 1).map((s) => s.id);
    assert.ok(firstCall.length >= 1);
    for (const id of firstCall)
      assert.ok(
        seen.some((s) => s.id === id && s.receives === 2),
        `${id} retried`,
      );
    assert.equal(lambda.stats().errors, 1);
    assert.ok(es.stats().failedBatches >= 1);
  });

  it('retries the whole batch when the function names an unknown record', async () => {
    const queue = await fifoQueue();
    const { lambda, seen } = recordingLambda((_records, call) =>
      call === 1 ? { batchItemFailures: [{ itemIdentifier: 'no-such-message' }] } : undefined,
    );
    const es = source(queue, lambda);
    try {
      await send(queue, [
        { id: 'p', group: 'g1' },
        { id: 'q', group: 'g2' },
      ]);
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    const firstCall = seen.filter((s) => s.receives === 1).map((s) => s.id);
    for (const id of firstCall)
      assert.ok(
        seen.some((s) => s.id === id && s.receives === 2),
        `${id} retried`,
      );
  });

  it('lets a message that keeps failing reach the dead-letter queue', async () => {
    const queue = await fifoQueue(2);
    const { lambda, seen } = recordingLambda((records) => ({
      batchItemFailures: records
        .filter((r) => r.body === 'poison')
        .map((r) => ({ itemIdentifier: r.messageId })),
    }));
    const es = source(queue, lambda);
    let dead: string | undefined;
    try {
      await send(queue, [
        { id: 'poison', group: 'g1' },
        { id: 'fine', group: 'g2' },
      ]);
      dead = await eventually(
        async () => {
          const { Messages } = await ep.clients.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: queue.dlqUrl,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: 1,
            }),
          );
          return Messages?.[0]?.Body;
        },
        15_000,
        'the poison message in the DLQ',
      );
    } finally {
      await es.stop();
    }
    assert.equal(dead, 'poison');
    assert.equal(seen.filter((s) => s.id === 'poison').length, 2);
    assert.equal(seen.filter((s) => s.id === 'fine').length, 1);
  });

  it('runs up to maxConcurrency invocations at once and waits for them on stop', async () => {
    const queue = await fifoQueue();
    let running = 0;
    let peak = 0;
    let finished = 0;
    const lambda = new LocalLambda({
      name: 'slow',
      handler: (async () => {
        running += 1;
        peak = Math.max(peak, running);
        await delay(250);
        running -= 1;
        finished += 1;
        return undefined;
      }) as never,
    });
    const es = source(queue, lambda, { maxConcurrency: 3, batchSize: 1 });
    await send(
      queue,
      ['a', 'b', 'c', 'd', 'e', 'f'].map((group) => ({ id: group, group })),
    );
    await eventually(() => (running >= 2 ? true : undefined), 10_000, 'parallel invocations');
    await es.stop();
    // stop() returned only after the invocations it had started were finished and settled.
    assert.equal(running, 0);
    assert.equal(es.stats().deleted, finished);
    assert.ok(peak >= 2 && peak <= 3, `peak ${peak}`);
    assert.equal(lambda.stats().maxConcurrent, peak);
  });

  async function standardQueue(): Promise<Queue> {
    const main = await ep.clients.sqs.send(
      new CreateQueueCommand({ QueueName: `${uniquePrefix()}-std`, Attributes: { VisibilityTimeout: '30' } }),
    );
    const arn = (
      await ep.clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: main.QueueUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn as string;
    return { url: main.QueueUrl as string, arn, dlqUrl: '' };
  }

  async function sendStandard(queue: Queue, count: number, bytes: number) {
    for (let i = 0; i < count; i += 10) {
      await ep.clients.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: Array.from({ length: Math.min(10, count - i) }, (_, j) => ({
            Id: String(j),
            MessageBody: `${i + j}`.padEnd(bytes, '.'),
          })),
        }),
      );
    }
  }

  it('gathers a standard queue over the batching window into batches larger than 10', async () => {
    const queue = await standardQueue();
    await sendStandard(queue, 35, 10);
    const { lambda, events } = recordingLambda(() => undefined);
    const es = source(queue, lambda, { batchSize: 1000, batchingWindowSeconds: 1 });
    try {
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    assert.equal(events.length, 1, `one batch: ${events.map((e) => e.Records.length)}`);
    assert.equal(events[0]?.Records.length, 35);
    assert.ok(es.stats().receives >= 4, 'several receives (10 at most each) for one batch');
  });

  it("cuts a batch at Lambda's payload limit and starts the next batch with the rest", async () => {
    const queue = await standardQueue();
    await sendStandard(queue, 30, 1000);
    const { lambda, events } = recordingLambda(() => undefined);
    // ~1.6 KB per message as counted: 10 fit in 16 KB.
    const es = source(queue, lambda, { batchSize: 1000, batchingWindowSeconds: 1, maxPayloadBytes: 16_000 });
    try {
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    const sizes = events.map((e) => e.Records.length);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      30,
    );
    assert.ok(
      sizes.every((n) => n <= 10),
      `batches ${sizes}`,
    );
    assert.equal(es.stats().deleted, 30);
  });

  it('treats a function timeout as a failed batch', async () => {
    const queue = await fifoQueue();
    const { lambda, seen } = recordingLambda(
      async (_records, call) => {
        if (call === 1) await delay(700);
        return undefined;
      },
      { timeoutSeconds: 0.2 },
    );
    const es = source(queue, lambda);
    try {
      await send(queue, [{ id: 'slow', group: 'g' }]);
      await eventually(() => queueIsEmpty(queue), 10_000, 'an empty queue');
    } finally {
      await es.stop();
    }
    assert.deepEqual(
      seen.map((s) => s.receives),
      [1, 2],
    );
    assert.equal(lambda.stats().timeouts, 1);
    assert.ok(lambda.stats().billedMs >= 200);
  });
});
