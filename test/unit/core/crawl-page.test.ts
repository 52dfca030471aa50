/**
 * The crawl step (`crawlPage`) with an in-memory fetcher and in-memory stores: robots.txt 5xx,
 * 429 with Retry-After, redirects, the soft-404 probe, nofollow. The step writes nothing itself:
 * `crawl` commits the effects each step returns (records, links, tasks, robots.txt entries,
 * captures, the defences' lessons) into arrays and the crawl's defences, as a runtime would. (The same step runs against real
 * servers in test/e2e and through the cloud pipeline in test/emulator.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import type { Capture, PageStore, RobotsEntry } from '../../../functions/core/ports.ts';
import { CrawlQuality } from '../../../functions/core/quality/crawl-quality.ts';
import { DuplicateUrlRules } from '../../../functions/core/quality/duplicate-url-rules.ts';
import { applyLessons, archiveCaptures } from '../../../functions/core/step/commit-effects.ts';
import {
  type CrawlPageDeps,
  type CrawlPageOutcome,
  crawlPage,
  seedTasks,
} from '../../../functions/core/step/crawl-page.ts';
import type { CrawlTask, LinkRecord, PageRecord } from '../../../functions/core/types.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import { ScopeRules } from '../../../functions/core/url/scope.ts';
import { ClockCache } from '../../../functions/core/url-seen/clock-cache.ts';
import { UrlSeen } from '../../../functions/core/url-seen/url-seen.ts';
import { MemoryContentSeen, MemorySeenStore } from '../cloud/memory-cloud.ts';
import { MemoryFetcher, page, type Routes } from '../cloud/memory-fetcher.ts';

const SITE = 'http://a.example';

function setup(routes: Routes, settings: Record<string, unknown> = {}, withQuality = false) {
  // Not a robots.txt test: every site of the routes answers 404 (allow all) unless told.
  routes = { [`${SITE}/robots.txt`]: { status: 404 }, ...routes };
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
  /** The archive: what it was given, in order; each reference names its position. */
  const captures: Capture[] = [];
  const archive: PageStore = {
    put: async (capture) => ({ file: 'w', offset: captures.push(capture) - 1, length: 1 }),
    flush: async () => {},
  };
  const canonicalizer = new UrlCanonicalizer(config);
  const store = new MemorySeenStore(new Map(), new Set());
  const quality = withQuality ? new CrawlQuality(config, { random: () => 0.5 }) : undefined;
  const deps: CrawlPageDeps = {
    config,
    clock,
    random: () => 0.5,
    fetcher,
    robots: { get: async (o) => robots.get(o) },
    seen: new UrlSeen(new ClockCache(64), store),
    contentSeen: new MemoryContentSeen(),
    canonicalizer,
    scope: new ScopeRules(config, [`${SITE}/`]),
    ...(quality === undefined ? {} : { quality }),
  };
  const task = (url: string, attempt = 0): CrawlTask => ({
    ...seedTasks('c', [url], canonicalizer).tasks[0]!,
    attempt,
  });
  /** One step, its effects committed (captures, lessons, the page record, links, tasks, robots.txt entry). */
  const crawl = async (task: CrawlTask): Promise<CrawlPageOutcome> => {
    const outcome = await crawlPage(deps, task);
    await archiveCaptures(
      { pages: archive, robots: archive },
      outcome,
      outcome.kind === 'done' ? outcome.record : undefined,
    );
    if (quality !== undefined) applyLessons(quality, outcome.lessons);
    if (outcome.links !== undefined) links.push(outcome.links);
    if (outcome.kind === 'done') pages.push(outcome.record);
    enqueued.push(...outcome.enqueued);
    if (outcome.storeRobots !== undefined) robots.set(outcome.storeRobots.origin, outcome.storeRobots.entry);
    return outcome;
  };
  return {
    deps,
    crawl,
    fetcher,
    robots,
    enqueued,
    pages,
    links,
    captures,
    quality,
    task,
    advance: (ms: number) => (now += ms),
    clock,
  };
}

