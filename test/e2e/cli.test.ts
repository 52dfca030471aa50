/**
 * The command line as users run it (the bundled CLI behind bin/crawlstack.mjs, as a child
 * process): configuration errors and exit codes, --config with flags on top, `hunt`,
 * `canonicalize`, and progress output that stays plain when stderr is not a terminal.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  formatProgress,
  PLAIN_EVERY_MS,
  ProgressReporter,
  type ProgressView,
} from '../../functions/cli/progress.ts';
import { fingerprint } from '../../functions/core/url/fingerprint.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { buildCli, pagePaths, readJsonl, runCli, tempDir } from './helpers.ts';

describe('crawlstack CLI', () => {
  let site: SiteServer;
  let chain: SiteServer;

  before(async () => {
    [site, chain] = (await startSites(['127.0.0.2', '127.0.0.3'], () => [
      siteRoutes({
        '/': { title: 'home', links: ['/a', '/b', '/c', '/d'] },
        '/a': { title: 'a' },
        '/b': { title: 'b' },
        '/c': { title: 'c' },
        '/d': { title: 'd' },
      }),
      // /1 -> /2 -> ... -> /7; "needle" on /3, "haystack" only on /6
      siteRoutes(
        Object.fromEntries(
          Array.from({ length: 7 }, (_, i) => [
            `/${i + 1}`,
            {
              title: `level ${i + 1}`,
              links: [`/${i + 2}`],
              body:
                `<h1>Level ${i + 1}</h1>\n<p>plain words</p>\n` +
                (i + 1 === 3 ? '<p>here is the golden needle you seek</p>\n' : '') +
                (i + 1 === 6 ? '<p>a haystack, deep down</p>\n' : ''),
            },
          ]),
        ),
      ),
    ])) as [SiteServer, SiteServer];
    await buildCli();
  });
  after(() => closeAll([site, chain]));

  describe('crawl: bad flags and configuration exit 1 with a message naming the setting', () => {
    const badConfig = join(tempDir(), 'bad.json');
    const notJson = join(tempDir(), 'not.json');
    writeFileSync(badConfig, JSON.stringify({ maxPagez: 3 }));
    writeFileSync(notJson, '{ maxPages: 3 ');
    const cases: [string, string[], RegExp][] = [
      ['negative --max-pages', ['http://x.test/', '--max-pages', '-3'], /maxPages \(--max-pages\).*-3/],
      ['--max-pages=0', ['http://x.test/', '--max-pages=0'], /maxPages \(--max-pages\)/],
      ['unknown --scope', ['http://x.test/', '--scope', 'world'], /scope \(--scope\).*"world"/],
      [
        'fractional --delay',
        ['http://x.test/', '--delay', '1.5'],
        /--delay: expected a whole number, got "1.5"/,
      ],
      ['unknown key in --config', ['http://x.test/', '--config', badConfig], /unknown setting "maxPagez"/],
      ['--config that is not JSON', ['http://x.test/', '--config', notJson], /--config .*not valid JSON/],
      [
        'missing --config file',
        ['http://x.test/', '--config', '/nonexistent.json'],
        /--config .*cannot read it/,
      ],
      ['no seed', [], /seeds: no seed URL/],
      ['ftp:// seed', ['ftp://x.test/'], /seeds\[0\]: "ftp:\/\/x.test\/" uses ftp:/],
      [
        'a seed with credentials',
        ['http://user:hunter2@x.test/'],
        /seeds\[0\]: "http:\/\/\*\*\*:\*\*\*@x\.test\/" holds a user name or password: credentials in seed URLs are refused/,
      ],
      ['unknown flag', ['http://x.test/', '--frobnicate'], /--frobnicate/],
      [
        'bad include pattern',
        ['http://x.test/', '--include', '('],
        /include\[0\] \(--include\): not a valid regular expression/,
      ],
    ];
    for (const [name, args, message] of cases) {
      test(name, async () => {
        const out = tempDir();
        const result = await runCli(['crawl', ...args, '--out', out]);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, message);
        assert.equal(existsSync(join(out, 'state.sqlite')), false, 'nothing was started');
      });
    }
    test('an unknown command', async () => {
      const result = await runCli(['crawlz']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /unknown command "crawlz"/);
    });
  });

  test('--config values are used and flags override them; summary.json and plain progress lines', async () => {
    const out = tempDir();
    const config = join(tempDir(), 'crawl.json');
    writeFileSync(
      config,
      JSON.stringify({
        seeds: [`${site.origin}/`],
        allowPrivate: true,
        delayMs: 0,
        maxPages: 2,
        exclude: ['/b$'],
      }),
    );
    const result = await runCli(['crawl', '--config', config, '--max-pages', '3', '--out', out]);
    assert.equal(result.code, 0, result.stderr);
    // seeds, allowPrivate, delay and exclude from the file; the page limit from the flag
    assert.deepEqual(pagePaths(site), ['/', '/a', '/c']);
    const pages = readJsonl<{ url: string }>(join(out, 'pages.jsonl'));
    assert.equal(pages.length, 3);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.state, 'max-pages');
    assert.equal(summary.pages, 3);
    assert.match(result.stdout, /crawl max-pages/);
    assert.match(result.stdout, /pages\s+3 fetched/);
    // stderr is a pipe here: no carriage returns or escape codes, only whole lines
    assert.doesNotMatch(result.stderr, /[\r\x1b]/);
    assert.ok(result.stderr === '' || result.stderr.endsWith('\n'));
  });

  test('crawl --json prints the summary as JSON', async () => {
    const out = tempDir();
    const result = await runCli([
      'crawl',
      `${site.origin}/a`,
      '--allow-private',
      '--delay',
      '0',
      '--max-depth',
      '0',
      '--no-sitemaps',
      '--json',
      '--quiet',
      '--out',
      out,
    ]);
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout);
    assert.equal(summary.pages, 1);
    assert.deepEqual(summary.seeds, [`${site.origin}/a`]);

    const rank = await runCli(['rank', '--out', out, '--top', '5']);
    assert.equal(rank.code, 0, rank.stderr);
    assert.match(
      rank.stdout,
      /^rank {2}importance {2}pagerank {2}authority {7}hub {2}url\n +1 +1\.000000 +1\.000000 +0\.000000 +0\.000000 +http:/,
    );
    assert.match(rank.stdout, /1 pages, 0 links between them; one page: no correlation to compute/);
  });

  test('rank without --out, or with a folder that holds no crawl, exits 1', async () => {
    const missing = await runCli(['rank']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /usage: crawlstack rank --out DIR/);
    const empty = await runCli(['rank', '--out', tempDir()]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /holds no crawl/);
  });

  describe('hunt', () => {
    test('finds a keyword at depth 3, prints the URL and the line, and saves fetched pages', async () => {
      const saved = tempDir();
      const before = chain.log.length;
      const result = await runCli([
        'hunt',
        `${chain.origin}/1`,
        'golden needle',
        saved,
        '--allow-private',
        '--delay',
        '0',
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`found "golden needle" at depth 3: ${chain.origin}/3`));
      assert.match(result.stdout, /line \d+: here is the golden needle you seek/);
      const paths = chain.log.slice(before).map((r) => r.path);
      assert.ok(!paths.includes('/4'), 'the hunt stops when it finds the keyword');
      const hostDir = join(saved, `${chain.host}_${chain.port}`);
      assert.deepEqual(readdirSync(hostDir).sort(), ['1', '2', '3']);
      assert.match(readFileSync(join(hostDir, '3', 'index.html'), 'utf8'), /golden needle/);
    });

    test('reports not-found when the keyword lies past depth 5', async () => {
      const before = chain.log.length;
      const result = await runCli([
        'hunt',
        `${chain.origin}/1`,
        'haystack',
        '--allow-private',
        '--delay',
        '0',
        '--no-sitemaps',
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /"haystack" not found within depth 5 \(5 pages searched\)/);
      const paths = chain.log
        .slice(before)
        .map((r) => r.path)
        .filter((p) => p !== '/robots.txt');
      assert.deepEqual(paths, ['/1', '/2', '/3', '/4', '/5'], 'depth 6 is never fetched');
    });

    test('a keyword over 100 characters exits 1', async () => {
      const result = await runCli(['hunt', `${chain.origin}/1`, 'k'.repeat(101), '--allow-private']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /keyword has 101 characters; at most 100/);
    });

    test('a missing keyword exits 1 with the usage', async () => {
      const result = await runCli(['hunt', `${chain.origin}/1`]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /usage: crawlstack hunt <start-url> <keyword>/);
    });
  });

  describe('canonicalize', () => {
    test('prints the canonical form and the fingerprint', async () => {
      const result = await runCli([
        'canonicalize',
        'HTTP://Example.COM:80/a/./b/../c?utm_source=x&b=2&a=1#frag',
      ]);
      assert.equal(result.code, 0, result.stderr);
      const canonical = 'http://example.com/a/c?a=1&b=2';
      assert.equal(result.stdout, `${canonical}\t${fingerprint(canonical)}\n`);
    });

    test('exits 1 when a URL cannot be canonicalized, still printing the good ones', async () => {
      const result = await runCli(['canonicalize', 'http://ok.test/', 'http://[::1', 'mailto:x@y.test']);
      assert.equal(result.code, 1);
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.length, 3);
      assert.match(lines[0]!, /^http:\/\/ok\.test\/\t[0-9a-f]{16}$/);
      assert.match(lines[1]!, /^http:\/\/\[::1\terror: /);
      assert.match(lines[2]!, /^mailto:x@y\.test\terror: /);
    });
  });
});

describe('progress output', () => {
  const progress: ProgressView = {
    at: 1_000_000,
    pagesPerSecond: 3.5,
    pages: 42,
    skipped: 3,
    errors: 1,
    queued: 17,
    running: 4,
    hosts: 2,
    elapsedMs: 12_000,
    bytes: 123_456,
  };
  function fakeStream(isTTY: boolean) {
    const writes: string[] = [];
    const stream = { isTTY, columns: 80, write: (s: string) => writes.push(s) > 0 };
    return { stream: stream as unknown as NodeJS.WriteStream, writes };
  }

  test('without a terminal: a timestamped plain line every 5 s, log lines as they are', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { stream, writes } = fakeStream(false);
    const reporter = new ProgressReporter(stream, () => progress, formatProgress);
    reporter.start();
    t.mock.timers.tick(PLAIN_EVERY_MS - 1);
    assert.equal(writes.length, 0);
    t.mock.timers.tick(1);
    reporter.log('a log line');
    reporter.stop();
    assert.equal(writes.length, 2);
    assert.match(
      writes[0]!,
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 42 pages \| .*queue 17 \| in flight 4 \| errors 1 .*\n$/,
    );
    assert.equal(writes[1], 'a log line\n');
    for (const w of writes) assert.doesNotMatch(w, /[\r\x1b]/);
  });

  test('on a terminal: one line redrawn in place', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { stream, writes } = fakeStream(true);
    const reporter = new ProgressReporter(stream, () => progress, formatProgress);
    reporter.start();
    t.mock.timers.tick(500);
    reporter.stop();
    assert.equal(writes.length, 3);
    for (const w of writes.slice(0, 2)) assert.match(w, /^\r\x1b\[K42 pages/);
    assert.ok(writes.slice(0, 2).every((w) => w.length <= 80 + 4 && !w.includes('\n')));
    assert.equal(writes[2], '\r\x1b[K');
  });

  test("the line shows the crawl's own rate, and what it waits for when the wait is long", () => {
    assert.match(formatProgress(progress), /^42 pages \| 3\.5\/s \| queue 17/);
    const waiting = { host: '127.0.0.9', until: progress.at + 65_000, reason: 'retry 1 of 2 after connect' };
    assert.match(
      formatProgress({ ...progress, waitingFor: waiting }),
      / \| waiting for 127\.0\.0\.9: retry 1 of 2 after connect, 1:05 left$/,
    );
    const soon = { ...waiting, until: progress.at + 500 };
    assert.doesNotMatch(formatProgress({ ...progress, waitingFor: soon }), /waiting/);
  });
});
