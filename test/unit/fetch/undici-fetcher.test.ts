import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { type FetcherOptions, UndiciFetcher } from '../../../functions/adapters/http/undici-fetcher.ts';
import { failed, ok } from '../../fixtures/fetch-results.ts';
import { hangingLookup, stagedLookup } from '../../fixtures/hostile-routes.ts';
import { routes, type SiteServer, startSite } from '../../fixtures/site-server.ts';

const OPTIONS: FetcherOptions = {
  userAgent: 'crawlstack-test/1 (+https://example.test/bot)',
  allowPrivate: true,
  connectTimeoutMs: 300,
  headersTimeoutMs: 1000,
  idleTimeoutMs: 1000,
  totalTimeoutMs: 3000,
};

const TEXT = Buffer.from(
  `<!doctype html><html><body>${'<p>hello, compressed world</p>\n'.repeat(200)}</body></html>`,
);

function encoded(encoding: string, body: Buffer): (req: IncomingMessage, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': encoding });
    res.end(body);
  };
}

describe('UndiciFetcher', () => {
  let site: SiteServer;
  let fetcher: UndiciFetcher;
  const get = (path: string, maxBytes = 1_000_000, headers?: Record<string, string>) =>
    fetcher.fetch({ url: `${site.origin}${path}`, maxBytes, ...(headers ? { headers } : {}) });

  before(async () => {
    site = await startSite(
      routes({
        '/': { body: '<html><body>home</body></html>' },
        '/headers': (_req, res) => {
          res.writeHead(201, 'Very Created', [
            'X-B',
            '1',
            'Set-Cookie',
            'a=1',
            'X-A',
            '2',
            'Set-Cookie',
            'b=2',
            'Content-Type',
            'text/plain',
          ]);
          res.end('made');
        },
        '/echo?q=1&r=2': (req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(req.headers));
        },
        '/port': (req, res) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(String(req.socket.remotePort));
        },
        '/redirect': { status: 301, body: 'moved', headers: { location: '/' } },
        '/gzip': encoded('gzip', gzipSync(TEXT)),
        '/x-gzip': encoded('x-gzip', gzipSync(TEXT)),
        '/deflate': encoded('deflate', deflateSync(TEXT)),
        '/raw-deflate': encoded('deflate', deflateRawSync(TEXT)),
        '/br': encoded('br', brotliCompressSync(TEXT)),
        '/gzip-then-br': encoded('gzip, br', brotliCompressSync(gzipSync(TEXT))),
        '/upper-case': encoded('GZIP', gzipSync(TEXT)),
        '/identity': encoded('identity', TEXT),
        '/unknown': encoded('compress', Buffer.from('LZW-bytes')),
        '/corrupt-gzip': encoded(
          'gzip',
          Buffer.concat([gzipSync(TEXT).subarray(0, 10), Buffer.alloc(64, 0xff)]),
        ),
        '/truncated-gzip': encoded('gzip', gzipSync(TEXT).subarray(0, 300)),
        '/empty-gzip': (_req, res) => {
          res.writeHead(204, { 'content-encoding': 'gzip' });
          res.end();
        },
        '/exact': { body: Buffer.alloc(1000, 'e') },
        '/exact-gzip': encoded('gzip', gzipSync(Buffer.alloc(1000, 'e'))),
        '/early-hints': (_req, res) => {
          res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('after hints');
        },
        '/slow-echo?i=0': slowEcho,
        '/slow-echo?i=1': slowEcho,
        '/slow-echo?i=2': slowEcho,
        '/slow-echo?i=3': slowEcho,
      }),
    );
    fetcher = new UndiciFetcher(OPTIONS);
  });

  after(async () => {
    await fetcher.close();
    await site.close();
  });

  it('fetches a page with status, headers, body, remote address and timings', async () => {
    const before = Date.now();
    const r = ok(await get('/'));
    assert.equal(r.status, 200);
    assert.equal(r.statusText, 'OK');
    assert.equal(r.httpVersion, '1.1');
    assert.equal(r.url, `${site.origin}/`);
    assert.equal(Buffer.from(r.body).toString(), '<html><body>home</body></html>');
    assert.equal(r.truncated, undefined);
    assert.equal(r.remoteAddress, '127.0.0.1');
    assert.ok(r.timings.startedAt >= before && r.timings.startedAt <= Date.now());
    assert.ok(r.timings.headersMs !== undefined && r.timings.headersMs <= r.timings.totalMs);
  });

  it('keeps response header order, repeats and status text; lowercases names', async () => {
    const r = ok(await get('/headers'));
    assert.equal(r.status, 201);
    assert.equal(r.statusText, 'Very Created');
    const mine = r.headers.filter(([name]) => ['x-b', 'set-cookie', 'x-a', 'content-type'].includes(name));
    assert.deepEqual(mine, [
      ['x-b', '1'],
      ['set-cookie', 'a=1'],
      ['x-a', '2'],
      ['set-cookie', 'b=2'],
      ['content-type', 'text/plain'],
    ]);
  });

  it('sends User-Agent, Accept, Accept-Encoding and extra headers, and records what was sent', async () => {
    const r = ok(await get('/echo?q=1&r=2#fragment', 100_000, { 'X-Extra': 'yes', Accept: 'text/plain' }));
    const seen = JSON.parse(Buffer.from(r.body).toString()) as Record<string, string>;
    assert.equal(seen['user-agent'], OPTIONS.userAgent);
    assert.equal(seen.accept, 'text/plain', 'the caller overrides a default header');
    assert.equal(seen['accept-encoding'], 'gzip, deflate, br');
    assert.equal(seen['x-extra'], 'yes');
    assert.equal(r.request.method, 'GET');
    assert.equal(r.request.target, '/echo?q=1&r=2');
    const sent = new Map(r.request.headers);
    assert.equal(sent.get('host'), `127.0.0.1:${site.port}`);
    assert.equal(sent.get('user-agent'), OPTIONS.userAgent);
    assert.equal(sent.get('accept'), 'text/plain');
    assert.equal(sent.get('accept-encoding'), 'gzip, deflate, br');
    assert.equal(sent.get('x-extra'), 'yes');
    assert.ok(sent.has('connection'), 'headers added by undici are recorded too');
    // Everything the server saw was recorded, and nothing else.
    assert.deepEqual(
      [...sent.keys()].sort(),
      Object.keys(seen)
        .filter((k) => k !== 'content-length')
        .sort(),
    );
  });

  it('the default Accept header is the browser-like one', async () => {
    const r = ok(await get('/echo?q=1&r=2'));
    const seen = JSON.parse(Buffer.from(r.body).toString()) as Record<string, string>;
    assert.equal(seen.accept, 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8');
  });

  it('never follows a redirect', async () => {
    const count = site.log.length;
    const r = ok(await get('/redirect'));
    assert.equal(r.status, 301);
    assert.deepEqual(
      r.headers.find(([n]) => n === 'location'),
      ['location', '/'],
    );
    assert.equal(site.log.length, count + 1);
  });

  for (const path of [
    '/gzip',
    '/x-gzip',
    '/deflate',
    '/raw-deflate',
    '/br',
    '/gzip-then-br',
    '/upper-case',
    '/identity',
  ]) {
    it(`decodes ${path}`, async () => {
      const r = ok(await get(path));
      assert.equal(Buffer.from(r.body).toString(), TEXT.toString());
      assert.equal(r.truncated, undefined);
    });
  }

  it('keeps the bytes of an unknown encoding as they came', async () => {
    const r = ok(await get('/unknown'));
    assert.equal(Buffer.from(r.body).toString(), 'LZW-bytes');
    assert.deepEqual(
      r.headers.find(([n]) => n === 'content-encoding'),
      ['content-encoding', 'compress'],
    );
  });

  it('reports a corrupt compressed body as a protocol failure', async () => {
    const f = failed(await get('/corrupt-gzip'));
    assert.equal(f.error, 'protocol');
    assert.match(f.message, /decode the "gzip" body of a 200 response/);
    assert.ok(f.timings.headersMs !== undefined);
  });

  it('keeps what a truncated compressed body decodes to', async () => {
    const r = ok(await get('/truncated-gzip'));
    assert.ok(r.body.length > 0);
    assert.ok(TEXT.toString().startsWith(Buffer.from(r.body).toString()));
  });

  it('an empty body with a Content-Encoding is just empty', async () => {
    const r = ok(await get('/empty-gzip'));
    assert.equal(r.status, 204);
    assert.equal(r.body.length, 0);
  });

  for (const path of ['/exact', '/exact-gzip']) {
    it(`${path}: a body of exactly maxBytes is whole; one byte less cuts it`, async () => {
      const whole = ok(await get(path, 1000));
      assert.equal(whole.body.length, 1000);
      assert.equal(whole.truncated, undefined);
      const cut = ok(await get(path, 999));
      assert.equal(cut.body.length, 999);
      assert.equal(cut.truncated, 'length');
    });
  }

  it('skips 1xx informational responses', async () => {
    const r = ok(await get('/early-hints'));
    assert.equal(r.status, 200);
    assert.equal(Buffer.from(r.body).toString(), 'after hints');
  });

  it('reuses keep-alive connections', async () => {
    const own = new UndiciFetcher(OPTIONS);
    try {
      const ports = new Set<string>();
      for (let i = 0; i < 3; i += 1) {
        const r = ok(await own.fetch({ url: `${site.origin}/port`, maxBytes: 100 }));
        ports.add(Buffer.from(r.body).toString());
      }
      assert.equal(ports.size, 1);
    } finally {
      await own.close();
    }
  });

  it('concurrent requests each record their own request line and peer', async () => {
    const results = await Promise.all([0, 1, 2, 3].map((i) => get(`/slow-echo?i=${i}`)));
    results.forEach((result, i) => {
      const r = ok(result);
      assert.equal(r.request.target, `/slow-echo?i=${i}`);
      assert.equal(JSON.parse(Buffer.from(r.body).toString()).url, `/slow-echo?i=${i}`);
      assert.equal(r.remoteAddress, '127.0.0.1');
    });
  });

  for (const url of [
    'ftp://example.com/',
    'file:///etc/passwd',
    'data:text/html,hi',
    'javascript:alert(1)',
    'not a url',
  ]) {
    it(`refuses ${url} as unsupported-scheme`, async () => {
      const f = failed(await fetcher.fetch({ url, maxBytes: 1000 }));
      assert.equal(f.error, 'unsupported-scheme');
      assert.equal(f.url, url);
    });
  }
});

