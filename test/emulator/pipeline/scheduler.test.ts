/**
 * The scheduler's completion rules over real tables and a real queue.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { WORKER_TIMEOUT_MS } from '../../../functions/cloud/lambda-settings.ts';
import { createAwsSchedulerDeps } from '../../../functions/cloud/lambdas/aws-wiring.ts';
import { createScheduler } from '../../../functions/cloud/lambdas/scheduler/handler.ts';
import type { CrawlRecord } from '../../../functions/cloud/messages/crawl-records.ts';
import { emptyHostCounts } from '../../../functions/cloud/messages/crawl-records.ts';
import { EMPTY_AOPIC } from '../../../functions/cloud/use-cases/redistribute-credit.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { openWorkerHarness, type WorkerHarness } from './worker-harness.ts';

describe('scheduler', () => {
  let h: WorkerHarness;
  let now = Date.UTC(2026, 0, 1);
  let n = 0;
  const clock = { now: () => now };
  before(async () => {
    h = await openWorkerHarness();
  });
  after(() => h?.close());

  async function crawl(
    counts: { finished: number; fetched: number; enqueued: number },
    status: CrawlRecord['status'] = 'running',
  ) {
    const parsed = parseCrawlConfig({ seeds: ['https://s.example/'] });
    assert.ok(parsed.ok);
    n += 1;
    const id = `sched-${n}`;
    await h.table.createCrawl({
      id,
      status,
      createdAt: new Date(now).toISOString(),
      config: parsed.config,
      seeds: 1,
    });
    const hostCounts = { ...emptyHostCounts(), ...counts, requests: counts.fetched };
    const { firstRequest } = await h.table.updateHost(id, 's.example', {
      nextAllowedAt: 0,
      counts: hostCounts,
      ledger: { firstSeq: '1', lastSeq: '2' },
    });
    // ...and the running totals, as the worker adds them after the ledger write.
    await h.table.addToShard(id, 1, { ...hostCounts, hosts: firstRequest ? 1 : 0 });
    return id;
  }

  const tick = () => createScheduler(createAwsSchedulerDeps(h.aws.clients, h.env, { clock }))();

  it('ends a settled crawl on the second tick that finds the whole queue empty', async () => {
    const id = await crawl({ finished: 3, fetched: 3, enqueued: 2 });
    assert.equal((await tick())[id], 'running', 'first sight: watched, not ended');
    now += 1000;
    assert.equal((await tick())[id], 'done');
    const stored = (await h.table.getCrawl(id))!;
    assert.equal(stored.status, 'done');
    assert.equal(stored.counters?.finished, 3);
    assert.equal(stored.finishedAt, new Date(now).toISOString());
    assert.ok(!(await h.table.registeredCrawls()).includes(id), 'left the registry');
  });

  it('keeps a crawl with unfinished URLs running while the queue has messages, and ends it as failed when nothing was fetched', async () => {
    const busy = await crawl({ finished: 1, fetched: 1, enqueued: 3 });
    const nothing = await crawl({ finished: 1, fetched: 0, enqueued: 0 });
    await h.aws.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: h.env.frontierQueueUrl,
        MessageBody: '{}',
        MessageGroupId: 'other',
        MessageDeduplicationId: 'other-1',
      }),
    );
    for (let i = 0; i < 3; i++) {
      now += 1000;
      const result = await tick();
      assert.equal(result[busy], 'running');
      assert.equal(result[nothing], 'running', 'settled, but another crawl keeps the queue busy');
    }
    // Settled for longer than any batch can stay hidden: ended although the queue is busy.
    now += 30 * 1000 + WORKER_TIMEOUT_MS + 1;
    const result = await tick();
    assert.equal(result[nothing], 'failed');
    assert.equal(result[busy], 'running');
    assert.equal((await h.table.getCrawl(nothing))?.status, 'failed');
    // Drain the queue: now the unfinished crawl has URLs nowhere: after two empty ticks it ends, lost.
    for (const record of await h.receive()) await h.settle([record], { batchItemFailures: [] });
    now += 1000;
    assert.equal((await tick())[busy], 'running');
    now += 1000;
    assert.equal((await tick())[busy], 'done');
    assert.equal((await h.table.getCrawl(busy))?.lost, 3);
  });

  it('a cancelled crawl stays cancelled when it drains', async () => {
    const id = await crawl({ finished: 2, fetched: 1, enqueued: 1 }, 'cancelled');
    now += 1000;
    assert.equal((await tick())[id], 'cancelled');
    now += 1000;
    assert.equal((await tick())[id], 'cancelled');
    const stored = (await h.table.getCrawl(id))!;
    assert.equal(stored.status, 'cancelled');
    assert.ok(stored.finishedAt !== undefined);
    assert.ok(!(await h.table.registeredCrawls()).includes(id));
  });

  it('calls the AOPIC seam for running crawls only, when one is given', async () => {
    const running = await crawl({ finished: 0, fetched: 0, enqueued: 5 });
    const cancelled = await crawl({ finished: 0, fetched: 0, enqueued: 5 }, 'cancelled');
    const called: string[] = [];
    const deps = createAwsSchedulerDeps(h.aws.clients, h.env, { clock });
    deps.aopic = {
      redistribute: async (c) => {
        called.push(c.id);
        return { admitted: 0, pending: false, state: EMPTY_AOPIC };
      },
    };
    await createScheduler(deps)();
    assert.ok(called.includes(running));
    assert.ok(!called.includes(cancelled));
  });
});
