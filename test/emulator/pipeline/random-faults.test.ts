/**
 * Worker deaths at random points of a batch during a multi-host crawl (issue 8, "What must exist"
 * 5): the worker is killed (CRAWLSTACK_FAULT, an error nothing catches, as if the process died)
 * after the URL-seen claims, after the links and captures are sent, or just before the response
 * that deletes the messages, each at a random n-th time the step is reached. No URL may be lost,
 * every URL finishes once, and only pages of a batch in flight at a kill are fetched again.
 *
 * The seed is printed; CRAWLSTACK_FAULT_SEED=<seed> repeats a run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SiteServer } from '../../fixtures/site-server.ts';
import { type Pipeline, pageRequests, startFixtureSite, startPipeline } from './helpers.ts';

const SEED = Number(process.env.CRAWLSTACK_FAULT_SEED ?? Date.now() % 1_000_000);
const HOSTS = 4;
const PATHS = ['/', '/a', '/b', '/c', '/d', '/e', '/f', '/g'];
/** Records of one batch at most (the event source's batch size). */
const BATCH_SIZE = 10;

/** A small deterministic generator (mulberry32) so a seed repeats a run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const draw = random(SEED);
const KILLS = ['after-claims', 'after-captures', 'before-ack'].map(
  (step) => `${step}:${1 + Math.floor(draw() * 6)}`,
);

describe(`pipeline: worker killed at random points (seed ${SEED}: ${KILLS.join(', ')})`, () => {
  let pipeline: Pipeline;
  const sites: SiteServer[] = [];
  before(async () => {
    // A crashed batch returns after the visibility timeout: 2 s here, not minutes.
    pipeline = await startPipeline({
      env: { CRAWLSTACK_FAULT: KILLS.join(',') },
      visibilityTimeoutSeconds: 2,
    });
    const origins: string[] = [];
    for (let i = 0; i < HOSTS; i++) {
      const host = `127.0.0.${60 + i}`;
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

  it('loses no URL; only pages in flight at a kill are fetched again', async () => {
    const id = await pipeline.startCrawl({
      seeds: [`${sites[0]!.origin}/`],
      scope: 'any',
      allowPrivate: true,
      delayMs: 40,
      delayFactor: 0,
      soft404Probe: false,
      sitemaps: false,
    });
    const done = await pipeline.waitForStatus(id, ['done', 'failed'], 120_000);
    const context = `seed ${SEED}, kills ${KILLS.join(', ')}`;
    assert.equal(done.status, 'done', context);
    const crashes = pipeline.logs.filter((line) => /InjectedCrashError/.test(line)).length;
    assert.ok(crashes >= 1, `the worker was killed at least once (${context})`);
    const c = done.counters;
    assert.equal(done.lost, undefined, `nothing lost (${context})`);
    assert.equal(c.discovered, HOSTS * PATHS.length, context);
    assert.equal(c.finished, c.discovered, `every URL finished (${context})`);
    assert.equal(c.dlq, 0, context);
    const listed = await pipeline.pages(id, 100);
    assert.equal(
      new Set(listed.map((p) => p.url)).size,
      HOSTS * PATHS.length,
      `every URL listed (${context})`,
    );
    let fetches = 0;
    for (const site of sites) {
      const requested = pageRequests(site.log).map((r) => r.path);
      assert.deepEqual(
        [...new Set(requested)].sort(),
        [...PATHS].sort(),
        `${site.host}: every page (${context})`,
      );
      fetches += requested.length;
      assert.equal(site.maxInFlight(), 1);
    }
    // A kill sends its batch back: those records' pages may be fetched once more, nothing else.
    assert.ok(
      fetches <= HOSTS * PATHS.length + crashes * BATCH_SIZE,
      `${fetches} fetches for ${HOSTS * PATHS.length} pages and ${crashes} kills (${context})`,
    );
  });
});
