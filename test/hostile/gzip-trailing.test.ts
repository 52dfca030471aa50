/**
 * gzip (and deflate) bodies followed by bytes that are not part of them: a stray `\r\n`, log
 * noise, or bytes that never end. Browsers and curl keep the decoded page and ignore the rest;
 * so does the fetcher, and it stops reading there. A corrupt stream still fails cleanly.
 */
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { UndiciFetcher } from '../../functions/adapters/http/undici-fetcher.ts';
import { crawl } from '../e2e/helpers.ts';
import { failed, ok } from '../fixtures/fetch-results.ts';
import {
  afterRequestHead,
  deflateWithTrailing,
  gzipWithTrailing,
  type RawServer,
  startRawServer,
} from '../fixtures/hostile-routes.ts';
import { eventually, routes, type SiteServer, startSite } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';

const PAGE = `<html><head><title>gz</title></head><body>${'<p>some text</p>'.repeat(200)}</body></html>`;
// Incompressible and large: decoded as a stream, not in one call.
const LARGE = randomBytes(600 * 1024).toString('base64');

/** Raw handler: a gzip member with no Content-Length, then garbage forever (until the client leaves). */
function gzipThenEndlessGarbage(connection: Parameters<Parameters<typeof startRawServer>[0]>[0]): void {
  afterRequestHead(connection, () => {
    const { socket } = connection;
    socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n');
    socket.write(gzipSync(PAGE));
    const timer = setInterval(() => socket.write(Buffer.alloc(1024, 'garbage ')), 5);
    socket.on('close', () => clearInterval(timer));
  });
}

describe('gzip and deflate with trailing bytes', () => {
  let site: SiteServer;
  let endless: RawServer;
  let fetcher: UndiciFetcher;
  const corrupt = gzipSync(PAGE);
  corrupt.fill(0xff, 20, 60);

  before(async () => {
    site = await startSite(
      routes({
        '/crlf': gzipWithTrailing(PAGE, '\r\n'),
        '/noise': gzipWithTrailing(PAGE, '<!-- 0.0123s -->\n'),
        '/two-members-crlf': gzipWithTrailing(PAGE, '\r\n', 2),
        '/large-crlf': gzipWithTrailing(LARGE, '\r\n'),
        '/deflate-crlf': deflateWithTrailing(PAGE, '\r\n'),
        '/raw-deflate-crlf': deflateWithTrailing(PAGE, '\r\n', true),
        '/corrupt': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
          res.end(corrupt);
        },
      }),
    );
    endless = await startRawServer(gzipThenEndlessGarbage);
    fetcher = new UndiciFetcher({
      userAgent: 'crawlstack-test/1',
      allowPrivate: true,
      connectTimeoutMs: 2000,
      headersTimeoutMs: 2000,
      idleTimeoutMs: 2000,
      totalTimeoutMs: 20_000,
    });
  });
  after(async () => {
    await fetcher.close();
    await site.close();
    await endless.close();
  });

  for (const [path, expected] of [
    ['/crlf', PAGE],
    ['/noise', PAGE],
    ['/two-members-crlf', PAGE + PAGE],
    ['/large-crlf', LARGE],
    ['/deflate-crlf', PAGE],
    ['/raw-deflate-crlf', PAGE],
  ] as const) {
    test(`${path}: the decoded page is kept, the trailing bytes ignored`, async () => {
      const response = ok(await fetcher.fetch({ url: `${site.origin}${path}`, maxBytes: 10 * 1024 * 1024 }));
      assert.equal(response.status, 200);
      assert.equal(response.truncated, undefined);
      assert.equal(Buffer.from(response.body).toString(), expected);
    });
  }

  test('a gzip member followed by endless garbage: the page is kept and the connection closed', async () => {
    const response = ok(await fetcher.fetch({ url: `${endless.origin}/`, maxBytes: 10 * 1024 * 1024 }));
    assert.equal(Buffer.from(response.body).toString(), PAGE);
    await eventually(
      () => (endless.connections[0]?.closed ? true : undefined),
      5000,
      'the connection to close',
    );
  });

  test('a corrupt gzip stream still fails, with a message that says so', async () => {
    const failure = failed(await fetcher.fetch({ url: `${site.origin}/corrupt`, maxBytes: 1024 * 1024 }));
    assert.equal(failure.error, 'protocol');
    assert.match(failure.message, /could not decode the "gzip" body/);
  });

  test('in a crawl, the page is recorded with its title and links', async () => {
    const html = '<html><head><title>trailing</title></head><body><a href="/next">n</a></body></html>';
    const [s] = await startSites(['127.0.0.2'], () => [
      siteRoutes({ '/': gzipWithTrailing(html, '\r\n'), '/next': { title: 'next' } }),
    ]);
    try {
      const run = await crawl({ seeds: [`${s!.origin}/`] });
      const page = run.page(`${s!.origin}/`);
      assert.equal(page.status, 200);
      assert.equal(page.title, 'trailing');
      assert.equal(run.page(`${s!.origin}/next`).status, 200);
    } finally {
      await closeAll([s!]);
    }
  });
});
