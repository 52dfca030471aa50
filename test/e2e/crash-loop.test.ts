/**
 * A page that kills the crawl process every time it is processed (here the server kills the
 * crawler when asked for it, as an out-of-memory kill would) is recorded as `crashed` after
 * MAX_CRASHES runs died on it, and the crawl finishes, instead of dying on it on every resume.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PageRecord } from '../../functions/core/types.ts';
import { MAX_CRASHES } from '../../functions/embedded/embedded-crawler.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { buildCli, readJsonl, spawnCli, tempDir } from './helpers.ts';

describe('a page that keeps killing the crawl', () => {
  let site: SiteServer;
  let victim: number | undefined;
  before(async () => {
    [site] = (await startSites(['127.0.0.96'], () => [
      siteRoutes({
        '/': { title: 'home', links: ['/a', '/poison', '/b'] },
        '/a': { title: 'a' },
        '/b': { title: 'b' },
        '/poison': (_req, res) => {
          if (victim !== undefined) process.kill(victim, 'SIGKILL');
          res.destroy();
        },
      }),
    ])) as [SiteServer];
    await buildCli();
  });
  after(() => closeAll([site]));

  test(`is recorded as crashed after ${MAX_CRASHES} runs died on it, and the crawl ends`, async () => {
    const out = tempDir();
    const args = [
      'crawl',
      `${site.origin}/`,
      '--out',
      out,
      '--allow-private',
      '--delay',
      '0',
      '--concurrency',
      '1',
      '--order',
      'bfs',
      '--quiet',
    ];
    const exits: (string | number | null)[] = [];
    for (let run = 0; run < MAX_CRASHES + 2; run++) {
      const proc = await spawnCli(args);
      victim = proc.child.pid;
      const exit = await proc.exited;
      exits.push(exit.signal ?? exit.code);
      if (exit.code === 0) break;
    }
    assert.deepEqual(exits, [...Array(MAX_CRASHES).fill('SIGKILL'), 0]);
    const poison = site.paths().filter((p) => p === '/poison').length;
    assert.equal(poison, MAX_CRASHES, 'asked for as often as it killed the crawl, no more');
    const pages = readJsonl<PageRecord>(join(out, 'pages.jsonl'));
    const record = pages.find((p) => p.url === `${site.origin}/poison`);
    assert.equal(record?.reason, 'crashed');
    assert.match(record?.detail ?? '', /the crawl process died 3 times while this page was in progress/);
    assert.deepEqual(
      pages
        .filter((p) => p.status === 200)
        .map((p) => new URL(p.url).pathname)
        .sort(),
      ['/', '/a', '/b'],
    );
  });
});
