/**
 * AWS limits that only big crawls reach, each scaled down by its knob (aws-limits.ts) so that a
 * handful of messages reaches it: Lambda's recursive loop detection, a FIFO receive's scan window
 * and in-flight cap, retention from the send, and the account's concurrency shared by functions.
 * Stand-in only: LocalStack has none of these knobs.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { type AwsClients, createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import { awsLimits } from '../../../localstack/aws-limits.ts';
import { type Endpoint, startEndpoint } from '../../../localstack/endpoint.ts';
import { AccountConcurrency, LocalLambda } from '../../../localstack/local-lambda.ts';
import type { RecursiveLoop } from '../../../localstack/recursion-detection.ts';
import { lineageCount } from '../../../localstack/recursion-detection.ts';
import { SqsEventSource } from '../../../localstack/sqs-event-source.ts';
import { eventually } from '../../fixtures/site-server.ts';
import { delay, EXTERNAL_ENDPOINT, FIXTURES, uniquePrefix } from './helpers.ts';

const skip = EXTERNAL_ENDPOINT === undefined ? false : 'the knobs are the stand-in’s';

/** A stand-in endpoint with the given limits and clients for it, open for the enclosing suite. */
function useEndpoint(limits: Parameters<typeof startEndpoint>[0] = {}): {
  endpoint: Endpoint;
  clients: AwsClients;
} {
  const opened = {} as { endpoint: Endpoint; clients: AwsClients };
  before(async () => {
    opened.endpoint = await startEndpoint({ port: 0, ...limits });
    opened.clients = createAwsClients({ AWS_ENDPOINT_URL: opened.endpoint.url, AWS_REGION: 'us-east-1' });
  });
  after(async () => {
    opened.clients?.destroy();
    await opened.endpoint?.close();
  });
  return opened;
}

