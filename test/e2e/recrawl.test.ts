/**
 * Recrawling a finished crawl, in-process against a loopback site whose pages answer conditional
 * GETs (or ignore them), change, disappear: the validators sent back byte for byte, the verdicts,
 * the revisit records warcio reads and the index that points at them, links of a 304 page
 * carried forward, new and gone pages, and a second round's archive state.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { WARCParser } from 'warcio';
import { RecrawlArchive } from '../../functions/adapters/local/recrawl-archive.ts';
import type { PageRecord } from '../../functions/core/types.ts';
import { recrawl } from '../../functions/embedded/recrawl.ts';
import { ETAG, LAST_MODIFIED, live, route } from '../fixtures/recrawl-site.ts';
import { type SiteServer, startSite } from '../fixtures/site-server.ts';
import { crawl, readJsonl, tempDir } from './helpers.ts';

async function warcRecords(dir: string) {
  const entries: { type: string; uri: string | null; headers: Map<string, string>; payload: number }[] = [];
  const { readdirSync } = await import('node:fs');
  for (const file of readdirSync(join(dir, 'warc')).filter((f) => f.endsWith('.warc.gz'))) {
    for await (const record of new WARCParser([readFileSync(join(dir, 'warc', file))])) {
      const payload = await record.readFully(false);
      const headers = new Map<string, string>();
      for (const [name, value] of record.warcHeaders.headers) headers.set(name.toLowerCase(), value);
      entries.push({
        type: record.warcType ?? '',
        uri: record.warcTargetURI ?? null,
        headers,
        payload: payload.length,
      });
    }
  }
  return entries;
}

describe('recrawl (embedded)', () => {
  let site: SiteServer;
  let out: string;
  let first: PageRecord[];

  before(async () => {
    site = await startSite(route);
    out = tempDir('crawlstack-recrawl-');
    // /hidden is excluded from the first crawl: only /a links it, so only carried links reach it.
    const run = await crawl({ seeds: [`${site.origin}/`], exclude: ['/hidden$'] }, { outDir: out });
    first = run.pages;
  });
  after(() => site.close());

  test("the first crawl records each page's validators", () => {
    const a = first.find((p) => p.url === `${site.origin}/a`);
    assert.equal(a?.etag, ETAG);
    assert.equal(a?.lastModified, LAST_MODIFIED);
    assert.equal(
      first.find((p) => p.url.endsWith('/hidden')),
      undefined,
    );
  });

  test('round 1: validators sent back exactly, verdicts, revisit records, carried links, new and gone', async () => {
    live.version = 2;
    live.gone = true;
    const before = site.log.length;
    const summary = await recrawl({ outDir: out, overrides: { exclude: [], recrawlSchedule: 'full' } });
    const requests = site.log.slice(before);
    const toA = requests.find((r) => r.path === '/a');
    assert.equal(toA?.headers['if-none-match'], ETAG);
    // The exact bytes the server sent: servers compare the date as a string or parse IMF-fixdate only.
    assert.equal(toA?.headers['if-modified-since'], LAST_MODIFIED);
    // /b sent no validators: nothing conditional is made up.
    const toB = requests.find((r) => r.path === '/b');
    assert.equal(toB?.headers['if-none-match'], undefined);
    assert.equal(toB?.headers['if-modified-since'], undefined);

    const pages = readJsonl<PageRecord>(join(summary.roundDir, 'pages.jsonl'));
    const change = (path: string) => pages.find((p) => p.url === `${site.origin}${path}`)?.change;
    assert.equal(change('/a'), 'not-modified');
    assert.equal(change('/b'), 'unchanged');
    assert.equal(change('/c'), 'changed');
    assert.equal(change('/gone'), 'gone');
    assert.equal(change('/'), 'unchanged');
    assert.equal(summary.notModified, 1);
    assert.equal(summary.unchanged, 2);
    assert.equal(summary.changed, 1, 'a 304 is never a change');
    assert.equal(summary.gone, 1);
    assert.deepEqual(summary.goneUrls, [`${site.origin}/gone`]);
    // /hidden: linked only by the unchanged /a (a 304 carries no links: they are the stored ones).
    // /new: linked by the changed /c.
    assert.deepEqual([...summary.newUrls].sort(), [`${site.origin}/hidden`, `${site.origin}/new`]);
    assert.equal(summary.new, 2);

    const records = await warcRecords(summary.roundDir);
    const revisits = records.filter((r) => r.type === 'revisit');
    const byUri = new Map(revisits.map((r) => [r.uri, r]));
    const a = byUri.get(`${site.origin}/a`);
    assert.ok(a, 'a revisit record for the 304');
    assert.equal(
      a.headers.get('warc-profile'),
      'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
    );
    assert.equal(a.headers.get('warc-refers-to-target-uri'), `${site.origin}/a`);
    const firstA = first.find((p) => p.url === `${site.origin}/a`)!;
    assert.equal(a.headers.get('warc-refers-to-date'), `${firstA.fetchedAt!.slice(0, 19)}Z`);
    assert.match(a.headers.get('warc-payload-digest') ?? '', /^sha1:[A-Z2-7]{32}$/);
    const b = byUri.get(`${site.origin}/b`);
    assert.equal(
      b?.headers.get('warc-profile'),
      'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
    );
    assert.equal(b?.payload, 0, 'no second copy of the payload');
    // The changed page is a full response record again.
    assert.ok(records.some((r) => r.type === 'response' && r.uri === `${site.origin}/c`));
    assert.equal(revisits.length, 3, 'revisits: /, /a, /b');

    // The index points at the revisit records, as pywb and warcio index them.
    const index = readFileSync(join(summary.roundDir, 'warc', 'index.cdxj'), 'utf8')
      .trim()
      .split('\n');
    const aLine = index
      .map((line) => JSON.parse(line.slice(line.indexOf('{'))))
      .find((j) => j.url === `${site.origin}/a`);
    assert.equal(aLine.mime, 'warc/revisit');
    assert.equal(aLine.status, '304');
    const aPage = pages.find((p) => p.url === `${site.origin}/a`)!;
    const bytes = readFileSync(join(summary.roundDir, 'warc', aLine.filename));
    const member = gunzipSync(
      bytes.subarray(Number(aLine.offset), Number(aLine.offset) + Number(aLine.length)),
    );
    const record = await WARCParser.parse([member]);
    assert.equal(record?.warcType, 'revisit');
    assert.deepEqual(aPage.warc, {
      file: aLine.filename,
      offset: Number(aLine.offset),
      length: Number(aLine.length),
    });
  });

  test('the archive state after round 1: history, last copy kept by a 304, gone pages', () => {
    const archive = new RecrawlArchive(join(out, 'recrawl.sqlite'));
    try {
      const a = archive.page(`${site.origin}/a`)!;
      assert.deepEqual([a.history.visits, a.history.changes], [1, 0]);
      assert.ok(a.copy?.ref?.file.startsWith('warc/'), "the 304 keeps the first crawl's copy");
      assert.equal(a.links?.[0]?.url, `${site.origin}/hidden`);
      const c = archive.page(`${site.origin}/c`)!;
      assert.deepEqual([c.history.visits, c.history.changes], [1, 1]);
      assert.ok(c.copy?.ref?.file.startsWith('recrawls/round-0001/warc/'));
      assert.equal(archive.page(`${site.origin}/gone`)?.gone, true);
      assert.equal(archive.page(`${site.origin}/new`)?.history.visits, 0);
      assert.deepEqual(archive.lastRound()?.merged, true);
    } finally {
      archive.close();
    }
  });

  test('a crawl without WARC files: no revisit record refers to a copy that was never stored', async () => {
    const bare = tempDir('crawlstack-recrawl-nowarc-');
    await crawl({ seeds: [`${site.origin}/a`], maxPages: 1 }, { outDir: bare, warc: false });
    const summary = await recrawl({ outDir: bare, overrides: { recrawlSchedule: 'full' } });
    assert.equal(summary.notModified, 1);
    const records = await warcRecords(summary.roundDir);
    assert.deepEqual(
      records.filter((r) => r.uri === `${site.origin}/a`).map((r) => r.type),
      ['request', 'response'],
    );
  });

  test('round 2 revisits live pages only; an unchanged site costs no bodies', async () => {
    const before = site.log.length;
    const summary = await recrawl({ outDir: out, overrides: { recrawlSchedule: 'full' } });
    assert.equal(summary.round, 2);
    const paths = site.log.slice(before).map((r) => r.path);
    assert.ok(!paths.includes('/gone'), 'a gone page is not revisited');
    assert.equal(summary.changed, 0);
    assert.equal(summary.gone, 0);
    assert.equal(summary.new, 0);
    // /c changed once in two visits; its Last-Modified is now, its body the same.
    assert.equal(summary.notModified + summary.unchanged, summary.planned);
  });
});
