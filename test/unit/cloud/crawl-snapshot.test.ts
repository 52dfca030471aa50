/**
 * GET /crawls/{id}/snapshot with in-memory stores: the dashboard's view of a cloud crawl, every
 * read bounded whatever the size of the crawl (counter shards, at most 50 host items, the newest
 * index objects of the last minutes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApiApp } from '../../../functions/cloud/lambdas/api/api-app.ts';
import { emptyHostCounts, type PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import { indexKey } from '../../../functions/cloud/messages/warc-object.ts';
import type { ObjectReader } from '../../../functions/cloud/ports/cloud-ports.ts';
import { cloudCrawlSnapshot } from '../../../functions/cloud/use-cases/crawl-snapshot.ts';
import type { DashboardSnapshot } from '../../../functions/core/dashboard-snapshot.ts';
import { MemoryCloud } from './memory-cloud.ts';
import { runningCrawl, TestClock } from './worker-kit.ts';

const CRAWL = '11111111-2222-4333-8444-555555555555';
const MINUTE = 60_000;

/** Counts the reader's calls. */
function counting(reader: ObjectReader): ObjectReader & { lists: number; gets: number } {
  const counted = {
    lists: 0,
    gets: 0,
    keys: (prefix: string, after: string | undefined, max: number) => {
      counted.lists += 1;
      return reader.keys(prefix, after, max);
    },
    read: (key: string, from: number) => {
      counted.gets += 1;
      return reader.read(key, from);
    },
  };
  return counted;
}

function pageAt(n: number, at: number, importance: number): PageItem {
  return {
    fp: n.toString(16).padStart(16, '0'),
    url: `http://h${n % 7}.example/p${n}`,
    host: `h${n % 7}.example`,
    status: n % 10 === 0 ? null : 200,
    kind: 'page',
    depth: 1,
    bytes: 100,
    outLinks: 3,
    ...(n % 10 === 0 ? { reason: 'robots' } : { fetchedAt: new Date(at).toISOString() }),
    importance,
    messageId: `m${n}`,
    enqueued: 0,
  };
}

/**
 * A crawl started 30 minutes ago over 2,000 hosts: its counter shards, and one index object per
 * minute, each with 20 page records fetched in that minute.
 */
async function bigCrawl(clock: TestClock): Promise<MemoryCloud> {
  const cloud = new MemoryCloud();
  const start = clock.now();
  runningCrawl(cloud, { seeds: ['http://h0.example/'] }, clock, CRAWL);
  for (let i = 0; i < 2000; i++) {
    const counts = {
      ...emptyHostCounts(),
      finished: 1,
      fetched: 1,
      requests: 1,
      byStatus: { '200': 1 },
    };
    const { firstRequest } = await cloud.table.updateHost(CRAWL, `h${String(i).padStart(4, '0')}.example`, {
      nextAllowedAt: start + i,
      ...(i === 3 ? { crawlDelayMs: 2000 } : {}),
      counts,
      ledger: { firstSeq: '1', lastSeq: '1' },
    });
    await cloud.table.addToShard(CRAWL, i % 8, { ...counts, hosts: firstRequest ? 1 : 0 });
  }
  let n = 0;
  for (let minute = 0; minute < 30; minute++) {
    const lines: string[] = [];
    for (let j = 0; j < 20; j++) {
      n += 1;
      // The seed's first page holds the most cash (AOPIC fetches it first).
      lines.push(JSON.stringify(pageAt(n, start + minute * MINUTE + j * 1000, n === 1 ? 0.5 : n / 10_000)));
    }
    await cloud.objects.put(
      indexKey(CRAWL, start + minute * MINUTE + 59_000, `${String(minute).padStart(16, '0')}`),
      new TextEncoder().encode(`${lines.join('\n')}\n`),
      'application/x-ndjson',
    );
  }
  clock.t = start + 30 * MINUTE;
  return cloud;
}

