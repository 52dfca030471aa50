/**
 * A crawl through hostile responses (test/fixtures/hostile-routes.ts): compression bombs, a 20 MB
 * page, a trickling body, headers that never come, resets, broken HTTP, malformed HTML, 5,000 links
 * and non-HTML bodies. The crawl must record each one, finish in bounded time and keep its memory.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crawl } from '../e2e/helpers.ts';
import {
  afterRequestHead,
  BOMB_DECODED_BYTES,
  binary,
  brotliBomb,
  contentLengthMismatch,
  deflateBomb,
  gzipBomb,
  hugeHeaders,
  largePage,
  manyLinks,
  PDF_BYTES,
  PNG_BYTES,
  type RawConnection,
  resetMidBody,
  slowHeaders,
  startRawServer,
  trickle,
} from '../fixtures/hostile-routes.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';

const MiB = 1024 * 1024;

/** Raw handler: a proper 404 for /robots.txt (so the host is crawled), bytes that are not HTTP otherwise. */
function garbageExceptRobots(connection: RawConnection): void {
  afterRequestHead(connection, () => {
    const head = Buffer.concat(connection.received).toString('latin1');
    if (head.startsWith('GET /robots.txt ')) {
      connection.socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    } else {
      connection.socket.end('SSH-2.0-OpenSSH_9.6\r\n\x00\x01\x02 this is not HTTP\r\n\r\n');
    }
  });
}

describe('hostile responses in a crawl', () => {
  test('every hostile page is recorded, capped or cut, and the crawl ends in bounded time and memory', async () => {
    const raw = await startRawServer(garbageExceptRobots, '127.0.0.3');
    const links = [
      '/bomb.gz',
      '/bomb.deflate',
      '/bomb.raw-deflate',
      '/bomb.br',
      '/large',
      '/trickle',
      '/slow-headers',
      '/reset',
      '/short-content-length',
      '/huge-headers',
      '/doc.pdf',
      '/image.png',
      '/download',
      '/malformed',
      `${raw.origin}/garbage`,
    ];
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': { title: 'hostile', links },
        '/bomb.gz': gzipBomb(),
        '/bomb.deflate': deflateBomb(),
        '/bomb.raw-deflate': deflateBomb({ raw: true }),
        '/bomb.br': brotliBomb(),
        '/large': largePage(),
        '/trickle': trickle(40),
        '/slow-headers': slowHeaders(),
        '/reset': resetMidBody(),
        '/short-content-length': contentLengthMismatch(10, '<html><body>longer than declared</body></html>'),
        '/huge-headers': hugeHeaders(),
        '/doc.pdf': binary(PDF_BYTES, 'application/pdf'),
        '/image.png': binary(PNG_BYTES, 'image/png'),
        // a document behind an extension-less URL: the media type decides its kind
        '/download': binary(PDF_BYTES, 'application/pdf'),
        '/malformed': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(
            '<html><head><title>broken <b>markup</title><body><a href="/ok1">one<a href=/ok2 x="<">two' +
              '<p <a href="/ok3">three</a><div><table><tr><td><a href=\'/ok4\'>four</td></tr><!-- unclosed comment <a href="/no">',
          );
        },
        '/ok1': { title: 'ok1' },
        '/ok2': { title: 'ok2' },
        '/ok3': { title: 'ok3' },
        '/ok4': { title: 'ok4' },
      }),
    ]);
    try {
      const o = site!.origin;
      const started = performance.now();
      const run = await crawl({
        seeds: [`${o}/`],
        scope: 'any',
        follow: ['page', 'document', 'image', 'other'],
        maxBodyBytes: MiB,
        // Short enough to cut the trickle quickly, long enough for a brotli bomb to reach the
        // cap on a loaded machine (its decoder fills a 16 MiB window first: 100-250 ms here).
        totalTimeoutMs: 1000,
        maxRetries: 1,
      });
      const elapsed = performance.now() - started;

      for (const path of ['/bomb.gz', '/bomb.deflate', '/bomb.raw-deflate', '/bomb.br', '/large']) {
        const page = run.page(`${o}${path}`);
        assert.equal(page.status, 200, path);
        assert.equal(page.truncated, 'length', `${path} is cut at maxBodyBytes`);
        assert.equal(page.bytes, MiB, path);
        assert.ok(page.warc, `${path} is archived as far as it was read`);
      }
      assert.ok(BOMB_DECODED_BYTES > 1000 * MiB, 'the bombs really are bombs');

      const trickled = run.page(`${o}/trickle`);
      assert.equal(trickled.status, 200);
      assert.equal(trickled.truncated, 'time');
      assert.ok(trickled.bytes > 0 && trickled.bytes < 100);

      const slow = run.page(`${o}/slow-headers`);
      assert.equal(slow.status, null);
      assert.match(slow.reason ?? '', /^timeout-/);
      assert.equal(site!.paths().filter((p) => p === '/slow-headers').length, 2, 'tried, retried, given up');

      const reset = run.page(`${o}/reset`);
      assert.equal(reset.reason, 'connect');
      assert.equal(site!.paths().filter((p) => p === '/reset').length, 2);

      assert.equal(run.page(`${o}/short-content-length`).bytes, 10);
      assert.equal(run.page(`${o}/huge-headers`).reason, 'protocol');
      assert.equal(run.page(`${raw.origin}/garbage`).reason, 'protocol');

      for (const [path, kind] of [
        ['/doc.pdf', 'document'],
        ['/image.png', 'image'],
        ['/download', 'document'],
      ] as const) {
        const page = run.page(`${o}${path}`);
        assert.equal(page.status, 200);
        assert.equal(page.kind, kind, path);
        assert.equal(page.title, null, `${path} is not parsed`);
        assert.equal(page.outLinks, 0);
        assert.equal(
          run.links.some((l) => l.from === page.url),
          false,
          `${path} has no link record`,
        );
      }

      const malformed = run.page(`${o}/malformed`);
      assert.equal(malformed.title, 'broken <b>markup');
      for (const n of [1, 2, 4])
        assert.equal(run.page(`${o}/ok${n}`).status, 200, `link ${n} in broken markup`);
      // `<p <a href="/ok3">` is a <p> with odd attributes, as browsers read it; the comment hides /no
      assert.ok(!site!.paths().includes('/ok3') && !site!.paths().includes('/no'));

      assert.equal(run.summary.state, 'done');
      assert.ok(elapsed < 10_000, `the crawl took ${elapsed.toFixed(0)} ms`);
      assert.ok(
        run.summary.peakRssBytes < 512 * MiB,
        `peak RSS ${(run.summary.peakRssBytes / MiB).toFixed(0)} MiB with 2 GiB bombs`,
      );
    } finally {
      await closeAll([site!, raw]);
    }
  });

  test('a page of 5,000 links: all recorded in links.jsonl, the in-scope ones queued', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes({ '/many-links': manyLinks(5000) })]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/many-links`], maxPages: 20 });
      const links = run.linksOf(`${o}/many-links`);
      assert.equal(links.size, 5000);
      for (let i = 0; i < 5000; i += 997) {
        assert.deepEqual(links.get(`${o}/page/${i}`), { url: `${o}/page/${i}`, kind: 'page' });
      }
      assert.equal(run.page(`${o}/many-links`).outLinks, 5000);
      assert.equal(run.summary.state, 'max-pages');
      assert.equal(run.summary.discovered, 5001);
      assert.equal(run.summary.queued, 5001 - 20);
      assert.equal(site!.log.length, 21, 'robots.txt and twenty pages');
    } finally {
      await closeAll([site!]);
    }
  });
});
