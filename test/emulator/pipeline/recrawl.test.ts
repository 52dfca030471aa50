/**
 * A recrawl round on the stand-in (docs/recrawl.md, cloud): the first crawl's pages are folded
 * into its archive by the archiver; POST /crawls/{id}/recrawl starts a round, a crawl of its own,
 * whose worker sends each page's validators back. A 304 and an identical payload become WARC
 * revisit records, the 304's stored links are followed (a page linked only by it is reached),
 * and the round's summary says what changed, what did not, what is gone and what is new.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ETAG, LAST_MODIFIED, live, route } from '../../fixtures/recrawl-site.ts';
import { type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { type ListedPage, type Pipeline, startPipeline } from './helpers.ts';

async function eventually<T>(
  read: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('pipeline: a recrawl round of a finished crawl', () => {
  let pipeline: Pipeline;
  let site: SiteServer;
  before(async () => {
    pipeline = await startPipeline();
    site = await startSite(route, '127.0.0.71');
  });
  after(async () => {
    await pipeline?.stop();
    await site?.close();
  });

  const base = { allowPrivate: true, delayMs: 0, delayFactor: 0, soft404Probe: false, sitemaps: false };

  it('revisits with validators: 304 and identical payloads as revisit records, carried links, a summary', async () => {
    // /hidden is excluded from the first crawl: only /a links it, so only carried links reach it.
    const first = await pipeline.startCrawl({
      ...base,
      seeds: [`${site.origin}/`],
      exclude: ['/hidden$'],
      keepArchive: true,
    });
    await pipeline.waitForStatus(first, ['done'], 60_000);
    assert.equal(
      (await pipeline.api('POST', `/crawls/${first}/recrawl`, { seeds: ['http://x/'] })).status,
      400,
    );
    // The archiver folds pages into the archive as it indexes them: wait until all five are.
    await eventually(
      async () => ((await pipeline.pages(first)).length >= 5 ? true : undefined),
      30_000,
      'index',
    );

    live.version = 2;
    live.gone = true;
    const before = site.log.length;
    const started = await pipeline.api('POST', `/crawls/${first}/recrawl`, {
      exclude: [],
      recrawlSchedule: 'full',
    });
    assert.equal(started.status, 201, JSON.stringify(started.json));
    const round = started.json.id as string;
    assert.notEqual(round, first);
    assert.deepEqual(
      { ...(started.json.recrawl as object) },
      { archive: first, round: 1, from: first, schedule: 'full', known: 5, planned: 5 },
    );
    const done = await pipeline.waitForStatus(round, ['done'], 60_000);

    const requests = site.log.slice(before);
    assert.equal(requests.find((r) => r.path === '/a')?.headers['if-none-match'], ETAG);
    assert.equal(requests.find((r) => r.path === '/a')?.headers['if-modified-since'], LAST_MODIFIED);
    assert.equal(requests.find((r) => r.path === '/b')?.headers['if-none-match'], undefined);
    const { recrawl } = done as typeof done & { recrawl: Record<string, number> };
    assert.equal(recrawl.notModified, 1, JSON.stringify(recrawl));
    assert.equal(recrawl.unchanged, 2, 'the home page and /b: same payload');
    assert.equal(recrawl.changed, 1, 'a 304 is never a change');
    assert.equal(recrawl.gone, 1);
    assert.equal(recrawl.new, 2, '/hidden (through the 304) and /new (through the changed /c)');

    const pages = await eventually(
      async () => {
        const listed = await pipeline.pages(round);
        return listed.length >= 7 ? listed : undefined;
      },
      30_000,
      "the round's index",
    );
    const byPath = new Map<string, ListedPage>(pages.map((p) => [new URL(p.url).pathname, p]));
    assert.ok(byPath.has('/hidden'), 'a page linked only by the 304 page is reached');
    assert.equal(byPath.get('/a')?.change, 'not-modified');
    assert.equal(byPath.get('/b')?.change, 'unchanged');
    assert.equal(byPath.get('/gone')?.change, 'gone');

    const a = await pipeline.warcRecord(byPath.get('/a')!);
    assert.match(a, /^WARC-Type: revisit\r$/m);
    assert.match(a, /^WARC-Profile: http:\/\/netpreserve\.org\/warc\/1\.1\/revisit\/server-not-modified\r$/m);
    assert.match(a, new RegExp(`^WARC-Refers-To-Target-URI: ${site.origin}/a\\r$`, 'm'));
    assert.match(a, /^WARC-Payload-Digest: sha1:[A-Z2-7]{32}\r$/m, "the first crawl's digest");
    assert.match(a, /^HTTP\/1\.1 304 /m);
    const b = await pipeline.warcRecord(byPath.get('/b')!);
    assert.match(
      b,
      /^WARC-Profile: http:\/\/netpreserve\.org\/warc\/1\.1\/revisit\/identical-payload-digest\r$/m,
    );
    assert.doesNotMatch(b, /<title>/, 'no payload stored again');
    const c = await pipeline.warcRecord(byPath.get('/c')!);
    assert.match(c, /^WARC-Type: response\r$/m);

    // Round 2 from the round: the same archive, the next number; /gone is not planned again.
    const next = await pipeline.api('POST', `/crawls/${round}/recrawl`, { recrawlSchedule: 'full' });
    assert.equal(next.status, 201, JSON.stringify(next.json));
    assert.deepEqual(
      { ...(next.json.recrawl as object) },
      { archive: first, round: 2, from: round, schedule: 'full', known: 7, planned: 6 },
    );
    await pipeline.waitForStatus(next.json.id as string, ['done'], 60_000);
  });
});