function slowEcho(req: IncomingMessage, res: ServerResponse): void {
  // Staggered so the four responses overlap on different connections.
  const i = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('i'));
  setTimeout(
    () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: req.url }));
    },
    40 * (4 - i),
  );
}

describe('UndiciFetcher failures', () => {
  it('a name that does not resolve is a dns failure', async () => {
    const { lookup } = stagedLookup({});
    for (const allowPrivate of [true, false]) {
      const fetcher = new UndiciFetcher({ ...OPTIONS, allowPrivate, lookup });
      try {
        const f = failed(await fetcher.fetch({ url: 'http://nowhere.test/', maxBytes: 1000 }));
        assert.equal(f.error, 'dns');
        assert.match(f.message, /nowhere\.test.*ENOTFOUND/);
      } finally {
        await fetcher.close();
      }
    }
  });

  it('a refused connection is a connect failure', async () => {
    const site = await startSite(routes({}));
    const url = `${site.origin}/`;
    await site.close();
    const fetcher = new UndiciFetcher(OPTIONS);
    try {
      const f = failed(await fetcher.fetch({ url, maxBytes: 1000 }));
      assert.equal(f.error, 'connect');
      assert.match(f.message, /ECONNREFUSED/);
    } finally {
      await fetcher.close();
    }
  });

  it('a connection that never completes is cut at connectTimeoutMs', async () => {
    // DNS is part of connecting: a lookup that never answers keeps the connection from ever completing.
    const fetcher = new UndiciFetcher({ ...OPTIONS, lookup: hangingLookup, totalTimeoutMs: 10_000 });
    try {
      const started = performance.now();
      const f = failed(await fetcher.fetch({ url: 'http://stuck.test/', maxBytes: 1000 }));
      const elapsed = performance.now() - started;
      assert.equal(f.error, 'timeout-connect', f.message);
      assert.ok(elapsed >= OPTIONS.connectTimeoutMs - 20, `${elapsed} ms`);
      assert.ok(elapsed < OPTIONS.connectTimeoutMs + 1500, `${elapsed} ms`);
    } finally {
      await fetcher.close();
    }
  });

  it('https to a server that does not speak TLS is a tls failure', async () => {
    const site = await startSite(routes({ '/': { body: 'plain' } }));
    const fetcher = new UndiciFetcher(OPTIONS);
    try {
      const f = failed(await fetcher.fetch({ url: `https://127.0.0.1:${site.port}/`, maxBytes: 1000 }));
      assert.equal(f.error, 'tls', f.message);
      assert.doesNotMatch(f.message, /\n/);
    } finally {
      await fetcher.close();
      await site.close();
    }
  });

  it('after close, fetches fail without throwing, and close is idempotent', async () => {
    const fetcher = new UndiciFetcher(OPTIONS);
    await fetcher.close();
    await fetcher.close();
    const f = failed(await fetcher.fetch({ url: 'http://127.0.0.1:9/', maxBytes: 1000 }));
    assert.equal(f.error, 'connect');
  });
});
