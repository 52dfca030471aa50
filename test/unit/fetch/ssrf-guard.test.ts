import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, it } from 'node:test';
import { BlockedAddressError, guardLookup } from '../../../functions/adapters/http/address-guard.ts';
import { type FetcherOptions, UndiciFetcher } from '../../../functions/adapters/http/undici-fetcher.ts';
import {
  addressAllowance,
  checkAddress,
  isBlockedAddress,
} from '../../../functions/core/net/address-policy.ts';
import type { FetchFailure, FetchResult } from '../../../functions/core/ports.ts';
import { type RawServer, stagedLookup, startRawServer } from '../../fixtures/hostile-routes.ts';
import { eventually, routes, type SiteServer, startSite } from '../../fixtures/site-server.ts';

const BASE: FetcherOptions = {
  userAgent: 'crawlstack-test/1',
  allowPrivate: false,
  connectTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  idleTimeoutMs: 1000,
  totalTimeoutMs: 3000,
};

/** An HTTP responder on a raw socket, so the test sees every connection and every byte sent to it. */
async function startCountingServer(host = '127.0.0.1'): Promise<RawServer> {
  return startRawServer((connection) => {
    connection.socket.on('data', () => {
      connection.socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
    });
  }, host);
}

function assertBlocked(result: FetchResult, address: string): asserts result is FetchFailure {
  assert.equal(result.ok, false, 'expected a failure');
  assert.equal(result.error, 'blocked-address', result.message);
  assert.equal(result.remoteAddress, address);
  assert.match(result.message, new RegExp(address.replace(/[.[\]]/g, '\\$&')));
  assert.match(result.message, /--allow-private/);
}

async function withFetcher<T>(options: Partial<FetcherOptions>, run: (f: UndiciFetcher) => Promise<T>) {
  const fetcher = new UndiciFetcher({ ...BASE, ...options });
  try {
    return await run(fetcher);
  } finally {
    await fetcher.close();
  }
}

describe('SSRF guard: IP-literal URLs are refused before any connection', () => {
  for (const host of ['127.0.0.1', '127.0.0.5']) {
    it(`http://${host}/`, async () => {
      const server = await startCountingServer(host);
      try {
        const result = await withFetcher({}, (f) =>
          f.fetch({ url: `${server.origin}/secret`, maxBytes: 1000 }),
        );
        assertBlocked(result, host);
        assert.match(result.message, /loopback/);
        assert.equal(server.connections.length, 0);
      } finally {
        await server.close();
      }
    });
  }

  it('http://[::1]/ (the server part runs only where IPv6 loopback exists)', async () => {
    let server: RawServer | undefined;
    try {
      server = await startCountingServer('::1');
    } catch {
      // no IPv6 on this machine: the guard must still refuse the literal
    }
    try {
      const url = server === undefined ? 'http://[::1]:9/' : `${server.origin}/secret`;
      const result = await withFetcher({}, (f) => f.fetch({ url, maxBytes: 1000 }));
      assertBlocked(result, '::1');
      assert.equal(server?.connections.length ?? 0, 0);
    } finally {
      await server?.close();
    }
  });

  for (const url of [
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://10.0.0.1/',
    'http://0.0.0.0/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/', // the URL parser turns this into 127.0.0.1
    'https://192.168.0.1/',
  ]) {
    it(url, async () => {
      const started = performance.now();
      const result = await withFetcher({}, (f) => f.fetch({ url, maxBytes: 1000 }));
      assert.equal(result.ok, false);
      assert.equal((result as FetchFailure).error, 'blocked-address');
      assert.ok(performance.now() - started < 200, 'refused without any network wait');
    });
  }
});

