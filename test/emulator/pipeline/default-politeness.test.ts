/**
 * A crawl at the default politeness (1 s per host, delay factor 5) through the whole stack with
 * the template's redrive (maxReceiveCount 10, batches of 10): issue 8, item 2. Before the fix, the
 * records at the back of a host's batches were deferred again and again (one record per host per
 * batch may be fetched), each deferral a receive, until SQS moved them to the DLQ unrecorded:
 * 20 seeds on one host lost 2. Now a message with few receives left is re-sent instead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { type Pipeline, pageRequests, startPipeline } from './helpers.ts';

const SEEDS = 20;

describe('pipeline: a crawl at the default politeness', () => {
  let pipeline: Pipeline;
  let site: SiteServer;
  before(async () => {
    pipeline = await startPipeline();
    site = await startSite((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>${req.url}</title><p>page ${req.url} of a site with twenty pages</p>`);
    }, '127.0.0.21');
  });
  after(async () => {
    await pipeline?.stop();
    await site?.close();
  });

  it('loses no URL to the DLQ: 20 seeds on one host, every one fetched once, counters add up', async () => {
    const seeds = Array.from({ length: SEEDS }, (_, i) => `${site.origin}/s${i}`);
    // Defaults for politeness (delayMs 1000, delayFactor 5); only the private address is allowed.
    const id = await pipeline.startCrawl({ seeds, allowPrivate: true, soft404Probe: false, sitemaps: false });
    const done = await pipeline.waitForStatus(id, ['done', 'failed'], 120_000);
    assert.equal(done.status, 'done');
    const { counters } = done;
    assert.equal(counters.discovered, SEEDS);
    assert.equal(counters.finished, SEEDS, JSON.stringify(counters));
    assert.equal(counters.fetched, SEEDS);
    assert.equal(counters.dlq, 0);
    assert.equal(done.lost, undefined, 'nothing lost');
    const requested = pageRequests(site.log).map((r) => r.path);
    assert.equal(requested.length, SEEDS, 'every page fetched once');
    assert.equal(new Set(requested).size, SEEDS);
    assert.equal(site.maxInFlight(), 1);
    const letters = await pipeline.deadLetters(0, 1000);
    assert.equal(letters.length, 0, 'the DLQ is empty');
  });
});
