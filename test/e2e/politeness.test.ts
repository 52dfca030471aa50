/**
 * Politeness measured by the servers: one request in flight per host, gaps of at least delayMs and
 * of k × the host's response time, Retry-After blocking the whole host, 5xx backoff — while the
 * crawl still runs hosts in parallel.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { UndiciFetcher } from '../../functions/adapters/http/undici-fetcher.ts';
import { stagedLookup } from '../fixtures/hostile-routes.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, type PageSpec, siteRoutes, startSites, statusRoute } from '../fixtures/sites.ts';
import { crawl, gaps, overlapPeak, pagePaths, testConfig } from './helpers.ts';

/** Timer and clock granularity (Date.now() is whole ms, timers may fire up to 1 ms early). */
const SLACK_MS = 3;

/**
 * A site of `count` pages under /p/<i>, every page linking to all others, each taking `delayMs`.
 * Titles carry `name` so that sites do not serve byte-identical pages (which are duplicates).
 */
function meshSite(name: string, count: number, delayMs?: number) {
  const table: Record<string, PageSpec> = {};
  const all = Array.from({ length: count }, (_, i) => `/p/${i}`);
  const delay = delayMs === undefined ? {} : { delayMs };
  table['/'] = { title: `${name} home`, links: all, ...delay };
  for (const path of all) table[path] = { title: `${name} ${path}`, links: all, ...delay };
  return siteRoutes(table);
}