describe('SSRF guard: names resolving to blocked addresses', () => {
  let server: RawServer;
  before(async () => {
    server = await startCountingServer();
  });
  after(() => server.close());

  for (const [name, address, cls] of [
    ['internal.test', '10.0.0.1', 'private'],
    ['metadata.test', '169.254.169.254', 'metadata'],
    ['loopback.test', '127.0.0.1', 'loopback'],
  ] as const) {
    it(`${name} -> ${address} is refused at DNS time (${cls})`, async () => {
      const { lookup } = stagedLookup({ [name]: address });
      const before = server.connections.length;
      const result = await withFetcher({ lookup }, (f) =>
        f.fetch({ url: `http://${name}:${server.port}/secret`, maxBytes: 1000 }),
      );
      assertBlocked(result, address);
      assert.match(result.message, new RegExp(`${name}.*${cls}`));
      assert.equal(server.connections.length, before, 'no connection was opened');
    });
  }

  it('a name with only blocked answers (IPv4 and IPv6) is refused', async () => {
    const { lookup } = stagedLookup({ 'multi.test': ['127.0.0.1', '::1', '10.1.2.3'] });
    const result = await withFetcher({ lookup }, (f) =>
      f.fetch({ url: `http://multi.test:${server.port}/`, maxBytes: 1000 }),
    );
    assert.equal(result.ok, false);
    assert.equal((result as FetchFailure).error, 'blocked-address');
  });

  it('localhost through the real resolver is refused', async () => {
    const result = await withFetcher({}, (f) =>
      f.fetch({ url: `http://localhost:${server.port}/`, maxBytes: 1000 }),
    );
    assert.equal(result.ok, false);
    assert.equal((result as FetchFailure).error, 'blocked-address');
  });

  it('the lookup guard drops blocked answers and keeps public ones', async () => {
    const { lookup } = stagedLookup({ 'mixed.test': ['10.0.0.1', '93.184.216.34', '::1'] });
    const guarded = guardLookup(lookup);
    const answers = await new Promise<LookupAddress[]>((resolve, reject) =>
      guarded('mixed.test', { all: true }, (error, address) =>
        error ? reject(error) : resolve(address as LookupAddress[]),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.address),
      ['93.184.216.34'],
    );
    const single = await new Promise<unknown>((resolve) =>
      guarded('mixed.test', { all: false }, (error) => resolve(error)),
    );
    assert.ok(single instanceof BlockedAddressError);
    assert.equal(single.address, '10.0.0.1');
  });
});

describe('SSRF guard: the connect-time check stands on its own', () => {
  it('DNS rebinding: a name that passed an earlier check but connects to loopback is refused before the request is sent', async () => {
    const server = await startCountingServer();
    try {
      // The first answer is what a separate, earlier check saw; every later one is the rebound answer.
      const { lookup, calls } = stagedLookup({
        'rebind.test': (n) => (n === 0 ? '93.184.216.34' : '127.0.0.1'),
      });
      const earlier = await new Promise<string>((resolve) =>
        lookup('rebind.test', {}, (_e, address) => resolve(address as string)),
      );
      assert.equal(isBlockedAddress(earlier), false, 'the stale check saw a public address');

      // With the DNS-time check off, only the check on the connected socket stands in the way.
      const result = await withFetcher({ lookup, lookupGuard: false }, (f) =>
        f.fetch({ url: `http://rebind.test:${server.port}/secret`, maxBytes: 1000 }),
      );
      assertBlocked(result, '127.0.0.1');
      assert.ok((calls.get('rebind.test') ?? 0) >= 2);

      // The socket was connected (that is how its address was known), then closed with nothing sent.
      const connection = await eventually(() => server.connections[0], 5000, 'the connection');
      await eventually(() => (connection.closed ? true : undefined), 5000, 'the connection to close');
      assert.equal(connection.receivedBytes(), 0, 'no request bytes reached the server');
    } finally {
      await server.close();
    }
  });

  it('with the DNS-time check on, each connection resolves once and that answer is the one checked', async () => {
    const server = await startCountingServer();
    try {
      const { lookup, calls } = stagedLookup({
        'rebind.test': (n) => (n % 2 === 0 ? '127.0.0.1' : '10.9.9.9'),
      });
      await withFetcher({ lookup }, async (f) => {
        for (const address of ['127.0.0.1', '10.9.9.9', '127.0.0.1']) {
          const result = await f.fetch({ url: `http://rebind.test:${server.port}/`, maxBytes: 1000 });
          assertBlocked(result, address);
        }
      });
      assert.equal(calls.get('rebind.test'), 3);
      assert.equal(server.connections.length, 0);
    } finally {
      await server.close();
    }
  });
});

describe('allowPrivate lifts the guard', () => {
  let site: SiteServer;
  before(async () => {
    site = await startSite(routes({ '/secret': { body: 'internal page' } }));
  });
  after(() => site.close());

  it('fetches a loopback literal', async () => {
    const result = await withFetcher({ allowPrivate: true }, (f) =>
      f.fetch({ url: `${site.origin}/secret`, maxBytes: 1000 }),
    );
    assert.equal(result.ok, true);
    if (!result.ok) return;
    assert.equal(result.status, 200);
    assert.equal(Buffer.from(result.body).toString(), 'internal page');
    assert.equal(result.remoteAddress, '127.0.0.1');
  });

  it('fetches a name that resolves to loopback', async () => {
    const { lookup } = stagedLookup({ 'intranet.test': '127.0.0.1' });
    const result = await withFetcher({ allowPrivate: true, lookup }, (f) =>
      f.fetch({ url: `http://intranet.test:${site.port}/secret`, maxBytes: 1000 }),
    );
    assert.equal(result.ok, true);
    assert.deepEqual(site.log.at(-1)?.headers.host, `intranet.test:${site.port}`);
  });

  it('the same request without it never reaches the server', async () => {
    const before = site.log.length;
    const result = await withFetcher({}, (f) => f.fetch({ url: `${site.origin}/secret`, maxBytes: 1000 }));
    assert.equal(result.ok, false);
    assert.equal(site.log.length, before);
  });
});

