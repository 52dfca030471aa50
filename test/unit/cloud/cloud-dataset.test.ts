/**
 * The cloud dataset with in-memory ports: a crawl's `extract` fields go from the worker's page
 * record through the capture message and the archiver into the index, and `GET
 * /crawls/{id}/dataset` answers the embedded mode's dataset.jsonl rows as JSON Lines, paged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLOUD_EXTRACT_CHARS } from '../../../functions/cloud/extract-budget.ts';
import { createApiApp } from '../../../functions/cloud/lambdas/api/api-app.ts';
import {
  CAPTURE_MESSAGE_LIMIT,
  decodeCaptureMessage,
} from '../../../functions/cloud/messages/capture-message.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import { isTraceBody } from '../../../functions/cloud/messages/trace-message.ts';
import { createCaptureArchiver } from '../../../functions/cloud/use-cases/archive-captures.ts';
import { listDataset } from '../../../functions/cloud/use-cases/list-dataset.ts';
import { datasetRow } from '../../../functions/core/dataset/dataset-row.ts';
import { MemoryCloud } from './memory-cloud.ts';
import { MemoryFetcher, page } from './memory-fetcher.ts';
import { messageFor, runningCrawl, TestClock, workerOver } from './worker-kit.ts';

const SITE = 'http://shop.example';
const CRAWL = '11111111-2222-4333-8444-555555555555';
const base = { scope: 'any', soft404Probe: false, delayMs: 0, delayFactor: 0, sitemaps: false };
const product = (name: string, price: string) =>
  page(name, ['/'], '').replace('<body>', `<body><h1>${name}</h1><span class="price">${price}</span>`);

function apiOver(cloud: MemoryCloud) {
  return createApiApp(cloud.apiDeps({ now: () => Date.UTC(2026, 10, 26) }, () => CRAWL));
}

/** Archives every capture the worker sent, in one archiver batch. */
async function archiveAll(cloud: MemoryCloud, sentAt: number): Promise<void> {
  const archive = createCaptureArchiver({
    objects: cloud.objects,
    deadLetters: cloud.deadLetters,
    crawlInfo: async () => undefined,
  });
  const records = cloud.captures.bodies.splice(0).map((body, i) => ({
    messageId: `c-${sentAt}-${i}`,
    body,
    receiveCount: 1,
    sentTimestamp: sentAt + i,
  }));
  const outcome = await archive(records);
  assert.deepEqual(outcome.failed, []);
}

function indexLines(cloud: MemoryCloud): PageItem[] {
  return [...cloud.objects.objects]
    .filter(([key]) => key.startsWith(`index/${CRAWL}/`))
    .flatMap(([, bytes]) => new TextDecoder().decode(bytes).trim().split('\n'))
    .map((line) => JSON.parse(line) as PageItem);
}

describe('cloud dataset: extract fields from the worker to GET /crawls/{id}/dataset', () => {
  it('keeps extracted fields through the capture and the index; the API answers the dataset rows', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('Shop', ['/p/1', '/p/2', '/logo.png']) },
      [`${SITE}/p/1`]: { status: 200, body: product('Kettle', '€29') },
      [`${SITE}/p/2`]: { status: 200, body: product('Teapot', '€12') },
    });
    const extract = { title: { selector: 'h1' }, price: { selector: '.price' }, links: 'a@href' };
    const { tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, extract }, clock, CRAWL);
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(tasks([`${SITE}/`])[0]!)]);
    await worker(tasks([`${SITE}/p/1`, `${SITE}/p/2`], 1).map((t) => messageFor(t)));

    // The capture message carries the fields (decoded as the archiver decodes it).
    const captured = cloud.captures.bodies
      .filter((body) => !isTraceBody(body))
      .map((body) => {
        const decoded = decodeCaptureMessage(body);
        assert.ok(decoded.ok);
        return decoded.message.page;
      });
    const kettle = captured.find((p) => p.url === `${SITE}/p/1`);
    assert.deepEqual(kettle?.extracted, { title: 'Kettle', price: '€29', links: ['/'] });

    await archiveAll(cloud, clock.now());
    const indexed = indexLines(cloud);
    assert.equal(indexed.length, 3);
    assert.deepEqual(indexed.find((p) => p.url === `${SITE}/p/2`)?.extracted, {
      title: 'Teapot',
      price: '€12',
      links: ['/'],
    });

    const response = await apiOver(cloud).request(`/crawls/${CRAWL}/dataset`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.equal(response.headers.get('link'), null, 'one answer holds it all');
    const text = await response.text();
    assert.ok(text.endsWith('\n'));
    const rows = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // The embedded rows: datasetRow of each indexed page that has fields, `url` first.
    const expected = indexed.flatMap((p) => datasetRow(p) ?? []);
    assert.deepEqual(rows, expected);
    assert.deepEqual(rows.map((r) => [r.url, r.title]).sort(), [
      [`${SITE}/`, null],
      [`${SITE}/p/1`, 'Kettle'],
      [`${SITE}/p/2`, 'Teapot'],
    ]);
    assert.deepEqual(Object.keys(rows[0]!), ['url', 'title', 'price', 'links']);
  });

  it(`caps extracted characters at ${CLOUD_EXTRACT_CHARS} per page so the record fits a capture message`, async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    // 250,000 characters of text that JSON escapes to 6 bytes each: uncapped, the record alone
    // would be 1.5 MB, far past SQS's 256 KiB.
    const huge = '\u0001'.repeat(250_000);
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('Big', [], '').replace('<body>', `<body><pre>${huge}</pre>`) },
    });
    const { tasks } = runningCrawl(
      cloud,
      { seeds: [`${SITE}/`], ...base, extract: { text: { selector: 'pre' } } },
      clock,
      CRAWL,
    );
    await workerOver(cloud, fetcher, clock)([messageFor(tasks([`${SITE}/`])[0]!)]);
    const [body] = cloud.captures.bodies;
    assert.ok(body !== undefined);
    assert.ok(body.length <= CAPTURE_MESSAGE_LIMIT, `capture message of ${body.length} bytes`);
    const decoded = decodeCaptureMessage(body);
    assert.ok(decoded.ok);
    assert.equal(String(decoded.message.page.extracted?.text ?? '').length, CLOUD_EXTRACT_CHARS);
    assert.equal(decoded.message.page.dropped?.extractChars, 250_000 - CLOUD_EXTRACT_CHARS);
  });
});