async function fifoQueue(clients: AwsClients, name: string): Promise<string> {
  const made = await clients.sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}.fifo`,
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
    }),
  );
  return made.QueueUrl ?? '';
}

async function receive(clients: AwsClients, queueUrl: string, max = 10): Promise<Message[]> {
  const answer = await clients.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: max, WaitTimeSeconds: 0 }),
  );
  return answer.Messages ?? [];
}

describe('the knobs', () => {
  it('reads each CRAWLSTACK_LOCAL_* variable, AWS’s value where unset, and refuses a bad one by name', () => {
    assert.deepEqual(awsLimits({}), {
      recursionLimit: 16,
      fifoScanWindow: 120_000,
      fifoInflight: 120_000,
      accountConcurrency: 1000,
      scheduleSpeedup: 1,
    });
    const scaled = awsLimits({
      CRAWLSTACK_LOCAL_RECURSION_LIMIT: '4',
      CRAWLSTACK_LOCAL_RETENTION_S: '2',
      CRAWLSTACK_LOCAL_SCHEDULE_SPEEDUP: '3600',
    });
    assert.equal(scaled.recursionLimit, 4);
    assert.equal(scaled.retentionSeconds, 2);
    assert.equal(scaled.scheduleSpeedup, 3600);
    assert.throws(
      () => awsLimits({ CRAWLSTACK_LOCAL_FIFO_INFLIGHT: '0' }),
      /CRAWLSTACK_LOCAL_FIFO_INFLIGHT must be a positive integer, got "0"/,
    );
  });
});

describe('Lambda recursive loop detection', { skip }, () => {
  const opened = useEndpoint();

  /**
   * A function fed by a queue it sends to (body n -> n + 1, up to 10), the chain started by one
   * message from outside; resolves with the function and its queue's DLQ once it is settled.
   */
  async function chain(recursiveLoop: RecursiveLoop) {
    const { endpoint, clients } = opened;
    const prefix = uniquePrefix();
    const dlq = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-dlq` }));
    const dlqArn = `arn:aws:sqs:us-east-1:000000000000:${prefix}-dlq`;
    const made = await clients.sqs.send(
      new CreateQueueCommand({
        QueueName: `${prefix}-q`,
        Attributes: {
          VisibilityTimeout: '1',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
        },
      }),
    );
    const queueUrl = made.QueueUrl ?? '';
    const lambda = new LocalLambda({
      name: `${prefix}-fn`,
      code: {
        assetDir: join(FIXTURES, 'asset.recursive'),
        handler: 'index.handler',
        env: {
          AWS_LAMBDA_FUNCTION_NAME: `${prefix}-fn`,
          AWS_ENDPOINT_URL: endpoint.url,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          QUEUE_URL: queueUrl,
          STOP_AT: '10',
        },
      },
      timeoutSeconds: 1,
      recursiveLoop,
      recursionLimit: 4,
      log: () => {},
    });
    const source = new SqsEventSource({
      lambda,
      sqs: clients.sqs,
      queueUrl,
      queueArn: `arn:aws:sqs:us-east-1:000000000000:${prefix}-q`,
      maxConcurrency: 1,
      waitTimeSeconds: 1,
    }).start();
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '1' }));
    return { lambda, source, dlqUrl: dlq.QueueUrl ?? '' };
  }

  it('does not invoke a Terminate function past the limit: the message goes back, then to the DLQ', async () => {
    const { clients } = opened;
    const { lambda, source, dlqUrl } = await chain('Terminate');
    try {
      const dead = await eventually(
        async () => {
          const answer = await clients.sqs.send(
            new ReceiveMessageCommand({ QueueUrl: dlqUrl, MessageSystemAttributeNames: ['All'] }),
          );
          return answer.Messages?.[0];
        },
        15_000,
        'the fifth message in the DLQ',
      );
      // Invoked for 1, 2, 3, 4; the send of 5 carried a lineage of 4 invocations.
      assert.equal(dead.Body, '5');
      assert.equal(lineageCount(dead.Attributes?.AWSTraceHeader, lambda.arn), 4);
      assert.equal(lambda.stats().invocations, 4);
      assert.ok(source.stats().recursionStopped >= 2, 'received twice before the redrive');
    } finally {
      await source.stop();
      await lambda.stop();
    }
  });

  it('lets an Allow function run the whole chain', async () => {
    const { clients } = opened;
    const { lambda, source, dlqUrl } = await chain('Allow');
    try {
      await eventually(() => (lambda.stats().invocations >= 10 ? true : undefined), 15_000, '10 invocations');
      assert.equal(source.stats().recursionStopped, 0);
      assert.deepEqual(await receive(clients, dlqUrl), []);
    } finally {
      await source.stop();
      await lambda.stop();
    }
  });
});

describe('SQS FIFO at scale', { skip }, () => {
  const opened = useEndpoint({ limits: { fifoScanWindow: 5, fifoInflight: 3 } });

  it('looks for available groups among the first N messages only', async () => {
    const { clients } = opened;
    const queueUrl = await fifoQueue(clients, uniquePrefix());
    for (let i = 1; i <= 5; i++) {
      await clients.sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: `a${i}`, MessageGroupId: 'a' }),
      );
    }
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'b1', MessageGroupId: 'b' }),
    );
    const [a1] = await receive(clients, queueUrl, 1);
    assert.equal(a1?.Body, 'a1');
    // Group a is locked and fills the window: b1, sixth in the queue, is not seen.
    assert.deepEqual(await receive(clients, queueUrl), []);
    await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: a1.ReceiptHandle }));
    // a1 gone, b1 is within the first five: a2..a4 up to the in-flight cap of 3.
    assert.deepEqual(
      (await receive(clients, queueUrl)).map((m) => m.Body),
      ['a2', 'a3', 'a4'],
    );
  });

  it('returns nothing, without an error, past the in-flight cap', async () => {
    const { clients } = opened;
    const queueUrl = await fifoQueue(clients, uniquePrefix());
    for (const group of ['a', 'b', 'c', 'd']) {
      await clients.sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: group, MessageGroupId: group }),
      );
    }
    const taken = await receive(clients, queueUrl);
    assert.deepEqual(
      taken.map((m) => m.Body),
      ['a', 'b', 'c'],
    );
    assert.deepEqual(await receive(clients, queueUrl), []);
    await clients.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: taken[0]?.ReceiptHandle }),
    );
    assert.deepEqual(
      (await receive(clients, queueUrl)).map((m) => m.Body),
      ['d'],
    );
  });
});

