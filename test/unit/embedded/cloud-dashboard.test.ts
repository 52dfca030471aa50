/**
 * The cloud dashboard's local server (functions/dashboard/cloud-dashboard.ts) against the real
 * API app served on loopback with a bearer token, over in-memory stores: it calls the API with the
 * caller's auth, lists the crawls, shows the one asked for (or the newest), passes the snapshot
 * through, and refuses what it should.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createApiApp } from '../../../functions/cloud/lambdas/api/api-app.ts';
import type { DashboardView } from '../../../functions/core/dashboard-snapshot.ts';
import { bearerAuth, startCloudDashboard } from '../../../functions/dashboard/cloud-dashboard.ts';
import { MemoryCloud } from '../cloud/memory-cloud.ts';

const TOKEN = 'secret-token';

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => {
        body += s;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('cloud dashboard server', () => {
  const cloud = new MemoryCloud();
  let n = 0;
  let t = Date.UTC(2026, 10, 26);
  const app = createApiApp(
    cloud.apiDeps({ now: () => t }, () => `00000000-0000-4000-8000-00000000000${++n}`),
  );
  /** What reached the API: method, path and the authorization header. */
  const calls: string[] = [];
  let api: Server;
  let base = '';

  before(async () => {
    // The API app behind a bearer check, as the stand-in's function URL server does.
    api = createServer((req, res) => {
      calls.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(403, { 'content-type': 'application/json' }).end('{"Message":"Forbidden"}');
        return;
      }
      void Promise.resolve(app.request(req.url ?? '/', { method: req.method ?? 'GET' })).then(
        async (answer) => {
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' });
          res.end(await answer.text());
        },
      );
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    for (const seed of ['https://old.example/', 'https://new.example/']) {
      t += 1000;
      const created = await app.request('/crawls', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ seeds: [seed] }),
      });
      assert.equal(created.status, 201);
    }
  });
  after(() => api.close());

  test('shows the newest crawl, or the one asked for, calling the API with the token', async () => {
    const dashboard = await startCloudDashboard({ api: base, auth: bearerAuth(TOKEN) });
    try {
      assert.match(dashboard.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      const newest = JSON.parse((await get(`${dashboard.url}api/view`)).body) as DashboardView;
      assert.equal(newest.source, 'cloud');
      assert.equal(newest.crawlId, '00000000-0000-4000-8000-000000000002');
      assert.deepEqual(newest.seeds, ['https://new.example/']);
      assert.equal(newest.snapshot.state, 'running');
      assert.deepEqual(
        newest.crawls?.map((c) => c.seeds[0]),
        ['https://new.example/', 'https://old.example/'],
      );
      const old = JSON.parse(
        (await get(`${dashboard.url}api/view?crawl=00000000-0000-4000-8000-000000000001`)).body,
      ) as DashboardView;
      assert.deepEqual(old.seeds, ['https://old.example/']);
      assert.ok(calls.length > 0 && calls.every((c) => c.endsWith(`Bearer ${TOKEN}`)), calls.join('\n'));
      assert.ok(
        calls.some((c) => c.startsWith('GET /crawls/00000000-0000-4000-8000-000000000001/snapshot ')),
      );

      // The snapshot, passed through; an id that is not one never reaches the API.
      const passed = await get(`${dashboard.url}crawls/00000000-0000-4000-8000-000000000001/snapshot`);
      assert.equal(passed.status, 200);
      assert.equal(JSON.parse(passed.body).state, 'running');
      const before = calls.length;
      assert.equal((await get(`${dashboard.url}crawls/..%2F..%2Fcrawls/snapshot`)).status, 404);
      assert.match((await get(`${dashboard.url}api/view?crawl=../x`)).body, /not a crawl id/);
      assert.equal(calls.length, before, 'nothing reached the API (the crawl list is cached)');
      const unknown = await get(`${dashboard.url}crawls/00000000-0000-4000-8000-000000000009/snapshot`);
      assert.equal(unknown.status, 404);

      // Loopback only, GET only, the page itself.
      assert.equal((await get(`${dashboard.url}api/view`, { host: 'attacker.example' })).status, 403);
      const page = await get(dashboard.url);
      assert.match(page.body, /<select id="crawl"/);
    } finally {
      await dashboard.close();
    }
  });

  test('names the crawl in its URL when given one; says what the API refused', async () => {
    const dashboard = await startCloudDashboard({
      api: base,
      auth: bearerAuth('wrong'),
      crawl: '00000000-0000-4000-8000-000000000001',
    });
    try {
      assert.match(dashboard.url, /\?crawl=00000000-0000-4000-8000-000000000001$/);
      const view = JSON.parse((await get(dashboard.url.replace('/?', '/api/view?'))).body) as {
        error?: string;
      };
      assert.match(view.error ?? '', /GET crawls\?limit=20: 403/);
    } finally {
      await dashboard.close();
    }
    await assert.rejects(
      startCloudDashboard({ api: base, auth: bearerAuth(TOKEN), crawl: 'nope' }),
      /not a crawl id/,
    );
  });

  test('streams views as server-sent events', async () => {
    const dashboard = await startCloudDashboard({ api: base, auth: bearerAuth(TOKEN), everyMs: 50 });
    try {
      const views = await new Promise<DashboardView[]>((resolve, reject) => {
        const seen: DashboardView[] = [];
        const req = request(
          `${dashboard.url}api/events?crawl=00000000-0000-4000-8000-000000000001`,
          (res) => {
            let buffer = '';
            res.setEncoding('utf8').on('data', (s: string) => {
              buffer += s;
              const all = [...buffer.matchAll(/event: view\ndata: (.*)\n\n/g)];
              if (all.length >= 2) {
                req.destroy();
                resolve(all.map((m) => JSON.parse(m[1]!) as DashboardView));
              }
            });
          },
        );
        req.on('error', (error) => (seen.length >= 2 ? resolve(seen) : reject(error)));
        req.end();
      });
      for (const view of views) assert.equal(view.crawlId, '00000000-0000-4000-8000-000000000001');
    } finally {
      await dashboard.close();
    }
  });
});
