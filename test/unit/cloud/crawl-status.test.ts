/**
 * Crawl status and completion with in-memory stores: running totals in a few counter shards
 * (GET /crawls/{id} and scheduler ticks read O(1) items, not every host: issue 8, item 8), the
 * exact sum of the host ledgers once, before a crawl ends, and a crawl that ends on its own work
 * while other crawls keep the queue busy (item 6).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyHostCounts } from '../../../functions/cloud/messages/crawl-records.ts';
import type { QueueDepth } from '../../../functions/cloud/ports/cloud-ports.ts';
import { completeCrawls, quietLimitMs } from '../../../functions/cloud/use-cases/complete-crawls.ts';
import { crawlProgress } from '../../../functions/cloud/use-cases/crawl-progress.ts';
import { MemoryCloud } from './memory-cloud.ts';
import { MemoryFetcher, page } from './memory-fetcher.ts';
import { messageFor, runningCrawl, TestClock, workerOver } from './worker-kit.ts';

const SITE = 'http://a.example';

describe('running totals in counter shards', () => {
  it('the worker adds what its ledgers counted: the shards sum to the exact ledgers, once per record', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', ['/a', '/b']) },
    });
    const { id, tasks } = runningCrawl(
      cloud,
      { seeds: [`${SITE}/`], scope: 'any', soft404Probe: false, delayMs: 0 },
      clock,
    );
    const m = messageFor(tasks([`${SITE}/`])[0]!);
    await workerOver(cloud, fetcher, clock)([m]);
    await workerOver(cloud, fetcher, clock)([m]); // redelivered: counted once
    const fast = (await crawlProgress(cloud.table, id))!.view.counters;
    const exact = (await crawlProgress(cloud.table, id, { exact: true }))!.view.counters;
    assert.deepEqual(fast, exact);
    assert.equal(fast.finished, 1);
    assert.equal(fast.hosts, 1);
    assert.equal(fast.discovered, 3);
  });

  it('status reads the shards, not the hosts: O(1) for a crawl of 2,000 hosts', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, { seeds: [`${SITE}/`] }, clock);
    for (let i = 0; i < 2000; i++) {
      const counts = { ...emptyHostCounts(), finished: 1, fetched: 1, requests: 1 };
      const { firstRequest } = await cloud.table.updateHost(id, `h${i}.example`, {
        nextAllowedAt: 0,
        counts,
        ledger: { firstSeq: '1', lastSeq: '1' },
      });
      await cloud.table.addToShard(id, i % 8, { ...counts, hosts: firstRequest ? 1 : 0 });
    }
    cloud.table.calls.length = 0;
    const view = (await crawlProgress(cloud.table, id))!.view;
    assert.equal(view.counters.hosts, 2000);
    assert.equal(view.counters.finished, 2000);
    assert.ok(!cloud.table.calls.includes('hosts'), 'no host item read');
  });
});

function depthOf(visible: number): QueueDepth {
  return { visible, inFlight: 0, delayed: 0, visibilityTimeoutSeconds: 225 };
}

describe('completion', () => {
  it('ends a crawl with a lost URL on its own quiet time, while other crawls keep the queue busy', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, { seeds: [`${SITE}/`, `${SITE}/lost`] }, clock);
    const counts = { ...emptyHostCounts(), finished: 1, fetched: 1, requests: 1 };
    await cloud.table.updateHost(id, 'a.example', {
      nextAllowedAt: 0,
      counts,
      ledger: { firstSeq: '1', lastSeq: '1' },
    });
    await cloud.table.addToShard(id, 0, { ...counts, hosts: 1 });
    const deps = { table: cloud.table, frontier: { depth: async () => depthOf(40) }, clock };
    const limit = quietLimitMs(cloud.table.crawls.get(id)!, depthOf(40));
    assert.deepEqual(await completeCrawls(deps), { [id]: 'running' });
    clock.t += limit - 1000;
    assert.deepEqual(
      await completeCrawls(deps),
      { [id]: 'running' },
      'not before any message of it could still be waiting',
    );
    clock.t += 2000;
    cloud.table.calls.length = 0;
    assert.deepEqual(await completeCrawls(deps), { [id]: 'done' });
    assert.equal(cloud.table.crawls.get(id)?.lost, 1);
    assert.equal(cloud.table.calls.filter((c) => c === 'hosts').length, 1, 'one exact sum, at the end');
  });

  it('does not end on running totals the ledgers do not confirm', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, { seeds: [`${SITE}/`] }, clock);
    // The ledger counted a page that queued a link; the shard write of that batch was lost.
    const counts = { ...emptyHostCounts(), finished: 1, fetched: 1, requests: 1, enqueued: 1 };
    await cloud.table.updateHost(id, 'a.example', {
      nextAllowedAt: 0,
      counts,
      ledger: { firstSeq: '1', lastSeq: '1' },
    });
    await cloud.table.addToShard(id, 0, {
      ...emptyHostCounts(),
      finished: 1,
      fetched: 1,
      requests: 1,
      hosts: 1,
    });
    const deps = { table: cloud.table, frontier: { depth: async () => depthOf(0) }, clock };
    for (let i = 0; i < 4; i++) {
      assert.deepEqual(await completeCrawls(deps), { [id]: 'running' });
      clock.t += 1000;
    }
  });
});

describe('overlapping scheduler runs', () => {
  it('two ticks at once end a crawl once, with the same counters, and admit each parked URL once', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`] }, clock);
    // One page fetched, three URLs parked (found on it), nothing queued: the frontier is dry.
    const counts = {
      ...emptyHostCounts(),
      finished: 1,
      fetched: 1,
      requests: 1,
      enqueued: 3,
      parked: 3,
      history: 1,
    };
    await cloud.table.updateHost(id, 'a.example', {
      nextAllowedAt: 0,
      counts,
      ledger: { firstSeq: '1', lastSeq: '1' },
    });
    await cloud.table.addToShard(id, 0, { ...counts, hosts: 1 });
    const parkedTasks = tasks([`${SITE}/x/1`, `${SITE}/x/2`, `${SITE}/x/3`], 1);
    const owners = cloud.seen(id).owners;
    for (const t of parkedTasks) owners.set(t.fp, 'owner');
    await cloud.parked.park(
      id,
      parkedTasks.map((task) => ({ task, owner: 'owner', key: 0.01 })),
    );
    const { redistributeCredit } = await import('../../../functions/cloud/use-cases/redistribute-credit.ts');
    const aopicDeps = { table: cloud.table, parked: cloud.parked, frontier: cloud.frontier };
    const deps = {
      table: cloud.table,
      frontier: { depth: async () => depthOf(0) },
      clock,
      aopic: { redistribute: redistributeCredit.bind(null, aopicDeps) },
    };
    await Promise.all([completeCrawls(deps), completeCrawls(deps)]);
    const admittedUrls = cloud.frontier.sent.map((t) => t.url);
    assert.deepEqual(
      [...new Set(admittedUrls)].sort(),
      parkedTasks.map((t) => t.url).sort(),
      'every parked URL sent',
    );
    assert.equal(cloud.table.crawls.get(id)?.aopic?.admitted, 3, 'admitted counted once per URL');
    // The admitted URLs finish; two overlapping ticks twice over end the crawl once.
    const done = { ...emptyHostCounts(), finished: 3, fetched: 3, requests: 3 };
    await cloud.table.updateHost(id, 'a.example', {
      nextAllowedAt: 0,
      counts: done,
      ledger: { firstSeq: '2', lastSeq: '4' },
    });
    await cloud.table.addToShard(id, 1, { ...done, hosts: 0 });
    for (let i = 0; i < 3; i++) {
      clock.t += 1000;
      await Promise.all([completeCrawls(deps), completeCrawls(deps)]);
    }
    const crawl = cloud.table.crawls.get(id)!;
    assert.equal(crawl.status, 'done');
    assert.equal(crawl.counters?.finished, 4);
    assert.equal(crawl.counters?.discovered, 4);
    assert.equal(crawl.lost, 0);
    assert.ok(!cloud.table.registry.has(id));
  });
});
