/**
 * Resuming through the real CLI: `kill -9` in the middle of a crawl of 200 pages on four hosts,
 * then the same command again; Ctrl-C (SIGINT) with its exit code 130 and a clean resume; a
 * finished crawl run again; another crawl pointed at the same folder.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LinkRecord, PageRecord } from '../../functions/core/types.ts';
import { fingerprint } from '../../functions/core/url/fingerprint.ts';
import { decodeTrace } from '../../functions/core/url-seen/url-seen-trace.ts';
import { eventually, type SiteServer } from '../fixtures/site-server.ts';
import { closeAll, spreadTree, startSites } from '../fixtures/sites.ts';
import {
  assertUnique,
  assertWarcMatchesPages,
  buildCli,
  type CliProcess,
  isProbe,
  readJsonl,
  runCli,
  spawnCli,
  tempDir,
} from './helpers.ts';

const PAGES = 200;
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const tree = spreadTree(PAGES, 3);

function lineCount(path: string): number {
  if (!existsSync(path)) return 0;
  const text = readFileSync(path, 'latin1');
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Page paths each server saw, with how many times. */
function requestCounts(sites: readonly SiteServer[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const site of sites) {
    for (const path of site.paths()) {
      // robots.txt and the soft-404 probe are not pages (after a kill -9 a site may be probed again)
      if (path === '/robots.txt' || isProbe(path)) continue;
      const key = `${site.origin}${path}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/** Starts a crawl and stops it with `signal` once pages.jsonl holds `afterPages` lines. */
async function interrupt(args: string[], outDir: string, signal: NodeJS.Signals, afterPages: number) {
  const proc: CliProcess = await spawnCli(args);
  try {
    await eventually(
      () => (lineCount(join(outDir, 'pages.jsonl')) >= afterPages ? true : undefined),
      15_000,
      `${afterPages} pages before ${signal}`,
    );
  } catch (error) {
    proc.child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\nstderr: ${proc.stderr()}`);
  }
  proc.child.kill(signal);
  const exit = await proc.exited;
  return { exit, linesAtSignal: lineCount(join(outDir, 'pages.jsonl')), stderr: proc.stderr() };
}

