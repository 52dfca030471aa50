import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeleteMessageCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { SqsFrontier } from '../../functions/adapters/aws/sqs-frontier.ts';
import { decodeTask, deduplicationId, messageGroupId } from '../../functions/cloud/messages/task-message.ts';
import type { CrawlTask } from '../../functions/core/types.ts';
import { eventually } from '../fixtures/site-server.ts';
import { MemoryFrontier } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, type LocalBackend, openAwsBackend, openLocalBackend } from './backends.ts';
import { frontierContract, task } from './frontier.contract.ts';

describe("Frontier contract: MemoryFrontier (the unit tests' fake)", () => {
  frontierContract(async () => {
    const frontier = new MemoryFrontier();
    return { frontier, drain: async () => frontier.sent.splice(0) };
  });
});

describe('Frontier contract: StepUnit over CrawlDb (the embedded crawler, one step per call)', () => {
  let local: LocalBackend;
  before(() => {
    local = openLocalBackend();
  });
  after(() => local.close());
  frontierContract(async () => ({
    frontier: { enqueue: (tasks) => local.step((unit) => unit.enqueue(tasks)) },
    async drain() {
      // As the crawler takes a host's head and finishes it with the step's commit.
      const out: CrawlTask[] = [];
      for (const host of local.db.hostCounts().keys()) {
        for (let head = local.db.head(host); head !== undefined; head = local.db.head(host)) {
          const { seq: _seq, prio: _prio, cashKey: _cashKey, ...queued } = head;
          out.push(queued);
          local.db.commit({ claimed: [], enqueue: [], contentHashes: [], finished: head, checkpoint: null });
        }
      }
      return out;
    },
  }));
});

describe('Frontier contract: SqsFrontier', () => {
  let aws: AwsBackend;
  before(async () => {
    aws = await openAwsBackend();
  });
  after(() => aws.close());

  async function receive(queueUrl: string, max = 10): Promise<Message[]> {
    const response = await aws.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    return response.Messages ?? [];
  }

  frontierContract(async () => {
    const queueUrl = await aws.fifoQueue();
    return {
      frontier: new SqsFrontier(aws.clients.sqs, queueUrl),
      async drain(expected) {
        const out: CrawlTask[] = [];
        await eventually(
          async () => {
            for (const message of await receive(queueUrl)) {
              const decoded = decodeTask(message.Body ?? '');
              assert.ok(decoded.ok);
              out.push(decoded.task);
              await aws.clients.sqs.send(
                new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
              );
            }
            return out.length >= expected ? true : undefined;
          },
          10_000,
          `${expected} tasks`,
        );
        assert.deepEqual(await receive(queueUrl), [], 'nothing left');
        return out;
      },
    };
  });

  it('groups by crawl and host, deduplicates by crawl and URL (attempt for re-sends)', async () => {
    const queueUrl = await aws.fifoQueue();
    const frontier = new SqsFrontier(aws.clients.sqs, queueUrl);
    const t = task('crawl-3', 'e.test');
    await frontier.enqueue([t]);
    await frontier.enqueue([{ ...t, attempt: 1 }]);
    // One at a time: SQS may hand out several messages of a group in one receive.
    const [first] = await receive(queueUrl, 1);
    assert.equal(first?.Attributes?.MessageGroupId, 'crawl-3#e.test');
    assert.equal(first?.Attributes?.MessageDeduplicationId, `crawl-3#${t.fp}`);
    assert.deepEqual(await receive(queueUrl), [], 'the group is blocked while a message is in flight');
    await aws.clients.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: first!.ReceiptHandle }),
    );
    const [second] = await eventually(async () => {
      const got = await receive(queueUrl);
      return got.length > 0 ? got : undefined;
    });
    assert.equal(
      second?.Attributes?.MessageDeduplicationId,
      `crawl-3#${t.fp}#a1`,
      'a retry is a new message',
    );
    await aws.clients.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: second!.ReceiptHandle }),
    );
    await frontier.enqueue([t]);
    assert.deepEqual(
      await receive(queueUrl),
      [],
      'the same first send again is dropped by its deduplication id',
    );
    assert.equal(deduplicationId({ ...t, attempt: 2 }), `crawl-3#${t.fp}#a2`);
    const long = messageGroupId({ crawlId: 'c', host: `${'x'.repeat(200)}.test` });
    assert.ok(long.length <= 128 && long.startsWith('c#'));
  });

  it('depth() counts visible and in-flight messages', async () => {
    const queueUrl = await aws.fifoQueue();
    const frontier = new SqsFrontier(aws.clients.sqs, queueUrl);
    assert.deepEqual(await frontier.depth(), {
      visible: 0,
      inFlight: 0,
      delayed: 0,
      visibilityTimeoutSeconds: 30,
    });
    await frontier.enqueue([task('crawl-4', 'f.test'), task('crawl-4', 'g.test')]);
    await receive(queueUrl);
    const depth = await frontier.depth();
    assert.equal(depth.visible + depth.inFlight, 2);
  });
});