describe('SQS retention from the send', { skip }, () => {
  const opened = useEndpoint({ limits: { retentionSeconds: 2 } });

  it('deletes a message that long after its send, in flight or not, whatever its visibility did', async () => {
    const { clients } = opened;
    const queueUrl = await fifoQueue(clients, uniquePrefix());
    const sentAt = Date.now();
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'old', MessageGroupId: 'g' }),
    );
    const [old] = await receive(clients, queueUrl);
    assert.equal(old?.Body, 'old');
    // Kept invisible well past the retention: it is deleted all the same.
    await clients.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: old.ReceiptHandle,
        VisibilityTimeout: 60,
      }),
    );
    // A second later: it outlives the first by that much.
    await delay(1000);
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'new', MessageGroupId: 'h' }),
    );
    const counts = async () => {
      await receive(clients, queueUrl, 1).then(async (got) => {
        // Put back what this probe took, so only retention removes messages.
        for (const m of got) {
          await clients.sqs.send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: queueUrl,
              ReceiptHandle: m.ReceiptHandle,
              VisibilityTimeout: 0,
            }),
          );
        }
      });
      const answer = await clients.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(answer.Attributes?.ApproximateNumberOfMessages) +
        Number(answer.Attributes?.ApproximateNumberOfMessagesNotVisible)
      );
    };
    assert.equal(await counts(), 2);
    await eventually(
      async () => ((await counts()) === 1 ? true : undefined),
      5000,
      'the old message to expire',
    );
    assert.ok(Date.now() - sentAt >= 2000, 'not before the retention');
    await eventually(
      async () => ((await counts()) === 0 ? true : undefined),
      5000,
      'the new message to expire',
    );
  });
});

describe('Lambda account concurrency', { skip }, () => {
  const opened = useEndpoint();

  it('is shared by every function: one beyond it is throttled, its message retried later', async () => {
    const { clients } = opened;
    const account = new AccountConcurrency(2);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const busy = new LocalLambda({ name: 'busy', handler: () => held, timeoutSeconds: 10, account });
    const handled: string[] = [];
    const fed = new LocalLambda({
      name: 'fed',
      handler: async (event: { Records: { body: string }[] }) => {
        handled.push(...event.Records.map((r) => r.body));
      },
      account,
    });
    const prefix = uniquePrefix();
    const made = await clients.sqs.send(
      new CreateQueueCommand({ QueueName: `${prefix}-q`, Attributes: { VisibilityTimeout: '1' } }),
    );
    const queueUrl = made.QueueUrl ?? '';
    const source = new SqsEventSource({
      lambda: fed,
      sqs: clients.sqs,
      queueUrl,
      queueArn: `arn:aws:sqs:us-east-1:000000000000:${prefix}-q`,
      maxConcurrency: 1,
      waitTimeSeconds: 1,
    });
    try {
      const running = [busy.invoke({}), busy.invoke({})];
      assert.equal(account.inUse, 2);
      assert.deepEqual(await fed.invoke({ Records: [] }), { kind: 'throttled' });
      source.start();
      await clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'm' }));
      await eventually(() => (source.stats().throttled >= 1 ? true : undefined), 5000, 'a throttled batch');
      assert.equal(handled.length, 0, 'nothing handled while throttled');
      release();
      await Promise.all(running);
      await eventually(() => (handled.includes('m') ? true : undefined), 5000, 'the retried message');
      assert.equal(account.peak, 2);
    } finally {
      release();
      await source.stop();
      await busy.stop();
      await fed.stop();
    }
  });
});
