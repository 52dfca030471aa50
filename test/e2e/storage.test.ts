/**
 * The disk fills up mid-crawl (a small tmpfs, so ENOSPC and SQLITE_FULL come from the kernel; or
 * pages.jsonl pointed at /dev/full where mounting is not allowed): the crawl stops with exit 2 and
 * one line saying what failed and what to do, records no page outcome for it, and once there is
 * room the same command fetches the pages it did not record, and what they link to.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PageRecord } from '../../functions/core/types.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { assertUnique, buildCli, readJsonl, runCli, tempDir } from './helpers.ts';

const PAGES = 150;

/** A tmpfs of `size` (e.g. `400k`) at a fresh folder, or undefined when mounting is not allowed. */
function mountTmpfs(size: string): { dir: string; resize(size: string): void; close(): void } | undefined {
  const dir = tempDir('crawlstack-tmpfs-');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mounted.status !== 0) return undefined;
  return {
    dir,
    resize(newSize) {
      const result = spawnSync('mount', ['-o', `remount,size=${newSize}`, dir], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
    },
    close() {
      spawnSync('umount', [dir]);
    },
  };
}

describe('a full disk stops the crawl cleanly, and the crawl resumes once there is room', () => {
  let site: SiteServer;
  const mounts: { close(): void }[] = [];

  before(async () => {
    // Pages of ~4 KB that do not compress, in a tree of fan-out 3.
    const table: Record<string, { title: string; links: string[]; body: string }> = {};
    for (let i = 0; i < PAGES; i++) {
      const links = [1, 2, 3].map((k) => i * 3 + k).filter((j) => j < PAGES);
      table[`/p/${i}`] = {
        title: `p${i}`,
        links: links.map((j) => `/p/${j}`),
        body: `<p>${randomBytes(3000).toString('base64')}</p>`,
      };
    }
    [site] = (await startSites(['127.0.0.82'], () => [siteRoutes(table)])) as [SiteServer];
    await buildCli();
  });
  after(async () => {
    for (const mount of mounts) mount.close();
    await closeAll([site]);
  });

  const crawlArgs = (out: string, ...extra: string[]) => [
    'crawl',
    `${site.origin}/p/0`,
    '--out',
    out,
    '--allow-private',
    '--delay',
    '0',
    '--quiet',
    '--no-sitemaps',
    ...extra,
  ];

  /** The failed run's output: one message line, no stack, and only whole, honest page lines. */
  function assertCleanStop(result: { code: number | null; stderr: string }, out: string, message: RegExp) {
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1, `one line:\n${result.stderr}`);
    assert.match(result.stderr, message);
    assert.match(result.stderr, /run the same command again to resume/);
    assert.doesNotMatch(result.stderr, /cannot rollback|\n\s+at |internal/);
    const pages = readJsonl<PageRecord>(join(out, 'pages.jsonl'));
    assert.ok(pages.length < PAGES, `stopped early (${pages.length} pages)`);
    for (const page of pages)
      assert.equal(page.status, 200, `${page.url}: ${page.reason} ${page.detail ?? ''}`);
  }

  /** The resumed run: every page exactly once, all fetched. */
  async function assertResumed(out: string, ...extra: string[]) {
    const result = await runCli(crawlArgs(out, ...extra), { timeoutMs: 60_000 });
    assert.equal(result.code, 0, result.stderr);
    const pages = readJsonl<PageRecord>(join(out, 'pages.jsonl'));
    const urls = assertUnique(
      pages.map((p) => p.url),
      'pages.jsonl URLs',
    );
    assert.equal(urls.size, PAGES);
    assert.ok(pages.every((p) => p.status === 200));
  }

  test('ENOSPC while writing the WARC or JSON Lines files', async (t) => {
    const fs = mountTmpfs('400k');
    if (fs === undefined)
      return t.skip('mount is not allowed here (the /dev/full test covers the same path)');
    mounts.push(fs);
    const out = join(fs.dir, 'out');
    const result = await runCli(crawlArgs(out), { timeoutMs: 60_000 });
    assertCleanStop(
      result,
      out,
      // Whichever write meets the full disk first: an output file, or the state's database.
      new RegExp(
        `^crawlstack crawl: no space left (on the device of ${out} \\(ENOSPC writing ${out}/|for the crawl state \\(database or disk is full, in ${out}/state\\.sqlite)`,
      ),
    );
    fs.resize('16m');
    await assertResumed(out);
  });

  test('SQLITE_FULL while committing a step (the real error, not "cannot rollback")', async (t) => {
    const fs = mountTmpfs('200k');
    if (fs === undefined) return t.skip('mount is not allowed here');
    mounts.push(fs);
    const out = join(fs.dir, 'out');
    const result = await runCli(crawlArgs(out, '--no-warc'), { timeoutMs: 60_000 });
    assertCleanStop(
      result,
      out,
      new RegExp(
        `^crawlstack crawl: no space left for the crawl state \\(database or disk is full, in ${out}/state\\.sqlite\\)`,
      ),
    );
    fs.resize('16m');
    await assertResumed(out, '--no-warc');
  });

  test('pages.jsonl on a device that is always full (/dev/full), no mount needed', async (t) => {
    if (!existsSync('/dev/full')) return t.skip('no /dev/full');
    const out = join(tempDir(), 'out');
    mkdirSync(out);
    symlinkSync('/dev/full', join(out, 'pages.jsonl'));
    const result = await runCli(crawlArgs(out), { timeoutMs: 60_000 });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `^crawlstack crawl: no space left on the device of ${out} \\(ENOSPC writing ${out}/pages\\.jsonl\\)`,
      ),
    );
    rmSync(join(out, 'pages.jsonl'));
    await assertResumed(out);
  });
});