describe('politeness', () => {
  test('concurrency 16 over four hosts: one request per host at a time, gaps >= delayMs, hosts overlap', async () => {
    const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
    // Responses of 60 ms against gaps of 40: each host is busy most of the time, so parallel hosts
    // overlap by three or more whatever the machine's load (at 15 ms a loaded CI machine once
    // saw only two at once, though the hosts ran side by side).
    const sites = await startSites(addresses, () => addresses.map((a) => meshSite(a, 8, 60)));
    try {
      const seeds = sites.map((s) => `${s.origin}/`);
      const run = await crawl({ seeds, concurrency: 16, delayMs: 40, scope: 'host' });
      assert.equal(run.summary.pages, 4 * 9);
      for (const site of sites) {
        assert.equal(site.maxInFlight(), 1, `${site.origin} had two requests at once`);
        assert.equal(site.log.length, 10, 'robots.txt and nine pages');
        for (const { gap, next } of gaps(site)) {
          assert.ok(
            gap >= 40 - SLACK_MS,
            `${site.origin}${next.path} came ${gap.toFixed(1)} ms after the last`,
          );
        }
      }
      assert.ok(overlapPeak(sites) >= 3, `hosts were crawled in parallel (peak ${overlapPeak(sites)})`);
    } finally {
      await closeAll(sites);
    }
  });

  test('the concurrency setting caps requests in flight across hosts', async () => {
    const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'];
    const sites = await startSites(addresses, () => addresses.map((a) => meshSite(a, 3, 20)));
    try {
      await crawl({ seeds: sites.map((s) => `${s.origin}/`), concurrency: 2 });
      assert.equal(overlapPeak(sites), 2);
      for (const site of sites) assert.equal(site.maxInFlight(), 1);
    } finally {
      await closeAll(sites);
    }
  });

  test('adaptive delay: a slow host waits delayFactor x its response time between requests', async () => {
    const sites = await startSites(['127.0.0.2', '127.0.0.3'], () => [
      meshSite('slow', 4, 40),
      meshSite('fast', 4),
    ]);
    try {
      const [slow, fast] = sites as [SiteServer, SiteServer];
      const started = performance.now();
      await crawl({
        seeds: [`${slow.origin}/`, `${fast.origin}/`],
        delayMs: 0,
        delayFactor: 3,
        maxDelayMs: 5000,
      });
      for (const { gap, prev, next } of gaps(slow)) {
        const want = 3 * (prev.end - prev.start);
        assert.ok(
          gap >= want - SLACK_MS,
          `${next.path}: ${gap.toFixed(1)} ms after a ${(prev.end - prev.start).toFixed(1)} ms response`,
        );
      }
      // the fast host was not held back by the slow one
      const fastDone = Math.max(...fast.log.map((r) => r.end));
      const slowDone = Math.max(...slow.log.map((r) => r.end));
      assert.ok(fastDone < slowDone, 'the fast host finished first');
      assert.ok(performance.now() - started < 5000);
    } finally {
      await closeAll(sites);
    }
  });

  test('maxDelayMs caps the adaptive delay', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [meshSite('one', 2, 50)]);
    try {
      await crawl({ seeds: [`${site!.origin}/`], delayMs: 0, delayFactor: 100, maxDelayMs: 60 });
      for (const { gap } of gaps(site!)) {
        assert.ok(
          gap >= 60 - SLACK_MS && gap < 1000,
          `gap ${gap.toFixed(1)} ms, 100 x 50 ms capped at 60 ms`,
        );
      }
    } finally {
      await closeAll([site!]);
    }
  });

  test('429 and 503 with Retry-After block the whole host that long, then the URL is retried', async () => {
    const limited = (code: number) => {
      let calls = 0;
      return (req: IncomingMessage, res: ServerResponse) => {
        calls += 1;
        if (calls === 1) return statusRoute(code, { 'retry-after': '1' })(req, res);
        return siteRoutes({ [req.url ?? '/']: { title: `${code} then fine` } })(req, res);
      };
    };
    const sites = await startSites(['127.0.0.2', '127.0.0.3'], () =>
      [429, 503].map((code) =>
        siteRoutes({
          '/': { title: `host answering ${code}`, links: ['/limited', '/a', '/b'] },
          '/limited': limited(code),
          '/a': { title: `${code} a` },
          '/b': { title: `${code} b` },
        }),
      ),
    );
    try {
      const run = await crawl({ seeds: sites.map((s) => `${s.origin}/`), maxRetries: 2 });
      for (const [i, site] of sites.entries()) {
        const code = [429, 503][i];
        assert.deepEqual(
          pagePaths(site),
          ['/', '/limited', '/limited', '/a', '/b'],
          `${code}: the host waited`,
        );
        const first = site.log.findIndex((r) => r.path === '/limited');
        const blockedFor = site.log[first + 1]!.start - site.log[first]!.end;
        assert.ok(
          blockedFor >= 1000 - SLACK_MS,
          `${code}: next request to the host after ${blockedFor.toFixed(0)} ms`,
        );
        assert.ok(
          blockedFor < 2500,
          `${code}: Retry-After: 1 means one second, waited ${blockedFor.toFixed(0)} ms`,
        );
        const page = run.page(`${site.origin}/limited`);
        assert.equal(page.status, 200);
        assert.equal(page.title, `${code} then fine`);
        assert.equal(page.reason, undefined);
      }
      assert.equal(run.summary.retries, 2);
    } finally {
      await closeAll(sites);
    }
  });

  test('Retry-After is capped at maxRetryAfterMs', async () => {
    let calls = 0;
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': (req, res) => {
          calls += 1;
          if (calls === 1) return statusRoute(503, { 'retry-after': '86400' })(req, res);
          return siteRoutes({ '/': { title: 'back' } })(req, res);
        },
      }),
    ]);
    try {
      const run = await crawl({ seeds: [`${site!.origin}/`], maxRetryAfterMs: 80 });
      assert.equal(run.page(`${site!.origin}/`).title, 'back');
      const [, retry] = gaps(site!);
      assert.ok(
        retry!.gap >= 80 - SLACK_MS && retry!.gap < 1000,
        `retried after ${retry!.gap.toFixed(0)} ms`,
      );
    } finally {
      await closeAll([site!]);
    }
  });

  test('5xx is retried with growing backoff, then recorded as gave-up; the host waits meanwhile', async () => {
    let flaky = 0;
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': { links: ['/broken', '/flaky', '/after'] },
        '/broken': statusRoute(500),
        '/flaky': (req, res) => {
          flaky += 1;
          if (flaky === 1) return statusRoute(502)(req, res);
          return siteRoutes({ '/flaky': { title: 'recovered' } })(req, res);
        },
        '/after': {},
      }),
    ]);
    try {
      const base = 60;
      const run = await crawl({ seeds: [`${site!.origin}/`], maxRetries: 2, retryBaseDelayMs: base });
      assert.deepEqual(pagePaths(site!), [
        '/',
        '/broken',
        '/broken',
        '/broken',
        '/flaky',
        '/flaky',
        '/after',
      ]);
      const g = gaps(site!).map((x) => x.gap);
      // robots, /, then the retries of /broken: base x 2^(n-1) with +-25% jitter
      assert.ok(g[2]! >= base * 0.75 - SLACK_MS, `first retry after ${g[2]} ms`);
      assert.ok(g[3]! >= base * 2 * 0.75 - SLACK_MS, `second retry after ${g[3]} ms`);
      assert.ok(g[2]! <= base * 1.25 + 100 && g[3]! <= base * 2 * 1.25 + 100, 'jitter stays within +-25%');
      const broken = run.page(`${site!.origin}/broken`);
      assert.equal(broken.status, 500);
      assert.equal(broken.reason, 'gave-up');
      assert.match(broken.detail ?? '', /after 3 attempts/);
      assert.ok(broken.warc, 'the last 500 is archived');
      assert.equal(run.page(`${site!.origin}/flaky`).title, 'recovered');
      assert.equal(run.summary.retries, 3);
      assert.equal(run.summary.byReason['gave-up'], 1);
    } finally {
      await closeAll([site!]);
    }
  });
});

