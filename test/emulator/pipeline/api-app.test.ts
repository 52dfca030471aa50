/**
 * The HTTP API (Hono app and its function URL wrapper) over real tables and a queue.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import type { Hono } from 'hono';
import { createApiApp, MAX_BODY_BYTES } from '../../../functions/cloud/lambdas/api/api-app.ts';
import { createApiHandler } from '../../../functions/cloud/lambdas/api/handler.ts';
import { createAwsApiDeps } from '../../../functions/cloud/lambdas/aws-wiring.ts';
import { emptyHostCounts, type PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import type { CrawlProgressView } from '../../../functions/cloud/use-cases/crawl-progress.ts';
import { eventually } from '../../fixtures/site-server.ts';
import { openWorkerHarness, type WorkerHarness } from './worker-harness.ts';

/** Crawl ids are UUIDs (the API answers 404 for anything else). */
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('HTTP API', () => {
  let h: WorkerHarness;
  let app: Hono;
  let ids = 0;
  before(async () => {
    h = await openWorkerHarness();
    app = createApiApp(createAwsApiDeps(h.aws.clients, h.env, { newId: () => uuid(++ids) }));
  });
  after(() => h?.close());

  const json = (body: unknown) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

  it('POST /crawls starts a crawl: 201 { id }, the crawl item, and the seed in the frontier', async () => {
    const response = await app.request(
      '/crawls',
      json({ seeds: ['https://example.org/'], scope: 'any', maxPages: 3000 }),
    );
    assert.equal(response.status, 201);
    const { id } = (await response.json()) as { id: string };
    assert.equal(id, uuid(1));
    assert.equal(response.headers.get('location'), `/crawls/${uuid(1)}`);
    const status = await app.request(`/crawls/${id}`);
    assert.equal(status.status, 200);
    const view = (await status.json()) as CrawlProgressView;
    assert.equal(view.status, 'running');
    assert.equal(view.config.maxPages, 3000);
    assert.equal(view.config.delayMs, 1000, 'defaults filled in');
    assert.equal(view.counters.discovered, 1);
    assert.equal(view.counters.queued, 1);
    assert.deepEqual(view.urlSeen, { lookups: 0, cacheHits: 0, hitRate: 0 });
    const seed = await eventually(async () =>
      (await h.receive()).find((r) => JSON.parse(r.body).crawlId === id),
    );
    assert.equal(JSON.parse(seed.body).url, 'https://example.org/');
    assert.equal(seed.attributes.MessageGroupId, `${id}#example.org`);
  });

  it('400 with the list of problems for invalid JSON or an invalid config', async () => {
    const broken = await app.request('/crawls', json('{"seeds": ['));
    assert.equal(broken.status, 400);
    const brokenBody = (await broken.json()) as { error: string; problems: string[] };
    assert.equal(brokenBody.error, 'body is not valid JSON');
    assert.equal(brokenBody.problems.length, 1);

    const invalid = await app.request(
      '/crawls',
      json({ seeds: ['ftp://example.org/'], maxPages: -3, colour: 'blue', scope: 'planet' }),
    );
    assert.equal(invalid.status, 400);
    const body = (await invalid.json()) as { error: string; problems: string[] };
    assert.equal(body.error, 'invalid crawl configuration');
    assert.ok(
      body.problems.some((p) => p.startsWith('maxPages:')),
      body.problems.join('\n'),
    );
    assert.ok(
      body.problems.some((p) => p.includes('"colour"')),
      body.problems.join('\n'),
    );
    assert.ok(
      body.problems.some((p) => p.startsWith('scope:')),
      body.problems.join('\n'),
    );
    const noSeeds = (await (await app.request('/crawls', json({ seeds: [] }))).json()) as {
      problems: string[];
    };
    assert.match(noSeeds.problems.join(), /seed/);
  });

  it('413 for a body over 64 KB', async () => {
    const big = JSON.stringify({ seeds: ['https://example.org/'], exclude: ['x'.repeat(MAX_BODY_BYTES)] });
    const response = await app.request('/crawls', json(big));
    assert.equal(response.status, 413);
    assert.match(((await response.json()) as { error: string }).error, /65536/);
  });

  it('404 for an unknown crawl or route, 405 for a wrong method, JSON errors throughout', async () => {
    for (const [method, path, status] of [
      ['GET', '/crawls/nope', 404],
      ['GET', '/crawls/nope/pages', 404],
      ['DELETE', '/crawls/nope', 404],
      ['PUT', '/crawls', 405],
      ['DELETE', '/crawls', 405],
      ['POST', `/crawls/${uuid(1)}`, 405],
      ['GET', '/elsewhere', 404],
    ] as const) {
      const response = await app.request(path, { method });
      assert.equal(response.status, status, `${method} ${path}`);
      assert.equal(typeof ((await response.json()) as { error: unknown }).error, 'string');
    }
  });

  it('GET /crawls/{id} sums the host ledgers into counters', async () => {
    const id = (
      (await (await app.request('/crawls', json({ seeds: ['https://a.example/'] }))).json()) as { id: string }
    ).id;
    const counts = emptyHostCounts();
    Object.assign(counts, {
      finished: 3,
      fetched: 2,
      enqueued: 4,
      bytes: 900,
      requests: 3,
      lookups: 20,
      cacheHits: 15,
    });
    counts.byStatus = { '200': 1, '404': 1 };
    counts.byReason = { robots: 1 };
    counts.parked = 1;
    counts.linksSkipped = { calendar: 2 };
    await h.table.updateHost(id, 'a.example', {
      nextAllowedAt: 0,
      counts,
      ledger: { firstSeq: '1', lastSeq: '3' },
    });
    await h.table.updateHost(id, 'b.example', {
      nextAllowedAt: 0,
      counts: { ...emptyHostCounts(), enqueued: 1 },
    });
    // The running totals the worker adds after those ledger writes, in two shards; the API reads
    // them (O(1)), and they agree with the exact sum of the ledgers.
    await h.table.addToShard(id, 2, { ...counts, hosts: 1 });
    await h.table.addToShard(id, 5, { ...emptyHostCounts(), enqueued: 1, hosts: 0 });
    const exact = (await h.progress(id))!;
    const view = (await (await app.request(`/crawls/${id}`)).json()) as CrawlProgressView;
    assert.deepEqual(view.counters, {
      discovered: 1 + 4 + 1,
      // One of the six is parked (AOPIC), three are finished: two in the queue.
      queued: 2,
      parked: 1,
      finished: 3,
      fetched: 2,
      byStatus: { '200': 1, '404': 1 },
      failed: 0,
      byReason: { robots: 1 },
      // a recrawl round's verdicts (none in a first crawl)
      byChange: {},
      linksSkipped: { calendar: 2 },
      bytes: 900,
      hosts: 1,
      retries: 0,
      duplicates: 0,
      requests: 3,
      dlq: 0,
    });
    assert.deepEqual(view.urlSeen, { lookups: 20, cacheHits: 15, hitRate: 0.75 });
    const { crawlProgress } = await import('../../../functions/cloud/use-cases/crawl-progress.ts');
    assert.deepEqual((await crawlProgress(h.table, id, { exact: true }))!.view.counters, view.counters);
    assert.deepEqual(exact.view.counters, view.counters);
  });

  it('GET /crawls/{id}/pages reads the index objects in key order, paging with an opaque cursor', async () => {
    const id = (
      (await (await app.request('/crawls', json({ seeds: ['https://p.example/'] }))).json()) as { id: string }
    ).id;
    const page = (i: number): PageItem => ({
      fp: `00000000000000${String(i).padStart(2, '0')}`,
      url: `https://p.example/${i}`,
      host: 'p.example',
      status: 200,
      kind: 'page',
      depth: 1,
      bytes: 10 * i,
      outLinks: 0,
      messageId: `m${i}`,
      enqueued: 0,
      warc: { bucket: 'b', key: `warc/${id}/x.warc.gz`, offset: 100 * i, length: 50 },
    });
    const lines = (list: PageItem[]) => Buffer.from(`${list.map((p) => JSON.stringify(p)).join('\n')}\n`);
    // Three index objects written out of order; the API lists them in key (time) order. The last
    // repeats page 2 (a capture archived twice): within one answer it appears once.
    await h.objects.put(
      `index/${id}/20261122100003000-c.jsonl`,
      lines([page(5), page(2), page(6)]),
      'application/x-ndjson',
    );
    await h.objects.put(
      `index/${id}/20261122100001000-a.jsonl`,
      lines([page(0), page(1), page(2)]),
      'application/x-ndjson',
    );
    await h.objects.put(
      `index/${id}/20261122100002000-b.jsonl`,
      lines([page(3), page(4)]),
      'application/x-ndjson',
    );
    await h.objects.put(
      `index/${id}-other/20261122100001000-a.jsonl`,
      lines([page(9)]),
      'application/x-ndjson',
    );

    const read = async (limit: number) => {
      const seen: Record<string, unknown>[] = [];
      let cursor: string | undefined;
      let calls = 0;
      do {
        const response = await app.request(
          `/crawls/${id}/pages?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(response.status, 200);
        const body = (await response.json()) as { pages: Record<string, unknown>[]; cursor?: string };
        assert.ok(body.pages.length <= limit);
        seen.push(...body.pages);
        cursor = body.cursor;
        calls += 1;
      } while (cursor !== undefined && calls < 20);
      return { seen, calls };
    };
    const expected = [0, 1, 2, 3, 4, 5, 6].map((i) => `https://p.example/${i}`);
    const small = await read(2);
    // Answers are deduplicated each on its own: the second copy of page 2 lands in a later answer.
    assert.deepEqual(
      small.seen.map((p) => p.url),
      [0, 1, 2, 3, 4, 5, 2, 6].map((i) => `https://p.example/${i}`),
    );
    assert.ok(small.calls >= 4, 'paged');
    const all = await read(1000);
    assert.deepEqual(
      all.seen.map((p) => p.url),
      expected,
    );
    assert.equal(all.calls, 1);
    assert.equal((all.seen[3]?.warc as { offset: number } | undefined)?.offset, 300);
    assert.equal(all.seen[0]?.messageId, undefined, 'internal fields stay internal');
    assert.equal(all.seen[0]?.enqueued, undefined);

    assert.equal((await app.request(`/crawls/${id}/pages?limit=0`)).status, 400);
    assert.equal((await app.request(`/crawls/${id}/pages?cursor=bm9wZQ`)).status, 400);
    const foreign = Buffer.from(JSON.stringify([`index/${id}-other/x.jsonl`, 0])).toString('base64url');
    assert.equal(
      (await app.request(`/crawls/${id}/pages?cursor=${foreign}`)).status,
      400,
      "another crawl's key",
    );
    const empty = (await (await app.request(`/crawls/${uuid(1)}/pages`)).json()) as { pages: unknown[] };
    assert.deepEqual(empty.pages, [], 'a crawl with nothing archived yet');
  });

  it('DELETE cancels (idempotently); a finished crawl answers 409', async () => {
    const id = (
      (await (await app.request('/crawls', json({ seeds: ['https://c.example/'] }))).json()) as { id: string }
    ).id;
    for (let i = 0; i < 2; i++) {
      const response = await app.request(`/crawls/${id}`, { method: 'DELETE' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { id, status: 'cancelled' });
    }
    assert.equal(
      ((await (await app.request(`/crawls/${id}`)).json()) as { status: string }).status,
      'cancelled',
    );
    const done = (
      (await (await app.request('/crawls', json({ seeds: ['https://d.example/'] }))).json()) as { id: string }
    ).id;
    const { view } = (await h.progress(done))!;
    await h.table.finishCrawl(done, {
      status: 'done',
      finishedAt: new Date().toISOString(),
      counters: view.counters,
      lost: 0,
    });
    const refused = await app.request(`/crawls/${done}`, { method: 'DELETE' });
    assert.equal(refused.status, 409);
    assert.equal(((await refused.json()) as { status: string }).status, 'done');
  });

  it('answers function URL events (payload 2.0)', async () => {
    const handler = createApiHandler(createAwsApiDeps(h.aws.clients, h.env));
    const event = (method: string, path: string, body?: string): LambdaFunctionURLEvent =>
      ({
        version: '2.0',
        routeKey: '$default',
        rawPath: path,
        rawQueryString: '',
        headers: { 'content-type': 'application/json', host: 'abc.lambda-url.us-east-1.on.aws' },
        requestContext: {
          accountId: '000000000000',
          apiId: 'abc',
          domainName: 'abc.lambda-url.us-east-1.on.aws',
          domainPrefix: 'abc',
          http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
          requestId: 'r',
          routeKey: '$default',
          stage: '$default',
          time: '',
          timeEpoch: 0,
        },
        isBase64Encoded: false,
        ...(body === undefined ? {} : { body }),
      }) as LambdaFunctionURLEvent;
    type Result = Exclude<LambdaFunctionURLResult, string>;
    const call = async (e: LambdaFunctionURLEvent) => (await handler(e)) as Result;
    const created = await call(event('POST', '/crawls', JSON.stringify({ seeds: ['https://u.example/'] })));
    assert.equal(created.statusCode, 201);
    const id = (JSON.parse(created.body as string) as { id: string }).id;
    assert.match(id, /^[0-9a-f-]{36}$/);
    const invalid = await call(event('POST', '/crawls', '{}'));
    assert.equal(invalid.statusCode, 400);
    const status = await call(event('GET', `/crawls/${id}`));
    assert.equal(JSON.parse(status.body as string).status, 'running');
  });
});
