/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core (no browser
 * download). A full fixture snapshot renders every section; a real crawl with `--ui` shows its
 * pages live; `crawlstack ui --out DIR` shows the finished crawl. Saves a screenshot of the live
 * crawl (docs/img/dashboard.png when UPDATE_DASHBOARD_SCREENSHOT=1). Skipped, saying why, only
 * where no Chromium is installed.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { DashboardView } from '../../functions/core/dashboard-snapshot.ts';
import { bearerAuth, startCloudDashboard } from '../../functions/dashboard/cloud-dashboard.ts';
import { startDashboard } from '../../functions/dashboard/dashboard-server.ts';
import { eventually, type SiteServer } from '../fixtures/site-server.ts';
import { closeAll, startSites } from '../fixtures/sites.ts';
import { launchChromium, noBrowser, openPage, ringSite, rows, text, waitForText } from './browser.ts';
import { buildCli, ROOT, spawnCli, tempDir } from './helpers.ts';

/** Pages of the crawled site besides its home page: enough for the crawl to run ~10 s. */
const PAGES = 60;

const FIXTURE: DashboardView = {
  outDir: '/crawls/docs',
  seeds: ['https://docs.example/'],
  source: 'live',
  snapshot: {
    at: 1_800_000_000_000,
    state: 'running',
    elapsedMs: 3_723_000,
    pages: 12_345,
    skipped: 67,
    errors: 8,
    queued: 4_321,
    running: 3,
    hosts: 2,
    bytes: 250 * 1024 * 1024,
    duplicates: 12,
    pagesPerSecond: 42.5,
    rate: Array.from({ length: 60 }, (_, i) => ({
      elapsedMs: (i + 1) * 1000,
      pages: (i + 1) * 40,
      pagesPerSecond: 40,
    })),
    byStatus: { '200': 12_000, '404': 300, '503': 45 },
    byReason: { robots: 50, 'timeout-idle': 8, scope: 9 },
    linksSkipped: { scope: 900, nofollow: 20, calendar: 33 },
    hostTable: [
      {
        host: 'docs.example',
        queued: 4000,
        inFlight: false,
        nextAllowedAt: 1_800_000_001_500,
        fetched: 12_000,
        lastResponseMs: 87,
        errors: 5,
        lastError: 'http-503',
        crawlDelayMs: 2000,
        robots: { status: 'rules', detail: '200' },
        waitingFor: 'Retry-After',
      },
      {
        host: 'cdn.example',
        queued: 321,
        inFlight: true,
        fetched: 345,
        lastResponseMs: 12,
        errors: 0,
        robots: { status: 'allow-all', detail: '404' },
      },
    ],
    traps: [
      {
        reason: 'calendar',
        pattern: 'docs.example/events/{date}',
        count: 33,
        examples: ['https://docs.example/events/2031-01-01'],
      },
    ],
    topPages: [
      { url: 'https://docs.example/', importance: 0.25 },
      { url: 'https://docs.example/<script>alert(1)</script>', importance: 0.01 },
    ],
    urlSeen: { lookups: 100_000, cacheHits: 89_500, hitRate: 0.895 },
    memory: { rssBytes: 120 * 1024 * 1024, heapUsedBytes: 40 * 1024 * 1024 },
  },
};

/** The longest values the tiles show: a crawl of weeks, of millions of pages, near a TiB. */
const LONG: DashboardView = {
  ...FIXTURE,
  snapshot: {
    ...FIXTURE.snapshot,
    elapsedMs: 1000 * 3600 * 1000 - 1000,
    pages: 123_456_789,
    skipped: 12_345_678,
    errors: 1_234_567,
    queued: 98_765_432,
    running: 1_024,
    hosts: 1_234_567,
    bytes: 1023.9 * 1024 ** 4,
    pagesPerSecond: 12_345.6,
    urlSeen: { lookups: 1, cacheHits: 1, hitRate: 1 },
    memory: { rssBytes: 1023.9 * 1024 ** 2 },
  },
};