describe('allowPrivate names the networks it allows', () => {
  let site: SiteServer;
  before(async () => {
    site = await startSite(routes({ '/secret': { body: 'internal page' } }));
  });
  after(() => site.close());

  it('bare (true) allows loopback and private networks, never a cloud metadata address', async () => {
    for (const [name, address] of [
      ['metadata.test', '169.254.169.254'],
      ['ecs.test', '169.254.170.2'],
      ['alibaba.test', '100.100.100.200'],
      ['azure.test', '168.63.129.16'],
      ['ec2v6.test', 'fd00:ec2::254'],
      ['mapped.test', '::ffff:169.254.169.254'],
    ] as const) {
      const { lookup } = stagedLookup({ [name]: address });
      const result = await withFetcher({ allowPrivate: true, lookup }, (f) =>
        f.fetch({ url: `http://${name}:${site.port}/latest/meta-data/`, maxBytes: 1000 }),
      );
      assertBlocked(result, address);
      assert.match(result.message, /metadata address/);
      assert.match(result.message, /only when "metadata" or the address itself is named/);
    }
    for (const literal of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/']) {
      const result = await withFetcher({ allowPrivate: true }, (f) =>
        f.fetch({ url: literal, maxBytes: 1000 }),
      );
      assert.equal(result.ok, false);
      assert.equal((result as FetchFailure).error, 'blocked-address', literal);
    }
    const loopback = await withFetcher({ allowPrivate: true }, (f) =>
      f.fetch({ url: `${site.origin}/secret`, maxBytes: 1000 }),
    );
    assert.equal(loopback.ok, true);
  });

  it('a list allows exactly its ranges and names', async () => {
    const { lookup } = stagedLookup({ 'intranet.test': '127.0.0.1' });
    const allowed = await withFetcher({ allowPrivate: ['127.0.0.0/8'], lookup }, (f) =>
      f.fetch({ url: `http://intranet.test:${site.port}/secret`, maxBytes: 1000 }),
    );
    assert.equal(allowed.ok, true);
    const before = site.log.length;
    const other = await withFetcher({ allowPrivate: ['10.1.0.0/16', 'link-local'], lookup }, (f) =>
      f.fetch({ url: `http://intranet.test:${site.port}/secret`, maxBytes: 1000 }),
    );
    assertBlocked(other, '127.0.0.1');
    assert.equal(site.log.length, before, 'the loopback server saw nothing');
    // The connect-time check alone (no lookup guard) applies the same list.
    const connectTime = await withFetcher(
      { allowPrivate: ['10.1.0.0/16'], lookup, lookupGuard: false },
      (f) => f.fetch({ url: `http://intranet.test:${site.port}/secret`, maxBytes: 1000 }),
    );
    assertBlocked(connectTime, '127.0.0.1');
    assert.equal(site.log.length, before);
  });

  it('a metadata address only when named: "metadata", or the address itself, not a range around it', () => {
    const decide = (allow: boolean | string[], ip: string) => checkAddress(ip, addressAllowance(allow));
    assert.deepEqual(decide(true, '169.254.169.254'), { allowed: false, addressClass: 'metadata' });
    assert.equal(decide(['link-local'], '169.254.169.254').allowed, false);
    assert.equal(decide(['169.254.0.0/16'], '169.254.169.254').allowed, false);
    assert.equal(decide(['169.254.0.0/16'], '169.254.1.1').allowed, true);
    assert.equal(decide(['metadata'], '169.254.169.254').allowed, true);
    assert.equal(decide(['169.254.169.254'], '169.254.169.254').allowed, true);
    assert.equal(decide(['169.254.169.254/32'], '::ffff:169.254.169.254').allowed, true);
    assert.equal(decide(true, '10.9.8.7').allowed, true);
    assert.equal(decide(true, 'fd12::1').allowed, true);
    assert.equal(decide(true, '169.254.1.1').allowed, false, 'link-local only when named');
    assert.equal(decide(false, '127.0.0.1').allowed, false);
    assert.equal(decide(['10.1.0.0/16'], '10.2.0.1').allowed, false);
    assert.equal(decide(['10.1.0.0/16'], '10.1.200.1').allowed, true);
  });
});