describe('GET /crawls/{id}/dataset paging', () => {
  const item = (n: number, extracted?: Record<string, string>): PageItem => ({
    fp: n.toString(16).padStart(16, '0'),
    url: `${SITE}/${n}`,
    host: 'shop.example',
    status: 200,
    kind: 'page',
    depth: 1,
    bytes: 10,
    outLinks: 0,
    messageId: `m${n}`,
    enqueued: 0,
    ...(extracted === undefined ? {} : { extracted }),
  });

  /** Two index objects: pages 1-6 (odd ones without fields, page 4 twice), 7-9. */
  async function seeded(): Promise<MemoryCloud> {
    const cloud = new MemoryCloud();
    const api = apiOver(cloud);
    const created = await api.request('/crawls', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seeds: [`${SITE}/`] }),
    });
    assert.equal(created.status, 201);
    const lines = (items: PageItem[]) =>
      new TextEncoder().encode(`${items.map((i) => JSON.stringify(i)).join('\n')}\n`);
    const withFields = (n: number) => item(n, n % 2 === 0 ? { name: `item ${n}` } : undefined);
    await cloud.objects.put(
      `index/${CRAWL}/20261126120000000-aaaaaaaaaaaaaaaa.jsonl`,
      lines([1, 2, 3, 4, 4, 5, 6].map(withFields)),
      'application/x-ndjson',
    );
    await cloud.objects.put(
      `index/${CRAWL}/20261126120100000-bbbbbbbbbbbbbbbb.jsonl`,
      lines([7, 8, 9].map(withFields)),
      'application/x-ndjson',
    );
    return cloud;
  }

  it('pages by rows with a Link to the next answer; pages without fields skipped', async () => {
    const cloud = await seeded();
    const api = apiOver(cloud);
    const names: string[] = [];
    let next: string | undefined = `/crawls/${CRAWL}/dataset?limit=2`;
    let answers = 0;
    while (next !== undefined) {
      const response = await api.request(next);
      assert.equal(response.status, 200);
      answers += 1;
      const text = await response.text();
      const rows = text === '' ? [] : text.trim().split('\n');
      assert.ok(rows.length <= 2);
      names.push(...rows.map((l) => (JSON.parse(l) as { name: string }).name));
      const link = response.headers.get('link');
      next = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
      if (link !== null) assert.ok(next !== undefined, link);
    }
    // Page 4, indexed twice (after a crash), may come again in a later answer, as in /pages.
    assert.deepEqual([...new Set(names)], ['item 2', 'item 4', 'item 6', 'item 8']);
    assert.ok(answers >= 2);
  });

  it('stops an answer at its byte bound and its scan bound, with a cursor that goes on', async () => {
    const cloud = await seeded();
    const first = await listDataset(cloud.objects, CRAWL, 100, undefined, { answerBytes: 1 });
    assert.equal(first.rows, 1, 'the first row passes the bound');
    assert.ok(first.cursor !== undefined);
    const rest = await listDataset(cloud.objects, CRAWL, 100, first.cursor);
    assert.equal(rest.rows, 3, 'page 4 once within an answer');
    assert.equal(rest.cursor, undefined);
    const scan = await listDataset(cloud.objects, CRAWL, 100, undefined, { scanRecords: 3 });
    assert.equal(scan.rows, 1, 'pages 1-3 read: one row');
    assert.ok(scan.cursor !== undefined);
  });

  it('400 for a bad limit or a forged cursor, 404 for an unknown crawl, 405 for another method', async () => {
    const cloud = await seeded();
    const api = apiOver(cloud);
    assert.equal((await api.request(`/crawls/${CRAWL}/dataset?limit=0`)).status, 400);
    assert.equal((await api.request(`/crawls/${CRAWL}/dataset?limit=10001`)).status, 400);
    const forged = Buffer.from(JSON.stringify([`index/${CRAWL}/x`, 0])).toString('base64url');
    const bad = await api.request(`/crawls/${CRAWL}/dataset?cursor=${forged}`);
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { problems: string[] }).problems[0]!, /^cursor: /);
    const unknown = '99999999-2222-4333-8444-555555555555';
    assert.equal((await api.request(`/crawls/${unknown}/dataset`)).status, 404);
    assert.equal((await api.request(`/crawls/${CRAWL}/dataset`, { method: 'POST' })).status, 405);
  });
});
