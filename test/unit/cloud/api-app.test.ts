/**
 * The HTTP API's Hono app through `app.request()` with in-memory stores: no Lambda, no emulator.
 * (The emulator tier runs the same app over DynamoDB, SQS and S3.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApiApp } from '../../../functions/cloud/lambdas/api/api-app.ts';
import { emfCounts, emfLine } from '../../../functions/cloud/metrics.ts';
import { MemoryCloud } from './memory-cloud.ts';

function api(
  cloud = new MemoryCloud(),
  extra: {
    log?: (line: string) => void;
    metric?: (name: string, value: number) => void;
    forbidPrivate?: boolean;
  } = {},
) {
  let n = 0;
  const app = createApiApp({
    ...cloud.apiDeps(
      { now: () => Date.UTC(2026, 10, 26) },
      () => `00000000-0000-4000-8000-00000000000${++n}`,
    ),
    ...extra,
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await app.request(path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  return { cloud, call };
}

describe('API app (in-memory stores)', () => {
  it('POST /crawls: 201 with the id, the crawl item, the seed claimed and queued', async () => {
    const { cloud, call } = api();
    const created = await call('POST', '/crawls', { seeds: ['https://example.org/'] });
    assert.equal(created.status, 201);
    const id = created.json.id as string;
    assert.equal(cloud.table.crawls.get(id)?.status, 'running');
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      ['https://example.org/'],
    );
    assert.equal(cloud.owners.get(id)?.size, 1);
  });

  it('400 for a seed with credentials: not stored, not queued, the password not echoed', async () => {
    const { cloud, call } = api();
    const refused = await call('POST', '/crawls', { seeds: ['https://user:hunter2@example.org/'] });
    assert.equal(refused.status, 400);
    assert.match(
      (refused.json.problems as string[])[0]!,
      /^seeds\[0\]: "https:\/\/\*\*\*:\*\*\*@example\.org\/" holds a user name or password/,
    );
    assert.doesNotMatch(JSON.stringify(refused.json), /hunter2/);
    assert.equal(cloud.table.crawls.size, 0);
    assert.deepEqual(cloud.frontier.sent, []);
  });

  it('400 naming each problem; 404 for an unknown crawl; 405 for a wrong method', async () => {
    const { call } = api();
    const bad = await call('POST', '/crawls', { seeds: ['ftp://x/'], maxPages: -1 });
    assert.equal(bad.status, 400);
    assert.ok((bad.json.problems as string[]).some((p) => p.startsWith('maxPages')));
    assert.equal((await call('GET', '/crawls/00000000-0000-4000-8000-000000000009')).status, 404);
    assert.equal((await call('PUT', '/crawls')).status, 405);
    const huge = await call('POST', '/crawls', { seeds: ['https://example.org/'], delayMs: 2 ** 31 });
    assert.equal(huge.status, 400, 'a wait setTimeout cannot honour');
    assert.match((huge.json.problems as string[])[0]!, /^delayMs: at most 86,400,000 ms/);
  });

  it('GET /crawls/{id} sums the running totals; DELETE cancels, then answers 200 again', async () => {
    const { cloud, call } = api();
    const id = (await call('POST', '/crawls', { seeds: ['https://example.org/'] })).json.id as string;
    await cloud.table.updateHost(id, 'example.org', {
      nextAllowedAt: 0,
      counts: {
        ...(await import('../../../functions/cloud/messages/crawl-records.ts')).emptyHostCounts(),
        finished: 1,
        fetched: 1,
        requests: 2,
      },
      ledger: { firstSeq: '1', lastSeq: '1' },
    });
    // What the worker adds to a counter shard after that ledger write.
    await cloud.table.addToShard(id, 3, {
      ...(await import('../../../functions/cloud/messages/crawl-records.ts')).emptyHostCounts(),
      finished: 1,
      fetched: 1,
      requests: 2,
      hosts: 1,
    });
    const status = await call('GET', `/crawls/${id}`);
    assert.equal(status.status, 200);
    assert.equal((status.json.counters as { finished: number }).finished, 1);
    assert.equal((status.json.counters as { hosts: number }).hosts, 1);
    assert.equal((await call('DELETE', `/crawls/${id}`)).json.status, 'cancelled');
    assert.equal((await call('DELETE', `/crawls/${id}`)).status, 200);
  });
});

describe('API errors reach the alarm', () => {
  it('GET /crawls/{id}/rules lists the stored duplicate-URL rules, as rules.json does; 404 for no crawl', async () => {
    const { cloud, call } = api();
    const created = await call('POST', '/crawls', { seeds: ['https://example.org/'] });
    const id = created.json.id as string;
    assert.deepEqual((await call('GET', `/crawls/${id}/rules`)).json, { rules: [] });
    const rule = (status: 'active' | 'blocked', support: number) => ({
      rule: { kind: 'drop-suffix' as const, suffix: 'index.html' },
      name: 'drop-suffix index.html',
      status,
      support,
      examples: [['https://z.example/a/', 'https://z.example/a/index.html'] as [string, string]],
    });
    await cloud.table.putHostRules(id, 'https://z.example', [rule('blocked', 1)], 0);
    await cloud.table.putHostRules(id, 'https://a.example', [rule('active', 4)], 0);
    const listed = await call('GET', `/crawls/${id}/rules`);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      (listed.json.rules as { origin: string; status: string }[]).map((r) => [r.origin, r.status]),
      [
        ['https://a.example', 'active'],
        ['https://z.example', 'blocked'],
      ],
    );
    assert.equal((await call('GET', '/crawls/00000000-0000-4000-8000-000000000009/rules')).status, 404);
    assert.equal((await call('POST', `/crawls/${id}/rules`)).status, 405);
  });

  it("a 500 publishes ApiInternalErrors (Hono hides the error from Lambda's Errors metric)", async () => {
    const cloud = new MemoryCloud();
    const counted: [string, number][] = [];
    const logs: string[] = [];
    const { call } = api(cloud, {
      metric: (name, value) => counted.push([name, value]),
      log: (l) => logs.push(l),
    });
    cloud.table.failing.add('createCrawl');
    const response = await call('POST', '/crawls', { seeds: ['https://example.org/'] });
    assert.equal(response.status, 500);
    assert.deepEqual(counted, [['ApiInternalErrors', 1]]);
    assert.match(logs.join('\n'), /createCrawl failed/);
  });

  it("an AWS call the API's role may not make is a 500 naming the action (AWS's message)", async () => {
    const cloud = new MemoryCloud();
    const counted: [string, number][] = [];
    const { call } = api(cloud, { metric: (name, value) => counted.push([name, value]) });
    const id = (await call('POST', '/crawls', { seeds: ['https://example.org/'] })).json.id as string;
    const message =
      'User: arn:aws:sts::1:assumed-role/api/Api is not authorized to perform: s3:ListBucket on resource: "arn:aws:s3:::pages" because no identity-based policy allows the s3:ListBucket action';
    cloud.objects.keys = async () => {
      throw Object.assign(new Error(message), { name: 'AccessDenied' });
    };
    const response = await call('GET', `/crawls/${id}/pages`);
    assert.equal(response.status, 500);
    assert.deepEqual(response.json, { error: 'internal error', code: 'access-denied', detail: message });
    assert.deepEqual(counted, [['ApiInternalErrors', 1]], 'still counted for the alarm');
  });

  it('writes the count as one CloudWatch EMF line', () => {
    const line = JSON.parse(emfLine('ApiInternalErrors', 1, 1_700_000_000_000, { Function: 'Api' }));
    assert.deepEqual(line._aws.CloudWatchMetrics, [
      {
        Namespace: 'crawlstack',
        Dimensions: [['Function']],
        Metrics: [{ Name: 'ApiInternalErrors', Unit: 'Count' }],
      },
    ]);
    assert.equal(line.Function, 'Api');
    assert.equal(line.ApiInternalErrors, 1);
    assert.equal(line._aws.Timestamp, 1_700_000_000_000);
  });

  it('gives each metric its unit by name: durations, sizes, counts', () => {
    const line = JSON.parse(
      emfCounts({ WorkerStepMs: 5, WorkerCaptureBytes: 900, WorkerSteps: 1 }, 1_700_000_000_000, {}),
    );
    assert.deepEqual(line._aws.CloudWatchMetrics[0].Metrics, [
      { Name: 'WorkerStepMs', Unit: 'Milliseconds' },
      { Name: 'WorkerCaptureBytes', Unit: 'Bytes' },
      { Name: 'WorkerSteps', Unit: 'Count' },
    ]);
  });
});

describe('GET /crawls/{id}/objects: the archive as download links', () => {
  it('lists one kind at a time, in key order, with sizes and URLs, paged by a cursor', async () => {
    const { cloud, call } = api();
    const id = (await call('POST', '/crawls', { seeds: ['https://example.org/'] })).json.id as string;
    const warc = [1, 2, 3].map(
      (i) => `warc/${id}/2026/11/26/2026112612000000${i}-000000000000000${i}.warc.gz`,
    );
    for (const [i, key] of warc.entries()) await cloud.objects.put(key, new Uint8Array(10 + i));
    await cloud.objects.put(`index/${id}/20261126120000001-0000000000000001.jsonl`, new Uint8Array(5));
    await cloud.objects.put(`warc/${'0'.repeat(8)}-other/x.warc.gz`, new Uint8Array(1)); // another crawl
    const first = await call('GET', `/crawls/${id}/objects?kind=warc&limit=2`);
    assert.equal(first.status, 200);
    assert.equal(first.json.kind, 'warc');
    assert.equal(first.json.expiresInSeconds, 900);
    const objects = first.json.objects as { key: string; size: number; url: string }[];
    assert.deepEqual(
      objects.map((o) => [o.key, o.size]),
      [
        [warc[0], 10],
        [warc[1], 11],
      ],
    );
    assert.equal(objects[0]!.url, `memory://memory-bucket/${warc[0]}?expires=900`);
    const second = await call('GET', `/crawls/${id}/objects?kind=warc&limit=2&cursor=${first.json.cursor}`);
    assert.deepEqual(
      (second.json.objects as { key: string }[]).map((o) => o.key),
      [warc[2]],
    );
    assert.equal(second.json.cursor, undefined, 'a short page is the last');
    const index = await call('GET', `/crawls/${id}/objects?kind=index`);
    assert.equal((index.json.objects as unknown[]).length, 1);
    assert.deepEqual((await call('GET', `/crawls/${id}/objects?kind=trace`)).json.objects, []);
  });

  it('400 for a missing or unknown kind and a cursor of another kind or crawl; 404 for an unknown crawl', async () => {
    const { call } = api();
    const id = (await call('POST', '/crawls', { seeds: ['https://example.org/'] })).json.id as string;
    for (const query of [
      '',
      '?kind=pages',
      `?kind=warc&cursor=${Buffer.from(`index/${id}/a`).toString('base64url')}`,
    ]) {
      const response = await call('GET', `/crawls/${id}/objects${query}`);
      assert.equal(response.status, 400, query);
      assert.match((response.json.problems as string[])[0]!, /^(kind|cursor): /);
    }
    const unknown = await call('GET', '/crawls/00000000-0000-4000-8000-000000000009/objects?kind=warc');
    assert.equal(unknown.status, 404);
    assert.equal((await call('POST', `/crawls/${id}/objects`)).status, 405);
  });
});

describe('API input that names nothing (issue 8, item 9)', () => {
  it('an id of 3,000 characters is 404, never sent to a store', async () => {
    const { cloud, call } = api();
    const long = 'a'.repeat(3000);
    for (const path of [`/crawls/${long}`, `/crawls/${long}/pages`]) {
      assert.equal((await call('GET', path)).status, 404, path.slice(0, 20));
    }
    assert.equal((await call('DELETE', `/crawls/${long}`)).status, 404);
    assert.ok(!cloud.table.calls.includes('getCrawl') && !cloud.table.calls.includes('cancelCrawl'));
  });

  it('a forged cursor is 400: unknown object, not at a line, not a cursor at all', async () => {
    const { cloud, call } = api();
    const id = (await call('POST', '/crawls', { seeds: ['https://example.org/'] })).json.id as string;
    const key = `index/${id}/20261126120000000-0123456789abcdef.jsonl`;
    const line = JSON.stringify({
      fp: '0123456789abcdef',
      url: 'https://example.org/',
      host: 'example.org',
      status: 200,
      kind: 'page',
      depth: 0,
      bytes: 1,
      outLinks: 0,
      messageId: 'm',
      enqueued: 0,
    });
    await cloud.objects.put(
      key,
      new TextEncoder().encode(`${line}\n${line.replace('0123456789abcdef', 'fedcba9876543210')}\n`),
      'application/jsonl',
    );
    const cursor = (k: string, offset: number) =>
      Buffer.from(JSON.stringify([k, offset])).toString('base64url');
    const good = await call('GET', `/crawls/${id}/pages?cursor=${cursor(key, line.length + 1)}`);
    assert.equal(good.status, 200, 'a cursor at a line is read');
    assert.equal((good.json.pages as unknown[]).length, 1);
    for (const forged of [
      cursor(key.replace('0123', '9999'), 0),
      cursor(key, 7),
      cursor(`index/${id}/x`, 0),
      'bm9wZQ',
    ]) {
      const response = await call('GET', `/crawls/${id}/pages?cursor=${forged}`);
      assert.equal(response.status, 400, forged);
      assert.match((response.json.problems as string[])[0]!, /^cursor: /);
    }
  });

  it('GET /crawls lists every crawl, newest first, in pages', async () => {
    const { call } = api();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await call('POST', '/crawls', { seeds: [`https://example.org/${i}`] })).json.id as string);
    const first = await call('GET', '/crawls?limit=3');
    assert.equal(first.status, 200);
    const listed = (first.json.crawls as { id: string; status: string }[]).map((c) => c.id);
    assert.equal(listed.length, 3);
    const second = await call('GET', `/crawls?limit=3&cursor=${first.json.cursor}`);
    const rest = (second.json.crawls as { id: string }[]).map((c) => c.id);
    assert.deepEqual([...listed, ...rest].sort(), [...ids].sort());
    assert.equal(second.json.cursor, undefined);
    assert.equal((await call('GET', '/crawls?cursor=Zm9yZ2Vk')).status, 400);
    assert.equal((await call('GET', '/crawls?limit=1000')).status, 400);
  });

  it('a deployment that forbids private addresses refuses allowPrivate with 400 naming the setting', async () => {
    const { call, cloud } = api(new MemoryCloud(), { forbidPrivate: true });
    const refused = await call('POST', '/crawls', { seeds: ['http://127.0.0.1/'], allowPrivate: true });
    assert.equal(refused.status, 400);
    assert.match((refused.json.problems as string[])[0]!, /^allowPrivate: this deployment forbids/);
    assert.equal(cloud.frontier.sent.length, 0);
    assert.equal((await call('POST', '/crawls', { seeds: ['https://example.org/'] })).status, 201);
  });
});
