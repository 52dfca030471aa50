/**
 * The minimum transfer rate (curl's --speed-limit/--speed-time): a body slower than
 * `minTransferRate` bytes/s over a window of `minTransferRateTimeMs` is cut at the end of that
 * window and kept as truncated by time, long before the total timeout; a slow but steady body is
 * not touched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FetcherOptions, UndiciFetcher } from '../../functions/adapters/http/undici-fetcher.ts';
import { parseCrawlConfig } from '../../functions/core/config.ts';
import { crawl } from '../e2e/helpers.ts';
import { ok } from '../fixtures/fetch-results.ts';
import { trickle } from '../fixtures/hostile-routes.ts';
import { routes, type SiteServer, startSite } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';

const OPTIONS: FetcherOptions = {
  userAgent: 'crawlstack-test/1',
  allowPrivate: true,
  connectTimeoutMs: 2000,
  headersTimeoutMs: 2000,
  idleTimeoutMs: 10_000,
  totalTimeoutMs: 60_000,
  minTransferRate: 100,
  minTransferRateTimeMs: 1000,
};

/** `chunks` chunks of `size` bytes, one every `intervalMs`, then the end. */
function steady(chunks: number, size: number, intervalMs: number) {
  return routes({
    '/': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      let sent = 0;
      const timer = setInterval(() => {
        res.write('x'.repeat(size));
        if (++sent === chunks) {
          clearInterval(timer);
          res.end();
        }
      }, intervalMs);
      res.on('close', () => clearInterval(timer));
    },
  });
}

describe('minimum transfer rate', () => {
  let trickling: SiteServer;
  let slowButSteady: SiteServer;
  let fetcher: UndiciFetcher;
  before(async () => {
    trickling = await startSite(routes({ '/': trickle(100) })); // 10 bytes/s
    slowButSteady = await startSite(steady(12, 50, 250), '127.0.0.3'); // 200 bytes/s for 3 s
    fetcher = new UndiciFetcher(OPTIONS);
  });
  after(async () => {
    await fetcher.close();
    await closeAll([trickling, slowButSteady]);
  });

  test('a 10 bytes/s trickle is cut after one window, not at the 60 s total timeout', async () => {
    const response = ok(await fetcher.fetch({ url: `${trickling.origin}/`, maxBytes: 1 << 20 }));
    assert.equal(response.status, 200);
    assert.equal(response.truncated, 'time');
    assert.match(response.truncatedDetail ?? '', /slower than the minimum transfer rate of 100 bytes\/s/);
    // One window's worth at most: the rule fired, not the total timeout (600 bytes by then).
    assert.ok(response.body.length < 100, `${response.body.length} bytes kept`);
  });

  test('a body at 200 bytes/s for 3 s, above the minimum, arrives whole', async () => {
    const response = ok(await fetcher.fetch({ url: `${slowButSteady.origin}/`, maxBytes: 1 << 20 }));
    assert.equal(response.truncated, undefined);
    assert.equal(response.body.length, 600);
  });

  test('0 turns the rule off: the total timeout cuts the trickle instead', async () => {
    const off = new UndiciFetcher({ ...OPTIONS, minTransferRate: 0, totalTimeoutMs: 2500 });
    try {
      const response = ok(await off.fetch({ url: `${trickling.origin}/`, maxBytes: 1 << 20 }));
      assert.equal(response.truncated, 'time');
      assert.match(response.truncatedDetail ?? '', /total timeout of 2500 ms/);
    } finally {
      await off.close();
    }
  });

  test('the defaults: 100 bytes/s over 15 s; a crawl records why the body was cut', async () => {
    const parsed = parseCrawlConfig({ seeds: ['https://example.test/'] });
    assert.ok(parsed.ok);
    assert.equal(parsed.config.minTransferRate, 100);
    assert.equal(parsed.config.minTransferRateTimeMs, 15_000);
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes({ '/slow': trickle(100) })]);
    try {
      const run = await crawl({
        seeds: [`${site!.origin}/slow`],
        minTransferRateTimeMs: 1000,
        totalTimeoutMs: 30_000,
      });
      const page = run.page(`${site!.origin}/slow`);
      assert.equal(page.truncated, 'time');
      assert.match(page.detail ?? '', /minimum transfer rate/);
    } finally {
      await closeAll([site!]);
    }
  });
});
