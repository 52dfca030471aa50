/**
 * Worker containers killed at random points of their invocations during a multi-host crawl
 * (issue 8, "What must exist" 5): the stand-in terminates a container's thread wherever it is
 * (in a fetch, between a claim and a send, in the middle of the batch's writes), as a dying Lambda
 * environment, and the batch returns after the queue's visibility timeout. No URL may be lost,
 * every URL finishes once, the counters add up, and a page is fetched again only when a kill
 * caught the invocation that had fetched it.
 *
 * The seed is in the test's name; CRAWLSTACK_CHAOS_SEED=<seed> repeats its draws (which
 * invocations get a kill, and how far into them; where a kill lands also depends on timing). The
 * seed is the first from that (or from the clock) that kills an early invocation (see below).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseEmf } from '../../../bench/lib/worker-time.ts';
import { seededRandom } from '../../../localstack/chaos.ts';
import type { SiteServer } from '../../fixtures/site-server.ts';
import {
  EXTERNAL_ENDPOINT,
  type Pipeline,
  pageRequests,
  startFixtureSite,
  startPipeline,
} from './helpers.ts';

const KILL_PROBABILITY = 0.3;
/**
 * The first seed from `base` whose draws kill one of the first three invocations early in it
 * (in its first 30% of the typical duration, 150 ms before there is one). A worker invocation
 * serves many hosts and records, so a crawl of 48 pages takes about twenty: one seed in twenty
 * scheduled no kill that landed, and the test tested nothing (seed 661146). The later draws stay
 * as random as the seed.
 */
function seedWithEarlyKill(base: number): number {
  for (let seed = base; ; seed++) {
    const draw = seededRandom(seed);
    for (let invocation = 0; invocation < 3; invocation++) {
      const kill = draw() < KILL_PROBABILITY;
      if (kill && draw() < 0.3) return seed;
      if (!kill) draw();
    }
  }
}
const SEED = seedWithEarlyKill(Number(process.env.CRAWLSTACK_CHAOS_SEED ?? Date.now() % 1_000_000));
const HOSTS = 6;
const PATHS = ['/', '/a', '/b', '/c', '/d', '/e', '/f', '/g'];
/** Records of one batch at most (the event source's batch size). */
const BATCH_SIZE = 10;
/**
 * A request the killed thread sent just before it died can be read by this process (where the
 * fixture servers run, the stand-in too) a little after the kill.
 */
const READ_LAG_MS = 500;
/** A killed batch returns after this; the worker's timeout is a second less. */
const VISIBILITY_SECONDS = 12;

/**
 * Each crawl twice: without a budget, and with a page budget it never reaches, where AOPIC's
 * hold-back gives held tasks back to their back queues and refills pick by task (docs/aopic.md).
 */
const VARIANTS = [
  { name: 'no page budget', input: {}, firstAddress: 60 },
  { name: 'a page budget it never reaches', input: { maxPages: 1_000 }, firstAddress: 90 },
];

