/**
 * Deep crawls on the stand-in with Lambda's recursive loop detection at AWS's limit (16): the
 * frontier worker is fed by the queue it sends its links to, so a chain of pages each linking
 * only the next is one chain of events, one invocation per page. Without `RecursiveLoop: Allow`
 * on the worker, Lambda stops it at the 16th page and the 17th's message ends in the DLQ (issue
 * 21, item 1). What ends a runaway crawl instead are its budgets: an endless chain stops at its
 * depth budget.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { seededRandom } from '../../../localstack/chaos.ts';
import { type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { type Pipeline, pageRequests, QUICK_CRAWL, startPipeline } from './helpers.ts';

/** Pages of the finite chain: well past the limit of 16. */
const CHAIN = 60;
const WORDS =
  'river stone cloud garden lamp window silver harbor meadow engine paper candle forest bridge winter market thunder orchard ladder violin copper island feather canyon ribbon saddle compass lantern glacier pepper marble falcon'.split(
    ' ',
  );

/** Letters only (a path with digits reads as a numbered series, which AOPIC parks). */
function slug(n: number): string {
  let out = '';
  let rest = n;
  do {
    out = String.fromCharCode(97 + (rest % 26)) + out;
    rest = Math.floor(rest / 26);
  } while (rest > 0);
  return out;
}

function page(seed: number, title: string, next: string | undefined): string {
  const draw = seededRandom(seed);
  const words = Array.from({ length: 80 }, () => WORDS[Math.floor(draw() * WORDS.length)]).join(' ');
  const link = next === undefined ? '' : `<a href="${next}">next</a>`;
  return `<!doctype html><title>${title}</title><p>${words}</p>${link}`;
}

describe('pipeline: a crawl deeper than Lambda’s recursion limit', () => {
  let pipeline: Pipeline;
  let site: SiteServer;
  before(async () => {
    pipeline = await startPipeline();
    // /chain/a -> /chain/b -> ... (CHAIN pages, the last links nowhere); /endless/a -> ... forever.
    site = await startSite((req, res) => {
      const match = /^\/(chain|endless)\/([a-z]+)$/.exec(req.url ?? '');
      if (match === null) {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<html><body>not here</body></html>');
        return;
      }
      const [, kind, name] = match as unknown as [string, string, string];
      const n = [...name].reduce((sum, c) => sum * 26 + c.charCodeAt(0) - 97, 0);
      const next = kind === 'endless' || n + 1 < CHAIN ? `/${kind}/${slug(n + 1)}` : undefined;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page(kind === 'chain' ? n : 10_000 + n, `${kind} ${n}`, next));
    }, '127.0.0.61');
  });
  after(async () => {
    await pipeline?.stop();
    await site?.close();
  });

  const base = QUICK_CRAWL;

  it('runs with AWS’s recursion limit, the worker allowed to recurse', () => {
    const worker = pipeline.local.lambdas.FrontierWorker;
    assert.equal(worker?.recursionLimit, 16);
    assert.equal(worker?.recursiveLoop, 'Allow');
  });

  it('crawls a chain of 60 pages, each linking only the next, to its end', async () => {
    const id = await pipeline.startCrawl({ ...base, seeds: [`${site.origin}/chain/a`], maxDepth: 100 });
    const done = await pipeline.waitForStatus(id, ['done'], 90_000);
    const fetched = new Set(pageRequests(site.log).map((r) => r.path));
    const missing = Array.from({ length: CHAIN }, (_, n) => `/chain/${slug(n)}`).filter(
      (p) => !fetched.has(p),
    );
    assert.deepEqual(missing, [], 'every page of the chain fetched');
    assert.equal(done.lost ?? 0, 0);
    const stopped = pipeline.local.metrics().eventSources;
    assert.equal(
      Object.values(stopped).reduce((n, s) => n + s.recursionStopped, 0),
      0,
      'no record stopped by recursion detection',
    );
    assert.deepEqual(await pipeline.deadLetters(0, 500), []);
  });

  it('ends an endless chain at its depth budget (what stops a runaway crawl)', async () => {
    const before = pageRequests(site.log).filter((r) => r.path.startsWith('/endless/')).length;
    assert.equal(before, 0);
    const id = await pipeline.startCrawl({ ...base, seeds: [`${site.origin}/endless/a`], maxDepth: 20 });
    await pipeline.waitForStatus(id, ['done'], 60_000);
    const endless = pageRequests(site.log).filter((r) => r.path.startsWith('/endless/'));
    // Depths 0..20: 21 pages, then the crawl is done with nothing left in flight.
    assert.equal(endless.length, 21);
  });
});