describe('cloud crawl snapshot (GET /crawls/{id}/snapshot)', () => {
  it('reads the shards, at most 50 host items and the newest index objects: bounded for 2,000 hosts', async () => {
    const clock = new TestClock();
    const cloud = await bigCrawl(clock);
    cloud.table.calls.length = 0;
    const reader = counting(cloud.objects);
    const snapshot = (await cloudCrawlSnapshot({ table: cloud.table, pages: reader, clock }, CRAWL))!;
    assert.ok(!cloud.table.calls.includes('hosts'), 'no read of every host');
    assert.equal(cloud.table.calls.filter((c) => c === 'someHosts').length, 1);
    assert.equal(reader.lists, 2, 'the keys of the last 15 minutes, and the first key');
    assert.equal(reader.gets, 5, 'the four newest index objects and the first');

    assert.equal(snapshot.state, 'running');
    assert.equal(snapshot.pages, 2000);
    assert.equal(snapshot.hosts, 2000);
    assert.equal(snapshot.skipped, 0);
    assert.deepEqual(snapshot.byStatus, { '200': 2000 });
    assert.equal(snapshot.elapsedMs, 30 * MINUTE);
    assert.equal(snapshot.hostTable.length, 50);
    assert.equal(snapshot.hostTable.find((h) => h.host === 'h0003.example')?.crawlDelayMs, 2000);
    assert.deepEqual(snapshot.traps, []);
  });

  it('pages per second over time from the newest index objects, the last point at the crawl total', async () => {
    const clock = new TestClock();
    const cloud = await bigCrawl(clock);
    const snapshot = (await cloudCrawlSnapshot({ table: cloud.table, pages: cloud.objects, clock }, CRAWL, {
      bucketMs: MINUTE,
    }))!;
    // Minutes 26-29, 20 records each, 18 of them fetched (every tenth one is a robots skip).
    assert.deepEqual(
      snapshot.rate.map((p) => [p.elapsedMs / MINUTE, p.pagesPerSecond * 60]),
      [
        [27, 18],
        [28, 18],
        [29, 18],
        [30, 18],
      ],
    );
    assert.deepEqual(
      snapshot.rate.map((p) => p.pages),
      [2000 - 54, 2000 - 36, 2000 - 18, 2000],
    );
    assert.ok(snapshot.pagesPerSecond > 0.2 && snapshot.pagesPerSecond < 0.4, `${snapshot.pagesPerSecond}`);
    // The most important pages among those read (the first index object too), most important first.
    assert.equal(snapshot.topPages.length, 20);
    assert.equal(snapshot.topPages[0]?.url, 'http://h1.example/p1');
    // p600 is a robots.txt refusal (every tenth record): never fetched, so not listed.
    assert.equal(snapshot.topPages[1]?.url, 'http://h4.example/p599');
    const importance = snapshot.topPages.map((p) => p.importance);
    assert.deepEqual(
      importance,
      [...importance].sort((a, b) => b - a),
    );
  });

  it('a finished crawl shows the window before its end; the API answers 200 and 404', async () => {
    const clock = new TestClock();
    const cloud = await bigCrawl(clock);
    const crawl = cloud.table.crawls.get(CRAWL)!;
    crawl.status = 'done';
    crawl.finishedAt = new Date(clock.now()).toISOString();
    clock.t += 24 * 60 * MINUTE;
    const app = createApiApp(cloud.apiDeps(clock, () => CRAWL));
    const response = await app.request(`/crawls/${CRAWL}/snapshot`);
    assert.equal(response.status, 200);
    const snapshot = (await response.json()) as DashboardSnapshot;
    assert.equal(snapshot.state, 'done');
    assert.equal(snapshot.elapsedMs, 30 * MINUTE, 'crawl time ends with the crawl');
    assert.ok(snapshot.rate.length > 0, 'the rate of its last minutes');
    assert.equal(snapshot.pagesPerSecond, 0);
    const unknown = await app.request('/crawls/99999999-2222-4333-8444-555555555555/snapshot');
    assert.equal(unknown.status, 404);
    assert.equal((await app.request(`/crawls/${CRAWL}/snapshot`, { method: 'DELETE' })).status, 405);
  });
});

/**
 * The snapshot of a crawl whose archive holds one index object, written `writtenAfterMs` after
 * the crawl began, of the records `records(start)`; read `readAfterMs` after it began.
 */
async function oneObjectSnapshot(
  records: (start: number) => PageItem[],
  writtenAfterMs: number,
  readAfterMs: number,
): Promise<DashboardSnapshot> {
  const clock = new TestClock();
  const cloud = new MemoryCloud();
  const start = clock.now();
  runningCrawl(cloud, { seeds: ['http://h0.example/'] }, clock, CRAWL);
  const lines = records(start).map((r) => JSON.stringify(r));
  await cloud.objects.put(
    indexKey(CRAWL, start + writtenAfterMs, '0000000000000000'),
    new TextEncoder().encode(`${lines.join('\n')}\n`),
    'application/x-ndjson',
  );
  clock.t = start + readAfterMs;
  return (await cloudCrawlSnapshot({ table: cloud.table, pages: cloud.objects, clock }, CRAWL))!;
}

describe('the most important pages', () => {
  it('are fetched pages with a 2xx status: not a 404, a redirect or a URL never fetched', async () => {
    const snapshot = await oneObjectSnapshot(
      (start) => {
        const item = (n: number, status: number | null, importance: number) => ({
          ...pageAt(n, start + n * 100, importance),
          status,
        });
        return [
          item(1, 404, 0.9),
          item(2, 301, 0.8),
          item(3, null, 0.7),
          item(4, 200, 0.2),
          item(5, 203, 0.1),
        ];
      },
      1000,
      2000,
    );
    assert.deepEqual(
      snapshot.topPages.map((p) => p.url),
      ['http://h4.example/p4', 'http://h5.example/p5'],
    );
  });
});

describe('the rate chart of a short crawl', () => {
  it('gets points of a second or two, not one point per 10 s', async () => {
    const snapshot = await oneObjectSnapshot(
      (start) => Array.from({ length: 40 }, (_, i) => pageAt(i + 1, start + i * 250, 0.1)),
      11_000,
      12_000,
    );
    assert.equal(snapshot.rate.length, 10, 'ten 1 s points over 10 s of fetches');
    assert.equal(snapshot.rate[0]?.elapsedMs, 1000);
  });
});
