/**
 * The serverless crawler end to end: the synthesized stack (real bundled handlers) on the
 * stand-in, driven through its HTTP API, crawling fixture sites on 127.0.0.x. One file, so the
 * scenarios (each its own stack) run one after another and `cdk synth` runs at most once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SiteServer } from '../../fixtures/site-server.ts';
import { eventually } from '../../fixtures/site-server.ts';
import {
  EXTERNAL_ENDPOINT,
  eventLoopLag,
  type ListedPage,
  type Pipeline,
  pageRequests,
  perPageCosts,
  type SiteSpec,
  smallestGap,
  startFixtureSite,
  startPipeline,
} from './helpers.ts';

const DELAY_MS = 40;
/**
 * Fault tests: crashed batches return after this visibility timeout; the worker's timeout is a
 * second less, and it starts a fetch only with the fetch's timeout plus 5 s (its writes) left.
 */
const FAULT_VISIBILITY_SECONDS = 12;
const FAULT_FETCH_TIMEOUT_MS = 3000;

/** Starts sites on 127.0.0.1, .2, .3 (one host each, so one FIFO group each). */
async function startSites(
  specs: SiteSpec[],
): Promise<{ servers: Record<string, SiteServer>; close(): Promise<void> }> {
  const origins: Record<string, string> = {};
  const resolve = (link: string) => {
    const m = /^@(\w+)(\/.*)$/.exec(link);
    return m === null ? link : `${origins[m[1]!]}${m[2]}`;
  };
  const servers: Record<string, SiteServer> = {};
  for (const spec of specs) {
    const server = await startFixtureSite(spec, resolve);
    servers[spec.host] = server;
  }
  for (const [host, server] of Object.entries(servers)) origins[nameOf(host)] = server.origin;
  return {
    servers,
    close: async () => {
      for (const server of Object.values(servers)) await server.close();
    },
  };
}

const NAMES: Record<string, string> = {
  '127.0.0.1': 'A',
  '127.0.0.2': 'B',
  '127.0.0.3': 'C',
  '127.0.0.4': 'D',
};
function nameOf(host: string): string {
  return NAMES[host] ?? host;
}

/** The three-host site: robots rules on A, no robots.txt on B, a Crawl-delay of 1 s on C. */
function threeHosts(extraLinks: string[] = []): SiteSpec[] {
  return [
    {
      host: '127.0.0.1',
      robots: 'User-agent: *\nDisallow: /private\n',
      pages: {
        '/': ['/a1', '/a2', '/a3', '/private/secret', '@B/', '@C/', '/old', '/dup', ...extraLinks],
        '/a1': ['/', '/a2', '/a4', '@B/b1'],
        '/a2': ['/a1', '/a5', '/a6'],
        '/a3': ['/a1', '/a6'],
        '/a4': ['/a7'],
        '/a5': ['/a1'],
        '/a6': ['/a7', '@C/c1'],
        '/a7': ['/'],
      },
      extra: {
        '/old': { status: 301, headers: { location: '/a8' } },
        // /a9 is linked only from these two: the first of them to run queues it (and registers
        // its content hash); the other is then a duplicate by content, whichever container runs it.
        '/a8': { body: '<!doctype html><title>a8</title><a href="/a1">a1</a><a href="/a9">a9</a>' },
        // Same bytes as /a8: a duplicate by content.
        '/dup': { body: '<!doctype html><title>a8</title><a href="/a1">a1</a><a href="/a9">a9</a>' },
        '/a9': { body: '<!doctype html><title>a9</title><a href="/">home</a>' },
      },
    },
    {
      host: '127.0.0.2',
      pages: {
        '/': ['/b1', '/b2', '@A/'],
        '/b1': ['/b2', '/b3'],
        '/b2': ['/b3', '@A/a3'],
        '/b3': ['/'],
      },
    },
    {
      host: '127.0.0.3',
      robots: 'User-agent: *\nCrawl-delay: 1\n',
      pages: {
        '/': ['/c1', '@A/a2'],
        '/c1': ['/c2'],
        '/c2': ['/'],
      },
    },
  ];
}

/** Every URL the three-host crawl must finish (fetched or skipped), by server. */
const EXPECTED_PATHS: Record<string, string[]> = {
  '127.0.0.1': [
    '/',
    '/a1',
    '/a2',
    '/a3',
    '/a4',
    '/a5',
    '/a6',
    '/a7',
    '/a8',
    '/a9',
    '/old',
    '/dup',
    '/private/secret',
  ],
  '127.0.0.2': ['/', '/b1', '/b2', '/b3'],
  '127.0.0.3': ['/', '/c1', '/c2'],
};

