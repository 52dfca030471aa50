/**
 * What a cloud crawl leaves for its readers, end to end on the stand-in (the synthesized stack,
 * the bundled handlers, IAM as the template grants it): the dataset of a crawl with `extract`
 * fields read page by page over HTTP, its URL-seen trace objects in the archive, and the
 * dashboard's snapshot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { DashboardSnapshot } from '../../../functions/core/dashboard-snapshot.ts';
import { datasetRow } from '../../../functions/core/dataset/dataset-row.ts';
import { decodeTrace } from '../../../functions/core/url-seen/url-seen-trace.ts';
import type { SiteServer } from '../../fixtures/site-server.ts';
import { type Pipeline, startFixtureSite, startPipeline } from './helpers.ts';

const PRODUCTS = 12;

function product(i: number): string {
  return `<!doctype html><html><head><title>p${i}</title></head><body><h1>Product ${i}</h1><span class="price">€${i}.00</span><a href="/">home</a><a href="/p/${(i % PRODUCTS) + 1}">next</a></body></html>`;
}

describe('pipeline: dataset, URL-seen trace and snapshot of a crawl', () => {
  let pipeline: Pipeline;
  let site: SiteServer;
  before(async () => {
    pipeline = await startPipeline();
    const extra: Record<string, { body: string }> = {};
    for (let i = 1; i <= PRODUCTS; i++) extra[`/p/${i}`] = { body: product(i) };
    site = await startFixtureSite(
      {
        host: '127.0.0.1',
        robots: 'User-agent: *\nDisallow: /private\n',
        pages: { '/': [...Object.keys(extra), '/private/x'] },
        extra,
      },
      (link) => link,
    );
  });
  after(async () => {
    await pipeline?.stop();
    await site?.close();
  });

  it('answers the dataset rows of the pages, writes the trace, shows the crawl in a snapshot', async (t) => {
    const id = await pipeline.startCrawl({
      seeds: [`${site.origin}/`],
      allowPrivate: true,
      delayMs: 20,
      delayFactor: 0,
      soft404Probe: false,
      sitemaps: false,
      extract: { name: { selector: 'h1' }, price: { selector: '.price' } },
    });
    const done = await pipeline.waitForStatus(id, ['done', 'failed'], 60_000);
    assert.equal(done.status, 'done', pipeline.logs.join('\n'));
    const pages = await pipeline.pages(id, 100);
    assert.equal(pages.length, PRODUCTS + 2, 'home, the products, the disallowed one');

    // The dataset, 5 rows an answer, following the Link header.
    const headers = { authorization: `Bearer ${pipeline.local.token}` };
    const rows: Record<string, unknown>[] = [];
    let next: string | undefined = `/crawls/${id}/dataset?limit=5`;
    let answers = 0;
    while (next !== undefined) {
      const response = await fetch(`${pipeline.local.api}${next}`, { headers });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/x-ndjson/);
      const text = await response.text();
      rows.push(
        ...text
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      );
      answers += 1;
      next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1];
    }
    assert.ok(answers >= 3, `${answers} answers`);
    const byUrl = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a.url).localeCompare(String(b.url));
    const expected: Record<string, unknown>[] = pages.flatMap((p) => datasetRow(p) ?? []);
    assert.deepEqual([...rows].sort(byUrl), [...expected].sort(byUrl), 'the rows of dataset.jsonl');
    assert.equal(rows.length, PRODUCTS + 1, 'every 2xx HTML page, none for the disallowed one');
    const p7 = rows.find((r) => r.url === `${site.origin}/p/7`);
    assert.deepEqual(p7, { url: `${site.origin}/p/7`, name: 'Product 7', price: '€7.00' });
    assert.deepEqual(
      rows.find((r) => r.url === `${site.origin}/`),
      { url: `${site.origin}/`, name: null, price: null },
    );

    // The URL-seen trace: the archive's trace objects hold every look-up the crawl counted.
    const bucket = pipeline.local.provisioned.resources.PageBucket?.name as string;
    const listed = await pipeline.clients.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `trace/${id}/` }),
    );
    const keys = (listed.Contents ?? []).map((o) => o.Key as string).sort();
    assert.ok(keys.length > 0);
    for (const key of keys) assert.match(key, new RegExp(`^trace/${id}/\\d{17}-[0-9a-f]{16}\\.bin$`));
    const chunks: Uint8Array[] = [];
    for (const key of keys) {
      const object = await pipeline.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      chunks.push(await object.Body!.transformToByteArray());
    }
    const trace = decodeTrace(Buffer.concat(chunks));
    assert.equal(trace.length, done.urlSeen.lookups, 'one record per look-up');
    assert.deepEqual(new Set(trace), new Set(pages.map((p) => p.fp)), 'every URL of the crawl looked up');

    // The dashboard's snapshot of the finished crawl.
    const response = await fetch(`${pipeline.local.api}/crawls/${id}/snapshot`, { headers });
    assert.equal(response.status, 200);
    const snapshot = (await response.json()) as DashboardSnapshot;
    assert.equal(snapshot.state, 'done');
    assert.equal(snapshot.pages, done.counters.fetched);
    assert.equal(snapshot.pages, PRODUCTS + 1);
    assert.deepEqual(snapshot.byStatus, { '200': PRODUCTS + 1 });
    assert.equal(snapshot.byReason.robots, 1);
    assert.equal(snapshot.hostTable.length, 1);
    assert.equal(snapshot.hostTable[0]?.fetched, PRODUCTS + 1);
    assert.equal(snapshot.topPages[0]?.url, `${site.origin}/`, 'the seed holds the most cash');
    assert.ok(snapshot.rate.length > 0);
    assert.equal(snapshot.rate.at(-1)?.pages, PRODUCTS + 1);
    assert.equal(snapshot.urlSeen?.lookups, done.urlSeen.lookups);

    // What a view costs: bounded reads (the scheduler's ticks run meanwhile: a little more).
    if (pipeline.local.metrics().endpoint !== undefined) {
      const before = pipeline.local.metrics().endpoint!;
      const views = 5;
      for (let i = 0; i < views; i++) {
        assert.equal((await fetch(`${pipeline.local.api}/crawls/${id}/snapshot`, { headers })).status, 200);
      }
      const after = pipeline.local.metrics().endpoint!;
      const per = (a: number | undefined, b: number | undefined) => ((a ?? 0) - (b ?? 0)) / views;
      const reads = {
        readUnits: per(after.dynamodb.readRequestUnits, before.dynamodb.readRequestUnits),
        lists: per(after.requests.s3.ListObjectsV2, before.requests.s3.ListObjectsV2),
        gets: per(after.requests.s3.GetObject, before.requests.s3.GetObject),
      };
      t.diagnostic(`per snapshot: ${JSON.stringify(reads)}`);
      assert.equal(reads.lists, 2);
      assert.ok(reads.gets <= 5, `${reads.gets} GETs`);
      assert.ok(reads.readUnits <= 12, `${reads.readUnits} read units`);
    }
  });
});
