import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { after, before, describe, it } from 'node:test';
import { type FetcherOptions, UndiciFetcher } from '../../../functions/adapters/http/undici-fetcher.ts';
import type { FetchResult } from '../../../functions/core/ports.ts';
import { failed, ok } from '../../fixtures/fetch-results.ts';
import {
  BOMB_DECODED_BYTES,
  binary,
  brotliBomb,
  contentLengthMismatch,
  deflateBomb,
  garbageResponse,
  gzipBomb,
  hugeHeaders,
  largePage,
  malformedHeaders,
  manyLinks,
  PDF_BYTES,
  PNG_BYTES,
  type RawServer,
  redirect,
  resetMidBody,
  silentConnection,
  slowFirstByte,
  slowHeaders,
  startRawServer,
  trickle,
} from '../../fixtures/hostile-routes.ts';
import { routes, type SiteServer, startSite } from '../../fixtures/site-server.ts';

/**
 * undici enforces the connect, headers and idle timeouts with coarse timers (about 0.5 s ticks), so
 * they may trip up to ~1 s late; the total timeout is a plain timer and is exact.
 */
const COARSE_TIMER_SLACK = 1500;
const EXACT_TIMER_SLACK = 400;

const OPTIONS: FetcherOptions = {
  userAgent: 'crawlstack-test/1',
  allowPrivate: true,
  connectTimeoutMs: 300,
  headersTimeoutMs: 300,
  idleTimeoutMs: 300,
  totalTimeoutMs: 5000,
};

const CAP = 1_000_000;
const PAGE_BYTES = 20 * 1000 * 1000;

async function timed(run: () => Promise<FetchResult>): Promise<[FetchResult, number]> {
  const started = performance.now();
  const result = await run();
  return [result, performance.now() - started];
}