describe('politeness per IP address', () => {
  const NAMES = ['one.test', 'two.test', 'three.test', 'four.test', 'five.test', 'six.test'];

  /** One server on 127.0.0.5, reached as itself and through six names a staged DNS maps to it. */
  async function sixNames(politenessPerIp: boolean) {
    // Each name gets pages of its own (titles name the Host header), else they are duplicates.
    const byName = (req: IncomingMessage, res: ServerResponse) => {
      const name = req.headers.host ?? '?';
      const all = Array.from({ length: 4 }, (_, i) => `/p/${i}`);
      const links = all.map((p) => `<a href="${p}">${p}</a>`).join('');
      const body = `<title>${name} ${req.url}</title><h1>${name} ${req.url}</h1>${links}`;
      setTimeout(() => {
        res.writeHead(req.url === '/robots.txt' ? 404 : 200, { 'content-type': 'text/html' });
        res.end(body);
      }, 25);
    };
    const [site] = (await startSites(['127.0.0.5'], () => [byName])) as [SiteServer];
    const { lookup, calls } = stagedLookup(Object.fromEntries(NAMES.map((n) => [n, '127.0.0.5'])));
    const seeds = [`${site.origin}/`, ...NAMES.map((n) => `http://${n}:${site.port}/`)];
    const input = { seeds, scope: 'any' as const, concurrency: 16, delayMs: 30, politenessPerIp };
    const fetcher = new UndiciFetcher({ ...testConfig(input), lookup });
    try {
      const run = await crawl(input, { fetcher, lookup });
      return { site, run, calls };
    } finally {
      await fetcher.close();
    }
  }

  test('one server through six host names gets one request at a time, with the gap between', async () => {
    const { site, run, calls } = await sixNames(true);
    try {
      assert.equal(run.summary.pages, 7 * 5, 'every name crawled');
      assert.equal(site.maxInFlight(), 1, 'one request at a time for the one address');
      for (const { gap, next } of gaps(site)) {
        assert.ok(gap >= 30 - SLACK_MS, `${gap} ms before ${next.path}`);
      }
      for (const name of NAMES) assert.ok((calls.get(name) ?? 0) >= 1, `${name} resolved`);
    } finally {
      await closeAll([site]);
    }
  });

  test('with politenessPerIp off, each name is its own host again (the server sees requests at once)', async () => {
    // Measured: 7 requests at once (the seven names), as the issue found six.
    const { site, run } = await sixNames(false);
    try {
      assert.equal(run.summary.pages, 7 * 5);
      assert.ok(site.maxInFlight() >= 3, `peak ${site.maxInFlight()} in flight`);
    } finally {
      await closeAll([site]);
    }
  });
});
