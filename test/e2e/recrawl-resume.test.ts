/**
 * A recrawl round killed with `kill -9` and run again through the real CLI loses nothing: each
 * planned page is revisited once (only the steps not committed at the kill repeat), the round is
 * merged into the archive once, and the next run starts the next round.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RecrawlArchive } from '../../functions/adapters/local/recrawl-archive.ts';
import type { PageRecord } from '../../functions/core/types.ts';
import { eventually, type SiteServer } from '../fixtures/site-server.ts';
import { closeAll, spreadTree, startSites } from '../fixtures/sites.ts';
import { assertUnique, buildCli, readJsonl, runCli, spawnCli, tempDir } from './helpers.ts';

const PAGES = 90;
const HOSTS = ['127.0.0.2', '127.0.0.3'];
const tree = spreadTree(PAGES, 3);

function lineCount(path: string): number {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').length - 1 : 0;
}

describe('recrawl through the CLI', () => {
  let sites: SiteServer[];
  let out: string;

  before(async () => {
    await buildCli();
    sites = await startSites(HOSTS, tree.build);
    out = tempDir('crawlstack-recrawl-cli-');
    const first = await runCli(
      [
        'crawl',
        `${sites[0]!.origin}/p/0`,
        '--out',
        out,
        '--allow-private',
        '--scope',
        'any',
        '--delay',
        '15',
        '--delay-factor',
        '0',
        '--no-sitemaps',
        '--concurrency',
        '2',
        '--quiet',
      ],
      { timeoutMs: 60_000 },
    );
    assert.equal(first.code, 0, first.stderr);
  });
  after(() => closeAll(sites));

  test('recrawl --help says what it does', async () => {
    const help = await runCli(['recrawl', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /usage: crawlstack recrawl --out DIR/);
    assert.match(help.stdout, /--budget N/);
    const missing = await runCli(['recrawl']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--out DIR is required/);
    const badSchedule = await runCli(['recrawl', '--out', out, '--schedule', 'weekly']);
    assert.equal(badSchedule.code, 1);
    assert.match(badSchedule.stderr, /recrawlSchedule/);
    const badBudget = await runCli(['recrawl', '--out', out, '--budget', 'ten']);
    assert.equal(badBudget.code, 1);
    assert.match(badBudget.stderr, /--budget expects a whole number/);
    const notACrawl = await runCli(['recrawl', '--out', tempDir()]);
    assert.equal(notACrawl.code, 1);
    assert.match(notACrawl.stderr, /holds no crawl/);
  });

  test('kill -9 mid-round, then the same command: every page once, merged once', async () => {
    const args = ['recrawl', '--out', out, '--min-interval-ms', '0', '--json'];
    const roundPages = join(out, 'recrawls', 'round-0001', 'pages.jsonl');
    const counted = (site: SiteServer) => site.log.filter((r) => r.path !== '/robots.txt').length;
    const before = sites.map(counted);
    const proc = await spawnCli(args);
    try {
      await eventually(
        () => (lineCount(roundPages) >= 25 ? true : undefined),
        20_000,
        '25 revisits before kill -9',
      );
    } catch (error) {
      proc.child.kill('SIGKILL');
      throw new Error(`${(error as Error).message}\n${proc.stderr()}`);
    }
    proc.child.kill('SIGKILL');
    const killed = await proc.exited;
    assert.equal(killed.signal, 'SIGKILL');
    assert.ok(lineCount(roundPages) < PAGES, 'killed before the end of the round');

    const resumed = await runCli(args, { timeoutMs: 60_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    const summary = JSON.parse(resumed.stdout);
    assert.equal(summary.round, 1);
    assert.equal(summary.planned, PAGES);
    // The tree's pages send no validators and never change: the hash finds each unchanged.
    assert.equal(summary.unchanged, PAGES);
    assert.equal(summary.changed + summary.gone + summary.new + summary.notModified, 0);

    const pages = readJsonl<PageRecord>(roundPages);
    assertUnique(
      pages.map((p) => p.url),
      'round pages.jsonl URLs',
    );
    assert.equal(pages.length, PAGES);
    const requests = sites.reduce((sum, site, i) => sum + counted(site) - before[i]!, 0);
    // Only the steps not committed at the kill are made twice: per host, the request in flight and
    // the step still finishing whose response let the host go on (embedded-crawler.ts, #release).
    assert.ok(requests - PAGES <= 2 * HOSTS.length, `${requests} page requests for ${PAGES} pages`);

    const archive = new RecrawlArchive(join(out, 'recrawl.sqlite'));
    try {
      const visits = [...archive.pages()].map((page) => page.history.visits);
      assert.equal(visits.length, PAGES);
      assert.ok(
        visits.every((v) => v === 1),
        `each page revisited once in the archive: ${visits.join(',')}`,
      );
      assert.deepEqual(archive.lastRound()?.merged, true);
    } finally {
      archive.close();
    }

    // Adaptive: no page changed, so none is due before the longest interval.
    const adaptive = await runCli(args, { timeoutMs: 60_000 });
    assert.equal(adaptive.code, 0, adaptive.stderr);
    assert.deepEqual([JSON.parse(adaptive.stdout).round, JSON.parse(adaptive.stdout).planned], [2, 0]);
    const uniform = await runCli([...args, '--schedule', 'uniform', '--budget', '10'], { timeoutMs: 60_000 });
    assert.equal(uniform.code, 0, uniform.stderr);
    const third = JSON.parse(uniform.stdout);
    assert.deepEqual([third.round, third.planned, third.unchanged], [3, 10, 10]);
  });
});
