/**
 * The cloud dashboard in a real browser: Debian's chromium driven by playwright-core, against the
 * whole stack on the stand-in (`startCloudLocal` with its dashboard, as `npm run cloud:local`
 * serves it). Two crawls through the API; the page lists both, follows the running one live,
 * shows its pages, statuses and host, and switches to the other. Saves a screenshot
 * (docs/img/cloud-dashboard.png when UPDATE_DASHBOARD_SCREENSHOT=1). Skipped, saying why, only
 * where no Chromium is installed.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type Pipeline, startPipeline } from '../emulator/pipeline/helpers.ts';
import { eventually, type SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { launchChromium, noBrowser, openPage, ringSite, rows, text, waitForText } from './browser.ts';
import { ROOT, tempDir } from './helpers.ts';

/** Pages of the big site besides its home page: at 150 ms apiece, a crawl of several seconds. */
const PAGES = 40;

const count = (value: string) => Number(value.replace(/,/g, ''));
/** The stand-in's functions and the archiver's 1 s window take seconds, not milliseconds. */
const SLOW = 30_000;

describe('cloud dashboard in Chromium', { skip: noBrowser }, () => {
  let browser: Browser;
  let pipeline: Pipeline;
  let small: SiteServer;
  let big: SiteServer;
  const problems: string[] = [];

  before(async () => {
    browser = await launchChromium();
    [small, big] = (await startSites(['127.0.0.5', '127.0.0.6'], () => [
      siteRoutes({ '/': { title: 'Small', links: ['/a'] }, '/a': { title: 'A' } }),
      ringSite(PAGES),
    ])) as [SiteServer, SiteServer];
    pipeline = await startPipeline({ dashboard: true });
  });
  after(async () => {
    await browser?.close();
    await pipeline?.stop();
    await closeAll([small, big].filter((s) => s !== undefined));
  });

  const open = (url: string): Promise<Page> => openPage(browser, url, problems);

  const config = (seed: string, delayMs: number) => ({
    seeds: [seed],
    allowPrivate: true,
    delayMs,
    delayFactor: 0,
    soft404Probe: false,
    sitemaps: false,
  });

  test('lists the crawls, follows the running one with its pages, statuses and host, and switches', async () => {
    const dashboard = pipeline.local.dashboard;
    assert.ok(dashboard !== undefined, 'startCloudLocal served a dashboard');
    assert.match(dashboard, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const first = await pipeline.startCrawl(config(`${small.origin}/`, 20));
    await pipeline.waitForStatus(first, ['done'], 60_000);
    const second = await pipeline.startCrawl(config(`${big.origin}/`, 150));

    const page = await open(dashboard);
    // The newest crawl, live from the API through the local server.
    await waitForText(page, '#source', (v) => v === 'from the cloud API', SLOW);
    assert.match(await text(page, '#seeds'), new RegExp(`${big.origin}/`));
    assert.deepEqual(
      await page
        .locator('#crawl option')
        .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value)),
      [second, first],
    );
    assert.equal(await page.locator('#crawl').inputValue(), second);
    // Pages arrive as the archiver writes them (its window is 1 s here).
    await waitForText(page, '#pages', (v) => count(v) >= 5, SLOW);
    assert.match(await text(page, '#state'), /^(running|done)$/);
    assert.deepEqual((await rows(page, 'status-table'))[0]!.slice(0, 1), ['200']);
    const host = (await rows(page, 'host-table'))[0]!;
    assert.equal(host[0], new URL(big.origin).hostname);
    assert.ok(count(host[4]!) >= 5, `fetched ${host[4]}`);
    await eventually(
      async () => ((await page.locator('#chart canvas').count()) === 1 ? true : undefined),
      30_000,
    );
    assert.equal((await rows(page, 'top-table'))[0]![2], `${big.origin}/`, 'the seed holds the most cash');
    assert.notEqual(await text(page, '#hitrate'), '–');

    // The crawl ends on the page: done, every page, the disallowed URL counted.
    await pipeline.waitForStatus(second, ['done'], 90_000);
    await waitForText(page, '#state', (v) => v === 'done', SLOW);
    await waitForText(page, '#pages', (v) => count(v) === PAGES + 1, SLOW);
    const shot =
      process.env.UPDATE_DASHBOARD_SCREENSHOT === '1'
        ? join(ROOT, 'docs/img/cloud-dashboard.png')
        : join(tempDir(), 'cloud-dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(existsSync(shot));

    // Switching crawls: the list names the page's crawl in its query.
    await page.locator('#crawl').selectOption(first);
    await page.waitForURL(new RegExp(`\\?crawl=${first}$`));
    await waitForText(page, '#seeds', (v) => v.includes(`${small.origin}/`), SLOW);
    await waitForText(page, '#pages', (v) => v === '2', SLOW);
    assert.equal(await text(page, '#state'), 'done');
    assert.deepEqual(problems, []);
    await page.close();
  });
});
