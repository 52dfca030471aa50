/**
 * A crawl folder that failed recovers when the cause is gone: the SSRF refusal lifted with
 * --allow-private as the message says, a longer timeout, a server that was down; a setting that
 * cannot change for a crawl is refused with a message naming it.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PageRecord } from '../../functions/core/types.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { buildCli, crawl, freePort, pagePaths, readJsonl, runCli, tempDir } from './helpers.ts';

/** The last line pages.jsonl holds for each URL (a URL retried on a later run has two). */
function lastOutcomes(out: string): Map<string, PageRecord> {
  const last = new Map<string, PageRecord>();
  for (const page of readJsonl<PageRecord>(join(out, 'pages.jsonl'))) last.set(page.url, page);
  return last;
}

describe('a failed crawl folder recovers when the cause is gone', () => {
  let site: SiteServer;
  let slow: SiteServer;
  before(async () => {
    [site, slow] = (await startSites(['127.0.0.91', '127.0.0.92'], () => [
      siteRoutes({ '/': { title: 'home', links: ['/a', '/b'] }, '/a': { title: 'a' }, '/b': { title: 'b' } }),
      siteRoutes({ '/': { title: 'slow', links: ['/x'], delayMs: 2500 }, '/x': { title: 'x' } }),
    ])) as [SiteServer, SiteServer];
    await buildCli();
  });
  after(() => closeAll([site, slow]));

  test('after the SSRF refusal, the same command with --allow-private crawls the site', async () => {
    const out = tempDir();
    const args = ['crawl', `${site.origin}/`, '--out', out, '--delay', '0', '--quiet', '--no-sitemaps'];
    const refused = await runCli(args);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /run the same command with --allow-private/);
    assert.deepEqual(site.paths(), []);

    const allowed = await runCli([...args, '--allow-private']);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(
      allowed.stderr,
      /retrying 1 URLs that failed before: 1 blocked-address \(allowPrivate is now on\)/,
    );
    assert.deepEqual(pagePaths(site).sort(), ['/', '/a', '/b']);
    const outcomes = lastOutcomes(out);
    assert.deepEqual(
      [...outcomes.values()].map((p) => p.status),
      [200, 200, 200],
    );
    assert.match(allowed.stdout, /pages +3 fetched, 0 not fetched/);
    // The seed got back the cash it held when it failed: AOPIC ranks the recovered crawl (the
    // seed first, its links sharing what it passed on), not everything at importance 0.
    const importance = (path: string) => outcomes.get(`${site.origin}${path}`)?.importance ?? 0;
    assert.ok(importance('/') > 0.3, `seed importance ${importance('/')}`);
    assert.ok(importance('/a') > 0 && importance('/b') > 0, 'its links got cash from it');
    const rank = await runCli(['rank', '--out', out]);
    assert.equal(rank.code, 0, rank.stderr);
    assert.doesNotMatch(rank.stdout, /constant scores/);
  });

  test('a URL that timed out is fetched again when the timeout grows, and not otherwise', async () => {
    const out = tempDir();
    // Another seed that is fetched: a crawl that fetched nothing retries its failures anyway.
    const seeds = [`${slow.origin}/`, `${site.origin}/b`];
    const first = await crawl({ seeds, scope: 'any', headersTimeoutMs: 500, maxRetries: 0 }, { outDir: out });
    assert.equal(first.page(`${slow.origin}/`).reason, 'timeout-headers');
    const same = await crawl({ seeds, scope: 'any', headersTimeoutMs: 500, maxRetries: 0 }, { outDir: out });
    assert.equal(same.summary.requests, first.summary.requests, 'nothing retried with the same settings');
    const wider = await crawl(
      { seeds, scope: 'any', headersTimeoutMs: 8000, totalTimeoutMs: 8000, maxRetries: 0 },
      { outDir: out },
    );
    const outcomes = lastOutcomes(out);
    assert.equal(outcomes.get(`${slow.origin}/`)?.status, 200);
    assert.equal(outcomes.get(`${slow.origin}/x`)?.status, 200);
    assert.equal(wider.summary.pages, 3);
    assert.equal(wider.summary.byReason['timeout-headers'], undefined, 'the old failure left the counts');
  });

  test('a crawl whose server was down fetches it once it is up', async () => {
    // A port nothing listens on, then a server on it.
    const port = await freePort('127.0.0.93');
    const out = tempDir();
    const args = ['crawl', `http://127.0.0.93:${port}/`, '--out', out, '--allow-private', '--quiet'];
    const down = await runCli([...args, '--max-retries', '0']);
    assert.equal(down.code, 2, down.stderr);
    const server = createHttpServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(req.url === '/robots.txt' ? '' : '<title>up</title>');
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.93', resolve));
    try {
      const again = await runCli([...args, '--max-retries', '0', '--delay', '0']);
      assert.equal(again.code, 0, again.stderr);
      assert.match(
        again.stderr,
        /retrying 1 URLs that failed before: 1 (robots-unreachable|connect) \(no page was fetched before\)/,
      );
      assert.equal(lastOutcomes(out).get(`http://127.0.0.93:${port}/`)?.status, 200);
    } finally {
      server.close();
    }
  });

  test('a setting that cannot change for a crawl is refused, naming it', async () => {
    const out = tempDir();
    const args = ['crawl', `${site.origin}/a`, '--out', out, '--allow-private', '--delay', '0', '--quiet'];
    assert.equal((await runCli(args)).code, 0);
    const changed = await runCli([...args, '--near-duplicate-distance', '5']);
    assert.equal(changed.code, 1, changed.stderr);
    assert.match(
      changed.stderr,
      /nearDuplicateDistance was 3 when this crawl started \(got 5\); it cannot change for a crawl/,
    );
    assert.equal(changed.stderr.trim().split('\n').length, 1);
  });
});
