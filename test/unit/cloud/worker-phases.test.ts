/**
 * The frontier worker's phases with in-memory cloud ports and an in-memory fetcher: the FIFO rule,
 * warm deferral, a record's step from robots.txt to the page, the ledger on redelivery, the
 * commit's order when a write fails, AOPIC admission, and the error policy.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type FaultStep, InjectedCrashError } from '../../../functions/cloud/fault-hook.ts';
import { stateKey } from '../../../functions/cloud/ports/cloud-ports.ts';
import {
  admitLinks,
  HOLD_BACK_FRESH_MS,
  HOLD_BACK_WAIT_S,
  SITEMAP_ENTRIES_SENT,
} from '../../../functions/cloud/worker/aopic-admission.ts';
import { weighedLimit } from '../../../functions/cloud/worker/batch-commit.ts';
import { deferWarm } from '../../../functions/cloud/worker/batch-intake.ts';
import {
  emptyBatchStats,
  type FrontierMessage,
  type MessageVerdict,
} from '../../../functions/cloud/worker/batch-model.ts';
import { WorkerContainer } from '../../../functions/cloud/worker/container-state.ts';
import { fifoResponse, runGroupInOrder } from '../../../functions/cloud/worker/fifo-groups.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import type { CashFlow } from '../../../functions/core/scheduling/aopic.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';
import { MemoryCloud } from './memory-cloud.ts';
import { MemoryFetcher, page } from './memory-fetcher.ts';
import { messageFor, runningCrawl, TestClock, workerOver } from './worker-kit.ts';

const SITE = 'http://a.example';
// No sitemaps: these tests count the requests and sends (cloud-rules-sitemaps.test.ts has them).
const base = { scope: 'any', soft404Probe: false, delayMs: 0, delayFactor: 0, sitemaps: false };

function message(id: string, group: string | undefined): FrontierMessage {
  return {
    messageId: id,
    receiptHandle: `r-${id}`,
    body: '{}',
    ...(group ? { groupId: group } : {}),
    receiveCount: 1,
  };
}

describe('FIFO rule (fifo-groups.ts)', () => {
  it('fails every later record of a group behind a failed one, with its wait; other groups go on', () => {
    const messages = [
      message('a1', 'A'),
      message('a2', 'A'),
      message('b1', 'B'),
      message('a3', 'A'),
      message('c1', undefined),
    ];
    const verdicts = new Map<string, MessageVerdict>([
      ['a1', { kind: 'ack' }],
      ['a2', { kind: 'retry', seconds: 7, why: 'politeness' }],
      ['a3', { kind: 'ack' }],
      ['b1', { kind: 'ack' }],
    ]);
    const response = fifoResponse(messages, verdicts);
    assert.deepEqual(response.failed, ['a2', 'a3', 'c1'], 'a3 follows a2; c1 has no verdict');
    assert.deepEqual(
      response.changes.map((c) => [c.receiptHandle, c.seconds]),
      [
        ['r-a2', 7],
        ['r-a3', 7],
        ['r-c1', 0],
      ],
    );
  });

  it('stops running a group at its first failure', async () => {
    const ran: string[] = [];
    const verdicts = new Map<string, MessageVerdict>();
    await runGroupInOrder(
      [{ message: message('1', 'G') }, { message: message('2', 'G') }, { message: message('3', 'G') }],
      async ({ message }) => {
        ran.push(message.messageId);
        return message.messageId === '2' ? { kind: 'retry', seconds: 3, why: 'x' } : { kind: 'ack' };
      },
      verdicts,
    );
    assert.deepEqual(ran, ['1', '2']);
    assert.deepEqual(verdicts.get('3'), { kind: 'retry', seconds: 3, why: 'x' });
  });
});

describe('batch intake', () => {
  it('defers a host this container knows is waiting without reading anything', () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const container = new WorkerContainer({ clock, random: () => 0.5 });
    const [t1, t2] = tasks([`${SITE}/1`, `${SITE}/2`]);
    container.rememberHost(`${t1!.crawlId} ${t1!.host}`, clock.now() + 2_500);
    const verdicts = new Map<string, MessageVerdict>();
    const stats = emptyBatchStats(2);
    const left = deferWarm(
      [
        { message: messageFor(t1!), task: t1! },
        { message: messageFor(t2!), task: t2! },
      ],
      container,
      { now: clock.now(), inlineWaitMs: 300, maxReceives: 10 },
      verdicts,
      stats,
    );
    assert.equal(left.length, 0);
    assert.equal(stats.deferredWarm, 2);
    assert.deepEqual([...verdicts.values()][0], { kind: 'retry', seconds: 3, why: 'politeness' });
  });
});

describe('a batch through all phases (in-memory cloud)', () => {
  it('fetches robots.txt then the page in one record, queues its links, sends its capture, counts it once', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', ['/a', '/b', 'http://b.example/']) },
    });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const worker = workerOver(cloud, fetcher, clock);
    const msg = messageFor(tasks([`${SITE}/`])[0]!);
    const { verdicts, stats } = await worker([msg]);
    assert.deepEqual(verdicts.get(msg.messageId), { kind: 'ack' });
    assert.deepEqual(fetcher.requests, [`${SITE}/robots.txt`, `${SITE}/`]);
    assert.deepEqual(cloud.frontier.sent.map((t) => t.url).sort(), [
      `${SITE}/a`,
      `${SITE}/b`,
      'http://b.example/',
    ]);
    assert.equal(stats.captures, 1);
    const counters = cloud.table.counters(id);
    assert.equal(counters.finished, 1);
    assert.equal(counters.discovered, 4);
    assert.equal(counters.requests, 2);
    // Delivered again (its ledger write went through): acknowledged, no request, no count.
    const again = await workerOver(cloud, fetcher, clock)([msg]);
    assert.deepEqual(again.verdicts.get(msg.messageId), { kind: 'ack' });
    assert.equal(fetcher.requests.length, 2);
    assert.equal(cloud.table.counters(id).finished, 1);
  });

  it('when the link send fails nothing is acknowledged and no ledger moves: the batch is redone whole', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', ['/a']) },
    });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    cloud.frontier.failing = true;
    const msg = messageFor(tasks([`${SITE}/`])[0]!);
    const first = await workerOver(cloud, fetcher, clock)([msg]);
    assert.deepEqual(first.verdicts.get(msg.messageId), {
      kind: 'retry',
      seconds: 2,
      why: 'batch-write-failed',
    });
    assert.equal(cloud.captures.bodies.length, 0, 'no capture before the links are queued');
    assert.ok(!cloud.table.calls.includes('updateHost'), 'no ledger before the links are queued');
    cloud.frontier.failing = false;
    const second = await workerOver(cloud, fetcher, clock)([msg]);
    assert.deepEqual(second.verdicts.get(msg.messageId), { kind: 'ack' });
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${SITE}/a`],
      'the redelivered page claims and queues its link again',
    );
    assert.equal(cloud.table.counters(id).finished, 1);
  });

  it("a claim by an unfinished page answers other pages from memory, never the claimant's own retry", async () => {
    const B = 'http://b.example';
    const C = 'http://c.example';
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${B}/robots.txt`]: { status: 404 },
      [`${C}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', ['/a']) },
      [`${B}/`]: { status: 200, body: page('b home', [`${SITE}/a`]) },
      [`${C}/`]: { status: 200, body: page('c home', [`${SITE}/a`]) },
    });
    const { tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const container = workerOver(cloud, fetcher, clock);
    // P claims /a, then its link send fails: the claim is durable, P is not finished
    cloud.frontier.failing = true;
    const p = messageFor(tasks([`${SITE}/`])[0]!);
    assert.equal((await container([p])).verdicts.get(p.messageId)?.kind, 'retry');
    cloud.frontier.failing = false;
    // Q, in the same container, is told "seen" by the store and remembers who claimed it
    await container([messageFor(tasks([`${B}/`], 1)[0]!)]);
    assert.equal(cloud.frontier.sent.length, 0, 'P owns /a: Q does not queue it');
    // R is answered from memory: a cache hit, no store look-up
    const r = await container([messageFor(tasks([`${C}/`], 1)[0]!)]);
    assert.equal(r.stats.seenCacheHits, r.stats.seenLookups, 'every look-up of R answered in memory');
    // P's own retry in this container still claims and queues its link
    assert.deepEqual((await container([p])).verdicts.get(p.messageId), { kind: 'ack' });
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${SITE}/a`],
    );
  });

  it('a permanent error goes to the DLQ on its first try, recorded and counted; a transient one is retried', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({ [`${SITE}/robots.txt`]: { status: 404 } });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    class BrokenStoreError extends Error {
      readonly code = 'broken-store';
      readonly retryable: boolean;
      constructor(retryable: boolean) {
        super('store refused the item');
        this.name = 'BrokenStoreError';
        this.retryable = retryable;
      }
    }
    let retryable = true;
    const worker = workerOver(cloud, fetcher, clock, {
      fault: (step) => {
        if (step === 'before-crawl') throw new BrokenStoreError(retryable);
      },
    });
    const [transient, permanent] = tasks([`${SITE}/t`, `${SITE}/p`]);
    const m1 = messageFor(transient!);
    const r1 = await worker([m1]);
    assert.equal(r1.verdicts.get(m1.messageId)?.kind, 'retry', 'worth retrying: the record fails');
    assert.equal(cloud.deadLetters.letters.length, 0);
    retryable = false;
    const m2 = messageFor(permanent!);
    const r2 = await worker([m2]);
    assert.deepEqual(r2.verdicts.get(m2.messageId), { kind: 'ack' });
    assert.equal(cloud.deadLetters.letters.length, 1, 'not worth retrying: to the DLQ at once');
    assert.match(cloud.deadLetters.letters[0]!.detail ?? '', /BrokenStoreError/);
    const dlqPage = cloud.captures.pages().find((p) => p.url === `${SITE}/p`);
    assert.equal(dlqPage?.reason, 'dlq');
    assert.equal(cloud.table.counters(id).dlq, 1);
  });
});

describe('AOPIC admission (aopic-admission.ts)', () => {
  it("parks the links to the page's own path pattern and queues the ordinary ones", () => {
    const parsed = parseCrawlConfig({ seeds: [`${SITE}/`] });
    assert.ok(parsed.ok);
    const flow: CashFlow = { cash: 1, toLambda: 0.1, credits: [] };
    const share = 0.9 / 3;
    const link = (url: string, cash: number) => ({
      crawlId: 'c',
      url,
      fp: '0123456789abcdef',
      host: 'a.example',
      depth: 1,
      redirects: 0,
      attempt: 0,
      cash,
    });
    const { queue, parks } = admitLinks(
      [link(`${SITE}/about`, share), link(`${SITE}/news`, share), link(`${SITE}/list/2`, share * 0.1)],
      flow,
      parsed.config,
      0.25,
      'owner',
    );
    assert.deepEqual(
      queue.map((t) => t.url),
      [`${SITE}/about`, `${SITE}/news`],
    );
    assert.equal(parks.length, 1);
    assert.equal(parks[0]!.key, share * 0.1 - 0.25, 'parked with its key: cash less the bonus');
    const bfs = parseCrawlConfig({ seeds: [`${SITE}/`], order: 'bfs' });
    assert.ok(bfs.ok);
    assert.equal(admitLinks([link(`${SITE}/x/1`, 0.001)], flow, bfs.config, 0, 'o').parks.length, 0);

    // A sitemap's entries: the richest SITEMAP_ENTRIES_SENT go now, the rest are parked (a
    // whole-site sitemap would otherwise fill the host's FIFO in the site's order).
    const entries = Array.from({ length: SITEMAP_ENTRIES_SENT + 10 }, (_, i) =>
      link(`${SITE}/p/${i}`, i === SITEMAP_ENTRIES_SENT + 9 ? 0.5 : 0.001),
    );
    const listed = admitLinks(entries, flow, parsed.config, 0, 'owner', true);
    assert.equal(listed.queue.length, SITEMAP_ENTRIES_SENT);
    assert.equal(listed.queue[0]!.url, `${SITE}/p/${SITEMAP_ENTRIES_SENT + 9}`, 'the richest first');
    assert.equal(listed.parks.length, 10);
    const small = admitLinks(entries.slice(0, 40), flow, parsed.config, 0, 'owner', true);
    assert.deepEqual([small.queue.length, small.parks.length], [40, 0], 'a small sitemap goes whole');
  });
});

describe('parked URLs admitted when a batch leaves the frontier dry (dry-admission.ts, issue 8 item 6)', () => {
  /** A home page, a chain of numbered pages after it (parked: the page's own path pattern), and `/x`. */
  function chain(extra: string[] = []) {
    return new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', ['/p/1', ...extra]) },
      [`${SITE}/p/1`]: { status: 200, body: page('one', ['/p/2', '/']) },
      [`${SITE}/x`]: { status: 200, body: page('x', []) },
    });
  }
  const sentUrl = (cloud: MemoryCloud, url: string) => cloud.frontier.sent.find((t) => t.url === url);

  it('the batch that finishes the last queued URL admits the parked ones itself, not the next tick', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = chain();
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(tasks([`${SITE}/`])[0]!)]);
    const one = sentUrl(cloud, `${SITE}/p/1`);
    assert.ok(one !== undefined, '/p/1 is an ordinary link of the home page: queued');
    cloud.table.calls.length = 0;
    const m = messageFor(one);
    const { stats } = await worker([m]);
    assert.equal(stats.parked, 1, '/p/2 parked');
    assert.equal(stats.admitted, 1, 'and admitted by the same batch: nothing else was queued');
    assert.ok(sentUrl(cloud, `${SITE}/p/2`) !== undefined);
    assert.equal(cloud.table.calls.filter((c) => c === 'counterShards').length, 1, 'one read of the totals');
    const counters = cloud.table.counters(id);
    assert.equal(counters.parked, 0);
    assert.equal(counters.queued, 1, '/p/2 is queued now');
    // Redelivered (its ledger went through): acknowledged, nothing read, nothing admitted again.
    const again = await worker([{ ...m, receiveCount: 2 }]);
    assert.equal(again.stats.admitted, 0);
  });

  it('admits nothing while other URLs of the crawl are queued (the scheduler keeps AOPIC order)', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = chain(['/x']);
    const { tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(tasks([`${SITE}/`])[0]!)]);
    const { stats } = await worker([messageFor(sentUrl(cloud, `${SITE}/p/1`)!)]);
    assert.equal(stats.parked, 1);
    assert.equal(stats.admitted, 0, '/x is still queued');
    assert.equal(sentUrl(cloud, `${SITE}/p/2`), undefined);
    // The batch that finishes /x leaves the frontier dry: it admits /p/2.
    const last = await worker([messageFor(sentUrl(cloud, `${SITE}/x`)!)]);
    assert.equal(last.stats.admitted, 1);
    assert.ok(sentUrl(cloud, `${SITE}/p/2`) !== undefined);
  });

  it('breadth-first crawls and crawls that queue everything never read the totals', async () => {
    for (const settings of [{ order: 'bfs' }, { aopicAdmitShare: 0 }]) {
      const clock = new TestClock();
      const cloud = new MemoryCloud();
      const { tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, ...settings }, clock);
      const worker = workerOver(cloud, chain(), clock);
      await worker([messageFor(tasks([`${SITE}/`])[0]!)]);
      await worker([messageFor(sentUrl(cloud, `${SITE}/p/1`)!)]);
      assert.ok(sentUrl(cloud, `${SITE}/p/2`) !== undefined, 'queued at once');
      assert.ok(!cloud.table.calls.includes('counterShards'), JSON.stringify(settings));
    }
  });
});