describe('hostile responses', () => {
  let site: SiteServer;
  let fetcher: UndiciFetcher;
  const get = (path: string, maxBytes = CAP, options?: Partial<FetcherOptions>) => {
    const f = options ? new UndiciFetcher({ ...OPTIONS, ...options }) : fetcher;
    return timed(async () => {
      try {
        return await f.fetch({ url: `${site.origin}${path}`, maxBytes });
      } finally {
        if (f !== fetcher) await f.close();
      }
    });
  };

  before(async () => {
    site = await startSite(
      routes({
        '/bomb.gz': gzipBomb(),
        '/bomb.deflate': deflateBomb(),
        '/bomb.raw-deflate': deflateBomb({ raw: true }),
        '/bomb.br': brotliBomb(),
        // Small on the wire (a few KB): decoded in one call, which must still stop at the cap.
        '/small-bomb.gz': gzipBomb({ decodedBytes: 16 * 2 ** 20 }),
        '/small-bomb.deflate': deflateBomb({ decodedBytes: 16 * 2 ** 20 }),
        '/small-bomb.raw-deflate': deflateBomb({ decodedBytes: 16 * 2 ** 20, raw: true }),
        '/small-bomb.br': brotliBomb({ decodedBytes: 16 * 2 ** 20 }),
        '/large': largePage(PAGE_BYTES),
        '/trickle': trickle(100),
        '/slow-headers': slowHeaders(),
        '/slow-first-byte': slowFirstByte(5000),
        '/reset': resetMidBody(1000),
        '/short-content-length': contentLengthMismatch(10, '<html><body>longer than declared</body></html>'),
        '/long-content-length': contentLengthMismatch(1000, '<html><body>shorter</body></html>'),
        '/many-links': manyLinks(5000),
        '/doc.pdf': binary(PDF_BYTES, 'application/pdf'),
        '/image.png': binary(PNG_BYTES, 'image/png'),
        '/redirect': redirect('/many-links', 307),
        '/huge-headers': hugeHeaders(),
      }),
    );
    fetcher = new UndiciFetcher(OPTIONS);
  });

  after(async () => {
    await fetcher.close();
    await site.close();
  });

  describe('compression bombs stop at the decoded cap, fast', () => {
    for (const path of ['/bomb.gz', '/bomb.deflate', '/bomb.raw-deflate', '/bomb.br']) {
      it(`${path} (${BOMB_DECODED_BYTES / 2 ** 30} GiB decoded) -> exactly ${CAP} bytes`, async () => {
        const [result, elapsed] = await get(path);
        const r = ok(result);
        assert.equal(r.status, 200);
        assert.equal(r.truncated, 'length');
        assert.equal(r.body.length, CAP);
        assert.ok(r.body.every((b) => b === 0));
        // Inflating all of it would take many seconds; stopping at the cap takes milliseconds.
        assert.ok(elapsed < 2000, `${elapsed} ms`);
      });
    }

    for (const path of [
      '/small-bomb.gz',
      '/small-bomb.deflate',
      '/small-bomb.raw-deflate',
      '/small-bomb.br',
    ]) {
      it(`${path} (16 MiB from a few KB) -> exactly ${CAP} bytes; whole with a larger cap`, async () => {
        const r = ok((await get(path))[0]);
        assert.equal(r.truncated, 'length');
        assert.equal(r.body.length, CAP);
        assert.ok(r.body.every((b) => b === 0));
        const whole = ok((await get(path, 32 * 2 ** 20))[0]);
        assert.equal(whole.truncated, undefined);
        assert.equal(whole.body.length, 16 * 2 ** 20);
      });
    }

    it('the bombs really are bombs: a larger cap gets proportionally more', async () => {
      const [result] = await get('/bomb.br', 8 * CAP);
      assert.equal(ok(result).body.length, 8 * CAP);
    });
  });

  describe('size', () => {
    it('a 20 MB page is cut at the cap with the first bytes intact', async () => {
      const [result] = await get('/large');
      const r = ok(result);
      assert.equal(r.truncated, 'length');
      assert.equal(r.body.length, CAP);
      assert.ok(Buffer.from(r.body.subarray(0, 41)).toString().startsWith('<p>filler text'));
    });

    it('a 20 MB page with a 20 MB cap arrives whole', async () => {
      const [result] = await get('/large', PAGE_BYTES);
      const r = ok(result);
      assert.equal(r.truncated, undefined);
      assert.equal(r.body.length, PAGE_BYTES);
    });

    it('a page with 5,000 links arrives whole', async () => {
      const [result] = await get('/many-links');
      const text = Buffer.from(ok(result).body).toString();
      assert.equal(text.match(/<a href=/g)?.length, 5000);
      assert.ok(text.includes('href="/page/4999"'));
    });
  });

  // Concurrent to keep the suite fast; each test has its own fetcher (one connection per origin).
  describe('timeouts', { concurrency: true }, () => {
    it('a body trickling 1 byte per 100 ms is cut at totalTimeoutMs, keeping what arrived', async () => {
      const total = 1200;
      const [result, elapsed] = await get('/trickle', CAP, { totalTimeoutMs: total, idleTimeoutMs: 1000 });
      const r = ok(result);
      assert.equal(r.status, 200);
      assert.equal(r.truncated, 'time');
      assert.ok(r.body.length >= 2 && r.body.length <= 20, `${r.body.length} bytes`);
      assert.ok(Buffer.from(r.body).toString().startsWith('<p'));
      assert.ok(elapsed >= total - 20 && elapsed < total + EXACT_TIMER_SLACK, `${elapsed} ms`);
      assert.ok(r.timings.totalMs >= total - 20);
    });

    it('headers that never come trip headersTimeoutMs', async () => {
      const [result, elapsed] = await get('/slow-headers', CAP, {});
      const f = failed(result);
      assert.equal(f.error, 'timeout-headers', f.message);
      assert.equal(f.timings.headersMs, undefined);
      assert.equal(f.remoteAddress, '127.0.0.1');
      assert.ok(elapsed >= OPTIONS.headersTimeoutMs - 20, `${elapsed} ms`);
      assert.ok(elapsed < OPTIONS.headersTimeoutMs + COARSE_TIMER_SLACK, `${elapsed} ms`);
    });

    it('a total timeout shorter than the headers timeout fails as timeout-total', async () => {
      const total = 600;
      const [result, elapsed] = await get('/slow-headers', CAP, {
        headersTimeoutMs: 10_000,
        totalTimeoutMs: total,
      });
      const f = failed(result);
      assert.equal(f.error, 'timeout-total', f.message);
      assert.ok(elapsed >= total - 20 && elapsed < total + EXACT_TIMER_SLACK, `${elapsed} ms`);
    });

    it('a body that does not start trips idleTimeoutMs', async () => {
      const [result, elapsed] = await get('/slow-first-byte', CAP, {});
      const f = failed(result);
      assert.equal(f.error, 'timeout-idle', f.message);
      assert.ok(f.timings.headersMs !== undefined);
      assert.match(f.message, /status 200, 0 body bytes/);
      assert.ok(elapsed < OPTIONS.idleTimeoutMs + COARSE_TIMER_SLACK, `${elapsed} ms`);
    });

    it('a Content-Length longer than the body stalls and trips idleTimeoutMs', async () => {
      const [result, elapsed] = await get('/long-content-length', CAP, {});
      const f = failed(result);
      assert.equal(f.error, 'timeout-idle', f.message);
      assert.ok(elapsed < OPTIONS.idleTimeoutMs + COARSE_TIMER_SLACK, `${elapsed} ms`);
    });
  });

  describe('broken transfers', () => {
    it('a connection reset mid-body is a connect failure naming what arrived', async () => {
      const [result] = await get('/reset');
      const f = failed(result);
      assert.equal(f.error, 'connect');
      assert.match(f.message, /ECONNRESET|closed/);
      assert.match(f.message, /status 200/);
    });

    it('a Content-Length shorter than the body keeps the declared bytes', async () => {
      const [result] = await get('/short-content-length');
      assert.equal(Buffer.from(ok(result).body).toString(), '<html><bod');
      // The stray bytes after it must not poison the next request on that origin.
      const [next] = await get('/doc.pdf');
      assert.deepEqual(Buffer.from(ok(next).body), PDF_BYTES);
    });

    it('oversized response headers are a protocol failure', async () => {
      const [result] = await get('/huge-headers');
      assert.equal(failed(result).error, 'protocol');
    });
  });

  describe('content', () => {
    it('PDF and PNG bytes come through untouched', async () => {
      const [pdf] = await get('/doc.pdf');
      const [png] = await get('/image.png');
      assert.deepEqual(Buffer.from(ok(pdf).body), PDF_BYTES);
      assert.deepEqual(Buffer.from(ok(png).body), PNG_BYTES);
      assert.deepEqual(
        ok(png).headers.find(([n]) => n === 'content-type'),
        ['content-type', 'image/png'],
      );
    });

    it('a redirect is returned, not followed', async () => {
      const count = site.log.length;
      const [result] = await get('/redirect');
      const r = ok(result);
      assert.equal(r.status, 307);
      assert.deepEqual(
        r.headers.find(([n]) => n === 'location'),
        ['location', '/many-links'],
      );
      assert.equal(site.log.length, count + 1);
    });
  });
});

describe('hostile raw servers', () => {
  const servers: RawServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  for (const [name, handler, code] of [
    ['garbage instead of HTTP', garbageResponse, 'protocol'],
    ['a header line without a colon', malformedHeaders, 'protocol'],
    ['a server that accepts and stays silent', silentConnection, 'timeout-headers'],
  ] as const) {
    it(`${name} -> ${code}`, async () => {
      const server = await startRawServer(handler);
      servers.push(server);
      const fetcher = new UndiciFetcher(OPTIONS);
      try {
        const [result, elapsed] = await timed(() =>
          fetcher.fetch({ url: `${server.origin}/`, maxBytes: CAP }),
        );
        const f = failed(result);
        assert.equal(f.error, code, f.message);
        assert.ok(elapsed < OPTIONS.headersTimeoutMs + COARSE_TIMER_SLACK, `${elapsed} ms`);
      } finally {
        await fetcher.close();
      }
    });
  }
});
