/**
 * The scale bench scaled down (issue 21, item 6; `npm run bench:scale` is the full size): 200
 * small hosts of 5 pages and one host of 1,000 URLs in one crawl, the FIFO scan window at 250.
 * With the group bound (back-queues.ts) no small host starves behind the big one and nothing is
 * lost. Without it (FRONTIER_GROUP_LIMIT=100000, as before bounded back queues), the big host's
 * backlog fills the scan window and every small host queued after it waits until the big host has
 * nearly drained: its longest wait grows to the big host's crawl time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditClaims } from '../../../bench/lib/claim-audit.ts';
import { type ScaleWeb, scaleFigures, serveScaleWeb } from '../../../bench/lib/scale-web.ts';
import { TUNING_ENV } from '../../../functions/cloud/env.ts';
import type { Pipeline } from './helpers.ts';
import { startPipeline } from './helpers.ts';

const HOSTS = 200;
const BIG_URLS = 1000;
/** Links per page of the big host: its frontier passes the scan window after three batches. */
const FANOUT = 50;
const SCAN_WINDOW = 250;
const DELAY_MS = 10;
/**
 * A small host's longest wait between two of its requests, at most, as a share of the big host's
 * crawl (first request to last): with the bound, a few turns of the hosts crawled side by side
 * (measured 11-20%); without it, until the big host's backlog fits in the scan window (75% here).
 */
const MAX_SMALL_WAIT_SHARE = 0.4;

describe('pipeline: 200 small hosts beside one of 1,000 URLs, FIFO scan window 250', () => {
  let pipeline: Pipeline;
  let web: ScaleWeb;
  before(async () => {
    web = await serveScaleWeb({ hosts: HOSTS, bigUrls: BIG_URLS, fanout: FANOUT });
    pipeline = await startPipeline({
      limits: { fifoScanWindow: SCAN_WINDOW },
      // The seam that shows what the bound prevents; unset, the worker uses FRONTIER_GROUP_LIMIT.
      env: process.env[TUNING_ENV.groupLimit]
        ? { [TUNING_ENV.groupLimit]: process.env[TUNING_ENV.groupLimit]! }
        : {},
    });
  });
  after(async () => {
    await pipeline?.stop();
    await web?.close();
  });

  it('starves no small host behind the big one and loses no URL', async () => {
    const started = performance.now();
    const id = await pipeline.startCrawl({
      seeds: web.seeds,
      scope: 'any',
      allowPrivate: true,
      delayMs: DELAY_MS,
      sitemaps: false,
      soft404Probe: false,
    });
    const view = await pipeline.waitForStatus(id, ['done', 'failed'], 240_000);
    const figures = scaleFigures(web, {
      crawlId: id,
      seconds: (performance.now() - started) / 1000,
      pages: view.counters.fetched,
      crawlLost: view.lost ?? 0,
      metrics: pipeline.local.metrics(),
    });
    const summary = JSON.stringify({ ...figures, status: view.status }, null, 1);
    assert.equal(view.status, 'done', summary);
    assert.equal(figures.lost, 0, summary);
    assert.equal(figures.crawlLost, 0, summary);
    assert.ok(figures.smallWait.ms <= MAX_SMALL_WAIT_SHARE * figures.big.spanSeconds * 1000, summary);
    console.log(summary);
    // Every claim once, and every claimed URL archived: two claims of one container racing for a
    // host's log claimed a URL twice (docs/cloud.md, "Claims of one container racing").
    const { resources } = pipeline.local.provisioned;
    const tables = { crawl: String(resources.CrawlTable?.name), url: String(resources.UrlTable?.name) };
    const audit = await auditClaims(pipeline.clients, tables, pipeline.bucket, id);
    assert.ok(audit.claimed >= HOSTS * 5 + BIG_URLS, `the audit read the crawl's claims (${audit.claimed})`);
    assert.equal(audit.claimedTwice, 0, 'no URL claimed twice');
    assert.deepEqual(audit.unfinished, [], 'every claimed URL has a page record');
  });
});
