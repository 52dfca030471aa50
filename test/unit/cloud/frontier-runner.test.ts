/**
 * The runner (frontier-runner.ts): one invocation serves the hosts of its event batch and those it
 * receives itself, with each host's gap kept inside the invocation while enough hosts share the
 * wait; its own messages are deleted only after their round's commit, and a container that dies
 * mid-round loses nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SQSRecord } from 'aws-lambda';
import { readHostsPerInvocation } from '../../../functions/cloud/env.ts';
import { InjectedCrashError } from '../../../functions/cloud/fault-hook.ts';
import { createFrontierWorker } from '../../../functions/cloud/lambdas/frontier-worker/handler.ts';
import { isTraceBody } from '../../../functions/cloud/messages/trace-message.ts';
import type { FrontierMessage } from '../../../functions/cloud/worker/batch-model.ts';
import { serveInvocation } from '../../../functions/cloud/worker/frontier-runner.ts';
import {
  createFrontierBatchProcessor,
  type FrontierBatchProcessor,
} from '../../../functions/cloud/worker/process-frontier-batch.ts';
import type { Fetcher, FetchRequest } from '../../../functions/core/ports.ts';
import { MemoryCloud, MemoryFrontierQueue } from './memory-cloud.ts';
import { MemoryFetcher, page } from './memory-fetcher.ts';
import { messageFor, runningCrawl, TestClock } from './worker-kit.ts';

const HOSTS = ['a', 'b', 'c', 'd'].map((h) => `http://${h}.example`);
// The default politeness (1 s per host); no probes or sitemaps: the test counts requests.
const base = { scope: 'any', soft404Probe: false, delayMs: 1000, sitemaps: false };

/** A fetcher that logs when each request started and fails on a second request in flight to a host. */
class TimedFetcher implements Fetcher {
  readonly starts: { url: string; at: number }[] = [];
  readonly #inner: MemoryFetcher;
  readonly #clock: TestClock;
  readonly #inFlight = new Set<string>();
  constructor(inner: MemoryFetcher, clock: TestClock) {
    this.#inner = inner;
    this.#clock = clock;
  }
  async fetch(request: FetchRequest) {
    const host = new URL(request.url).host;
    assert.ok(!this.#inFlight.has(host), `two requests in flight to ${host}`);
    this.#inFlight.add(host);
    this.starts.push({ url: request.url, at: this.#clock.now() });
    try {
      return await this.#inner.fetch(request);
    } finally {
      this.#inFlight.delete(host);
    }
  }
  async close(): Promise<void> {}
}

function setup(extra: { fault?: (step: string) => void; delayMs?: number } = {}) {
  const clock = new TestClock();
  const cloud = new MemoryCloud();
  const queue = new MemoryFrontierQueue();
  const routes: Record<string, { status: number; body?: string }> = {};
  const urls: string[] = [];
  for (const site of HOSTS) {
    routes[`${site}/robots.txt`] = { status: 404 };
    for (const n of [1, 2, 3]) {
      routes[`${site}/${n}`] = { status: 200, body: page(`${site} ${n}`) };
      urls.push(`${site}/${n}`);
    }
  }
  const fetcher = new TimedFetcher(new MemoryFetcher(routes, clock), clock);
  const crawl = runningCrawl(cloud, { seeds: urls, ...base, delayMs: extra.delayMs ?? 1000 }, clock);
  const messages = crawl.tasks(urls).map((t) => messageFor(t));
  const container = () =>
    createFrontierBatchProcessor({
      clock,
      random: () => 0.5,
      sleep: clock.sleep,
      table: cloud.table,
      frontier: cloud.frontier,
      messages: queue,
      receiver: queue,
      deadLetters: cloud.deadLetters,
      stores: cloud.forContainer(),
      captures: cloud.captures,
      objects: cloud.objects,
      parked: cloud.parked,
      backlog: cloud.backlog,
      fetcher: () => fetcher,
      ...(extra.fault === undefined ? {} : { fault: extra.fault }),
    });
  // The clock of the tests runs serially (each sleep moves it): give the invocation room.
  const start = clock.now();
  const remaining = () => 120_000 - (clock.now() - start);
  return { clock, cloud, queue, fetcher, crawl, messages, container, remaining };
}

const hostOf = (m: FrontierMessage) => m.groupId;

describe('the runner: one invocation serves many hosts (frontier-runner.ts)', () => {
  it('receives other hosts after its batch and fetches them all, each host in order and 1 s apart', async () => {
    const { cloud, queue, fetcher, crawl, messages, container, remaining } = setup();
    const batch = messages.filter((m) => hostOf(m) === hostOf(messages[0]!));
    queue.push(...messages.filter((m) => !batch.includes(m)));
    const outcome = await serveInvocation(
      container(),
      { messages: queue, receiver: queue },
      batch,
      remaining,
    );

    assert.deepEqual(outcome.failed, [], 'every record of the event batch done');
    assert.equal(outcome.received, 9);
    assert.equal(outcome.removed, 9, 'its own messages deleted after the commit');
    assert.equal(queue.inFlight.size, 0);
    assert.equal(queue.waiting.length, 0);
    assert.deepEqual(queue.changes, [], 'nothing deferred: the four hosts shared the waits');
    assert.equal(outcome.rounds.length, 4, 'one batch per host, side by side: one commit each for 3 pages');
    assert.equal(cloud.table.counters(crawl.id).finished, 12);
    for (const site of HOSTS) {
      const starts = fetcher.starts.filter((s) => s.url.startsWith(site));
      assert.deepEqual(
        starts.map((s) => s.url),
        [`${site}/robots.txt`, `${site}/1`, `${site}/2`, `${site}/3`],
      );
      for (let i = 1; i < starts.length; i++) {
        assert.ok(starts[i]!.at - starts[i - 1]!.at >= 1000, `${site}: gap kept`);
      }
    }
  });

  it("deletes the event batch's done messages after their commit: its host's next messages come in the same invocation", async () => {
    const { cloud, queue, fetcher, crawl, messages, container, remaining } = setup();
    // The event source received the host's first page alone (its group locked while in flight);
    // the host's two others and the other hosts' pages wait behind it.
    queue.push(messages[0]!);
    const batch = await queue.receive(10);
    queue.push(...messages.slice(1));
    const outcome = await serveInvocation(
      container(),
      { messages: queue, receiver: queue },
      batch,
      remaining,
    );

    assert.deepEqual(outcome.failed, []);
    assert.ok(
      queue.removed.includes(batch[0]!.receiptHandle),
      'deleted by the runner, not left to the event source',
    );
    assert.equal(queue.waiting.length, 0, "the host's next messages were received (its group free)");
    assert.equal(queue.inFlight.size, 0);
    assert.equal(cloud.table.counters(crawl.id).finished, 12);
    const site = HOSTS.find((h) => messages[0]!.body.includes(h))!;
    assert.deepEqual(
      fetcher.starts.filter((s) => s.url.startsWith(site)).map((s) => s.url),
      [`${site}/robots.txt`, `${site}/1`, `${site}/2`, `${site}/3`],
    );
  });

  it('a host served alone waits its own share inline (a gap of up to 1.5 s); a longer gap is deferred', async () => {
    // One invocation holding the first host's batch alone, at a per-host gap of `delayMs`.
    const alone = async (delayMs?: number) => {
      const run = setup(delayMs === undefined ? {} : { delayMs });
      const batch = run.messages.filter((m) => hostOf(m) === hostOf(run.messages[0]!));
      const queues = { messages: run.queue, receiver: run.queue };
      return { ...run, outcome: await serveInvocation(run.container(), queues, batch, run.remaining) };
    };
    const oneSecond = await alone();
    assert.equal(oneSecond.fetcher.starts.length, 4, 'robots.txt and the three pages, 1 s apart');
    assert.deepEqual(oneSecond.outcome.failed, []);
    assert.equal(
      oneSecond.queue.emptyReceives,
      2,
      'nothing more to take, at the start nor when its batch ended',
    );

    // 1.4 s (the default politeness after a 280 ms response): waited, not deferred for 2 whole seconds.
    const little = await alone(1400);
    assert.equal(little.fetcher.starts.length, 4, 'robots.txt and the three pages, 1.4 s apart');
    assert.deepEqual(little.outcome.failed, []);

    // 3 s per host: one host alone does not wait that long (three seconds billed for one page).
    const slow = await alone(3000);
    assert.deepEqual(
      slow.fetcher.starts.map((x) => x.url),
      [`${HOSTS[0]}/robots.txt`],
    );
    assert.equal(slow.outcome.failed.length, 3, 'the batch returns to the queue, visible after the gap');
  });

  it("holds at most the hosts per invocation its environment sets (the stack's crawlstack:workerHostsPerInvocation)", async () => {
    const mostHostsAtOnce = async (env: Record<string, string>) => {
      const { cloud, queue, crawl, messages, container, remaining } = setup();
      const batch = messages.filter((m) => hostOf(m) === hostOf(messages[0]!));
      queue.push(...messages.filter((m) => !batch.includes(m)));
      const processBatch = container();
      const inFlight = new Map<string, number>();
      let most = 0;
      const counting: FrontierBatchProcessor = async (round, ...rest) => {
        const groups = new Set(round.map((m) => m.groupId ?? m.messageId));
        for (const g of groups) inFlight.set(g, (inFlight.get(g) ?? 0) + 1);
        most = Math.max(most, inFlight.size);
        try {
          return await processBatch(round, ...rest);
        } finally {
          for (const g of groups) {
            const n = (inFlight.get(g) ?? 1) - 1;
            if (n === 0) inFlight.delete(g);
            else inFlight.set(g, n);
          }
        }
      };
      const settings = { hosts: readHostsPerInvocation(env) };
      await serveInvocation(counting, { messages: queue, receiver: queue }, batch, remaining, settings);
      assert.equal(cloud.table.counters(crawl.id).finished, 12, 'every page fetched either way');
      return most;
    };
    assert.equal(await mostHostsAtOnce({ WORKER_HOSTS_PER_INVOCATION: '2' }), 2);
    assert.equal(await mostHostsAtOnce({}), 4, 'the default (20): all four hosts side by side');
  });

  it('without a deadline (no Lambda context) it is one batch, and receives nothing', async () => {
    const { queue, messages, container } = setup();
    const batch = messages.slice(0, 3);
    queue.push(...messages.slice(3));
    const outcome = await serveInvocation(
      container(),
      { messages: queue, receiver: queue },
      batch,
      undefined,
    );
    assert.equal(queue.receives, 0);
    assert.equal(outcome.received, 0);
  });

  it('a batch that dies before its ack deletes nothing; the redelivery finishes it, nothing fetched twice', async () => {
    let crashes = 0;
    const { cloud, queue, fetcher, crawl, messages, container, remaining } = setup({
      fault: (step) => {
        if (step === 'before-ack' && crashes++ === 0) throw new InjectedCrashError('before-ack', 1);
      },
    });
    const batch = messages.filter((m) => hostOf(m) === hostOf(messages[0]!));
    queue.push(...messages.filter((m) => !batch.includes(m)));
    await assert.rejects(
      serveInvocation(container(), { messages: queue, receiver: queue }, batch, remaining),
      InjectedCrashError,
    );
    // The batches that committed deleted their messages (3 each); the one that died did not.
    assert.ok(queue.removed.length <= 6, 'the dead batch deleted nothing');
    assert.equal(queue.removed.length % 3, 0);
    const requests = fetcher.starts.length;
    // The visibility timeout passes: everything comes back, to a new container.
    queue.push(...batch);
    queue.changeVisibility(
      [...queue.inFlight.keys()].map((receiptHandle) => ({ receiptHandle, seconds: 0 })),
    );
    const again = [...queue.waiting];
    queue.waiting.length = 0;
    const outcome = await serveInvocation(
      container(),
      { messages: queue, receiver: queue },
      again,
      remaining,
    );
    assert.deepEqual(outcome.failed, []);
    assert.equal(fetcher.starts.length, requests, 'the ledger acked them: no page fetched twice');
    assert.equal(cloud.table.counters(crawl.id).finished, 12, 'counted once');
  });

  it('when the round cannot commit, its own messages are not deleted but made visible again', async () => {
    const { cloud, queue, messages, container, remaining } = setup();
    // The capture send fails: the commit fails, every record of the round is retried.
    cloud.captures.send = async () => {
      throw new Error('SendMessageBatch failed (test)');
    };
    const batch = messages.filter((m) => hostOf(m) === hostOf(messages[0]!));
    queue.push(...messages.filter((m) => !batch.includes(m)));
    const outcome = await serveInvocation(
      container(),
      { messages: queue, receiver: queue },
      batch,
      remaining,
    );
    assert.equal(outcome.failed.length, 3);
    assert.equal(outcome.removed, 0);
    assert.equal(queue.removed.length, 0);
    assert.equal(queue.changes.length, 12, 'all twelve back: the batch three and its own nine');
  });

  it("the handler publishes each invocation's URL-seen look-ups and cache hits (a rate per container), and where its time went", async () => {
    const { cloud, queue, messages } = setup();
    const clock = new TestClock();
    const pages = new MemoryFetcher({
      'http://a.example/robots.txt': { status: 404 },
      'http://a.example/1': { status: 200, body: page('one', ['/x', '/y', '/x?again']) },
    });
    // Each request takes 40 ms and each URL-seen claim 15 ms of the test clock.
    const fetcher: Fetcher = {
      fetch: async (request) => {
        await clock.sleep(40);
        return pages.fetch(request);
      },
      close: () => pages.close(),
    };
    const stores = cloud.forContainer();
    const slowSeen = (crawlId: string) => {
      const found = stores(crawlId);
      const seen = found.seen;
      return {
        ...found,
        seen: Object.assign(Object.create(seen), {
          claim: async (...args: Parameters<typeof seen.claim>) => {
            await clock.sleep(15);
            return seen.claim(...args);
          },
        }) as typeof seen,
      };
    };
    const published: Record<string, number>[] = [];
    const handler = createFrontierWorker(
      {
        clock,
        random: () => 0.5,
        sleep: clock.sleep,
        table: cloud.table,
        frontier: cloud.frontier,
        messages: queue,
        deadLetters: cloud.deadLetters,
        stores: slowSeen,
        captures: cloud.captures,
        objects: cloud.objects,
        parked: cloud.parked,
        backlog: cloud.backlog,
        fetcher: () => fetcher,
      },
      undefined,
      (values) => published.push(values),
    );
    const m = messages[0]!;
    await handler({
      Records: [
        {
          messageId: m.messageId,
          receiptHandle: m.receiptHandle,
          body: m.body,
          attributes: {
            ApproximateReceiveCount: '1',
            MessageGroupId: m.groupId!,
            SequenceNumber: m.sequenceNumber!,
          },
        } as unknown as SQSRecord,
      ],
    });
    assert.equal(published.length, 1);
    assert.ok(published[0]!.UrlSeenLookups! >= 2, "the page's links were looked up");
    assert.equal(typeof published[0]!.UrlSeenCacheHits, 'number');
    const time = published[0]!;
    // Two steps (robots.txt, a 404, then the page), a request each; the page's links claimed once.
    assert.equal(time.WorkerSteps, 2);
    assert.equal(time.WorkerFetchMs, 80);
    assert.equal(time.WorkerUrlSeenMs, 15);
    assert.ok(time.WorkerStepMs! >= 95, `step ${time.WorkerStepMs} ms holds its request and claim`);
    assert.equal(typeof time.WorkerCommitMs, 'number');
    // What the capture row of the bill is made of: the messages' bytes, and the inline WARC records'.
    const captures = cloud.captures.bodies.filter((b) => !isTraceBody(b));
    assert.ok(captures.length >= 1, 'the page was captured');
    const bytes = captures.reduce((n, b) => n + Buffer.byteLength(b, 'utf8'), 0);
    assert.equal(time.WorkerCaptureBytes, bytes);
    const gz = (b: string) => (JSON.parse(b) as { warc?: { gz?: string } }).warc?.gz?.length ?? 0;
    const inline = captures.reduce((n, b) => n + gz(b), 0);
    assert.equal(time.WorkerCaptureRecordBytes, inline);
    assert.ok(inline > 0 && inline < bytes, 'the records are part of the message');
  });
});