describe('crawlPage (in-memory fetcher)', () => {
  it('robots.txt 5xx: disallow all and retry later; after the retries the URL fails as robots-unreachable', async () => {
    const t = setup({ [`${SITE}/robots.txt`]: { status: 503 } }, { maxRetries: 1 });
    const first = await t.crawl(t.task(`${SITE}/x`));
    assert.equal(first.kind, 'retry');
    assert.equal(first.kind === 'retry' && first.reason, 'robots-unreachable');
    assert.equal(t.robots.get(SITE)?.status, 'disallow-all');
    assert.equal(t.fetcher.count(`${SITE}/x`), 0, 'the page is never requested');
    const last = await t.crawl(t.task(`${SITE}/x`, 1));
    assert.equal(last.kind, 'done');
    assert.equal(last.kind === 'done' && last.record.reason, 'robots-unreachable');
  });

  it('robots.txt refused by an origin that never answered: retried after the short backoff, not robotsErrorTtlMs', async () => {
    const t = setup(
      { [`${SITE}/robots.txt`]: { error: 'connect' } },
      { maxRetries: 2, retryBaseDelayMs: 2000, robotsErrorTtlMs: 300_000 },
    );
    const first = await t.crawl(t.task(`${SITE}/x`));
    assert.equal(first.kind, 'retry');
    if (first.kind !== 'retry') return;
    // retryBackoffMs: 2000 ms for the first retry, x1 with random() = 0.5
    assert.equal(first.notBefore, t.clock.now() + 2000);
    assert.equal(first.detail, 'robots.txt: connect: connect', 'the failure in its own words');
    assert.equal(t.robots.get(SITE)?.neverAnswered, true);
    t.advance(2000);
    const second = await t.crawl(t.task(`${SITE}/x`, 1));
    assert.equal(second.kind === 'retry' && second.notBefore, t.clock.now() + 4000, 'then 4 s');
    t.advance(4000);
    const last = await t.crawl(t.task(`${SITE}/x`, 2));
    assert.equal(last.kind === 'done' && last.record.reason, 'robots-unreachable');
    assert.equal(t.fetcher.count(`${SITE}/robots.txt`), 3);
  });

  it('robots.txt refused by an origin that answered before: the long robotsErrorTtlMs wait stays', async () => {
    const t = setup(
      { [`${SITE}/robots.txt`]: (n) => (n === 0 ? { status: 404 } : { error: 'connect' }) },
      { maxRetries: 2, retryBaseDelayMs: 2000, robotsErrorTtlMs: 300_000, robotsTtlMs: 1000 },
    );
    await t.crawl(t.task(`${SITE}/x`)); // robots.txt answered 404: allow all
    t.advance(1000); // its entry expired: read again, and now refused
    const refused = await t.crawl(t.task(`${SITE}/x`));
    assert.equal(refused.kind, 'retry');
    assert.equal(refused.kind === 'retry' && refused.notBefore, t.clock.now() + 300_000);
    assert.equal(t.robots.get(SITE)?.neverAnswered, undefined);
  });

  it('429 with Retry-After: retry no earlier than it says, and the host is blocked until then', async () => {
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/x`]: { status: 429, headers: { 'retry-after': '7' } },
    });
    await t.crawl(t.task(`${SITE}/x`)); // robots.txt
    const outcome = await t.crawl(t.task(`${SITE}/x`));
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
    await t.crawl(t.task(`${SITE}/old`));
    const moved = await t.crawl(t.task(`${SITE}/old`));
    assert.equal(moved.kind, 'done');
    if (moved.kind !== 'done') return;
    assert.equal(moved.record.redirectTo, `${SITE}/new`);
    assert.deepEqual(
      moved.enqueued.map((e) => [e.url, e.redirects]),
      [[`${SITE}/new`, 1]],
    );
    const again = await t.crawl(t.task(`${SITE}/again`));
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
    assert.equal((await t.crawl(t.task(`${SITE}/real`))).kind, 'robots'); // robots.txt
    const probe = await t.crawl(t.task(`${SITE}/real`));
    assert.equal(probe.kind, 'robots');
    assert.match((probe.kind === 'robots' && probe.probe) || '', /crawlstack-probe-/);
    const real = await t.crawl(t.task(`${SITE}/real`));
    assert.equal(real.kind === 'done' && real.record.reason, undefined);
    const gone = await t.crawl(t.task(`${SITE}/gone`));
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
    await t.crawl(t.task(`${SITE}/meta`));
    const meta = await t.crawl(t.task(`${SITE}/meta`));
    assert.equal(meta.kind === 'done' && meta.enqueued.length, 0);
    const rel = await t.crawl(t.task(`${SITE}/rel`));
    assert.deepEqual(rel.kind === 'done' && rel.enqueued.map((e) => e.url), [`${SITE}/r2`]);
    const relLinks = t.links.find((l) => l.from === `${SITE}/rel`);
    assert.equal(relLinks?.links.find((l) => l.url === `${SITE}/r1`)?.skipped, 'nofollow');
  });

  it('effects as a value: robots.txt, its sitemaps, the tasks and links come back, none written by the step', async () => {
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 200, body: `User-agent: *\nSitemap: ${SITE}/s.xml\n` },
      [`${SITE}/`]: { status: 200, body: page('home', ['/a', '/pic.png', '/a', '/b']) },
    });
    const seed = t.task(`${SITE}/`);
    // crawlPage itself, not t.crawl: nothing is committed unless the caller does it
    const first = await crawlPage(t.deps, seed);
    assert.equal(first.kind, 'robots');
    assert.deepEqual(
      first.enqueued.map((e) => [e.url, e.sitemap?.from]),
      [[`${SITE}/s.xml`, 'robots']],
      'the sitemap robots.txt names, to queue',
    );
    assert.equal(first.storeRobots?.origin, SITE);
    assert.equal(first.storeRobots?.entry.sitemapsQueued, true, 'the entry says they were queued');
    assert.equal(t.robots.size, 0, 'the step did not store the entry');
    assert.deepEqual(
      first.robotsCaptures?.map((c) => [c.url, c.response.status]),
      [[`${SITE}/robots.txt`, 200]],
      'the robots.txt response, to archive',
    );
    const again = await crawlPage(t.deps, seed);
    assert.equal(again.kind, 'robots', 'an entry not stored: robots.txt is read again');
    assert.deepEqual(again.enqueued, [], 'its sitemap is claimed already (by robots.txt): not queued twice');
    t.robots.set(SITE, first.storeRobots!.entry);
    const home = await crawlPage(t.deps, seed);
    assert.equal(home.kind, 'done');
    if (home.kind !== 'done') return;
    assert.equal(home.record.url, `${SITE}/`);
    assert.deepEqual(
      home.enqueued.map((e) => e.url),
      [`${SITE}/a`, `${SITE}/b`],
      'admission order',
    );
    assert.deepEqual(home.links, {
      from: `${SITE}/`,
      links: [
        { url: `${SITE}/a`, kind: 'page' },
        { url: `${SITE}/pic.png`, kind: 'image', skipped: 'kind' },
        { url: `${SITE}/b`, kind: 'page' },
      ],
    });
    assert.equal(home.storeRobots, undefined);
    assert.equal(home.capture?.url, `${SITE}/`, 'the page response, to archive');
    assert.equal(home.record.warc, undefined, 'the reference is the archive’s answer, given at commit');
    assert.deepEqual(
      [t.pages, t.links, t.enqueued, t.captures],
      [[], [], [], []],
      'nothing written through a port',
    );
  });

  it('the capture and the probe lesson are effects: archived and learned at commit, not by the step', async () => {
    const t = setup(
      {
        [`${SITE}/x`]: { status: 200, body: page('x', []) },
        // every unknown URL answers 404: the probe's answer
      },
      {},
      true,
    );
    const quality = t.quality!;
    const seed = t.task(`${SITE}/x`);
    await t.crawl(seed); // robots.txt, committed (its response archived first)
    assert.deepEqual(
      t.captures.map((c) => c.url),
      [`${SITE}/robots.txt`],
    );
    const probe = await crawlPage(t.deps, seed);
    assert.equal(probe.kind, 'robots');
    const probeUrl = probe.kind === 'robots' ? probe.probe : undefined;
    assert.match(probeUrl ?? '', /crawlstack-probe-/);
    assert.deepEqual(probe.lessons, [{ kind: 'probe', probe: probeUrl, answer: { status: 404 } }]);
    assert.equal(quality.probeAnswer(SITE), undefined, 'the step taught the defences nothing');
    assert.notEqual(quality.probeFor(SITE), undefined, 'so the site still needs its probe');
    applyLessons(quality, probe.lessons);
    assert.deepEqual(quality.probeAnswer(SITE), { status: 404 }, 'the commit teaches it');
    assert.equal(quality.probeFor(SITE), undefined);

    const x = await crawlPage(t.deps, seed);
    assert.equal(x.kind, 'done');
    if (x.kind !== 'done') return;
    assert.equal(x.capture?.url, `${SITE}/x`);
    assert.equal(x.capture?.response.status, 200);
    assert.equal(x.record.warc, undefined);
    assert.equal(t.captures.length, 1, 'the step archived nothing');
    await archiveCaptures({ pages: { put: async () => undefined, flush: async () => {} } }, x, x.record);
    assert.equal(x.record.warc, undefined, '--no-warc: an archive that keeps nothing gives no reference');
    assert.equal(x.capture, undefined, 'the capture is dropped once stored');
  });

  it('a probe robots.txt refuses is a lesson too (status 0), and the page is fetched in the same step', async () => {
    const t = setup(
      {
        [`${SITE}/robots.txt`]: { status: 200, body: 'User-agent: *\nDisallow: /crawlstack-probe-\n' },
        [`${SITE}/x`]: { status: 200, body: page('x', []) },
      },
      {},
      true,
    );
    await t.crawl(t.task(`${SITE}/x`));
    const x = await crawlPage(t.deps, t.task(`${SITE}/x`));
    assert.equal(x.kind, 'done');
    assert.equal(x.lessons?.length, 1);
    assert.equal(x.lessons?.[0]?.kind, 'probe');
    assert.deepEqual(x.lessons?.[0]?.answer, { status: 0 });
    assert.equal(t.quality!.probeAnswer(SITE), undefined);
    assert.equal(t.fetcher.requests.filter((u) => u.includes('crawlstack-probe')).length, 0);
  });

  /** Runs `task`, first fetching robots.txt (the step's one request) when the origin needs it. */
  async function step(t: ReturnType<typeof setup>, task: CrawlTask) {
    const first = await t.crawl(task);
    return first.kind === 'robots' ? t.crawl(task) : first;
  }

  it('robots.txt allows: the page is fetched; disallows: finished as robots without a request', async () => {
    const t = setup({
      [`${SITE}/robots.txt`]: { status: 200, body: 'User-agent: *\nDisallow: /private\n' },
      [`${SITE}/open`]: { status: 200, body: page('open') },
      [`${SITE}/private/x`]: { status: 200, body: page('private') },
    });
    const open = await step(t, t.task(`${SITE}/open`));
    assert.equal(open.kind === 'done' && open.record.status, 200);
    const closed = await step(t, t.task(`${SITE}/private/x`));
    assert.equal(closed.kind, 'done');
    assert.equal(closed.kind === 'done' && closed.record.reason, 'robots');
    assert.equal(closed.kind === 'done' && closed.feedback, undefined, 'no request, no feedback');
    assert.equal(t.fetcher.count(`${SITE}/private/x`), 0);
  });

  it('robots.txt redirected more than five times: unavailable, so allow all (RFC 9309 2.3.1.2)', async () => {
    const routes: Routes = {};
    for (let i = 0; i < 7; i++)
      routes[i === 0 ? `${SITE}/robots.txt` : `${SITE}/r${i}`] = {
        status: 301,
        headers: { location: `/r${i + 1}` },
      };
    const t = setup(routes);
    const outcome = await t.crawl(t.task(`${SITE}/x`));
    assert.equal(outcome.kind, 'robots');
    assert.deepEqual(
      [t.robots.get(SITE)?.status, t.robots.get(SITE)?.detail],
      ['allow-all', 'too-many-redirects'],
    );
    assert.equal(t.fetcher.requests.length, 6, 'robots.txt and five redirects, no more');
    const page = await t.crawl(t.task(`${SITE}/x`));
    assert.equal(page.kind === 'done' && page.record.status, 404, 'the page is then fetched');
  });

  it('a redirect chain is followed hop by hop as new URLs, and cut at maxRedirects', async () => {
    const t = setup(
      {
        [`${SITE}/a`]: { status: 301, headers: { location: '/b' } },
        [`${SITE}/b`]: { status: 302, headers: { location: '/c' } },
        [`${SITE}/c`]: { status: 307, headers: { location: '/d' } },
      },
      { maxRedirects: 2 },
    );
    let outcome = await step(t, t.task(`${SITE}/a`));
    const hops: (number | string | undefined)[] = [];
    for (;;) {
      assert.equal(outcome.kind, 'done');
      if (outcome.kind !== 'done') return;
      hops.push(outcome.record.reason ?? outcome.record.redirectTo);
      const [next] = outcome.enqueued;
      if (next === undefined) break;
      assert.equal(next.parent, outcome.kind === 'done' ? fingerprintOf(t, outcome.record.url) : '');
      outcome = await t.crawl(next);
    }
    assert.deepEqual(hops, [`${SITE}/b`, `${SITE}/c`, 'too-many-redirects']);
    assert.equal(t.fetcher.count(`${SITE}/d`), 0);
  });

  it('503 without Retry-After: exponential backoff blocks the host, then gave-up after maxRetries', async () => {
    const t = setup({ [`${SITE}/x`]: { status: 503 } }, { maxRetries: 2, retryBaseDelayMs: 1000 });
    const first = await step(t, t.task(`${SITE}/x`));
    assert.equal(first.kind === 'retry' && first.notBefore, t.clock.now() + 1000);
    assert.equal(first.kind === 'retry' && first.feedback?.blockedUntil, t.clock.now() + 1000);
    const second = await t.crawl(t.task(`${SITE}/x`, 1));
    assert.equal(second.kind === 'retry' && second.notBefore, t.clock.now() + 2000, 'doubled');
    const last = await t.crawl(t.task(`${SITE}/x`, 2));
    assert.equal(last.kind, 'done');
    assert.equal(last.kind === 'done' && last.record.reason, 'gave-up');
    assert.equal(last.kind === 'done' && last.record.detail, 'HTTP 503 after 3 attempts');
  });

  it('a connection refused is retried with the backoff; a TLS failure is not', async () => {
    const t = setup({ [`${SITE}/refused`]: { error: 'connect' }, [`${SITE}/tls`]: { error: 'tls' } });
    const refused = await step(t, t.task(`${SITE}/refused`));
    assert.equal(refused.kind === 'retry' && refused.reason, 'connect');
    assert.equal(
      refused.kind === 'retry' && refused.feedback?.blockedUntil,
      refused.kind === 'retry' && refused.notBefore,
    );
    const tls = await t.crawl(t.task(`${SITE}/tls`));
    assert.equal(tls.kind === 'done' && tls.record.reason, 'tls');
  });

  it('304 to a recrawl: the conditional GET is sent, the last copy stands, its links are followed again', async () => {
    const t = setup({
      [`${SITE}/page`]: { status: 304, headers: { etag: '"v1"' } },
    });
    const requests: Record<string, string>[] = [];
    const fetch = t.fetcher.fetch.bind(t.fetcher);
    t.deps.fetcher = {
      fetch: (request) => {
        requests.push(request.headers ?? {});
        return fetch(request);
      },
      close: async () => {},
    };
    t.deps.revisits = {
      previous: async (url) =>
        url === `${SITE}/page`
          ? {
              url,
              status: 200,
              validators: { etag: '"v1"' },
              contentHash: 'ab'.repeat(32),
              contentType: 'text/html',
              title: 'Last time',
              links: [{ url: `${SITE}/linked`, kind: 'page' }],
              copy: { date: '2026-11-01T00:00:00Z', payloadDigest: 'sha1:ABC' },
            }
          : undefined,
    };
    const outcome = await step(t, t.task(`${SITE}/page`));
    assert.equal(outcome.kind, 'done');
    if (outcome.kind !== 'done') return;
    assert.equal(requests.at(-1)?.['If-None-Match'], '"v1"');
    assert.equal(outcome.record.change, 'not-modified');
    assert.equal(outcome.record.title, 'Last time');
    assert.equal(outcome.record.contentHash, 'ab'.repeat(32));
    assert.deepEqual(
      outcome.enqueued.map((e) => e.url),
      [`${SITE}/linked`],
    );
    // archived at commit as a revisit record of the last copy, and the record names it
    const revisit = t.captures.at(-1);
    assert.equal(revisit?.url, `${SITE}/page`);
    assert.deepEqual(revisit?.revisit, {
      profile: 'server-not-modified',
      refersToTargetUri: `${SITE}/page`,
      refersToDate: '2026-11-01T00:00:00Z',
      payloadDigest: 'sha1:ABC',
    });
    assert.deepEqual(outcome.record.warc, { file: 'w', offset: t.captures.length - 1, length: 1 });
  });

  it('duplicate content: the second URL names the first and its links are not followed', async () => {
    const body = page('same', ['/from-dup']);
    const t = setup({ [`${SITE}/one`]: { status: 200, body }, [`${SITE}/two`]: { status: 200, body } });
    const one = await step(t, t.task(`${SITE}/one`));
    assert.equal(one.kind === 'done' && one.record.duplicateOf, undefined);
    assert.deepEqual(one.kind === 'done' && one.enqueued.map((e) => e.url), [`${SITE}/from-dup`]);
    const two = await t.crawl(t.task(`${SITE}/two`));
    assert.equal(two.kind === 'done' && two.record.duplicateOf, `${SITE}/one`);
    assert.equal(two.kind === 'done' && two.enqueued.length, 0);
    assert.equal(two.kind === 'done' && two.cashFlow?.toLambda, two.kind === 'done' && two.cashFlow?.cash);
  });

  it('noindex from the meta tag or X-Robots-Tag is recorded; the links are still followed', async () => {
    const t = setup({
      [`${SITE}/meta`]: { status: 200, body: page('m', ['/m1'], '<meta name="robots" content="noindex">') },
      [`${SITE}/header`]: { status: 200, body: page('h', ['/h1']), headers: { 'x-robots-tag': 'noindex' } },
      [`${SITE}/plain`]: { status: 200, body: page('p') },
    });
    const meta = await step(t, t.task(`${SITE}/meta`));
    assert.equal(meta.kind === 'done' && meta.record.noindex, true);
    assert.deepEqual(meta.kind === 'done' && meta.enqueued.map((e) => e.url), [`${SITE}/m1`]);
    const header = await t.crawl(t.task(`${SITE}/header`));
    assert.equal(header.kind === 'done' && header.record.noindex, true);
    const plain = await t.crawl(t.task(`${SITE}/plain`));
    assert.equal(plain.kind === 'done' && plain.record.noindex, undefined);
  });

  it('a sitemap file: its entries are queued as listed pages with their lastmod, its record summarizes it', async () => {
    const xml = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc>${SITE}/s1</loc><lastmod>2026-01-02</lastmod></url><url><loc>${SITE}/s2</loc></url>
      <url><loc>http://elsewhere.example/s3</loc></url></urlset>`;
    const t = setup(
      { [`${SITE}/sitemap.xml`]: { status: 200, body: xml, headers: { 'content-type': 'application/xml' } } },
      { scope: 'host' },
    );
    const sitemap = {
      url: `${SITE}/sitemap.xml`,
      scope: `${SITE}/`,
      granted: true,
      level: 0,
      from: 'robots' as const,
      files: 10,
      entries: 100,
    };
    const outcome = await step(t, { ...t.task(`${SITE}/sitemap.xml`), sitemap });
    assert.equal(outcome.kind, 'done');
    if (outcome.kind !== 'done') return;
    assert.deepEqual(
      outcome.enqueued.map((e) => [e.url, e.listed, e.lastmod]),
      [
        [`${SITE}/s1`, true, '2026-01-02'],
        [`${SITE}/s2`, true, undefined],
      ],
    );
    assert.equal(outcome.record.sitemap?.kind, 'urlset');
    assert.equal(outcome.record.sitemap?.queued, 2);
  });

  it('link admission: the rules hold (scope, kind, length, in-page repeats) and known URLs are credited', async () => {
    const long = `/${'l'.repeat(120)}`;
    const t = setup(
      {
        [`${SITE}/first`]: { status: 200, body: page('first', ['/known']) },
        [`${SITE}/links`]: {
          status: 200,
          body: page('links', ['/known', '/new', '/new', 'http://other.example/x', '/pic.png', long]),
        },
      },
      { scope: 'host', maxUrlLength: 100 },
    );
    await step(t, t.task(`${SITE}/first`));
    const outcome = await t.crawl(t.task(`${SITE}/links`));
    assert.equal(outcome.kind, 'done');
    if (outcome.kind !== 'done') return;
    assert.deepEqual(
      outcome.enqueued.map((e) => [e.url, e.depth, e.parent]),
      [[`${SITE}/new`, 1, fingerprintOf(t, `${SITE}/links`)]],
    );
    assert.deepEqual(
      outcome.cashFlow?.credits.map((c) => c.fp),
      [fingerprintOf(t, `${SITE}/known`)],
      'the known link is credited, not queued again',
    );
    const recorded = t.links.find((l) => l.from === `${SITE}/links`)?.links;
    assert.deepEqual(
      recorded?.map((l) => [l.url, l.skipped]),
      [
        [`${SITE}/known`, undefined],
        [`${SITE}/new`, undefined],
        ['http://other.example/x', 'scope'],
        [`${SITE}/pic.png`, 'kind'],
      ],
    );
    assert.deepEqual(outcome.record.dropped, { longUrls: 1 });
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
    await t.crawl(t.task(`${SITE}/robots.txt`)); // robots.txt
    for (const n of [1, 2, 3]) await t.crawl(t.task(`${SITE}/item?id=${n}`));
    // active (two pairs): a task queued before is merged at dispatch, a link before the URL-seen test
    const queued = await t.crawl(t.task(`${SITE}/item?id=5`));
    assert.equal(queued.kind === 'done' && queued.record.reason, 'duplicate-url-rule');
    assert.equal(t.fetcher.count(`${SITE}/item?id=5`), 0);
    const list = await t.crawl(t.task(`${SITE}/list`));
    assert.deepEqual(
      list.kind === 'done' && list.enqueued.map((e) => e.url),
      [],
      '/item was claimed already',
    );
    // the server redirects to a URL the rule would rewrite: it is blocked (docs/duplicate-urls.md)
    const refuting = await t.crawl(t.task(`${SITE}/go`));
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
    await t.crawl(t.task(`${SITE}/robots.txt`));
    const next = await t.crawl(t.task(`${SITE}/about`));
    assert.deepEqual(next.kind === 'done' && next.enqueued.map((e) => e.url), [`${SITE}/item?id=7`]);
  });
});

function fingerprintOf(t: ReturnType<typeof setup>, url: string): string {
  return t.task(url).fp;
}
