/**
 * Debian's chromium for the dashboard tests, driven by playwright-core (no browser download), and
 * small readers of what a page shows. The page's Content-Security-Policy forbids eval, so tests
 * read elements' text and poll it, rather than waiting on functions in the page.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { eventually, type Route } from '../fixtures/site-server.ts';
import { type PageSpec, robotsTxt, siteRoutes } from '../fixtures/sites.ts';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser tests are skipped, or false when Chromium is installed. */
export const noBrowser: string | false = existsSync(CHROMIUM)
  ? false
  : `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`;

/** Launches headless Chromium. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
}

/** Opens `url` in a laptop-sized page; page errors and console errors go to `problems`. */
export async function openPage(browser: Browser, url: string, problems: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  await page.goto(url);
  return page;
}

/** An element's text as shown. */
export const text = (page: Page, selector: string): Promise<string> => page.locator(selector).innerText();

/** Polls an element's text until `ok` accepts it. */
export const waitForText = (
  page: Page,
  selector: string,
  ok: (value: string) => boolean,
  timeoutMs = 10_000,
): Promise<true> =>
  eventually(async () => (ok(await text(page, selector)) ? true : undefined), timeoutMs, selector);

/** The cells' text of a table's body rows. */
export const rows = (page: Page, table: string): Promise<string[][]> =>
  page
    .locator(`#${table} tbody tr`)
    .evaluateAll((trs) =>
      trs.map((tr) =>
        [...tr.querySelectorAll('td')].map((td) => (td as unknown as { innerText: string }).innerText.trim()),
      ),
    );

/**
 * The site the dashboard tests crawl: a home page linking `/p/0` ... `/p/<pages-1>`, each linking
 * home and the next one, robots.txt disallowing `/private`; each page answers after `delayMs`.
 */
export function ringSite(pages: number, delayMs?: number): Route {
  const table: Record<string, PageSpec | Route> = {
    '/': { title: 'Home', links: Array.from({ length: pages }, (_, i) => `/p/${i}`) },
    '/robots.txt': robotsTxt('User-agent: *\nDisallow: /private\n'),
  };
  for (let i = 0; i < pages; i++) {
    table[`/p/${i}`] = {
      title: `Page ${i}`,
      links: ['/', `/p/${(i + 1) % pages}`],
      ...(delayMs === undefined ? {} : { delayMs }),
    };
  }
  return siteRoutes(table);
}
