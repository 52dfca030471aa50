/**
 * What a `kill -9` leaves while a step's outcome is in and its commit has not run: another step
 * commits meanwhile, and its checkpoint (the output files' committed sizes) must not cover
 * anything of the step still waiting. The folder is copied at that moment (all writes are
 * synchronous, so the copy is what the kernel holds after a kill), then the copy is resumed:
 * every page once in every output file, the WARC file and its index included.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CrawlDb } from '../../functions/adapters/local/crawl-db.ts';
import type { QualitySnapshot } from '../../functions/core/quality/crawl-quality.ts';
import type { CrawlTask, LinkRecord, PageRecord } from '../../functions/core/types.ts';
import { EmbeddedCrawler } from '../../functions/embedded/embedded-crawler.ts';
import { eventually, type SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, spreadTree, startSites } from '../fixtures/sites.ts';
import { assertUnique, assertWarcMatchesPages, readJsonl, readWarc, tempDir, testConfig } from './helpers.ts';

describe('kill -9 while a step waits for its commit', () => {
  let sites: SiteServer[];
  before(async () => {
    sites = await startSites(['127.0.0.76', '127.0.0.77'], (origins) => [
      // The seed's own host serves a slow page; the other host's page is in long before it.
      siteRoutes({
        '/': { title: 'home', links: ['/slow', `${origins[1]}/fast`] },
        '/slow': { title: 'slow', delayMs: 300 },
      }),
      siteRoutes({ '/fast': { title: 'fast' } }),
    ]);
  });
  after(() => closeAll(sites));

  test('a step committed meanwhile does not keep the waiting step’s WARC record', async () => {
    const [home, other] = sites as [SiteServer, SiteServer];
    const out = tempDir();
    const image = tempDir();
    const config = testConfig({
      seeds: [`${home.origin}/`],
      scope: 'any',
      concurrency: 2,
      extract: { heading: 'h1' },
    });
    const fast = `${other.origin}/fast`;
    const slow = `${home.origin}/slow`;
    const lines = () => readFileSync(join(out, 'pages.jsonl'), 'utf8');
    let copied = false;
    // The fast page's step waits until the slow page's step has committed, then the folder is
    // copied: a kill -9 at that moment.
    const beforeCommit = async (task: CrawlTask, kind: string) => {
      if (task.url !== fast || kind !== 'done') return;
      await eventually(() => (lines().includes(`"url":"${slow}"`) ? true : undefined), 5000, 'the slow page');
      cpSync(out, image, { recursive: true });
      copied = true;
    };
    await new EmbeddedCrawler({ config, outDir: out, beforeCommit }).run();
    assert.ok(copied, 'the folder was copied while the fast page waited');
    assert.doesNotMatch(
      readFileSync(join(image, 'pages.jsonl'), 'utf8'),
      /\/fast"/,
      'the copy holds no line of the waiting step',
    );

    const resumed = await new EmbeddedCrawler({ config, outDir: image }).run();
    assert.equal(resumed.resumed, true);
    const pages = readJsonl<PageRecord>(join(image, 'pages.jsonl'));
    assert.deepEqual(
      [
        ...assertUnique(
          pages.map((p) => p.url),
          'pages.jsonl URLs',
        ),
      ].sort(),
      [`${home.origin}/`, slow, fast].sort(),
    );
    const links = readJsonl<LinkRecord>(join(image, 'links.jsonl'));
    assertUnique(
      links.map((l) => l.from),
      'links.jsonl pages',
    );
    const rows = readJsonl<{ url: string }>(join(image, 'dataset.jsonl'));
    assertUnique(
      rows.map((r) => r.url),
      'dataset.jsonl URLs',
    );
    assert.equal(rows.length, 3);
    // One response record per page: the waiting step's record is written again on resume, so
    // a copy of the folder must not hold the first one.
    await assertWarcMatchesPages(image, pages);
    const responses = (await readWarc(image)).filter(
      (e) => e.type === 'response' && !e.uri?.endsWith('/robots.txt'),
    );
    assertUnique(
      responses.map((e) => e.uri),
      'WARC response records',
    );
    const index = readFileSync(join(image, 'warc', 'index.cdxj'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.includes('robots.txt'));
    assert.equal(index.length, 3, `index.cdxj:\n${index.join('\n')}`);
  });

  test('the detectors\u2019 state saved meanwhile does not hold what the waiting step taught them', async () => {
    // Past 500 steps the crawl saves the detectors' state. A page taught them what it is (its
    // SimHash, its template's count) before its commit; held there while the save runs and the
    // folder is copied, it is fetched and taught again by the resumed copy: it must count once.
    const PAGES = 700;
    const tree = spreadTree(PAGES, 3);
    const treeSites = await startSites(['127.0.0.78', '127.0.0.79', '127.0.0.80', '127.0.0.81'], tree.build);
    try {
      const origins = treeSites.map((s) => s.origin);
      const out = tempDir();
      const image = tempDir();
      // trapDetectors: the link-generator detector counts each page under its template.
      const config = testConfig({
        seeds: [`${origins[0]}/p/0`],
        scope: 'any',
        concurrency: 4,
        trapDetectors: true,
      });
      // A page with few descendants, so that nearly all the crawl commits while it waits.
      const held = tree.pages(origins)[200]!.url;
      const lineCount = () => readFileSync(join(out, 'pages.jsonl'), 'utf8').split('\n').length - 1;
      let copied = false;
      const beforeCommit = async (task: CrawlTask, kind: string) => {
        if (task.url !== held || kind !== 'done') return;
        await eventually(() => (lineCount() >= 600 ? true : undefined), 20_000, '600 pages');
        cpSync(out, image, { recursive: true });
        copied = true;
      };
      await new EmbeddedCrawler({ config, outDir: out, beforeCommit }).run();
      assert.ok(copied, 'the folder was copied while the page waited');

      await new EmbeddedCrawler({ config, outDir: image }).run();
      const pages = readJsonl<PageRecord>(join(image, 'pages.jsonl'));
      assert.equal(
        assertUnique(
          pages.map((p) => p.url),
          'pages.jsonl URLs',
        ).size,
        PAGES,
      );
      const db = new CrawlDb(join(image, 'state.sqlite'));
      const saved = db.getMeta<QualitySnapshot>('quality');
      db.close();
      const counted = (saved?.linkGenerators?.templates ?? []).reduce((sum, row) => sum + row[2], 0);
      assert.equal(counted, PAGES, 'pages the link-generator detector counted');
    } finally {
      await closeAll(treeSites);
    }
  });
});