describe('nothing reaches the DLQ unrecorded (issue 8, items 2 and 3)', () => {
  it('a record that must wait with few receives left is re-sent as a new message, not deferred toward the DLQ', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({ [`${SITE}/robots.txt`]: { status: 404 } });
    const { id, tasks } = runningCrawl(
      cloud,
      { seeds: [`${SITE}/`], scope: 'any', soft404Probe: false, delayMs: 1000 },
      clock,
    );
    const host = tasks([`${SITE}/`])[0]!.host;
    await cloud.table.updateHost(id, host, {
      nextAllowedAt: clock.now() + 5_000,
      counts: (await import('../../../functions/cloud/messages/crawl-records.ts')).emptyHostCounts(),
    });
    const worker = workerOver(cloud, fetcher, clock, { maxReceives: 10 });
    const [early, late] = tasks([`${SITE}/early`, `${SITE}/late`]);
    const fresh = messageFor(early!, 3);
    const worn = messageFor(late!, 9);
    const { verdicts, stats } = await worker([fresh, worn]);
    assert.equal(verdicts.get(fresh.messageId)?.kind, 'retry', 'plenty of receives left: deferred');
    assert.deepEqual(verdicts.get(worn.messageId), { kind: 'ack' }, 'the worn message is acknowledged...');
    assert.equal(stats.resent, 1);
    const resent = cloud.frontier.sent.find((t) => t.url === `${SITE}/late`);
    assert.ok(resent?.resentFrom !== undefined, '...and its task re-sent with its own deduplication id');
    const { deduplicationId } = await import('../../../functions/cloud/messages/task-message.ts');
    assert.notEqual(deduplicationId(resent), deduplicationId(late!));
    assert.equal(fetcher.requests.length, 0);
    assert.equal(cloud.table.counters(id).finished, 0, 'a re-send is not a finish');
    assert.equal(cloud.deadLetters.letters.length, 0);
  });

  it('a record on its last receive (its invocations kept crashing) is finished as dlq: recorded and counted', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({ [`${SITE}/robots.txt`]: { status: 404 } });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const m = messageFor(tasks([`${SITE}/crashy`])[0]!, 10);
    const { verdicts } = await workerOver(cloud, fetcher, clock, { maxReceives: 10 })([m]);
    assert.deepEqual(verdicts.get(m.messageId), { kind: 'ack' });
    assert.equal(fetcher.requests.length, 0, 'not tried again');
    assert.equal(cloud.deadLetters.letters[0]?.reason, 'max-receives');
    assert.equal(cloud.captures.pages()[0]?.reason, 'dlq');
    const counters = cloud.table.counters(id);
    assert.equal(counters.dlq, 1);
    assert.equal(counters.finished, 1);
  });
});

