/**
 * The frontier worker's handler with hand-built SQS events over real tables, queues and a bucket:
 * the FIFO batch rules (several records of one group, deferral), the ledger (redelivery),
 * dead letters, retries and budgets, with a real HTTP server whose log shows every request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { faultHookFromSpec, InjectedCrashError } from '../../../functions/cloud/fault-hook.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { seedTasks } from '../../../functions/core/step/crawl-page.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import { eventually, type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { eventLoopLag, pageRequests, smallestGap } from './helpers.ts';
import { openWorkerHarness, type WorkerHarness } from './worker-harness.ts';

function html(title: string, links: string[] = []): string {
  return `<!doctype html><title>${title}</title>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}`;
}

describe('frontier worker (hand-built events)', () => {
  let h: WorkerHarness;
  let fast: SiteServer;
  let slow: SiteServer;
  let busy: SiteServer;
  let seq = 0;
  const next = () => ++seq;

  before(async () => {
    h = await openWorkerHarness();
    fast = await startSite((req, res) => {
      res.writeHead(req.url === '/robots.txt' ? 404 : 200, { 'content-type': 'text/html' });
      res.end(html(req.url ?? '', ['/p1', '/p2', '/p9']));
    }, '127.0.0.5');
    slow = await startSite((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('User-agent: *\nCrawl-delay: 1\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(html('slow'));
    }, '127.0.0.6');
    busy = await startSite((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(404);
        res.end();
        return;
      }
      // 10 s: long enough that the host is still blocked when the test delivers the re-sent task,
      // on a loaded machine too (with 1 s it had become free again, and the task was fetched).
      res.writeHead(503, { 'retry-after': '10', 'content-type': 'text/plain' });
      res.end('busy');
    }, '127.0.0.7');
  });
  after(async () => {
    await h?.close();
    await fast?.close();
    await slow?.close();
    await busy?.close();
  });

  // No soft-404 probe: these tests count every request (the probe has its own test).
  const base = {
    scope: 'any',
    allowPrivate: true,
    delayMs: 40,
    delayFactor: 0,
    retryBaseDelayMs: 100,
    soft404Probe: false,
  };

  async function crawl(seed: string, extra: Record<string, unknown> = {}) {
    const config = { seeds: [seed], ...base, ...extra };
    const id = await h.startCrawl(config);
    const parsed = parseCrawlConfig(config);
    assert.ok(parsed.ok);
    const tasks = (urls: string[]): CrawlTask[] =>
      seedTasks(id, urls, new UrlCanonicalizer(parsed.config)).tasks.map((t) => ({ ...t, depth: 1 }));
    return { id, tasks };
  }

  it('runs several records of one host in order, waiting the short gap inside the invocation', async () => {
    const { id, tasks } = await crawl(`${fast.origin}/p1`);
    const records = tasks([`${fast.origin}/a`, `${fast.origin}/b`, `${fast.origin}/c`]).map((t) =>
      h.record(t, next()),
    );
    const lag = eventLoopLag();
    const response = await h.worker()(records);
    const lagMs = lag.stop();
    assert.deepEqual(response.batchItemFailures, []);
    assert.deepEqual(fast.paths(), ['/robots.txt', '/a', '/b', '/c']);
    assert.equal(fast.maxInFlight(), 1);
    assert.ok(
      smallestGap(fast.log) >= 40 - 2 - lagMs,
      `gap ${smallestGap(fast.log)}, event-loop lag ${lagMs}`,
    );
    const { view } = (await h.progress(id))!;
    assert.equal(view.counters.fetched, 3);
    assert.equal(view.counters.finished, 3);
    assert.equal(view.counters.requests, 4);
    // Each page links /p1 (the seed), /p2 and /p9: two new URLs, claimed once for the crawl.
    assert.equal(view.counters.discovered, 1 + 2);

    // The same messages again (a duplicate delivery after the batch finished): no request, no count.
    const again = await h.worker()(records);
    assert.deepEqual(again.batchItemFailures, []);
    assert.equal(fast.log.length, 4);
    assert.deepEqual((await h.progress(id))!.view.counters, view.counters);
  });

  it('defers a record whose host must wait longer, with the rest of its group, and sends nothing', async () => {
    const { id, tasks } = await crawl(`${slow.origin}/x`);
    const [one, two] = tasks([`${slow.origin}/s1`, `${slow.origin}/s2`]).map((t) => h.record(t, next())) as [
      SQSRecord,
      SQSRecord,
    ];
    const other = h.record(tasks([`${fast.origin}/other`])[0]!, next());
    // Two hosts served: 300 ms each is 600 ms of inline wait at most (the default is 1 s each).
    const worker = h.worker({ inlineWaitMs: 300 });
    const first = await worker([one, two, other]);
    // robots.txt says Crawl-delay: 1 -> the page must wait 1 s: the record is deferred, not waited for.
    assert.deepEqual(
      first.batchItemFailures.map((f) => f.itemIdentifier).sort(),
      [one.messageId, two.messageId].sort(),
    );
    assert.deepEqual(slow.paths(), ['/robots.txt']);
    assert.ok(fast.paths().includes('/other'), 'another host of the batch went ahead');
    const hosts = await h.table.hosts(id);
    const slowHost = hosts.find((x) => x.host === '127.0.0.6')!;
    assert.ok(slowHost.nextAllowedAt > Date.now() + 500, 'the host item holds the wait');
    assert.equal(slowHost.crawlDelayMs, 1000);
    // Delivered again too early (another container, cold caches): deferred from the host item alone.
    const early = await h.worker({ inlineWaitMs: 300 })([one, two]);
    assert.equal(early.batchItemFailures.length, 2);
    assert.deepEqual(slow.paths(), ['/robots.txt']);
    assert.match(h.logs.join('\n'), /visibility changes refused/, 'hand-built receipts cannot be changed');
  });

  it('a crash after the captures but before the ledger: fetched again, counted once, listed once', async () => {
    const { id, tasks } = await crawl(`${fast.origin}/q0`);
    const record = h.record(tasks([`${fast.origin}/q1`])[0]!, next());
    const fetches = () => pageRequests(fast.log).filter((r) => r.path === '/q1').length;
    const crashing = h.worker({ fault: faultHookFromSpec('after-captures:1') });
    await assert.rejects(crashing([record]), InjectedCrashError);
    assert.equal(fetches(), 1);
    assert.equal((await h.progress(id))!.view.counters.finished, 0, 'nothing counted yet');
    const response = await h.worker()([record]);
    assert.deepEqual(response.batchItemFailures, []);
    // Nothing durable said the page was done (no page record any more): it is fetched again.
    assert.equal(fetches(), 2);
    const { counters } = (await h.progress(id))!.view;
    assert.equal(counters.finished, 1);
    assert.equal(counters.fetched, 1);
    // Both deliveries sent a capture; the archiver indexes the URL once.
    await h.archiveAll();
    const listed = (await h.pages(id)).filter((p) => p.url === `${fast.origin}/q1`);
    assert.equal(listed.length, 1);
    assert.equal(listed[0]?.messageId, record.messageId);
    // The ledger now covers the message: a third delivery is acknowledged without a fetch.
    assert.deepEqual((await h.worker()([record])).batchItemFailures, []);
    assert.equal(fetches(), 2);
  });

  it('sends a body that is not a task and a task of an unknown crawl to the DLQ; the rest proceeds', async () => {
    const { tasks } = await crawl(`${fast.origin}/r0`);
    const good = h.record(tasks([`${fast.origin}/r1`])[0]!, next());
    const garbage = {
      ...good,
      messageId: 'garbage-1',
      body: 'not json',
      attributes: { ...good.attributes, MessageGroupId: 'g' },
    };
    const stranger = h.record({ ...tasks([`${fast.origin}/r2`])[0]!, crawlId: 'no-such-crawl' }, next());
    const response = await h.worker()([garbage, stranger, good]);
    assert.deepEqual(response.batchItemFailures, []);
    assert.ok(fast.paths().includes('/r1'));
    assert.ok(!fast.paths().includes('/r2'));
    const letters = await h.aws.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: h.env.frontierDlqUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
      }),
    );
    const reasons = (letters.Messages ?? []).map((m) => m.MessageAttributes?.reason?.StringValue).sort();
    assert.deepEqual(reasons, ['invalid-task', 'unknown-crawl']);
  });

  it('a 503 with Retry-After is re-sent as a new message (attempt + 1) and blocks the host until then', async () => {
    const { id, tasks } = await crawl(`${busy.origin}/zero`, { maxRetries: 2 });
    const task = tasks([`${busy.origin}/busy`])[0]!;
    const started = Date.now();
    const response = await h.worker()([h.record(task, next())]);
    assert.deepEqual(response.batchItemFailures, [], 'the original is acknowledged');
    // The queue holds other messages too (the crawl's seed is ahead in the same group): take
    // them off until the re-sent one shows up.
    const resent = await eventually(
      async () => {
        const records = await h.receive();
        const found = records.find((r) => r.attributes.MessageDeduplicationId === `${id}#${task.fp}#a1`);
        await h.settle(
          records.filter((r) => r !== found),
          { batchItemFailures: [] },
        );
        return found;
      },
      5000,
      'the re-sent task',
    );
    assert.equal(JSON.parse(resent.body).attempt, 1);
    const host = (await h.table.hosts(id)).find((x) => x.host === '127.0.0.7')!;
    assert.ok(host.nextAllowedAt >= started + 10_000, 'Retry-After: 10 blocks the host');
    const { counters } = (await h.progress(id))!.view;
    assert.equal(counters.retries, 1);
    assert.equal(counters.finished, 0);
    // The re-sent task, delivered while the host is blocked, is deferred without a request.
    const requestsBefore = busy.log.length;
    // (A host alone waits up to 1 s inline by default; the deferral path is the subject here.)
    const deferred = await h.worker({ inlineWaitMs: 300 })([resent]);
    assert.equal(deferred.batchItemFailures.length, 1);
    assert.equal(busy.log.length, requestsBefore);
  });

  it('drops tasks over the crawl budget as max-pages, without fetching', async () => {
    const { id, tasks } = await crawl(`${fast.origin}/m0`, { maxPages: 2 });
    const records = tasks([`${fast.origin}/m1`, `${fast.origin}/m2`, `${fast.origin}/m3`]).map((t) =>
      h.record(t, next()),
    );
    const response = await h.worker()(records);
    assert.deepEqual(response.batchItemFailures, []);
    assert.ok(!fast.paths().includes('/m3'));
    const { counters } = (await h.progress(id))!.view;
    assert.equal(counters.fetched, 2);
    assert.equal(counters.byReason['max-pages'], 1);
    assert.equal(counters.finished, 3);
  });
});