function crawlConfig(seed: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    seeds: [seed],
    scope: 'any',
    allowPrivate: true,
    delayMs: DELAY_MS,
    delayFactor: 0,
    retryBaseDelayMs: 100,
    robotsErrorTtlMs: 1000,
    // The tests count every request; the soft-404 probe has its own test (frontier-worker).
    soft404Probe: false,
    // No sitemaps: these tests count the requests (test/unit/cloud/rules-and-sitemaps.test.ts).
    sitemaps: false,
    ...overrides,
  };
}

function expectedUrls(servers: Record<string, SiteServer>, paths = EXPECTED_PATHS): string[] {
  return Object.entries(paths)
    .flatMap(([host, list]) => list.map((p) => `${servers[host]!.origin}${p}`))
    .sort();
}

/**
 * Checks that every expected URL has exactly one page record in the archive (the API lists the S3
 * index), the records agree with the counters, and each WARC location inflates to its response.
 */
async function assertCompleteCrawl(
  pipeline: Pipeline,
  id: string,
  servers: Record<string, SiteServer>,
  paths = EXPECTED_PATHS,
): Promise<ListedPage[]> {
  const view = await pipeline.status(id);
  const pages = await pipeline.pages(id);
  const urls = pages.map((p) => p.url).sort();
  assert.deepEqual(urls, expectedUrls(servers, paths), 'every URL finished exactly once');
  const c = view.counters;
  assert.equal(c.queued, 0);
  assert.equal(c.finished, pages.length);
  assert.equal(c.discovered, pages.length);
  assert.equal(c.fetched, pages.filter((p) => p.status !== null).length);
  const byStatus: Record<string, number> = {};
  for (const p of pages) if (p.status !== null) byStatus[p.status] = (byStatus[p.status] ?? 0) + 1;
  assert.deepEqual(c.byStatus, byStatus);
  assert.equal(
    c.bytes,
    pages.reduce((n, p) => n + p.bytes, 0),
  );
  for (const page of pages.filter((p) => p.status !== null)) {
    const record = await pipeline.warcRecord(page);
    assert.match(record, /^WARC\/1\.1\r\nWARC-Type: response\r\n/);
    assert.ok(record.includes(`\r\nWARC-Target-URI: ${page.url}\r\n`), `${page.url} stored at its offset`);
    assert.ok(record.includes(`\r\n\r\nHTTP/1.1 ${page.status} `), `${page.url} has its status`);
  }
  return pages;
}

describe('pipeline: a crawl through the HTTP API', () => {
  let pipeline: Pipeline;
  let sites: Awaited<ReturnType<typeof startSites>>;
  before(async () => {
    pipeline = await startPipeline();
    sites = await startSites(threeHosts());
  });
  after(async () => {
    await pipeline?.stop();
    await sites?.close();
  });

  it('crawls three hosts to done: pages stored once, counters, robots, politeness', async (t) => {
    const { servers } = sites;
    const a = servers['127.0.0.1']!;
    const lag = eventLoopLag();
    const id = await pipeline.startCrawl(crawlConfig(`${a.origin}/`));
    const done = await pipeline.waitForStatus(id, ['done', 'failed'], 60_000);
    const lagMs = lag.stop();
    assert.equal(done.status, 'done', pipeline.logs.join('\n'));
    assert.ok(done.finishedAt !== undefined);

    const pages = await assertCompleteCrawl(pipeline, id, servers);
    const at = (host: string, path: string) =>
      pages.find((p) => p.url === `${servers[host]!.origin}${path}`)!;
    assert.equal(at('127.0.0.1', '/private/secret').reason, 'robots');
    assert.equal(at('127.0.0.1', '/private/secret').status, null);
    assert.equal(at('127.0.0.1', '/old').status, 301);
    assert.equal(at('127.0.0.1', '/old').redirectTo, `${a.origin}/a8`);
    const a8 = at('127.0.0.1', '/a8');
    const dup = at('127.0.0.1', '/dup');
    assert.equal(
      [a8.duplicateOf, dup.duplicateOf].filter(Boolean).length,
      1,
      'one of the twins is a duplicate',
    );
    assert.equal(at('127.0.0.2', '/b1').title, '127.0.0.2/b1');

    const c = done.counters;
    assert.equal(c.hosts, 3);
    assert.equal(c.byReason.robots, 1);
    assert.equal(c.duplicates, 1);
    assert.equal(c.failed, 0);
    assert.equal(c.requests, c.fetched + 3, 'the pages plus one robots.txt per host');
    assert.ok(done.urlSeen.lookups > 0 && done.urlSeen.cacheHits > 0);
    assert.equal(done.urlSeen.hitRate, done.urlSeen.cacheHits / done.urlSeen.lookups);

    for (const [host, server] of Object.entries(servers)) {
      const paths = server.paths();
      assert.equal(paths[0], '/robots.txt', `${host}: robots.txt first`);
      assert.equal(paths.filter((p) => p === '/robots.txt').length, 1, `${host}: robots.txt once`);
      assert.ok(!paths.includes('/private/secret'), `${host}: disallowed path never requested`);
      const requested = pageRequests(server.log)
        .map((r) => r.path)
        .sort();
      const expected = EXPECTED_PATHS[host]!.filter((p) => p !== '/private/secret').sort();
      assert.deepEqual(requested, expected, `${host}: every page requested once`);
      assert.equal(server.maxInFlight(), 1, `${host}: one request in flight at a time`);
      const gap = smallestGap(server.log);
      const wanted = host === '127.0.0.3' ? 1000 : DELAY_MS;
      assert.ok(
        gap >= wanted - 2 - lagMs,
        `${host}: smallest gap ${gap.toFixed(1)} ms, want >= ${wanted} (less ${lagMs.toFixed(1)} ms of this thread's event-loop lag)`,
      );
    }

    if (EXTERNAL_ENDPOINT === undefined) {
      const metrics = pipeline.local.metrics();
      const costs = perPageCosts(metrics, c.fetched);
      // Includes this test's status polling and the fast scheduler: an upper bound for the worker.
      t.diagnostic(`per page: ${JSON.stringify({ ...costs, cacheHitRate: done.urlSeen.hitRate })}`);
      // Pages are archived per archiver batch: per crawl and batch one WARC, one index, one links
      // object (the link graph) and one URL-seen trace object.
      const archiverBatches = Object.entries(metrics.eventSources).find(([id]) =>
        id.includes('Archiver'),
      )?.[1].batches;
      assert.ok(archiverBatches !== undefined && archiverBatches > 0);
      const puts = metrics.endpoint?.requests.s3.PutObject ?? 0;
      // (Per page this depends on the window, 1 s here: the cost benchmark measures it.)
      assert.ok(puts <= 4 * archiverBatches, `${puts} S3 PUTs for ${archiverBatches} archiver batches`);
    }
  });
});

