/**
 * The URL-seen trace and `crawlstack cache-study` through the real CLI: a crawl records every
 * look-up (exactly its followed links, in links.jsonl's order), the study replays it, prints a
 * table per cache size and writes an SVG chart; a crawl with --no-seen-trace has no trace.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LinkRecord } from '../../functions/core/types.ts';
import { fingerprint } from '../../functions/core/url/fingerprint.ts';
import { decodeTrace } from '../../functions/core/url-seen/url-seen-trace.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, spreadTree, startSites } from '../fixtures/sites.ts';
import { buildCli, readJsonl, runCli, tempDir } from './helpers.ts';

const tree = spreadTree(60, 4);

describe('crawlstack cache-study', () => {
  let sites: SiteServer[];
  let seed: string;
  const out = tempDir();

  before(async () => {
    sites = await startSites(['127.0.0.2', '127.0.0.3'], tree.build);
    seed = `${sites[0]!.origin}/p/0`;
    await buildCli();
  });
  after(() => closeAll(sites));

  const crawlArgs = (dir: string, ...extra: string[]) => [
    'crawl',
    seed,
    '--out',
    dir,
    '--allow-private',
    '--scope',
    'any',
    '--delay',
    '0',
    '--delay-factor',
    '0',
    // the tree's pages look alike: keep the link-generator rule from skipping some of them
    '--no-trap-detectors',
    '--no-soft404-probe',
    '--no-sitemaps',
    '--quiet',
    ...extra,
  ];

  test('the crawl records each followed link it looked up, 8 bytes each, in commit order', async () => {
    const crawl = await runCli(crawlArgs(out, '--json'));
    assert.equal(crawl.code, 0, crawl.stderr);
    const summary = JSON.parse(crawl.stdout);
    const trace = decodeTrace(readFileSync(join(out, 'url-seen.trace')));
    assert.equal(trace.length, summary.urlSeen.lookups);
    const followed = readJsonl<LinkRecord>(join(out, 'links.jsonl')).flatMap((record) =>
      record.links.filter((link) => link.skipped === undefined).map((link) => fingerprint(link.url)),
    );
    assert.deepEqual(trace, followed);
  });

  test('replays the trace: a table of miss rates per size and policy, and an SVG chart', async () => {
    const study = await runCli(['cache-study', '--out', out, '--label', 'fixture tree']);
    assert.equal(study.code, 0, study.stderr);
    const lines = study.stdout.split('\n');
    assert.match(lines[0]!, /^URL-seen trace: [\d,]+ look-ups of 60 URLs/);
    assert.match(study.stdout, /\n {5}size {5}LRU {3}CLOCK {2}RANDOM {2}STATIC {5}MIN\n/);
    const rows = lines.filter((l) => /^ +(\d+|\d+K|\d+M)( +\d+\.\d\d%){5}$/.test(l));
    assert.deepEqual(
      rows.map((r) => r.trim().split(/ +/)[0]),
      ['256', '512', '1K', '2K', '4K', '8K', '16K', '32K', '64K', '128K', '256K', '512K', '1M'],
    );
    // 60 URLs fit in every size: each policy misses only the first look-ups
    const floor = /infinite cache \(each URL's first look-up\): (\d+\.\d\d%)/.exec(study.stdout)![1]!;
    for (const row of rows) assert.deepEqual(row.trim().split(/ +/).slice(1), Array(5).fill(floor));
    assert.match(
      study.stdout,
      new RegExp(`the crawl itself \\(summary\\.json\\): ${floor.replace('.', '\\.')} misses`),
    );
    const chart = join(out, 'cache-study.svg');
    assert.ok(statSync(chart).size > 1000);
    const svg = readFileSync(chart, 'utf8');
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.ok(svg.includes('fixture tree: '));

    const json = await runCli([
      'cache-study',
      '--out',
      out,
      '--sizes',
      '0-4',
      '--json',
      '--chart',
      join(out, 'small.svg'),
    ]);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.deepEqual(
      report.study.rows.map((r: { size: number }) => r.size),
      [1, 2, 4, 8, 16],
    );
    assert.ok(
      report.study.rows[0].missRate.LRU > report.study.compulsoryMissRate,
      'one URL of room misses more',
    );
    assert.ok(existsSync(join(out, 'small.svg')));
  });

  test('bad arguments and a crawl without a trace exit 1 with a message', async () => {
    const noTrace = tempDir();
    const crawl = await runCli(crawlArgs(noTrace, '--no-seen-trace', '--max-pages', '5'));
    assert.equal(crawl.code, 0, crawl.stderr);
    assert.equal(existsSync(join(noTrace, 'url-seen.trace')), false);
    const missing = await runCli(['cache-study', '--out', noTrace]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /has no url-seen\.trace .*--no-seen-trace/);
    const sizes = await runCli(['cache-study', '--out', out, '--sizes', '9-3']);
    assert.equal(sizes.code, 1);
    assert.match(sizes.stderr, /--sizes expects A-B/);
    const noOut = await runCli(['cache-study']);
    assert.equal(noOut.code, 1);
    assert.match(noOut.stderr, /--out is required/);
    const help = await runCli(['cache-study', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: crawlstack cache-study --out DIR/);
  });
});