/** The tiles whose value does not fit (scrollWidth past clientWidth), with what they show. */
async function cutTiles(page: Page): Promise<string[]> {
  return page
    .locator('.tile .value')
    .evaluateAll((values) =>
      values
        .filter((v) => v.scrollWidth > v.clientWidth)
        .map((v) => `${v.id}: ${(v as unknown as { innerText: string }).innerText}`),
    );
}

/** A stand-in for the cloud API answering one crawl's list entry and snapshot. */
async function fakeCloudApi(view: DashboardView): Promise<{ url: string; close: () => Promise<void> }> {
  const id = '00000000-0000-4000-8000-000000000001';
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const body =
      path === '/crawls'
        ? { crawls: [{ id, status: 'running', createdAt: '2026-11-26T10:00:00.000Z', seeds: view.seeds }] }
        : path === `/crawls/${id}/snapshot`
          ? view.snapshot
          : undefined;
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('dashboard in Chromium', { skip: noBrowser }, () => {
  let browser: Browser;
  let site: SiteServer;
  const problems: string[] = [];

  before(async () => {
    browser = await launchChromium();
    // A small site that takes a few seconds to crawl one page at a time.
    [site] = (await startSites(['127.0.0.2'], () => [ringSite(PAGES, 60)])) as [SiteServer];
    await buildCli();
  });
  after(async () => {
    await browser?.close();
    await closeAll([site]);
  });

  const open = (url: string): Promise<Page> => openPage(browser, url, problems);

  test('renders every section of a full snapshot, as text', async () => {
    const server = await startDashboard({ view: () => FIXTURE });
    try {
      const page = await open(server.url);
      await waitForText(page, '#pages', (v) => v === '12,345');
      assert.equal(await text(page, '#state'), 'running');
      assert.equal(await text(page, '#rate'), '42.5');
      assert.equal(await text(page, '#queued'), '4,321');
      assert.equal(await text(page, '#inflight'), '3');
      assert.equal(await text(page, '#hitrate'), '89.5%');
      assert.equal(await text(page, '#memory'), '120.0 MiB');
      assert.equal(await text(page, '#bytes'), '250.0 MiB');
      assert.equal(await text(page, '#elapsed'), '1:02:03');
      assert.deepEqual(
        (await rows(page, 'status-table')).map((r) => r.slice(0, 2)),
        [
          ['200', '12,000'],
          ['404', '300'],
          ['503', '45'],
        ],
      );
      assert.deepEqual((await rows(page, 'reason-table'))[0]!.slice(0, 2), ['robots', '50']);
      assert.deepEqual((await rows(page, 'links-table'))[0]!.slice(0, 2), ['scope', '900']);
      assert.deepEqual(await rows(page, 'host-table'), [
        [
          'docs.example',
          '4,000',
          'in 1.5 s (Retry-After)',
          '87 ms',
          '12,000',
          '5 (http-503)',
          'rules (200)',
          '2.0 s',
        ],
        ['cdn.example', '321', 'in flight', '12 ms', '345', '0', 'allow-all (404)', '–'],
      ]);
      assert.deepEqual(await rows(page, 'trap-table'), [
        ['calendar', 'docs.example/events/{date}', '33', 'https://docs.example/events/2031-01-01'],
      ]);
      const top = await rows(page, 'top-table');
      assert.deepEqual(
        top[1],
        ['2', '0.01000', 'https://docs.example/<script>alert(1)</script>'],
        'URLs shown as text',
      );
      assert.equal(await page.locator('#top-table script').count(), 0);
      assert.equal(await page.locator('#chart canvas').count(), 1, 'uPlot drew the chart');
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      await server.close();
    }
  });

  test('at 1366x768 no tile cuts its value, on the embedded and the cloud dashboard', async (t) => {
    const embedded = await startDashboard({ view: () => LONG });
    const api = await fakeCloudApi(LONG);
    const cloud = await startCloudDashboard({ api: api.url, auth: bearerAuth('t'), everyMs: 500 });
    try {
      for (const url of [embedded.url, cloud.url]) {
        const page = await open(url);
        await page.setViewportSize({ width: 1366, height: 768 });
        await waitForText(page, '#pages', (v) => v === '123,456,789');
        assert.equal(await text(page, '#bytes'), '1023.9 TiB');
        assert.equal(await text(page, '#elapsed'), '999:59:59');
        assert.deepEqual(await cutTiles(page), [], `tiles cut at 1366x768 on ${url}`);
        if (url === cloud.url) assert.equal(await text(page, '#source'), 'from the cloud API');
        const shot = join(tempDir(), 'tiles-1366x768.png');
        await page.screenshot({ path: shot });
        t.diagnostic(`screenshot: ${shot}`);
        await page.close();
      }
      assert.deepEqual(problems, []);
    } finally {
      await cloud.close();
      await api.close();
      await embedded.close();
    }
  });

  test('crawl --ui: the page follows a real crawl live; crawlstack ui shows it finished', async () => {
    const out = tempDir();
    const crawl = await spawnCli([
      'crawl',
      `${site.origin}/`,
      '--out',
      out,
      '--allow-private',
      '--delay',
      '150',
      '--delay-factor',
      '0',
      '--no-soft404-probe',
      '--no-trap-detectors',
      '--no-sitemaps',
      '--ui',
      '0',
      '--quiet',
    ]);
    let ui: Awaited<ReturnType<typeof spawnCli>> | undefined;
    try {
      const url = await eventually(
        () => /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(crawl.stderr())?.[1],
        15_000,
        'the dashboard URL',
      );
      const page = await open(url);
      // live: pages arrive while the crawl runs
      await waitForText(page, '#pages', (v) => Number(v.replace(/,/g, '')) >= 5, 20_000);
      assert.equal(await text(page, '#state'), 'running');
      assert.equal(await text(page, '#source'), 'live from the crawler');
      assert.match(await text(page, '#seeds'), new RegExp(`${site.origin}/`));
      const host = (await rows(page, 'host-table'))[0]!;
      assert.equal(host[0], new URL(site.origin).hostname);
      assert.ok(Number(host[4]!.replace(/,/g, '')) >= 5, `fetched ${host[4]}`);
      assert.deepEqual((await rows(page, 'status-table'))[0]!.slice(0, 1), ['200']);
      assert.equal(
        (await rows(page, 'top-table'))[0]![2],
        `${site.origin}/`,
        'the seed holds the most AOPIC cash',
      );
      await eventually(async () => ((await page.locator('#chart canvas').count()) === 1 ? true : undefined));
      assert.notEqual(await text(page, '#memory'), '–');
      // a fuller picture for the screenshot: later in the crawl (or its end, on a slow machine)
      await eventually(async () => {
        const pages = Number((await text(page, '#pages')).replace(/,/g, ''));
        return pages >= PAGES / 2 || crawl.child.exitCode !== null ? true : undefined;
      }, 30_000);
      const shot =
        process.env.UPDATE_DASHBOARD_SCREENSHOT === '1'
          ? join(ROOT, 'docs/img/dashboard.png')
          : join(out, 'dashboard.png');
      await page.screenshot({ path: shot, fullPage: true });
      assert.ok(existsSync(shot));
      await page.close();

      const exit = await crawl.exited;
      assert.equal(exit.code, 0, crawl.stderr());

      // finished: the files tell the rest (state, cache hit rate, peak memory, links not followed)
      ui = await spawnCli(['ui', '--out', out, '--port', '0']);
      const uiUrl = await eventually(
        () => /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(ui!.stdout())?.[1],
        15_000,
        'ui URL',
      );
      const done = await open(uiUrl);
      await waitForText(done, '#state', (v) => v === 'done');
      assert.equal(await text(done, '#pages'), String(PAGES + 1));
      assert.equal(await text(done, '#source'), 'from the crawl files');
      assert.match(await text(done, '#hitrate'), /^\d+\.\d%$/);
      assert.equal((await text(done, '#memory-label')).toLowerCase(), 'peak memory');
      assert.equal(await text(done, '#queued'), '0');
      assert.deepEqual(problems, []);
      await done.close();
    } finally {
      crawl.child.kill('SIGKILL');
      if (ui !== undefined) {
        ui.child.kill('SIGINT');
        const exit = await ui.exited;
        assert.equal(exit.code, 0, 'ui stops cleanly on Ctrl-C');
      }
    }
  });
});
