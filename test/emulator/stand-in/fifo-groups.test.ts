/**
 * The stand-in's FIFO queues behave as SQS does where the worker depends on it (see
 * localstack/fauxqs-fifo.ts): a receive returns several messages of one group, in order; the group
 * stays locked while any of them is in flight; messages that become visible again keep their order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { type AwsClients, createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import { type Endpoint, startEndpoint } from '../../../localstack/endpoint.ts';

describe('stand-in FIFO groups', () => {
  let endpoint: Endpoint;
  let clients: AwsClients;
  before(async () => {
    endpoint = await startEndpoint({ port: 0 });
    clients = createAwsClients({ AWS_ENDPOINT_URL: endpoint.url, AWS_REGION: 'us-east-1' });
  });
  after(() => endpoint?.close());

  async function queueWith(groups: Record<string, number>): Promise<string> {
    const created = await clients.sqs.send(
      new CreateQueueCommand({
        QueueName: `g${Math.random().toString(36).slice(2)}.fifo`,
        Attributes: { FifoQueue: 'true', VisibilityTimeout: '30' },
      }),
    );
    const url = created.QueueUrl!;
    for (const [group, n] of Object.entries(groups)) {
      await clients.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: Array.from({ length: n }, (_, i) => ({
            Id: String(i),
            MessageBody: `${group}${i}`,
            MessageGroupId: group,
            MessageDeduplicationId: `${group}-${i}`,
          })),
        }),
      );
    }
    return url;
  }

  const receive = async (url: string, max = 10) =>
    (await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: max })))
      .Messages ?? [];

  it('returns as many messages of one group as fit, in order, and locks the group while any is out', async () => {
    const url = await queueWith({ a: 6, b: 2 });
    const first = await receive(url, 4);
    assert.deepEqual(
      first.map((m) => m.Body),
      ['a0', 'a1', 'a2', 'a3'],
    );
    // Group a is locked while its messages are in flight: only b comes out.
    const second = await receive(url);
    assert.deepEqual(
      second.map((m) => m.Body),
      ['b0', 'b1'],
    );
    for (const m of first.slice(0, 3)) {
      await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
    }
    assert.deepEqual(await receive(url), [], 'still locked: a3 is in flight');
    await clients.sqs.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first[3]!.ReceiptHandle! }),
    );
    assert.deepEqual(
      (await receive(url)).map((m) => m.Body),
      ['a4', 'a5'],
    );
  });

  it('puts messages that become visible again back in their order', async () => {
    const url = await queueWith({ c: 5 });
    const out = await receive(url);
    assert.equal(out.length, 5);
    // The worker defers a group: every record back at once (visibility 0 here, 1 s in the worker).
    await clients.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: out.map((m, i) => ({
          Id: String(i),
          ReceiptHandle: m.ReceiptHandle!,
          VisibilityTimeout: 0,
        })),
      }),
    );
    assert.deepEqual(
      (await receive(url)).map((m) => m.Body),
      ['c0', 'c1', 'c2', 'c3', 'c4'],
    );
  });

  it('keeps the order when visibility runs out', async () => {
    const url = await queueWith({ d: 4 });
    const out = await receive(url);
    await clients.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: out.map((m, i) => ({
          Id: String(i),
          ReceiptHandle: m.ReceiptHandle!,
          VisibilityTimeout: 1,
        })),
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.deepEqual(
      (await receive(url)).map((m) => m.Body),
      ['d0', 'd1', 'd2', 'd3'],
    );
  });
});
