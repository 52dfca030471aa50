/**
 * What a new user meets first, through the real CLI: help for every command, --version, clean
 * messages for bad flags and folders, `rank` on an empty crawl, `hunt` when it cannot search,
 * page text that tries to drive the terminal, and a crawl folder already in use.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, robotsTxt, siteRoutes, startSites, statusRoute } from '../fixtures/sites.ts';
import { buildCli, freePort, ROOT, runCli, spawnCli, tempDir } from './helpers.ts';

/** Anything a terminal would act on: C0 but tab and newline, DEL, C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('first run: help, version and messages', () => {
  before(async () => {
    await buildCli();
  });

  for (const command of ['crawl', 'hunt', 'canonicalize', 'rank']) {
    test(`${command} --help and help ${command} print the command's usage and exit 0`, async () => {
      for (const args of [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
      ]) {
        const result = await runCli(args);
        assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stdout, new RegExp(`^usage: crawlstack ${command} `));
        assert.equal(result.stderr, '');
        // Aligned: every option's description starts in the same column.
        const rows = result.stdout.split('\n').filter((l) => /^ {2}(-\w, )?--\S/.test(l));
        assert.ok(rows.length >= 2, `${command}: options listed`);
        const starts = new Set(rows.map((l) => /^ {2}\S+(?: \S+)* {2,}/.exec(l)?.[0].length));
        assert.equal(starts.size, 1, `${command}: descriptions start in one column (${[...starts]})`);
      }
    });
  }

  test('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag]);
      assert.equal(result.code, 0);
      assert.equal(result.stdout, `crawlstack ${version}\n`);
    }
  });

  test('unknown flags and missing values: one clean line naming the flag, exit 1', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['crawl', 'http://x.test/', '--mxa-pages', '3'],
        /^crawlstack crawl: unknown option --mxa-pages \(did you mean --max-pages\?\) \(see crawlstack crawl --help\)\n$/,
      ],
      [
        ['crawl', 'http://x.test/', '--max-pages'],
        /^crawlstack crawl: --max-pages needs a value \(see crawlstack crawl --help\)\n$/,
      ],
      [['crawl', 'http://x.test/', '--quiet=yes'], /^crawlstack crawl: --quiet takes no value/],
      [['rank', '--out'], /^crawlstack rank: --out needs a value/],
      [['rank', '--frob'], /^crawlstack rank: unknown option --frob \(see crawlstack rank --help\)\n$/],
      [['rank', '--out', 'x', 'extra'], /^crawlstack rank: unexpected argument "extra"/],
      [['hunt', 'http://x.test/', 'k', '-z'], /^crawlstack hunt: unknown option -z/],
      [['canonicalize', '--nope', 'http://x.test/'], /^crawlstack canonicalize: unknown option --nope/],
      [['help', 'crawlz'], /^crawlstack: no command "crawlz"/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /To specify a positional argument|ERR_PARSE_ARGS|at .*\.m?js:\d+/);
    }
  });

  test('rank on a crawl that fetched nothing says there is nothing to rank', async () => {
    const out = tempDir();
    const crawl = await runCli([
      'crawl',
      'http://127.0.0.1:1/',
      '--out',
      out,
      '--quiet',
      '--max-retries',
      '0',
    ]);
    assert.equal(crawl.code, 2, crawl.stderr);
    const rank = await runCli(['rank', '--out', out]);
    assert.equal(rank.code, 0, rank.stderr);
    assert.match(rank.stdout, /^nothing to rank: .* holds no fetched HTML page yet\n$/);
    assert.doesNotMatch(rank.stdout, /Spearman/);
  });

  test('--out that is a file: one line saying so, exit 1, no stack', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'not a folder');
    for (const out of [file, join(file, 'below')]) {
      const result = await runCli(['crawl', 'http://x.test/', '--out', out, '--quiet']);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /^crawlstack crawl: --out .* (is a file, not a folder|part of that path is a file)/,
      );
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.doesNotMatch(result.stderr, /EEXIST|ENOTDIR|\n\s+at /);
    }
  });
});

describe('first run: a crawl folder in use, hunt, terminal safety', () => {
  let sites: SiteServer[];
  let slow: SiteServer;
  let site: SiteServer;
  let closed: SiteServer;

  before(async () => {
    sites = await startSites(['127.0.0.71', '127.0.0.72', '127.0.0.73'], () => [
      siteRoutes(
        Object.fromEntries(
          Array.from({ length: 40 }, (_, i) => [
            `/${i}`,
            { title: `p${i}`, links: [`/${i + 1}`], delayMs: 100 },
          ]),
        ),
      ),
      siteRoutes({
        '/': {
          title: 'evil\u001b]0;owned\u0007 title\u001b[2J',
          links: ['/deep1', '/evil%1b'],
          body: '<p>the \u001b[31mred\u001b[0m keyword \u009b2J here</p>',
        },
        '/deep1': { title: 'd1', links: ['/deep2'] },
        '/deep2': { title: 'd2', links: ['/deep3'] },
        '/deep3': { title: 'd3', body: '<p>buried treasure</p>' },
      }),
      siteRoutes({ '/robots.txt': robotsTxt('User-agent: *\nDisallow: /\n'), '/': { title: 'closed' } }),
    ]);
    [slow, site, closed] = sites as [SiteServer, SiteServer, SiteServer];
    await buildCli();
  });
  after(() => closeAll(sites));

  test('a second crawl on a folder in use says which process holds it, exit 1; the first goes on', async () => {
    const out = tempDir();
    const args = ['crawl', `${slow.origin}/0`, '--out', out, '--allow-private', '--delay', '0', '--quiet'];
    const first = await spawnCli(args);
    try {
      // wait until the first crawl holds the folder
      const deadline = Date.now() + 15_000;
      while (slow.log.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const second = await runCli(args);
      assert.equal(second.code, 1, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(
          `^crawlstack crawl: ${out} is in use by another crawl \\(crawlstack process ${first.child.pid} on .*, started .*\\); wait for it to end, or give another --out\\n$`,
        ),
      );
    } finally {
      first.child.kill('SIGINT');
    }
    const exit = await first.exited;
    assert.equal(exit.code, 130, first.stderr());
  });

  test('hunt honours --max-depth (the start URL is depth 1)', async () => {
    const hunt = (depth: string) =>
      runCli([
        'hunt',
        `${site.origin}/`,
        'treasure',
        '--allow-private',
        '--delay',
        '0',
        '--max-depth',
        depth,
      ]);
    const shallow = await hunt('3');
    assert.equal(shallow.code, 0, shallow.stderr);
    assert.match(shallow.stdout, /"treasure" not found within depth 3 \(\d+ pages searched\)/);
    const deep = await hunt('4');
    assert.equal(deep.code, 0, deep.stderr);
    assert.match(deep.stdout, /found "treasure" at depth 4: http:\/\/127\.0\.0\.72:\d+\/deep3/);
    const bad = await runCli(['hunt', `${site.origin}/`, 'x', '--max-depth', '0']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--max-depth expects a whole number from 1/);
  });

  test('hunt exits 2 with the reason when it could not search at all', async () => {
    const ssrf = await runCli(['hunt', `${site.origin}/`, 'keyword']);
    assert.equal(ssrf.code, 2, ssrf.stderr);
    assert.match(ssrf.stderr, /could not search: the SSRF guard refused .*run with --allow-private/);
    const robots = await runCli(['hunt', `${closed.origin}/`, 'keyword', '--allow-private']);
    assert.equal(robots.code, 2, robots.stderr);
    assert.match(robots.stderr, /could not search: robots\.txt does not allow crawling/);
    const unreachable = await runCli([
      'hunt',
      'http://127.0.0.1:1/',
      'keyword',
      '--allow-private',
      '--max-retries',
      '0',
    ]);
    assert.equal(unreachable.code, 2, unreachable.stderr);
    assert.match(
      unreachable.stderr,
      /could not search: every request failed: 1 × connection refused from 127\.0\.0\.1:1; is the server running/,
    );
  });

  test('no command prints a control character from a page', async () => {
    const hunt = await runCli(['hunt', `${site.origin}/`, 'keyword', '--allow-private', '--delay', '0']);
    assert.equal(hunt.code, 0, hunt.stderr);
    assert.match(hunt.stdout, /line \d+: the \\x1b\[31mred\\x1b\[0m keyword \\x9b2J here/);
    assert.doesNotMatch(hunt.stdout + hunt.stderr, CONTROL);

    const out = tempDir();
    const crawl = await runCli([
      'crawl',
      `${site.origin}/`,
      '--out',
      out,
      '--allow-private',
      '--delay',
      '0',
      '--extract',
      'h=h1',
    ]);
    assert.equal(crawl.code, 0, crawl.stderr);
    assert.doesNotMatch(crawl.stdout + crawl.stderr, CONTROL);
    const rank = await runCli(['rank', '--out', out]);
    assert.doesNotMatch(rank.stdout + rank.stderr, CONTROL);
    const canonical = await runCli(['canonicalize', 'http://x.test/\u001b[2J', 'not a url \u001b]0;t\u0007']);
    assert.doesNotMatch(canonical.stdout + canonical.stderr, CONTROL);
    assert.match(canonical.stdout, /\\x1b\]0;t\\x07/);
  });

  test('the output folder is created when missing, even nested', async () => {
    const out = join(tempDir(), 'a', 'b');
    mkdirSync(join(out, '..'), { recursive: true });
    const result = await runCli([
      'crawl',
      `${site.origin}/deep3`,
      '--out',
      out,
      '--allow-private',
      '--quiet',
      '--delay',
      '0',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const status = JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')) as { state: string };
    assert.equal(status.state, 'done', 'status.json says the crawl ended');
  });

  test('hunt shows its progress on stderr while it searches (a plain line when not a terminal)', async () => {
    const hunt = await spawnCli([
      'hunt',
      `${slow.origin}/0`,
      'no such words',
      '--allow-private',
      '--max-depth',
      '40',
      '--delay',
      '150',
    ]);
    try {
      const deadline = Date.now() + 15_000;
      while (!/hunt: /.test(hunt.stderr()) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
    } finally {
      hunt.child.kill('SIGTERM');
    }
    await hunt.exited;
    assert.match(
      hunt.stderr(),
      /^\d{4}-\d\d-\d\dT[\d:.]+Z hunt: \d+ pages searched \| depth \d+ of 40 \| queue \d+ \| in flight \d \| errors 0 \| 0:0\d$/m,
    );
  });
});

describe('first run: a seed that cannot be crawled', () => {
  let failing: SiteServer;
  before(async () => {
    [failing] = (await startSites(['127.0.0.75'], () => [
      siteRoutes({ '/robots.txt': statusRoute(404), '/': statusRoute(500) }, (_path, _req, res) => {
        res.writeHead(500).end('down');
        return true;
      }),
    ])) as [SiteServer];
    await buildCli();
  });
  after(() => closeAll([failing]));

  test('a closed port fails within seconds, names the cause and what to do (crawl and hunt), exit 2', async () => {
    // A port nothing listens on (bound, then closed): connection refused.
    const port = await freePort('127.0.0.74');
    const seed = `http://127.0.0.74:${port}/`;
    const out = tempDir();
    const started = performance.now();
    const [crawl, hunt] = await Promise.all([
      runCli(['crawl', seed, '--out', out, '--allow-private']),
      runCli(['hunt', seed, 'keyword', '--allow-private']),
    ]);
    const seconds = (performance.now() - started) / 1000;
    // Robots.txt tried three times, 2 s and 4 s apart (±25%): not the 5 minutes robotsErrorTtlMs
    // keeps for a host that answered before.
    assert.ok(seconds < 20, `ended after ${seconds.toFixed(1)} s`);
    assert.equal(crawl.code, 2, crawl.stderr);
    const refused = `connection refused .*ECONNREFUSED 127\\.0\\.0\\.74:${port}.*; is the server running\\? check the host and port`;
    assert.match(crawl.stderr, new RegExp(`^${seed}: ${refused}; retry 1 of 2 in \\d\\.\\d s$`, 'm'));
    assert.match(
      crawl.stderr,
      new RegExp(
        `^crawl failed: every request failed: 3 × connection refused from 127\\.0\\.0\\.74:${port}; is the server running\\? check the host and port`,
        'm',
      ),
    );
    assert.match(crawl.stdout, /^crawl failed \(every request failed/);
    const status = JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')) as { state: string };
    assert.equal(status.state, 'failed', 'status.json says how the crawl ended');
    assert.equal(hunt.code, 2, hunt.stderr);
    assert.match(
      hunt.stderr,
      new RegExp(
        `could not search: every request failed: 3 × connection refused from 127\\.0\\.0\\.74:${port}; is the server running`,
      ),
    );
  });

  test('a seed whose every page answers 500 ends failed, exit 2, with one line saying why', async () => {
    const out = tempDir();
    const config = join(tempDir(), 'config.json');
    writeFileSync(config, JSON.stringify({ retryBaseDelayMs: 50 }));
    const result = await runCli([
      'crawl',
      `${failing.origin}/`,
      '--out',
      out,
      '--allow-private',
      '--config',
      config,
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `^crawl failed: every request failed: 3 × HTTP 500 from ${failing.host}:${failing.port}; the server answers with errors: check its logs`,
        'm',
      ),
    );
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { state: string };
    assert.equal(summary.state, 'failed');
    assert.equal(
      (JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')) as { state: string }).state,
      'failed',
    );
    // robots.txt (404), the soft-404 probe, the page three times (two retries)
    assert.match(result.stdout, /^ {2}requests {5}5 \(3 failed\); 2 retries scheduled$/m);
  });
});