describe('pipeline: the worker and the archiver killed between steps', () => {
  let pipeline: Pipeline;
  let sites: Awaited<ReturnType<typeof startSites>>;
  // Each fault fires once (the n-th time its step is reached). Worker: after URL-seen claims are
  // durable but before the links are queued; after the links and captures are sent but before
  // the host ledgers; after everything but before the response that deletes the messages.
  // Archiver: after a batch's WARC object is stored but before its index; after the index but
  // before the response that deletes the captures.
  const WORKER_FAULTS = ['after-claims:2', 'after-captures:3', 'before-ack:6'];
  const ARCHIVER_FAULTS = ['archive-after-warc:1', 'archive-after-index:2'];
  const FAULTS = [...WORKER_FAULTS, ...ARCHIVER_FAULTS];
  before(async () => {
    pipeline = await startPipeline({
      env: { CRAWLSTACK_FAULT: FAULTS.join(',') },
      // A crashed batch returns after the queue's visibility timeout: seconds here, not minutes
      // (the worker's and the archiver's timeouts shrink with it, as Lambda requires).
      visibilityTimeoutSeconds: FAULT_VISIBILITY_SECONDS,
    });
    sites = await startSites(threeHosts());
  });
  after(async () => {
    await pipeline?.stop();
    await sites?.close();
  });

  it('still ends done with every URL finished once and none lost', async () => {
    const { servers } = sites;
    const id = await pipeline.startCrawl(
      crawlConfig(`${servers['127.0.0.1']!.origin}/`, { totalTimeoutMs: FAULT_FETCH_TIMEOUT_MS }),
    );
    const done = await pipeline.waitForStatus(id, ['done', 'failed'], 120_000);
    assert.equal(done.status, 'done');
    const crashes = pipeline.logs.filter((line) => /InjectedCrashError/.test(line));
    for (const fault of FAULTS) {
      assert.ok(
        crashes.some((line) => line.includes(`injected crash ${fault}`)),
        `fault ${fault} fired: ${crashes.join('\n')}`,
      );
    }
    const functions = pipeline.local.metrics().functions;
    assert.equal(functions.FrontierWorker?.errors, WORKER_FAULTS.length);
    assert.equal(functions.Archiver?.errors, ARCHIVER_FAULTS.length);
    if (process.env.DEBUG_PIPELINE) console.error(pipeline.logs.join('\n'), JSON.stringify(done, null, 1));
    // Every URL listed exactly once: a page fetched twice (a crash after its capture was sent)
    // and a capture batch archived twice (a crash after its index) are indexed once, because here
    // the archiver's memory of indexed URLs survives its crash (one process); see docs/cloud.md
    // for a crash that takes the container with it.
    await assertCompleteCrawl(pipeline, id, servers);
    // A crash before the ledger makes the batch's pages be fetched again; never more than that.
    for (const [host, server] of Object.entries(servers)) {
      const requested = pageRequests(server.log).map((r) => r.path);
      const expected = EXPECTED_PATHS[host]!.filter((p) => p !== '/private/secret');
      assert.deepEqual([...new Set(requested)].sort(), [...expected].sort(), `${host}: every page requested`);
      assert.ok(requested.length <= expected.length + FAULTS.length, `${host}: ${requested.length} requests`);
      assert.equal(server.maxInFlight(), 1, `${host}: one request in flight at a time`);
    }
  });
});

