/**
 * The crawl step (`crawlPage`) with an in-memory fetcher and in-memory stores: robots.txt 5xx,
 * 429 with Retry-After, redirects, the soft-404 probe, nofollow. (The same step runs against real
 * servers in test/e2e and through the cloud pipeline in test/emulator.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClockCache } from '../../../functions/core/clock-cache.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { type CrawlPageDeps, crawlPage, seedTasks } from '../../../functions/core/crawl-page.ts';
import { CrawlQuality } from '../../../functions/core/quality/crawl-quality.ts';
import { DuplicateUrlRules } from '../../../functions/core/quality/duplicate-url-rules.ts';
import type { CrawlTask, LinkRecord, PageRecord } from '../../../functions/core/types.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import { ScopeRules } from '../../../functions/core/url/scope.ts';
import { UrlSeen } from '../../../functions/core/url-seen.ts';
import type { RobotsEntry } from '../../../functions/ports.ts';
import { MemoryContentSeen, MemorySeenStore } from '../cloud/memory-cloud.ts';
import { MemoryFetcher, page, type Routes } from '../cloud/memory-fetcher.ts';

const SITE = 'http://a.example';

function setup(routes: Routes, settings: Record<string, unknown> = {}, withQuality = false) {
  const parsed = parseCrawlConfig({
    seeds: [`${SITE}/`],
    scope: 'any',
    soft404Probe: withQuality,
    ...settings,
  });
  assert.ok(parsed.ok);
  const config = parsed.config;
  let now = Date.UTC(2026, 10, 26);
  const clock = { now: () => now };
  const fetcher = new MemoryFetcher(routes, clock);
  const robots = new Map<string, RobotsEntry>();
  const enqueued: CrawlTask[] = [];
  const pages: PageRecord[] = [];
  const links: LinkRecord[] = [];
  const canonicalizer = new UrlCanonicalizer(config);
  const store = new MemorySeenStore(new Map(), new Set());
  const deps: CrawlPageDeps = {
    config,
    clock,
    random: () => 0.5,
    fetcher,
    robots: { get: async (o) => robots.get(o), put: async (o, e) => void robots.set(o, e) },
    seen: new UrlSeen(new ClockCache(64), store),
    contentSeen: new MemoryContentSeen(),
    frontier: { enqueue: async (tasks) => void enqueued.push(...tasks) },
    pages: { put: async () => ({ file: 'w', offset: 0, length: 1 }), flush: async () => {} },
    results: { page: async (r) => void pages.push(r), links: async (l) => void links.push(l) },
    canonicalizer,
    scope: new ScopeRules(config, [`${SITE}/`]),
    ...(withQuality ? { quality: new CrawlQuality(config, { random: () => 0.5 }) } : {}),
  };
  const task = (url: string, attempt = 0): CrawlTask => ({
    ...seedTasks('c', [url], canonicalizer).tasks[0]!,
    attempt,
  });
  return { deps, fetcher, robots, enqueued, pages, links, task, advance: (ms: number) => (now += ms), clock };
}

describe('crawlPage (in-memory fetcher)', () => {
  it('robots.txt 5xx: disallow all and retry later; after the retries the URL fails as robots-unreachable', async () => {
    const t = setup({ [`${SITE}/robots.txt`]: { status: 503 } }, { maxRetries: 1 });
    const first = await crawlPage(t.deps, t.task(`${SITE}/x`));
    assert.equal(first.kind, 'retry');
    assert.equal(first.kind === 'retry' && first.reason, 'robots-unreachable');
    assert.equal(t.robots.get(SITE)?.status, 'disallow-all');
    assert.equal(t.fetcher.count(`${SITE}/x`), 0, 'the page is never requested');
    const last = await crawlPage(t.deps, t.task(`${SITE}/x`, 1));
    assert.equal(last.kind, 'done');
    assert.equal(last.kind === 'done' && last.record.reason, 'robots-unreachable');
  });

  it('429 with Retry-After: retry no earlier than it says, and the host is blocked until then', async () => {
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/x`]: { status: 429, headers: { 'retry-after': '7' } },
    });
    await crawlPage(t.deps, t.task(`${SITE}/x`)); // robots.txt
    const outcome = await crawlPage(t.deps, t.task(`${SITE}/x`));
    assert.equal(outcome.kind, 'retry');
    if (outcome.kind !== 'retry') return;
    assert.equal(outcome.notBefore, t.clock.now() + 7000);
    assert.equal(outcome.feedback?.blockedUntil, t.clock.now() + 7000);
    assert.equal(outcome.task.attempt, 1);
  });

  it('a redirect queues its target as a new URL with the cash; a target already seen gets a credit', async () => {
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/old`]: { status: 301, headers: { location: '/new' } },
      [`${SITE}/again`]: { status: 302, headers: { location: '/new' } },
    });
    await crawlPage(t.deps, t.task(`${SITE}/old`));
    const moved = await crawlPage(t.deps, t.task(`${SITE}/old`));
    assert.equal(moved.kind, 'done');
    if (moved.kind !== 'done') return;
    assert.equal(moved.record.redirectTo, `${SITE}/new`);
    assert.deepEqual(
      moved.enqueued.map((e) => [e.url, e.redirects]),
      [[`${SITE}/new`, 1]],
    );
    const again = await crawlPage(t.deps, t.task(`${SITE}/again`));
    assert.equal(again.kind === 'done' && again.enqueued.length, 0);
    assert.equal(again.kind === 'done' && again.cashFlow?.credits.length, 1, 'the known target is credited');
  });

  it('probes each site once for soft 404s before its first page, then recognizes them', async () => {
    const notFound = `${page('Sorry', [], '')}this page could not be found on our site`;
    const t = setup(
      {
        [`${SITE}/robots.txt`]: { status: 404 },
        [`${SITE}/real`]: { status: 200, body: page('A real page', ['/other']) },
        [`${SITE}/gone`]: { status: 200, body: notFound },
      },
      {},
      true,
    );
    // Every unknown URL answers 200 with the same error page (a soft-404 site).
    const probeReply = { status: 200, body: notFound };
    const fetch = t.fetcher.fetch.bind(t.fetcher);
    t.deps.fetcher = {
      fetch: (request) =>
        request.url.includes('crawlstack-probe') ? fetchProbe(request.url) : fetch(request),
      close: async () => {},
    };
    async function fetchProbe(url: string) {
      t.fetcher.requests.push(url);
      return new MemoryFetcher({ [url]: probeReply }, t.clock).fetch({ url, maxBytes: 1e6 });
    }
    assert.equal((await crawlPage(t.deps, t.task(`${SITE}/real`))).kind, 'robots'); // robots.txt
    const probe = await crawlPage(t.deps, t.task(`${SITE}/real`));
    assert.equal(probe.kind, 'robots');
    assert.match((probe.kind === 'robots' && probe.probe) || '', /crawlstack-probe-/);
    const real = await crawlPage(t.deps, t.task(`${SITE}/real`));
    assert.equal(real.kind === 'done' && real.record.reason, undefined);
    const gone = await crawlPage(t.deps, t.task(`${SITE}/gone`));
    assert.equal(gone.kind === 'done' && gone.record.reason, 'soft-404');
    assert.equal(
      t.fetcher.requests.filter((u) => u.includes('crawlstack-probe')).length,
      1,
      'one probe per site',
    );
  });

  it('nofollow: a meta robots nofollow page queues nothing; rel=nofollow links are recorded as skipped', async () => {
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/meta`]: {
        status: 200,
        body: page('meta', ['/m1'], '<meta name="robots" content="nofollow">'),
      },
      [`${SITE}/rel`]: {
        status: 200,
        body: '<!doctype html><title>rel</title><a href="/r1" rel="nofollow">x</a><a href="/r2">y</a>',
      },
    });
    await crawlPage(t.deps, t.task(`${SITE}/meta`));
    const meta = await crawlPage(t.deps, t.task(`${SITE}/meta`));
    assert.equal(meta.kind === 'done' && meta.enqueued.length, 0);
    const rel = await crawlPage(t.deps, t.task(`${SITE}/rel`));
    assert.deepEqual(rel.kind === 'done' && rel.enqueued.map((e) => e.url), [`${SITE}/r2`]);
    const relLinks = t.links.find((l) => l.from === `${SITE}/rel`);
    assert.equal(relLinks?.links.find((l) => l.url === `${SITE}/r1`)?.skipped, 'nofollow');
  });

  it('a duplicate-URL rule blocked by a page: the links it merged and the queued tasks it skipped are queued again', async () => {
    const bait = page('Not available');
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/item?id=1`]: { status: 200, body: bait },
      [`${SITE}/item?id=2`]: { status: 200, body: bait },
      [`${SITE}/item?id=3`]: { status: 200, body: bait },
      [`${SITE}/list`]: { status: 200, body: page('List', ['/item?id=7']) },
      [`${SITE}/go`]: { status: 301, headers: { location: '/item?id=9' } },
    });
    t.deps.urlRules = new DuplicateUrlRules({ minSupport: 2, auditShare: 0 });
    await crawlPage(t.deps, t.task(`${SITE}/robots.txt`)); // robots.txt
    for (const n of [1, 2, 3]) await crawlPage(t.deps, t.task(`${SITE}/item?id=${n}`));
    // active (two pairs): a task queued before is merged at dispatch, a link before the URL-seen test
    const queued = await crawlPage(t.deps, t.task(`${SITE}/item?id=5`));
    assert.equal(queued.kind === 'done' && queued.record.reason, 'duplicate-url-rule');
    assert.equal(t.fetcher.count(`${SITE}/item?id=5`), 0);
    const list = await crawlPage(t.deps, t.task(`${SITE}/list`));
    assert.deepEqual(
      list.kind === 'done' && list.enqueued.map((e) => e.url),
      [],
      '/item was claimed already',
    );
    // the server redirects to a URL the rule would rewrite: it is blocked (docs/duplicate-urls.md)
    const refuting = await crawlPage(t.deps, t.task(`${SITE}/go`));
    assert.equal(refuting.kind, 'done');
    if (refuting.kind !== 'done') return;
    const go = t.task(`${SITE}/go`).fp;
    assert.deepEqual(refuting.enqueued.map((e) => [e.url, e.redirects, e.parent]).sort(), [
      [`${SITE}/item?id=5`, 0, go],
      [`${SITE}/item?id=7`, 0, go],
      [`${SITE}/item?id=9`, 1, go],
    ]);
    assert.ok(
      refuting.enqueued.every((e) => e.redirects > 0 || e.cash === 0),
      'given back without cash',
    );
    // a queued task sent again: its own deduplication id in the cloud's FIFO
    assert.equal(refuting.enqueued.find((e) => e.url === `${SITE}/item?id=5`)?.resentFrom, go);
    assert.equal(t.deps.urlRules.rewrite(`${SITE}/item?id=8`), undefined, 'blocked');
  });

  it("a rule blocked by another container's stored rules: the origin's next page queues what it had merged", async () => {
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/about`]: { status: 200, body: page('About') },
    });
    const rules = new DuplicateUrlRules({ minSupport: 2, auditShare: 0 });
    const other = new DuplicateUrlRules({ minSupport: 2, auditShare: 0 });
    const see = (learner: DuplicateUrlRules, url: string, content: string) =>
      learner.observePage({ url, contentHash: content.padEnd(64, '0') });
    for (const learner of [rules, other])
      for (const n of [1, 2, 3]) see(learner, `${SITE}/item?id=${n}`, 'ba');
    assert.equal(rules.rewrite(`${SITE}/item?id=7`)?.url, `${SITE}/item`);
    see(other, `${SITE}/item?id=8`, 'cd');
    rules.mergeHost(SITE, other.hostRecords(SITE)!);
    t.deps.urlRules = rules;
    await crawlPage(t.deps, t.task(`${SITE}/robots.txt`));
    const next = await crawlPage(t.deps, t.task(`${SITE}/about`));
    assert.deepEqual(next.kind === 'done' && next.enqueued.map((e) => e.url), [`${SITE}/item?id=7`]);
  });
});