for (const variant of VARIANTS)
  describe(`pipeline: worker containers killed at random, ${variant.name} (seed ${SEED}, kill probability ${KILL_PROBABILITY})`, {
    skip: EXTERNAL_ENDPOINT === undefined ? false : 'container kills are a stand-in feature',
  }, () => {
    let pipeline: Pipeline;
    const sites: SiteServer[] = [];
    before(async () => {
      pipeline = await startPipeline({
        visibilityTimeoutSeconds: VISIBILITY_SECONDS,
        chaos: { FrontierWorker: { killProbability: KILL_PROBABILITY, seed: SEED } },
      });
      const origins: string[] = [];
      for (let i = 0; i < HOSTS; i++) {
        const host = `127.0.0.${variant.firstAddress + i}`;
        sites.push(
          await startFixtureSite(
            {
              host,
              pages: {
                '/': ['/a', '/b', '/c', '@next/'],
                '/a': ['/d', '/e'],
                '/b': ['/f', '/a'],
                '/c': ['/g'],
                '/d': [],
                '/e': ['/'],
                '/f': ['/g', '@next/a'],
                '/g': [],
              },
            },
            // Each site links the next one's pages (a multi-host crawl from one seed).
            (link) => (link.startsWith('@next') ? `${origins[(i + 1) % HOSTS]}${link.slice(5)}` : link),
          ),
        );
        origins.push(sites[i]!.origin);
      }
    });
    after(async () => {
      await pipeline?.stop();
      for (const site of sites) await site.close();
    });

    it('loses no URL; only pages fetched by a killed invocation are fetched again', async (t) => {
      const id = await pipeline.startCrawl({
        seeds: [`${sites[0]!.origin}/`],
        scope: 'any',
        allowPrivate: true,
        delayMs: 40,
        delayFactor: 0,
        soft404Probe: false,
        // The worker starts a fetch only with its timeout plus 5 s left (11 s timeout here).
        totalTimeoutMs: 3000,
        sitemaps: false,
        ...variant.input,
      });
      const done = await pipeline.waitForStatus(id, ['done', 'failed'], 300_000);
      const kills = pipeline.local.metrics().functions.FrontierWorker?.chaosKills ?? [];
      const context = `seed ${SEED}, ${kills.length} kills`;
      assert.equal(done.status, 'done', context);
      assert.ok(kills.length >= 1, `a container was killed during an invocation (${context})`);
      const c = done.counters;
      assert.equal(done.lost, undefined, `nothing lost (${context})`);
      assert.equal(c.discovered, HOSTS * PATHS.length, context);
      assert.equal(c.finished, c.discovered, `every URL finished once (${context})`);
      assert.equal(c.fetched, c.finished, context);
      assert.equal(c.queued, 0, context);
      assert.equal(c.dlq, 0, context);
      assert.equal(
        Object.values(c.byStatus).reduce((a, b) => a + b, 0),
        c.fetched,
        `statuses add up (${context})`,
      );
      const listed = await pipeline.pages(id, 100);
      assert.equal(
        new Set(listed.map((p) => p.url)).size,
        HOSTS * PATHS.length,
        `every URL listed (${context})`,
      );

      let fetches = 0;
      for (const site of sites) {
        const requests = pageRequests(site.log);
        const paths = requests.map((r) => r.path);
        assert.deepEqual(
          [...new Set(paths)].sort(),
          [...PATHS].sort(),
          `${site.host}: every page (${context})`,
        );
        fetches += requests.length;
        assert.equal(site.maxInFlight(), 1, `${site.host}: one request at a time`);
        // Every fetch of a page but its last started inside an invocation that was then killed.
        for (const path of new Set(paths)) {
          const earlier = requests.filter((r) => r.path === path).slice(0, -1);
          for (const request of earlier) {
            assert.ok(
              kills.some((k) => request.start >= k.startedAt && request.start <= k.killedAt + READ_LAG_MS),
              `${site.host}${path} fetched again at ${request.start.toFixed(0)} ms without a kill (${context})`,
            );
          }
        }
      }
      // What the budget's hold-back did (the worker's EMF lines): said, not asserted, since how
      // often a task is held depends on timing.
      const held = { WorkerHeldBack: 0, WorkerHeldBackReturned: 0 };
      for (const line of pipeline.logs) {
        if (!line.includes('WorkerHeldBack')) continue;
        const emf = parseEmf(line.slice(line.indexOf('{')));
        held.WorkerHeldBack += emf?.WorkerHeldBack ?? 0;
        held.WorkerHeldBackReturned += emf?.WorkerHeldBackReturned ?? 0;
      }
      t.diagnostic(
        `${kills.length} kills, ${fetches} page fetches for ${HOSTS * PATHS.length} pages; ` +
          `${held.WorkerHeldBack} records held back, ${held.WorkerHeldBackReturned} given back`,
      );
      assert.ok(
        fetches <= HOSTS * PATHS.length + kills.length * BATCH_SIZE,
        `${fetches} fetches for ${HOSTS * PATHS.length} pages and ${kills.length} kills (${context})`,
      );
    });
  });