describe('resume through the CLI', () => {
  let sites: SiteServer[];
  let expected: { url: string; depth: number; title: string }[];
  let seed: string;

  before(async () => {
    await buildCli();
  });

  const started: SiteServer[] = [];
  const startTree = async () => {
    sites = await startSites(HOSTS, tree.build);
    started.push(...sites);
    const origins = sites.map((s) => s.origin);
    expected = tree.pages(origins);
    seed = `${origins[0]}/p/0`;
  };
  const crawlArgs = (out: string) => [
    'crawl',
    seed,
    '--out',
    out,
    '--allow-private',
    '--scope',
    'any',
    '--delay',
    '20',
    '--delay-factor',
    '0',
    '--no-sitemaps',
    '--concurrency',
    '4',
    '--extract',
    'heading=h1',
    '--quiet',
  ];

  /** The checks every finished crawl of the tree must pass; `context` ends the message of a missing page. */
  async function assertComplete(out: string, context = '') {
    const pages = readJsonl<PageRecord>(join(out, 'pages.jsonl'));
    const urls = assertUnique(
      pages.map((p) => p.url),
      'pages.jsonl URLs',
    );
    // Name what is missing: a page lost across a kill says which one, and where in the tree.
    const missing = expected.filter((want) => !urls.has(want.url)).map((want) => want.url);
    if (missing.length > 0) assert.fail(describeMissing(out, missing, context));
    assert.equal(urls.size, PAGES);
    for (const want of expected) {
      const page = pages.find((p) => p.url === want.url);
      assert.ok(page, `${want.url} missing`);
      assert.equal(page.status, 200);
      assert.equal(page.title, want.title);
      assert.equal(page.depth, want.depth, `${want.url} depth`);
    }
    const links = readJsonl<LinkRecord>(join(out, 'links.jsonl'));
    assertUnique(
      links.map((l) => l.from),
      'links.jsonl pages',
    );
    assert.equal(links.length, PAGES);
    // The URL-seen trace holds the look-ups of committed steps only: their followed links, in order.
    const followed = links.flatMap((l) =>
      l.links.filter((k) => k.skipped === undefined).map((k) => fingerprint(k.url)),
    );
    assert.deepEqual(decodeTrace(readFileSync(join(out, 'url-seen.trace'))), followed);
    // dataset.jsonl is cut back with pages.jsonl: each page's row once.
    const rows = readJsonl<{ url: string; heading: string[] }>(join(out, 'dataset.jsonl'));
    assertUnique(
      rows.map((r) => r.url),
      'dataset.jsonl URLs',
    );
    assert.equal(rows.length, PAGES);
    for (const want of expected)
      assert.deepEqual(rows.find((r) => r.url === want.url)?.heading, [want.title]);
    const records = await assertWarcMatchesPages(out, pages);
    // One response record per page: a record written by a step that a kill cut off is not kept.
    assertUnique(
      records.filter((r) => r.type === 'response' && !r.uri?.endsWith('/robots.txt')).map((r) => r.uri),
      'WARC response records',
    );
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.state, 'done');
    assert.equal(summary.pages, PAGES);
    assert.equal(summary.queued, 0);
    return pages;
  }

  /**
   * Which pages are missing and why it might be: whether a page's links name each (and skip it),
   * and what the crawl's summary says is still queued.
   */
  function describeMissing(out: string, missing: readonly string[], context: string): string {
    const links = readJsonl<LinkRecord>(join(out, 'links.jsonl'));
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    const why = missing.map((url) => {
      const from = links.flatMap((l) =>
        l.links
          .filter((k) => k.url === url)
          .map((k) => `${l.from}${k.skipped ? ` (skipped: ${k.skipped})` : ''}`),
      );
      return `${url} <- ${from.length > 0 ? from.join(', ') : 'no page links to it'}`;
    });
    return (
      `pages.jsonl lacks ${missing.length} of ${PAGES} pages (summary: state ${summary.state}, ` +
      `queued ${summary.queued}, pages ${summary.pages}):\n${why.join('\n')}${context}`
    );
  }

  // closes what a failed test left open too (double close is harmless)
  after(() => closeAll(started));

  test('kill -9 mid-crawl, then the same command: every page once, nothing broken', async () => {
    await startTree();
    const out = tempDir();
    const killed = await interrupt(crawlArgs(out), out, 'SIGKILL', 50);
    assert.equal(killed.exit.signal, 'SIGKILL');
    assert.ok(killed.linesAtSignal < PAGES, 'killed before the end');

    const resumed = await runCli(crawlArgs(out));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /\(resumed\)/);
    await assertComplete(
      out,
      `\nkilled at ${killed.linesAtSignal} lines; stderr of the killed run: ${killed.stderr}; of the resumed run: ${resumed.stderr}`,
    );

    // Only requests in flight at the kill (at most one per host, so at most `concurrency`) repeat.
    const counts = requestCounts(sites);
    assert.equal(counts.size, PAGES);
    const repeated = [...counts].filter(([, n]) => n > 1);
    assert.ok(repeated.length <= 4, `repeated after the kill: ${JSON.stringify(repeated)}`);
    for (const [url, n] of repeated) assert.equal(n, 2, `${url} requested ${n} times`);
    await closeAll(sites);
  });

  test('Ctrl-C stops cleanly with exit 130; the same command resumes without repeating a request', async () => {
    await startTree();
    const out = tempDir();
    const stopped = await interrupt(crawlArgs(out), out, 'SIGINT', 40);
    assert.equal(stopped.exit.code, 130, stopped.stderr);
    assert.match(stopped.stderr, /run the same command again to resume/);
    assert.ok(stopped.linesAtSignal < PAGES);
    const interim = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    assert.equal(interim.state, 'interrupted');

    const resumed = await runCli(crawlArgs(out));
    assert.equal(resumed.code, 0, resumed.stderr);
    await assertComplete(out);
    const counts = requestCounts(sites);
    assert.equal(counts.size, PAGES);
    for (const [url, n] of counts) assert.equal(n, 1, `${url} requested ${n} times`);
    for (const site of sites) {
      assert.equal(
        site.paths().filter((p) => p === '/robots.txt').length,
        1,
        'robots.txt is kept across runs',
      );
      assert.equal(site.maxInFlight(), 1);
    }

    // A finished crawl run again does nothing and succeeds.
    const before = sites.map((s) => s.log.length);
    const pagesBefore = readFileSync(join(out, 'pages.jsonl'));
    const again = await runCli(crawlArgs(out));
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      sites.map((s) => s.log.length),
      before,
      'no request at all',
    );
    assert.deepEqual(readFileSync(join(out, 'pages.jsonl')), pagesBefore);

    // Another seed on the same folder is refused.
    const other = await runCli([
      'crawl',
      `${sites[1]!.origin}/p/1`,
      '--out',
      out,
      '--allow-private',
      '--quiet',
    ]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /holds another crawl/);
    assert.deepEqual(readFileSync(join(out, 'pages.jsonl')), pagesBefore);
    await closeAll(sites);
  });
});