describe('many crawls in one container (issue 8, item 3)', () => {
  it('keeps the contexts of a dozen default crawls (the first build kept 8), weighed by memory', () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const container = new WorkerContainer({ clock, random: () => 0.5 });
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const { id } = runningCrawl(cloud, { seeds: [`http://h${i}.example/`] }, clock);
      container.contextFor(cloud.table.crawls.get(id)!);
      ids.push(id);
    }
    assert.equal(container.crawls, 16);
    for (const id of ids) assert.ok(container.knownContext(id) !== undefined, id);
    // Big URL-seen caches weigh more: fewer fit, and the least recently used go first.
    const small = new WorkerContainer({ clock, random: () => 0.5 });
    for (let i = 0; i < 16; i++) {
      const { id } = runningCrawl(
        cloud,
        { seeds: [`http://b${i}.example/`], seenCacheSize: 1_048_576 },
        clock,
      );
      small.contextFor(cloud.table.crawls.get(id)!);
    }
    assert.ok(small.crawls < 16 && small.crawls >= 3, `${small.crawls} big crawls`);
  });

  it('a container that never saw the crawl does not probe a site again: the answer is kept with the host', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/a`]: { status: 200, body: page('A', []) },
      [`${SITE}/b`]: { status: 200, body: page('B', []) },
    });
    const settings = { seeds: [`${SITE}/`], scope: 'any', soft404Probe: true, delayMs: 0, delayFactor: 0 };
    const { tasks } = runningCrawl(cloud, settings, clock);
    const [a, b] = tasks([`${SITE}/a`, `${SITE}/b`]);
    await workerOver(cloud, fetcher, clock)([messageFor(a!)]);
    const probes = () => fetcher.requests.filter((u) => u.includes('crawlstack-probe')).length;
    assert.equal(probes(), 1, 'the first container probes the site once');
    // A new container (or one that evicted the crawl): its memory is empty, the host item is not.
    await workerOver(cloud, fetcher, clock)([messageFor(b!)]);
    assert.equal(probes(), 1, 'no second probe');
    assert.equal(fetcher.count(`${SITE}/b`), 1, 'the page is fetched in the same batch');
  });
});

describe("AOPIC's hold-back across a crawl's batches (aopic-admission.ts, heldBack)", () => {
  const B = 'http://b.example';
  const setup = (input: Record<string, unknown>) => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${B}/robots.txt`]: { status: 404 },
      [`${SITE}/rich`]: { status: 200, body: page('rich', []) },
      [`${B}/poor`]: { status: 200, body: page('poor', []) },
    });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, ...input }, clock);
    const rich = messageFor({ ...tasks([`${SITE}/rich`])[0]!, cash: 0.3 });
    const poorTask = { ...tasks([`${B}/poor`])[0]!, cash: 0.01 };
    const poor = messageFor(poorTask);
    const richer = { ...tasks([`${B}/richer`])[0]!, cash: 0.15 };
    return { clock, cloud, fetcher, id, rich, poor, richer };
  };

  it('with a page budget, a task far poorer than what the crawl is fetching waits while batches go on; the average rides on the budget write', async () => {
    const { clock, cloud, fetcher, id, rich, poor } = setup({ maxPages: 100 });
    // Another batch fetched pages worth 0.2 a moment ago.
    cloud.table.budgets.set(id, 5);
    cloud.table.dispatch.set(id, { cash: 0.2, at: clock.now() });
    const { verdicts, stats } = await workerOver(cloud, fetcher, clock)([rich, poor]);
    assert.deepEqual(verdicts.get(rich.messageId), { kind: 'ack' });
    assert.deepEqual(verdicts.get(poor.messageId), {
      kind: 'retry',
      seconds: HOLD_BACK_WAIT_S,
      why: 'hold-back',
    });
    assert.equal(stats.heldBack, 1);
    assert.ok(!fetcher.requests.includes(`${B}/poor`), 'the poor page is not fetched');
    // The batch's fetch (worth 0.3) is now what the crawl has been fetching, with the budget.
    assert.equal(cloud.table.budgets.get(id), 6);
    assert.deepEqual(cloud.table.dispatch.get(id), { cash: 0.3, at: clock.now() });

    // No batch has moved the average for a while (nothing better is being fetched): it goes.
    clock.t += HOLD_BACK_FRESH_MS;
    const later = await workerOver(cloud, fetcher, clock)([poor]);
    assert.deepEqual(later.verdicts.get(poor.messageId), { kind: 'ack' });
    assert.ok(fetcher.requests.includes(`${B}/poor`));
  });

  /**
   * A budgeted crawl whose batches fetch pages worth 0.2: b.example's group holds the poor task
   * (0.01), and its back queue one task worth `waiting`.
   */
  const heldHost = async (waiting: number) => {
    const setupOf = setup({ maxPages: 100 });
    const { clock, cloud, id, richer } = setupOf;
    cloud.table.budgets.set(id, 5);
    cloud.table.dispatch.set(id, { cash: 0.2, at: clock.now() });
    await cloud.table.startGroup(id, 'b.example', 1, 'starter');
    // A holder's ledger write has ended the start since (a just-started group reads no back queue).
    delete cloud.table.hostItems.get(stateKey(id, 'b.example'))!.group!.starter;
    await cloud.backlog.add(id, 'b.example', [{ ...richer, cash: waiting }]);
    await cloud.table.noteBacklog(id, 'b.example');
    return setupOf;
  };

  it("a held task whose host's back queue holds a richer one goes back there, and the refill sends the host's richest", async () => {
    const { clock, cloud, fetcher, id, poor } = await heldHost(0.15);
    const { verdicts, stats } = await workerOver(cloud, fetcher, clock)([poor]);
    assert.deepEqual(verdicts.get(poor.messageId), { kind: 'ack' }, 'its message is done: the task is not');
    assert.equal(stats.heldBack, 1);
    assert.ok(!fetcher.requests.includes(`${B}/poor`), 'the poor page is not fetched');
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${B}/richer`, `${B}/poor`],
      'the refill sends the richest first; the held task is not lost',
    );
    assert.equal(cloud.backlog.size(), 0);
    assert.equal(cloud.table.hostItems.get(stateKey(id, 'b.example'))?.group?.queued, 2);
  });

  it('a held task given back is not lost when the worker dies at any step of the commit', async () => {
    const steps: FaultStep[] = [
      'after-backlog',
      'after-sends',
      'after-captures',
      'after-ledgers',
      'before-ack',
    ];
    for (const step of steps) {
      const { clock, cloud, fetcher, poor } = await heldHost(0.15);
      let killed = false;
      const fault = (at: FaultStep) => {
        if (at === step && !killed) {
          killed = true;
          throw new InjectedCrashError(at, 1);
        }
      };
      const worker = workerOver(cloud, fetcher, clock, { fault });
      await assert.rejects(worker([poor]), InjectedCrashError, step);
      // The message was never acknowledged: it comes back.
      await worker([{ ...poor, receiveCount: 2 }]);
      const waiting = [...cloud.backlog.queues.values()].flatMap((q) =>
        [...q.values()].flatMap((t) => t.tasks),
      );
      const urls = new Set([...cloud.frontier.sent, ...waiting].map((t) => t.url));
      assert.ok(urls.has(`${B}/poor`) && urls.has(`${B}/richer`), `${step}: ${[...urls].join(' ')}`);
      assert.ok(!fetcher.requests.includes(`${B}/poor`), step);
    }
  });

  /** Runs the held host's batch and checks that its poor task was deferred, not given back. */
  const assertDeferred = async ({ clock, cloud, fetcher, poor }: Awaited<ReturnType<typeof heldHost>>) => {
    const { verdicts, stats } = await workerOver(cloud, fetcher, clock)([poor]);
    assert.deepEqual(verdicts.get(poor.messageId), {
      kind: 'retry',
      seconds: HOLD_BACK_WAIT_S,
      why: 'hold-back',
    });
    assert.equal(stats.heldBackReturned, 0);
  };

  it('a held task stays (deferred) in a group just started, whose first refill reads no back queue', async () => {
    const held = await heldHost(0.15);
    held.cloud.table.hostItems.get(stateKey(held.id, 'b.example'))!.group!.starter = 'starter';
    await assertDeferred(held);
  });

  it('a held task stays (deferred) when it is the richest its host has', async () => {
    // Poorer than the held task: giving it back would only send it round again.
    const held = await heldHost(0.005);
    await assertDeferred(held);
    assert.deepEqual(held.cloud.frontier.sent, []);
    assert.equal(held.cloud.backlog.size(), 1);
  });

  it("a held task goes back when its host's pages credited a poorer URL of its back queue above it", async () => {
    // Poorer than the held task as queued, but the host's pages have linked to it since.
    const held = await heldHost(0.005);
    const { clock, cloud, fetcher, id, poor, richer } = held;
    cloud.table.hostItems.get(stateKey(id, 'b.example'))!.group!.credits = new Map([
      [richer.fp, { amount: 0.1, misses: 0 }],
    ]);
    const { verdicts, stats } = await workerOver(cloud, fetcher, clock)([poor]);
    assert.deepEqual(verdicts.get(poor.messageId), { kind: 'ack' });
    assert.equal(stats.heldBackReturned, 1);
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${B}/richer`, `${B}/poor`],
      'the refill applies the credit and sends the credited URL first',
    );
    assert.ok(Math.abs(cloud.frontier.sent[0]!.cash - 0.105) < 1e-9, 'with the credit in its cash');
  });

  it("a held root page holds what other hosts' pages credited it: it goes, and its host item gives the credit up", async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${B}/robots.txt`]: { status: 404 },
      [`${B}/`]: { status: 200, body: page('b', []) },
    });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, maxPages: 100 }, clock);
    cloud.table.budgets.set(id, 5);
    cloud.table.dispatch.set(id, { cash: 0.2, at: clock.now() });
    await cloud.table.startGroup(id, 'b.example', 1, 'starter');
    const root = messageFor({ ...tasks([`${B}/`])[0]!, cash: 0.01 });
    const first = await workerOver(cloud, fetcher, clock)([root]);
    assert.equal(first.verdicts.get(root.messageId)?.kind, 'retry', 'held: far poorer than 0.2');
    // Pages of other hosts linked to it since (flushRootCredits).
    assert.equal(await cloud.table.addRootCredit(id, 'b.example', 0.15), true);
    const again = await workerOver(cloud, fetcher, clock)([{ ...root, receiveCount: 2 }]);
    assert.deepEqual(again.verdicts.get(root.messageId), { kind: 'ack' });
    assert.ok(fetcher.requests.includes(`${B}/`));
    const record = cloud.captures.pages().find((p) => p.url === `${B}/`) as { cash?: number } | undefined;
    assert.ok(
      Math.abs((record?.cash ?? 0) - 0.16) < 1e-9,
      `fetched with the credit in its cash (${record?.cash})`,
    );
    const item = cloud.table.hostItems.get(stateKey(id, 'b.example'))!;
    assert.equal(item.rootHandled, true);
    assert.ok(Math.abs(item.rootCredit ?? 1) < 1e-12, 'the credit it used is taken off');
    assert.equal(await cloud.table.addRootCredit(id, 'b.example', 0.1), false, 'and no more is written');
  });

  it("a budgeted crawl's page writes its credits to another host's known root page; other credits and other crawls go to the lambda page", async () => {
    for (const maxPages of [100, undefined]) {
      const clock = new TestClock();
      const cloud = new MemoryCloud();
      const fetcher = new MemoryFetcher({
        [`${SITE}/robots.txt`]: { status: 404 },
        [`${SITE}/a`]: { status: 200, body: page('a', [`${B}/`, `${B}/deep`]) },
      });
      const input = { seeds: [`${SITE}/`], ...base, ...(maxPages === undefined ? {} : { maxPages }) };
      const { id, tasks } = runningCrawl(cloud, input, clock);
      // b.example's root and a deeper page are known (claimed) and wait: the links to them are credits.
      const [bRoot, bDeep] = tasks([`${B}/`, `${B}/deep`]);
      const owners = cloud.seen(id).owners;
      owners.set(bRoot!.fp, '0000000000000001');
      owners.set(bDeep!.fp, '0000000000000001');
      await cloud.table.startGroup(id, 'b.example', 1, 'starter');
      const a = messageFor({ ...tasks([`${SITE}/a`])[0]!, cash: 0.3 });
      const { stats } = await workerOver(cloud, fetcher, clock)([a]);
      const item = cloud.table.hostItems.get(stateKey(id, 'b.example'))!;
      const lambda = cloud.table.hostItems.get(stateKey(id, 'a.example'))!.lambda;
      if (maxPages !== undefined) {
        assert.equal(stats.rootCredits, 1, 'one write, for b.example');
        assert.ok((item.rootCredit ?? 0) > 0.1, `the root's share (${item.rootCredit})`);
        assert.ok(lambda > 0.1 && lambda < 0.2, `the tax and the deeper page's share (${lambda})`);
      } else {
        assert.equal(stats.rootCredits, 0);
        assert.equal(
          item.rootCredit,
          undefined,
          'without a budget every credit to another host goes to the lambda page',
        );
        assert.ok(lambda > 0.2, `${lambda}`);
      }
    }
  });

  it("weighs a budgeted crawl's group by its richest URL against the richest the crawl fetched lately (weighedLimit)", () => {
    const { clock, cloud, id, richer } = setup({ maxPages: 100 });
    const crawl = cloud.table.crawls.get(id)!;
    const now = clock.now();
    /** A batch that read `read` (set at `at`), fetched pages averaging `own`, in a container whose peak was `peak`. */
    const view = (
      config: Record<string, unknown>,
      read: { cash: number; at: number },
      own?: number,
      peak?: { cash: number; at: number },
    ) => {
      const parsed = parseCrawlConfig({ seeds: [`${SITE}/`], ...base, ...config });
      assert.ok(parsed.ok);
      return {
        crawl,
        ctx: { config: parsed.config, ...(peak === undefined ? {} : { fetchPeak: peak }) },
        dispatchRead: read,
        dispatchCash: own ?? read.cash,
        dispatched: own === undefined ? 0 : 1,
      };
    };
    const budget = { maxPages: 100 };
    const curve = (weigh: ((t: CrawlTask) => number) | undefined) => {
      assert.ok(weigh !== undefined);
      return [0.4, 0.2, 0.1, 0.05, 0].map((cash) => weigh({ ...richer, cash }));
    };
    assert.deepEqual(
      curve(weighedLimit(view(budget, { cash: 0.2, at: now }), 8, now)),
      [8, 8, 2, 1, 1],
      'the square of the ratio to what the crawl fetches, 1 at least',
    );
    const stale = { cash: 0.2, at: now - HOLD_BACK_FRESH_MS };
    assert.equal(weighedLimit(view(budget, stale), 8, now), undefined, 'no batch fetched lately');
    assert.deepEqual(
      curve(weighedLimit(view(budget, stale, 0.2), 8, now)),
      [8, 8, 2, 1, 1],
      "the batch's own fetches count",
    );
    // A richer batch one half-life ago outweighs a poorer one now: the reference is a peak.
    const batch = view(budget, { cash: 0.05, at: now }, undefined, {
      cash: 0.4,
      at: now - HOLD_BACK_FRESH_MS,
    });
    assert.deepEqual(curve(weighedLimit(batch, 8, now)), [8, 8, 2, 1, 1], 'the peak, halved every 2 s');
    assert.deepEqual(batch.ctx.fetchPeak, { cash: 0.2, at: now }, 'kept in the container for the next batch');
    assert.equal(weighedLimit(view({}, { cash: 0.2, at: now }), 8, now), undefined, 'no page budget');
    assert.equal(weighedLimit(view(budget, { cash: 0, at: now }), 8, now), undefined, 'nothing fetched yet');
  });

  it('holds nothing back without a page budget, nor in breadth-first order', async () => {
    for (const input of [{}, { maxPages: 100, order: 'bfs' }]) {
      const { clock, cloud, fetcher, id, poor } = setup(input);
      cloud.table.dispatch.set(id, { cash: 0.2, at: clock.now() });
      const { verdicts, stats } = await workerOver(cloud, fetcher, clock)([poor]);
      assert.deepEqual(verdicts.get(poor.messageId), { kind: 'ack' }, JSON.stringify(input));
      assert.equal(stats.heldBack, 0);
    }
  });
});
