/**
 * The SSRF guard in whole crawls: without allowPrivate a loopback seed is refused before any
 * byte is sent, recorded as blocked-address at once (no retries), and the CLI says what to do.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { buildCli, crawl, readJsonl, runCli, tempDir } from './helpers.ts';

const METADATA_URL = 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';

describe('SSRF guard in a crawl', () => {
  let site: SiteServer;
  before(async () => {
    site = (
      await startSites(['127.0.0.2'], () => [
        siteRoutes({
          '/': { links: ['/a'] },
          '/a': {},
          '/cloud': { links: [METADATA_URL, 'http://[fd00:ec2::254]/latest/api/token', '/a'] },
        }),
      ])
    )[0]!;
    await buildCli();
  });
  after(() => closeAll([site]));

  test('without allowPrivate a loopback seed is recorded blocked-address and the server sees nothing', async () => {
    const started = performance.now();
    const run = await crawl({
      seeds: [`${site.origin}/`, `${site.origin}/a`, 'http://10.0.0.1/'],
      allowPrivate: false,
      robotsErrorTtlMs: 60_000,
    });
    assert.deepEqual(site.paths(), []);
    for (const url of [`${site.origin}/`, `${site.origin}/a`, 'http://10.0.0.1/']) {
      const page = run.page(url);
      assert.equal(page.reason, 'blocked-address', url);
      assert.equal(page.status, null);
    }
    assert.match(run.page(`${site.origin}/`).detail ?? '', /--allow-private/);
    assert.equal(run.summary.retries, 0, 'a refused address is not retried');
    assert.equal(run.summary.requests, 0);
    assert.ok(performance.now() - started < 2000, 'no waiting for robots.txt retries');
  });

  test('the CLI without --allow-private exits 2 and says how to allow it', async () => {
    const out = tempDir();
    const result = await runCli(['crawl', `${site.origin}/`, '--out', out, '--delay', '0', '--quiet']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /SSRF guard refused .*--allow-private/);
    assert.deepEqual(site.paths(), []);
    const pages = readJsonl<{ reason?: string }>(join(out, 'pages.jsonl'));
    assert.deepEqual(
      pages.map((p) => p.reason),
      ['blocked-address'],
    );
  });

  test('allowPrivate (bare) crawls the private site but never requests a cloud metadata address it links to', async () => {
    const run = await crawl({ seeds: [`${site.origin}/cloud`], allowPrivate: true, scope: 'any' });
    assert.equal(run.page(`${site.origin}/a`).status, 200, 'the private site itself is crawled');
    for (const url of [METADATA_URL, 'http://[fd00:ec2::254]/latest/api/token']) {
      const page = run.page(url);
      assert.equal(page.reason, 'blocked-address', url);
      assert.equal(page.status, null);
      assert.match(
        page.detail ?? '',
        /\(metadata address\).*only when "metadata" or the address itself is named/,
      );
    }
    assert.equal(run.summary.state, 'done');
  });
});