describe('pipeline: poison messages and cancelling', () => {
  let pipeline: Pipeline;
  let sites: Awaited<ReturnType<typeof startSites>>;
  before(async () => {
    pipeline = await startPipeline({ env: { CRAWLSTACK_FAULT: 'throw-url:/poison' } });
    const big: Record<string, string[]> = {};
    for (let i = 0; i < 60; i++) big[i === 0 ? '/' : `/d${i}`] = [`/d${i + 1}`, `/d${i + 2}`];
    sites = await startSites([...threeHosts(['/poison']), { host: '127.0.0.4', pages: big }]);
  });
  after(async () => {
    await pipeline?.stop();
    await sites?.close();
  });

  it('sends a body that is not a task and a task that always throws to the DLQ; the crawl finishes', async () => {
    const { servers } = sites;
    await pipeline.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: pipeline.queueUrl,
        MessageBody: '{"not": "a task"',
        MessageGroupId: 'garbage',
        MessageDeduplicationId: 'garbage-1',
      }),
    );
    const id = await pipeline.startCrawl(crawlConfig(`${servers['127.0.0.1']!.origin}/`));
    const done = await pipeline.waitForStatus(id, ['done', 'failed'], 60_000);
    assert.equal(done.status, 'done');
    const paths = { ...EXPECTED_PATHS, '127.0.0.1': [...EXPECTED_PATHS['127.0.0.1']!, '/poison'] };
    const pages = await assertCompleteCrawl(pipeline, id, servers, paths);
    const poison = pages.find((p) => p.url.endsWith('/poison'))!;
    assert.equal(poison.reason, 'dlq');
    assert.match(poison.detail ?? '', /injected failure/);
    assert.equal(done.counters.dlq, 1);
    assert.equal(done.counters.byReason.dlq, 1);

    const letters = await pipeline.deadLetters(2, 10_000);
    const invalid = letters.find((l) => l.attributes.reason === 'invalid-task');
    const failing = letters.find((l) => l.attributes.reason === 'processing-error');
    assert.equal(invalid?.body, '{"not": "a task"');
    assert.match(invalid?.attributes.detail ?? '', /not JSON/);
    assert.ok(failing !== undefined, JSON.stringify(letters));
    assert.equal(JSON.parse(failing.body).url, poison.url);
    assert.ok(Number(failing.attributes.receiveCount) >= 1);
    assert.ok(!servers['127.0.0.1']!.paths().includes('/poison'), 'the throwing task never fetched');
  });

  it('DELETE cancels: queued URLs are dropped without fetching, status cancelled', async () => {
    const d = sites.servers['127.0.0.4']!;
    const id = await pipeline.startCrawl(crawlConfig(`${d.origin}/`, { delayMs: 100 }));
    await eventually(() => (pageRequests(d.log).length >= 3 ? true : undefined), 20_000, 'three pages of D');
    const cancel = await pipeline.api('DELETE', `/crawls/${id}`);
    const cancelledAt = performance.now();
    assert.equal(cancel.status, 200);
    assert.deepEqual(cancel.json, { id, status: 'cancelled' });
    assert.deepEqual(
      (await pipeline.api('DELETE', `/crawls/${id}`)).json,
      cancel.json,
      'DELETE is idempotent',
    );

    const final = await eventually(
      async () => {
        const view = await pipeline.status(id);
        return view.finishedAt !== undefined ? view : undefined;
      },
      20_000,
      'the cancelled crawl to drain',
    );
    assert.equal(final.status, 'cancelled');
    assert.equal(final.counters.queued, 0);
    // What was left is dropped: queued URLs as cancelled, parked ones (AOPIC) never admitted.
    assert.ok(
      (final.counters.byReason.cancelled ?? 0) + final.counters.parked > 0,
      JSON.stringify(final.counters),
    );
    const late = pageRequests(d.log).filter((r) => r.start > cancelledAt);
    assert.ok(late.length <= 1, `at most the request already in flight, got ${late.map((r) => r.path)}`);
    assert.ok(pageRequests(d.log).length < 60, 'the crawl stopped early');
    assert.equal(final.counters.fetched + (final.counters.byReason.cancelled ?? 0), final.counters.finished);
  });
});
