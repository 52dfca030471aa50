/**
 * Crawl status and completion with in-memory stores: running totals in a few counter shards
 * (GET /crawls/{id} and scheduler ticks read O(1) items, not every host: issue 8, item 8), the
 * exact sum of the host ledgers once, before a crawl ends, and a crawl that ends on its own work
 * while other crawls keep the queue busy (item 6), in the tick that finds all of it finished, none
 * of its messages in SQS and every page record archived (issue 21, item 7).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyHostCounts } from '../../../functions/cloud/messages/crawl-records.ts';
import { indexKey, indexPages } from '../../../functions/cloud/messages/warc-object.ts';
import { type QueueDepth, stateKey } from '../../../functions/cloud/ports/cloud-ports.ts';
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
      { seeds: [`${SITE}/`], scope: 'any', soft404Probe: false, delayMs: 0, sitemaps: false },
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
    // The link is still queued (in flight): the exact sum moves once it is finished.
    const deps = { table: cloud.table, frontier: { depth: async () => depthOf(1) }, clock };
    for (let i = 0; i < 4; i++) {
      assert.deepEqual(await completeCrawls(deps), { [id]: 'running' });
      clock.t += 1000;
    }
  });

  it('ends a crawl whose running totals are short of a dead batch and which also lost a URL', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, { seeds: [`${SITE}/`] }, clock);
    // The seed's batch: its ledger counted the seed and two links; it died before its shard write.
    await cloud.table.updateHost(id, 'a.example', {
      nextAllowedAt: 0,
      counts: { ...emptyHostCounts(), finished: 1, fetched: 1, requests: 1, enqueued: 2 },
      ledger: { firstSeq: '1', lastSeq: '1' },
    });
    // One link was fetched (ledger and shard); the other was lost (SQS's redrive, say).
    const child = { ...emptyHostCounts(), finished: 1, fetched: 1, requests: 1 };
    await cloud.table.updateHost(id, 'b.example', {
      nextAllowedAt: 0,
      counts: child,
      ledger: { firstSeq: '2', lastSeq: '2' },
    });
    await cloud.table.addToShard(id, 3, { ...child, hosts: 1 });
    // The running totals say settled (1 discovered, 1 finished); the ledgers say 3 and 2.
    const running = (await crawlProgress(cloud.table, id))!.view.counters;
    assert.equal(running.finished, running.discovered);
    for (const [busy, label] of [
      [0, 'the whole queue empty'],
      [40, 'other crawls keep the queue busy'],
    ] as const) {
      const crawl = cloud.table.crawls.get(id)!;
      crawl.status = 'running';
      delete crawl.watch;
      delete crawl.finishedAt;
      delete crawl.lost;
      delete crawl.counters;
      cloud.table.registry.add(id);
      const deps = { table: cloud.table, frontier: { depth: async () => depthOf(busy) }, clock };
      let status = 'running';
      const started = clock.t;
      const limit = quietLimitMs(crawl, depthOf(busy));
      while (status === 'running' && clock.t - started <= 2 * limit) {
        status = (await completeCrawls(deps))[id] ?? 'missing';
        clock.t += 1000;
      }
      assert.equal(status, 'done', `${label}: ends on its own`);
      assert.equal(cloud.table.crawls.get(id)?.lost, 1, label);
      assert.equal(cloud.table.crawls.get(id)?.counters?.discovered, 3, `${label}: the exact counters`);
    }
  });
});

describe('a crawl ends on its own work', () => {
  /** One batch's ledger for `host` (its group size changed by `queuedDelta`), and its shard. */
  async function ledger(
    cloud: MemoryCloud,
    id: string,
    host: string,
    seq: string,
    counts: Partial<ReturnType<typeof emptyHostCounts>>,
    queuedDelta: number,
  ): Promise<void> {
    const all = { ...emptyHostCounts(), ...counts };
    const { firstRequest } = await cloud.table.updateHost(id, host, {
      nextAllowedAt: 0,
      counts: all,
      ledger: { firstSeq: seq, lastSeq: seq },
      group: { queuedDelta, added: false },
    });
    await cloud.table.addToShard(id, Number(seq) % 8, { ...all, hosts: firstRequest ? 1 : 0 });
  }

  it('ends in the tick that finds every URL finished, no message of it in SQS and every page archived, the queue busy with others', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, { seeds: [`${SITE}/`] }, clock);
    // The API started the seed's group; the seed's batch sent its link to b.example (starting that
    // group), and the link was fetched, counted and archived before the seed's own ledger write.
    await cloud.table.startGroup(id, 'a.example', 1, 'seeds');
    await cloud.table.startGroup(id, 'b.example', 1, 'links');
    await ledger(cloud, id, 'b.example', '2', { finished: 1, fetched: 1, requests: 1 }, -1);
    await cloud.objects.put(indexKey(id, clock.now(), 'b'.repeat(16), 1), new Uint8Array(1), 'x');
    const busy = { depth: async () => depthOf(40) };
    const deps = { table: cloud.table, frontier: busy, captures: busy, archive: cloud.objects, clock };
    const running = (await crawlProgress(cloud.table, id))!.view.counters;
    assert.equal(running.finished, running.discovered, 'the counters alone say settled');
    assert.deepEqual(await completeCrawls(deps), { [id]: 'running' }, "the seed's message is in flight");
    clock.t += 60_000;
    // The seed's ledger: its page and its link counted, its group empty; its capture not archived.
    await ledger(cloud, id, 'a.example', '1', { finished: 1, fetched: 1, requests: 1, enqueued: 1 }, -1);
    assert.deepEqual(await completeCrawls(deps), { [id]: 'running' }, 'a page record not archived yet');
    clock.t += 60_000;
    await cloud.objects.put(indexKey(id, clock.now(), 'a'.repeat(16), 1), new Uint8Array(1), 'x');
    assert.deepEqual(await completeCrawls(deps), { [id]: 'done' }, 'the next tick, the queue still busy');
    const stored = cloud.table.crawls.get(id)!;
    assert.equal(stored.lost, 0);
    assert.equal(stored.counters?.finished, 2);
    assert.equal(stored.counters?.discovered, 2);
  });

  it('restarts a host whose back queue still holds tasks the counters do not count, sending each once', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`] }, clock);
    await cloud.table.startGroup(id, 'a.example', 1, 'seeds');
    await ledger(cloud, id, 'a.example', '1', { finished: 1, fetched: 1, requests: 1 }, -1);
    // A sitemap file waits in the back queue (not counted as discovered), its group idle.
    const file = `${SITE}/sitemap.xml`;
    const where = { url: file, scope: `${SITE}/`, granted: false, level: 0, files: 1, entries: 100 };
    const sitemap = { ...tasks([file])[0]!, sitemap: { ...where, from: 'robots' as const } };
    await cloud.backlog.add(id, 'a.example', [sitemap]);
    await cloud.table.noteBacklog(id, 'a.example');
    const empty = { depth: async () => depthOf(0) };
    const backQueues = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier };
    const deps = { table: cloud.table, frontier: empty, clock, backQueues };
    assert.deepEqual(await completeCrawls(deps), { [id]: 'running' });
    clock.t += 60_000;
    assert.deepEqual(
      await completeCrawls(deps),
      { [id]: 'running' },
      'settled, but its host is started again',
    );
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${SITE}/sitemap.xml`],
    );
    assert.equal(cloud.backlog.size(), 0, 'taken out of the back queue, not left to be sent again');
    assert.equal(cloud.table.hostItems.get(stateKey(id, 'a.example'))?.group?.queued, 1);
  });

  it('does not wait for page records of URLs finished without one (page budget spent)', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, { seeds: [`${SITE}/`, `${SITE}/more`] }, clock);
    await cloud.table.startGroup(id, 'a.example', 2, 'seeds');
    await ledger(
      cloud,
      id,
      'a.example',
      '1',
      { finished: 2, fetched: 1, requests: 1, byStatus: { '200': 1 }, byReason: { 'max-pages': 1 } },
      -2,
    );
    const busy = { depth: async () => depthOf(40) };
    const deps = { table: cloud.table, frontier: busy, archive: cloud.objects, clock };
    assert.deepEqual(await completeCrawls(deps), { [id]: 'running' }, 'no page record archived');
    await cloud.objects.put(indexKey(id, clock.now(), 'a'.repeat(16), 1), new Uint8Array(1), 'x');
    assert.deepEqual(await completeCrawls(deps), { [id]: 'done' });
  });

  it('keeps to the queue-wide rules without the archive, or with index keys that carry no count', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, { seeds: [`${SITE}/`] }, clock);
    await cloud.table.startGroup(id, 'a.example', 1, 'seeds');
    await ledger(cloud, id, 'a.example', '1', { finished: 1, fetched: 1, requests: 1 }, -1);
    await cloud.objects.put(indexKey(id, clock.now(), 'a'.repeat(16)), new Uint8Array(1), 'x');
    const busy = { depth: async () => depthOf(40) };
    for (const archive of [undefined, cloud.objects]) {
      const deps = { table: cloud.table, frontier: busy, clock, ...(archive ? { archive } : {}) };
      assert.deepEqual(await completeCrawls(deps), { [id]: 'running' });
    }
  });

  it('index keys carry their page counts', () => {
    assert.equal(indexPages(indexKey('c1', Date.UTC(2026, 10, 28), '0123456789abcdef', 42)), 42);
    assert.equal(indexPages(indexKey('c1', Date.UTC(2026, 10, 28), '0123456789abcdef')), undefined);
  });
});
