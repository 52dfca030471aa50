/**
 * A crawl ends on its own work (issue 21, item 7): a small crawl beside a big one that keeps the
 * queue busy (one host at a Crawl-delay of 2 s) is `done` within one scheduler tick of its last
 * page record reaching the archive, while the big one still runs. Before, it waited for the whole
 * queue to be empty or for its counters to stand still longer than the visibility timeout plus the
 * worker timeout (4.5 minutes).
 *
 * Nothing expires in SQS (issue 21, item 4): with the queue's retention scaled down to 20 s, a host
 * at a Crawl-delay of 1 s with 50 URLs (50 s of fetching) is crawled whole, none lost: a message
 * waits behind at most FRONTIER_GROUP_LIMIT (10) others of its host. The same crawl with the bound
 * raised to 1,000 loses its tail, which shows the bound is what saves it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { S3Objects } from '../../../functions/adapters/aws/s3-objects.ts';
import { archivedPages } from '../../../functions/cloud/use-cases/archived-pages.ts';
import { eventually, type SiteServer } from '../../fixtures/site-server.ts';
import { type Pipeline, pageRequests, startFixtureSite, startPipeline } from './helpers.ts';

/** The stand-in's scheduler period here (the stack's is a minute). */
const TICK_MS = 2000;
/** What a tick's own run and this test's polling add to the bound on a loaded machine. */
const SLACK_MS = 2000;

/** Words of its own for each page: pages alike would be taken for a link generator's. */
function text(seed: string): string {
  return Array.from({ length: 60 }, (_, i) =>
    createHash('sha256').update(`${seed} ${i}`).digest('hex').slice(0, 7),
  ).join(' ');
}

/** A site whose home page links `n` pages, at a robots.txt Crawl-delay of `delay` seconds. */
function slowSite(host: string, n: number, delay?: number): Promise<SiteServer> {
  const paths = Array.from({ length: n }, (_, i) => `/p${i}`);
  return startFixtureSite(
    {
      host,
      ...(delay === undefined ? {} : { robots: `User-agent: *\nCrawl-delay: ${delay}\n` }),
      pages: { '/': paths },
      extra: Object.fromEntries(
        paths.map((p) => [p, { body: `<html><body><p>${text(host + p)}</p></body></html>` }]),
      ),
    },
    (link) => link,
  );
}

/** Polls a tenth of a second apart (the stand-in serves several crawls meanwhile). */
const pause = (): Promise<undefined> => new Promise((resolve) => setTimeout(() => resolve(undefined), 100));

const base = { allowPrivate: true, sitemaps: false, soft404Probe: false, delayMs: 20, delayFactor: 0 };

describe('pipeline: a crawl ends on its own work beside a busy one', () => {
  let pipeline: Pipeline;
  const sites: SiteServer[] = [];
  before(async () => {
    pipeline = await startPipeline({ scheduleRateMs: TICK_MS });
    sites.push(await slowSite('127.0.0.80', 40, 2));
    for (let i = 0; i < 5; i++) sites.push(await slowSite(`127.0.0.${70 + i}`, 3));
  });
  after(async () => {
    await pipeline?.stop();
    for (const site of sites) await site.close();
  });

  it('is done within one tick of its last page archived, while the big crawl keeps the queue busy', async () => {
    const [big, ...small] = sites;
    const bigId = await pipeline.startCrawl({ ...base, seeds: [`${big!.origin}/`] });
    const id = await pipeline.startCrawl({ ...base, seeds: small.map((s) => `${s.origin}/`) });
    const archive = new S3Objects(pipeline.clients.s3, pipeline.bucket);
    const pages = small.length * 4;
    // The moment the archive holds all its page records (polled at 100 ms)...
    const archivedAt = await eventually(
      async () => (((await archivedPages(archive, id)) ?? 0) >= pages ? Date.now() : await pause()),
      60_000,
      `${pages} page records archived`,
    );
    // ...and the moment the API says done.
    const done = await eventually(
      async () => {
        const view = await pipeline.status(id);
        return view.status === 'running' ? await pause() : { view, at: Date.now() };
      },
      60_000,
      'the small crawl to end',
    );
    const waited = done.at - archivedAt;
    console.log(`own-work: done ${waited} ms after its last page was archived (tick ${TICK_MS} ms)`);
    assert.equal(done.view.status, 'done');
    assert.equal(done.view.lost, undefined, 'nothing lost');
    assert.equal(done.view.counters.finished, pages);
    assert.equal(done.view.counters.discovered, pages);
    assert.equal((await pipeline.pages(id, 50)).length, pages, 'the API lists every page');
    assert.ok(waited <= TICK_MS + SLACK_MS, `done ${waited} ms after the last page was archived`);
    const other = await pipeline.status(bigId);
    assert.equal(other.status, 'running', 'the big crawl still keeps the queue busy');
    assert.ok(other.counters.queued > 0, 'with URLs of its own queued');
    for (const site of small)
      assert.equal(pageRequests(site.log).length, 4, `${site.origin}: each page once`);
  });
});

/** The retention crawl: one host, 50 URLs at a Crawl-delay of 1 s, SQS retention 20 s. */
async function retentionCrawl(groupLimit?: number) {
  const pipeline = await startPipeline({
    limits: { retentionSeconds: 20 },
    ...(groupLimit === undefined ? {} : { env: { FRONTIER_GROUP_LIMIT: String(groupLimit) } }),
  });
  const site = await slowSite('127.0.0.81', 50, 1);
  try {
    const id = await pipeline.startCrawl({ ...base, seeds: [`${site.origin}/`] });
    const view = await pipeline.waitForStatus(id, ['done', 'failed'], 240_000);
    return { view, fetched: new Set(pageRequests(site.log).map((r) => r.path)).size };
  } finally {
    await pipeline.stop();
    await site.close();
  }
}

describe('pipeline: nothing expires in SQS', () => {
  it('crawls a host whose queue outlasts the retention whole: every URL waits behind at most the group limit', async () => {
    const { view, fetched } = await retentionCrawl();
    assert.equal(view.status, 'done');
    assert.equal(view.lost, undefined, 'nothing lost');
    assert.equal(view.counters.finished, 51);
    assert.equal(fetched, 51, 'every page fetched');
  });

  it('loses the tail with the group limit raised to 1,000 (the bound is what saves it)', async () => {
    const { view, fetched } = await retentionCrawl(1000);
    console.log(`retention, group limit 1000: fetched ${fetched} of 51, lost ${view.lost ?? 0}`);
    assert.ok((view.lost ?? 0) > 0, 'URLs expired in SQS');
    assert.ok(fetched < 51);
  });
});
