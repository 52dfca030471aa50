/**
 * Throughput of a crawl that AOPIC parks (issue 8, item 6 and "What must exist" 7): each host is a
 * chain of numbered pages (`/p/1` -> `/p/2` -> ...), links to the page's own path pattern, which
 * the worker parks instead of queueing. With the default politeness (1 s per host), the crawl must
 * run at about that rate: parked URLs are admitted when the crawl's frontier runs dry, not on the
 * scheduler's next tick (a minute on AWS, and here too: no tick comes during the test). The first
 * build took 14 minutes for a 112-URL, 2-host crawl of this shape instead of about 2.
 *
 * Measured on the servers' logs (when each request arrived), against the politeness gap, not
 * against the test machine's clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { seededRandom } from '../../../localstack/chaos.ts';
import { eventually, type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { type Pipeline, pageRequests, startPipeline } from './helpers.ts';

const HOSTS = 2;
/** Numbered pages per host. */
const PAGES = 14;
/** The default `delayMs`: one request per host per second. */
const POLITENESS_MS = 1000;
/** The stack's scheduler rule: no tick comes while the crawl runs. */
const TICK_MS = 60_000;

const WORDS =
  'river stone cloud garden lamp window silver harbor meadow engine paper candle forest bridge winter market thunder orchard ladder violin copper island feather canyon ribbon saddle compass lantern glacier pepper marble falcon hollow tunnel velvet anchor prairie quartz rocket timber walnut beacon cactus dolphin ember fjord goblet hazel igloo jasmine kettle lemon mosaic nectar oyster pebble quiver raven sable tulip umber vessel wander yonder zephyr'.split(
    ' ',
  );

/** Text of its own for every page (pages that read alike would be a link generator's). */
function text(seed: number): string {
  const draw = seededRandom(seed);
  return Array.from({ length: 120 }, () => WORDS[Math.floor(draw() * WORDS.length)]).join(' ');
}

describe('pipeline: numbered pages at the default politeness', () => {
  let pipeline: Pipeline;
  const sites: SiteServer[] = [];
  before(async () => {
    pipeline = await startPipeline({ scheduleRateMs: TICK_MS });
    const origins: string[] = [];
    for (let h = 0; h < HOSTS; h++) {
      const site = await startSite(
        (req, res) => {
          const path = req.url ?? '/';
          const n = path === '/' ? 0 : Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? Number.NaN);
          if (path === '/robots.txt' || !(n >= 0 && n <= PAGES)) {
            res.writeHead(404, { 'content-type': 'text/html' });
            res.end('<html><body>not here</body></html>');
            return;
          }
          const links = [n < PAGES ? `/p/${n + 1}` : '/', n === 0 ? `${origins[(h + 1) % HOSTS]}/` : '/'];
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(
            `<!doctype html><title>page ${n} of host ${h}</title><p>${text(h * 1000 + n)}</p>${links
              .map((l) => `<a href="${l}">next</a>`)
              .join(' ')}`,
          );
        },
        `127.0.0.${80 + h}`,
      );
      sites.push(site);
      origins.push(site.origin);
    }
  });
  after(async () => {
    await pipeline?.stop();
    for (const site of sites) await site.close();
  });

  it('fetches a parked chain at its politeness rate, without waiting for the scheduler', async (t) => {
    const id = await pipeline.startCrawl({
      seeds: [`${sites[0]!.origin}/`],
      scope: 'any',
      allowPrivate: true,
    });
    const last = `/p/${PAGES}`;
    // A bound far above the politeness rate, far below one tick per numbered page.
    await eventually(
      () => (sites.every((s) => s.paths().includes(last)) ? true : undefined),
      TICK_MS,
      `every host's ${last}`,
    ).catch(() => {});
    const status = await pipeline.status(id);
    for (const site of sites) {
      const pages = pageRequests(site.log)
        .filter((r) => r.path === '/' || r.path.startsWith('/p/'))
        .sort((a, b) => a.start - b.start);
      const paths = pages.map((r) => r.path);
      assert.ok(
        paths.includes(last),
        `${site.host}: ${paths.length} of ${PAGES + 1} pages in a minute (${paths.join(' ')}); ${JSON.stringify(status.counters)}`,
      );
      const gaps = pages.slice(1).map((r, i) => r.start - pages[i]!.start);
      const span = pages.at(-1)!.start - pages[0]!.start;
      t.diagnostic(
        `${site.host}: ${pages.length} pages in ${(span / 1000).toFixed(1)} s, gaps ${gaps.map((g) => (g / 1000).toFixed(1)).join(' ')} s`,
      );
      // Politeness holds, and the chain runs at about its rate: a deferral rounds a wait up to whole
      // seconds (a 1 s gap waits 1-2 s), and a loaded machine adds some.
      assert.ok(Math.min(...gaps) >= POLITENESS_MS - 5, `${site.host}: a gap under ${POLITENESS_MS} ms`);
      assert.ok(span <= gaps.length * 3 * POLITENESS_MS, `${site.host}: ${span} ms for ${gaps.length} gaps`);
      assert.ok(Math.max(...gaps) <= 10 * POLITENESS_MS, `${site.host}: a gap of ${Math.max(...gaps)} ms`);
    }
  });
});
