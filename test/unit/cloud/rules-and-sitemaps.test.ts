/**
 * The cloud worker with issue 11's features, over the in-memory cloud: a site's sitemap files
 * queued when its robots.txt is first read (sent before the robots.txt entry is stored), a sitemap
 * task read and its entries queued with their lastmod; duplicate-URL rules learned in one
 * container, stored per crawl and host only when they change, and applied by another container to
 * a queued form (skipped as `duplicate-url-rule`); two containers' writes merged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCaptureMessage } from '../../../functions/cloud/messages/capture-message.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import { decodeTask, encodeTask } from '../../../functions/cloud/messages/task-message.ts';
import { isTraceBody } from '../../../functions/cloud/messages/trace-message.ts';
import { WorkerContainer } from '../../../functions/cloud/worker/container-state.ts';
import {
  refreshHostRules,
  rulesShape,
  saveHostRules,
} from '../../../functions/cloud/worker/host-rules-sync.ts';
import type { HostRuleRecord, RuleStatus } from '../../../functions/core/quality/duplicate-url-rules.ts';
import { MemoryCloud, MemoryCrawlTable } from './memory-cloud.ts';
import { MemoryFetcher, page } from './memory-fetcher.ts';
import { messageFor, runningCrawl, TestClock, workerOver } from './worker-kit.ts';

const base = { scope: 'any', soft404Probe: false, delayMs: 0, delayFactor: 0 };
const A = 'http://a.example';

function captured(cloud: MemoryCloud): PageItem[] {
  // The batch's URL-seen trace travels in the same queue (trace-message.ts): not a page.
  return cloud.captures.bodies
    .filter((body) => !isTraceBody(body))
    .map((body) => {
      const decoded = decodeCaptureMessage(body);
      assert.ok(decoded.ok, 'a capture message');
      return decoded.message.page;
    });
}

/** A robots.txt that names `sitemaps`. */
function robotsNaming(...sitemaps: string[]) {
  const body = sitemaps.map((url) => `Sitemap: ${url}\n`).join('');
  return { status: 200, headers: { 'content-type': 'text/plain' }, body };
}

describe('cloud worker: sitemaps', () => {
  it('queues the named sitemap at the first robots.txt, reads it as a task, queues its entries with lastmod', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${A}/robots.txt`]: robotsNaming(`${A}/s.xml`),
      [`${A}/`]: { status: 200, body: page('home', ['/a']) },
      [`${A}/s.xml`]: {
        status: 200,
        headers: { 'content-type': 'application/xml' },
        body:
          '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
          `<url><loc>${A}/a</loc></url><url><loc>${A}/only</loc><lastmod>2026-05-06</lastmod></url></urlset>`,
      },
      [`${A}/only`]: { status: 200, body: page('only') },
    });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${A}/`], ...base }, clock);
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(tasks([`${A}/`])[0]!)]);
    assert.deepEqual(fetcher.requests, [`${A}/robots.txt`, `${A}/`]);
    const sitemap = cloud.frontier.sent.find((t) => t.url === `${A}/s.xml`);
    assert.ok(sitemap?.sitemap, 'the sitemap task, with its file');
    assert.equal(sitemap.sitemap.from, 'robots');
    assert.equal(sitemap.sitemap.scope, `${A}/`);
    // the message carries the file, and decodes back to it
    const decoded = decodeTask(encodeTask(sitemap));
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.task.sitemap, sitemap.sitemap);
    assert.equal(cloud.table.robots.get(`${id} ${A}`)?.sitemapsQueued, true);

    await worker([messageFor(sitemap)]);
    assert.equal(fetcher.count(`${A}/s.xml`), 1);
    const only = cloud.frontier.sent.find((t) => t.url === `${A}/only`);
    assert.equal(only?.lastmod, '2026-05-06');
    assert.equal(only?.listed, true, 'a sitemap made it known');
    const back = decodeTask(encodeTask(only!));
    assert.ok(back.ok && back.task.listed === true, 'and its message says so');
    assert.equal(cloud.frontier.sent.filter((t) => t.url === `${A}/a`).length, 1, '/a was linked: known');
    const file = captured(cloud).find((p) => p.url === `${A}/s.xml`);
    assert.equal(file?.kind, 'other');
    assert.deepEqual(file?.sitemap, {
      kind: 'urlset',
      entries: 2,
      queued: 1,
      outOfScope: 0,
      invalid: 0,
      dropped: 0,
    });

    await worker([messageFor(only!)]);
    assert.equal(captured(cloud).find((p) => p.url === `${A}/only`)?.lastmod, '2026-05-06');
  });

  it('the step returns robots.txt and its sitemaps: the sitemaps are sent first; a failed send stores no entry', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${A}/robots.txt`]: robotsNaming(`${A}/s.xml`),
      [`${A}/`]: { status: 200, body: page('home') },
    });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${A}/`], ...base }, clock);
    const worker = workerOver(cloud, fetcher, clock);
    const seed = tasks([`${A}/`])[0]!;
    const message = messageFor(seed);
    cloud.frontier.failing = true;
    const failed = await worker([message]);
    assert.equal([...failed.verdicts.values()][0]?.kind, 'retry', 'the record failed, to be received again');
    assert.equal(cloud.table.robots.get(`${id} ${A}`), undefined, 'no entry says its sitemaps were queued');
    cloud.frontier.failing = false;
    await worker([{ ...message, receiveCount: 2 }]);
    assert.equal(fetcher.count(`${A}/robots.txt`), 2, 'robots.txt read again');
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${A}/s.xml`],
      'its sitemap sent this time (claimed by this message before: still its own)',
    );
    assert.equal(cloud.table.robots.get(`${id} ${A}`)?.sitemapsQueued, true);
  });

  it('the link record the step returns: the capture carries it, the counters count its skipped links', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${A}/robots.txt`]: { status: 404 },
      [`${A}/`]: { status: 200, body: page('home', ['/a', 'http://b.example/', '/pic.png']) },
    });
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${A}/`], ...base, scope: 'host' }, clock);
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(tasks([`${A}/`])[0]!)]);
    const message = cloud.captures.bodies
      .filter((body) => !isTraceBody(body))
      .map((body) => decodeCaptureMessage(body))
      .find((d) => d.ok && d.message.page.url === `${A}/`);
    assert.ok(message?.ok);
    assert.deepEqual(message.message.links, [
      { url: `${A}/a`, kind: 'page' },
      { url: 'http://b.example/', kind: 'page', skipped: 'scope' },
      { url: `${A}/pic.png`, kind: 'image', skipped: 'kind' },
    ]);
    assert.deepEqual(cloud.table.counters(id).linksSkipped, { scope: 1, kind: 1 });
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${A}/a`, `${A}/sitemap.xml`],
      'the link, then the guessed sitemap',
    );
  });

  it('sitemap files on hosts the scope or --exclude leaves out are never sent, nor an index child excluded', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const [B, C] = ['http://b.example', 'http://c.example'];
    const xml = { status: 200, headers: { 'content-type': 'application/xml' } };
    const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
    const fetcher = new MemoryFetcher({
      [`${A}/robots.txt`]: {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: `Sitemap: ${B}/s.xml\nSitemap: ${C}/s.xml\nSitemap: ${A}/idx.xml\n`,
      },
      [`${A}/`]: { status: 200, body: page('home') },
      [`${A}/idx.xml`]: {
        ...xml,
        body: `<sitemapindex xmlns="${NS}"><sitemap><loc>${A}/ok.xml</loc></sitemap><sitemap><loc>${A}/left-out/c.xml</loc></sitemap></sitemapindex>`,
      },
    });
    // C is outside the scope (the seed's host); B is excluded too, by a pattern
    const { tasks } = runningCrawl(
      cloud,
      { seeds: [`${A}/`], ...base, scope: 'host', exclude: ['//b\\.example/', '/left-out/'] },
      clock,
    );
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(tasks([`${A}/`])[0]!)]);
    const sitemaps = cloud.frontier.sent.filter((t) => t.sitemap !== undefined).map((t) => t.url);
    assert.deepEqual(sitemaps, [`${A}/idx.xml`]);
    await worker([messageFor(cloud.frontier.sent.find((t) => t.url === `${A}/idx.xml`)!)]);
    const sent = cloud.frontier.sent.map((t) => t.url);
    assert.ok(sent.includes(`${A}/ok.xml`));
    assert.ok(!sent.includes(`${A}/left-out/c.xml`));
    assert.equal(captured(cloud).find((p) => p.url === `${A}/idx.xml`)?.sitemap?.outOfScope, 1);
    assert.ok(!fetcher.requests.some((u) => u.startsWith(B) || u.startsWith(C)));
  });

  it('the guessed /sitemap.xml is a link of the root page: sent after its links, never parked', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    // Fewer links than a host's group holds: the page's whole turn is sent, richest first.
    const links = Array.from({ length: 5 }, (_, i) => `/p${i}`);
    const fetcher = new MemoryFetcher({
      [`${A}/robots.txt`]: {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: 'User-agent: *\n',
      },
      [`${A}/`]: { status: 200, body: page('home', links) },
    });
    // AOPIC with the admission bar at a full link: the guess holds a tenth of one
    const { tasks } = runningCrawl(
      cloud,
      { seeds: [`${A}/`], ...base, order: 'aopic', aopicAdmitShare: 1 },
      clock,
    );
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(tasks([`${A}/`])[0]!)]);
    const sent = cloud.frontier.sent.map((t) => t.url);
    assert.deepEqual(sent.slice(-9, -1).sort(), links.map((l) => `${A}${l}`).sort());
    assert.equal(sent.at(-1), `${A}/sitemap.xml`, 'after the links');
    assert.equal(cloud.parkedFps.get(tasks([`${A}/`])[0]!.crawlId)?.size ?? 0, 0, 'never parked');
    const guessed = cloud.frontier.sent.find((t) => t.url === `${A}/sitemap.xml`);
    assert.equal(guessed?.sitemap?.from, 'default');
    const link = cloud.frontier.sent.find((t) => t.url === `${A}/p0`)!;
    assert.ok(Math.abs(guessed!.cash - link.cash / 10) < 1e-12, 'a tenth of a link (sitemapShare)');
  });

  it('a task message with a malformed sitemap is refused', () => {
    const body = JSON.parse(
      encodeTask(
        runningCrawl(new MemoryCloud(), { seeds: [`${A}/`] }, new TestClock()).tasks([`${A}/s.xml`])[0]!,
      ),
    );
    const bad = decodeTask(JSON.stringify({ ...body, sitemap: { url: `${A}/s.xml`, level: -1 } }));
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? '' : bad.problem, /sitemap must have/);
  });
});

/**
 * A host with `n` pages under /topics/t-<i>.html whose other form /Topics/T-<i>.html answers the
 * same bytes (with `links(i)` as links), two worker containers over one in-memory cloud, and a
 * runner of the other forms from `from` on through the second container, which resolves how
 * many times each was fetched.
 */
function caseTwins(n: number, links: (i: number) => string[] = () => []) {
  const r: Record<string, { status: number; body: string }> = {};
  for (let i = 1; i <= n; i++) {
    const body = page(`topic ${i}`, links(i));
    r[`http://h.example/topics/t-${i}.html`] = { status: 200, body };
    r[`http://h.example/Topics/T-${i}.html`] = { status: 200, body };
  }
  const clock = new TestClock();
  const cloud = new MemoryCloud();
  const fetcher = new MemoryFetcher(r);
  const { tasks } = runningCrawl(cloud, { seeds: ['http://h.example/'], ...base, sitemaps: false }, clock);
  const first = workerOver(cloud, fetcher, clock);
  const second = workerOver(cloud, fetcher, clock);
  const fetchOwn = async (i: number) =>
    first([messageFor(tasks([`http://h.example/topics/t-${i}.html`], 1)[0]!)]);
  const otherForms = async (from: number): Promise<number[]> => {
    const urls = Array.from({ length: n - from + 1 }, (_, k) => `http://h.example/Topics/T-${k + from}.html`);
    await second(tasks(urls, 1).map((t) => messageFor(t)));
    return urls.map((url) => fetcher.count(url));
  };
  return { cloud, first, tasks, fetchOwn, otherForms };
}

describe('cloud worker: duplicate-URL rules', () => {
  const H = 'http://h.example';
  const routes = () => {
    const r: Record<string, { status: number; body: string }> = {};
    for (let i = 1; i <= 6; i++) {
      const body = page(`dir ${i}`);
      r[`${H}/d${i}/`] = { status: 200, body };
      r[`${H}/d${i}/index.html`] = { status: 200, body };
    }
    return r;
  };

  /** A crawl of h.example whose rules activate at support 2 and are never audited, and its containers. */
  const supportTwo = (
    more: Record<string, { status: number; body: string; headers?: Record<string, string> }> = {},
  ) => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({ ...routes(), ...more });
    const { tasks } = runningCrawl(
      cloud,
      { seeds: [`${H}/`], ...base, sitemaps: false, duplicateUrlRuleAudit: 0, duplicateUrlRuleSupport: 2 },
      clock,
    );
    return { cloud, fetcher, tasks, worker: () => workerOver(cloud, fetcher, clock) };
  };

  it('a rule a page blocks gives back the links it merged: sent or parked like any link', async () => {
    const bait = page('Not available');
    const { cloud, tasks, worker } = supportTwo({
      [`${H}/item?id=1`]: { status: 200, body: bait },
      [`${H}/item?id=2`]: { status: 200, body: bait },
      [`${H}/item?id=3`]: { status: 200, body: bait },
      [`${H}/list`]: { status: 200, body: page('List', ['/item?id=7']) },
      [`${H}/go`]: { status: 301, body: '', headers: { location: '/item?id=9' } },
    });
    const run = worker();
    const step = (url: string) => run([messageFor(tasks([url], 1)[0]!)]);
    for (const n of [1, 2, 3]) await step(`${H}/item?id=${n}`);
    const given = () =>
      [
        ...cloud.frontier.sent.map((t) => t.url),
        ...[...cloud.parked.entries.values()].map((p) => p.task.url),
      ].filter((url) => url === `${H}/item?id=7`).length;
    // the rule is active: the list's item is merged into /item (whose page is held as /item?id=1)
    await step(`${H}/list`);
    assert.equal(given(), 0);
    // a redirect to a URL the rule rewrites blocks it (docs/duplicate-urls.md): /item?id=7 comes back
    await step(`${H}/go`);
    assert.equal(given(), 1, 'the merged link is queued or parked');
  });

  it('learned in one container, stored once it changes, applied by another to a queued form', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher(routes());
    const { id, tasks } = runningCrawl(
      cloud,
      { seeds: [`${H}/`], ...base, sitemaps: false, duplicateUrlRuleAudit: 0 },
      clock,
    );
    const first = workerOver(cloud, fetcher, clock);
    for (let i = 1; i <= 3; i++) {
      for (const url of [`${H}/d${i}/`, `${H}/d${i}/index.html`])
        await first([messageFor(tasks([url], 1)[0]!)]);
    }
    const stored = cloud.table.rules.get(`${id} ${H}`);
    assert.ok(stored, 'the rules of h.example are stored');
    const rule = stored.records.find((r) => r.name === 'drop-suffix index.html');
    assert.equal(rule?.status, 'active');
    // a page that changes no rule writes nothing
    const writes = cloud.table.calls.filter((c) => c === 'putHostRules').length;
    assert.ok(writes >= 1 && writes <= 3, `${writes} writes for three pairs`);
    await first([messageFor(tasks([`${H}/d5/`], 1)[0]!)]);
    assert.equal(cloud.table.calls.filter((c) => c === 'putHostRules').length, writes);

    // another container, which never saw the host, skips a form queued before the rule
    const second = workerOver(cloud, fetcher, clock);
    await second([messageFor(tasks([`${H}/d4/index.html`], 1)[0]!)]);
    assert.equal(fetcher.count(`${H}/d4/index.html`), 0, 'not fetched');
    const skipped = captured(cloud).find((p) => p.url === `${H}/d4/index.html`);
    assert.equal(skipped?.reason, 'duplicate-url-rule');
    assert.equal(skipped?.detail, `merged into ${H}/d4/ by drop-suffix index.html`);
    assert.ok(
      cloud.frontier.sent.some((t) => t.url === `${H}/d4/`),
      'passed on to the page’s own URL',
    );
    // read with the batch's state (one more key of its BatchGetItem), not a GetItem of its own
    assert.ok(!cloud.table.calls.includes('hostRules'));
  });

  it('a page fetched under the other form before the rule: another container skips its own URL', async () => {
    const { cloud, fetcher, tasks, worker } = supportTwo();
    const first = worker();
    // /d6/index.html is fetched before the rule has its support; /d6/ waits in the queue meanwhile
    const order = [`${H}/d1/`, `${H}/d1/index.html`, `${H}/d6/index.html`, `${H}/d2/`, `${H}/d2/index.html`];
    for (const url of order) await first([messageFor(tasks([url], 1)[0]!)]);
    const stored = cloud.table.rules.get([...cloud.table.rules.keys()][0]!)!;
    assert.equal(stored.records.find((r) => r.name === 'drop-suffix index.html')?.status, 'active');
    assert.ok(
      stored.held?.some(([url]) => url === `${H}/d6/index.html`),
      'the page held under its other form is stored with the rules',
    );

    // another container dequeues /d6/: it never fetched the page, yet does not fetch it again
    const second = worker();
    await second([messageFor(tasks([`${H}/d6/`], 1)[0]!)]);
    assert.equal(fetcher.count(`${H}/d6/`), 0, 'not fetched again');
    const skipped = captured(cloud).find((p) => p.url === `${H}/d6/`);
    assert.equal(skipped?.reason, 'duplicate-url-rule');
    assert.match(skipped?.detail ?? '', /already fetched as http:\/\/h\.example\/d6\/index\.html/);
    // a page fetched under its own form is still fetched by the second container
    await second([messageFor(tasks([`${H}/d3/`], 1)[0]!)]);
    assert.equal(fetcher.count(`${H}/d3/`), 1);
  });

  it('a form fetched by a container that did not learn the rule: shared once that container hears of it', async () => {
    const { fetcher, tasks, worker } = supportTwo();
    const [holder, learner, third] = [worker(), worker(), worker()];
    // the holder fetches /d6/index.html before any rule exists
    await holder!([messageFor(tasks([`${H}/d6/index.html`], 1)[0]!)]);
    // another container learns the rule from its own pairs
    for (const url of [`${H}/d1/`, `${H}/d1/index.html`, `${H}/d2/`, `${H}/d2/index.html`])
      await learner!([messageFor(tasks([url], 1)[0]!)]);
    // the holder's next page of the host brings it the rule: it shares the page it holds
    await holder!([messageFor(tasks([`${H}/d3/`], 1)[0]!)]);
    // a third container dequeues /d6/: not fetched again
    await third!([messageFor(tasks([`${H}/d6/`], 1)[0]!)]);
    assert.equal(fetcher.count(`${H}/d6/`), 0, 'not fetched again');
  });

  it('a form held by a container that serves other hosts: shared at its next batch, through the rules news', async () => {
    const G = 'http://g.example';
    const { cloud, fetcher, tasks, worker } = supportTwo({
      [`${G}/a`]: { status: 200, body: page('g a') },
      [`${G}/b`]: { status: 200, body: page('g b') },
    });
    const [holder, learner, third] = [worker(), worker(), worker()];
    await holder!([messageFor(tasks([`${H}/d6/index.html`], 1)[0]!)]);
    await holder!([messageFor(tasks([`${G}/a`], 1)[0]!)]);
    for (const url of [`${H}/d1/`, `${H}/d1/index.html`, `${H}/d2/`, `${H}/d2/index.html`])
      await learner!([messageFor(tasks([url], 1)[0]!)]);
    const announced = cloud.table.calls.filter((c) => c === 'announceHostRules').length;
    assert.ok(
      announced >= 1 && announced <= 2,
      `${announced} announcements: the candidate and its activation`,
    );
    // the holder's next batch serves another host only: the news brings it h.example's rules
    const reads = cloud.table.calls.filter((c) => c === 'hostRules').length;
    await holder!([messageFor(tasks([`${G}/b`], 1)[0]!)]);
    assert.equal(cloud.table.calls.filter((c) => c === 'hostRules').length, reads + 1, 'one GetItem');
    await third!([messageFor(tasks([`${H}/d6/`], 1)[0]!)]);
    assert.equal(fetcher.count(`${H}/d6/`), 0, 'not fetched again');
    // news already followed is not read again; a container without pages of the host reads none
    await holder!([messageFor(tasks([`${G}/a`], 1)[0]!)]);
    await worker()([messageFor(tasks([`${G}/b`], 1)[0]!)]);
    assert.equal(cloud.table.calls.filter((c) => c === 'hostRules').length, reads + 1);
  });

  it('aliases whose pages another container fetched unregistered: the namespace learned from their declarations', async () => {
    // The pages have no links, so no container registers their bytes (step-content-seen.ts): an
    // alias fetched elsewhere meets no duplicate. Each alias declares its page canonical.
    const N = 'http://n.example';
    const r: Record<string, { status: number; body: string }> = {};
    for (let i = 1; i <= 8; i++) {
      const body = page(`page ${i}`, [], `<link rel="canonical" href="/p-${i}.html">`);
      r[`${N}/p-${i}.html`] = { status: 200, body };
      r[`${N}/node/${i}`] = { status: 200, body };
    }
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher(r);
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${N}/`], ...base, sitemaps: false }, clock);
    const [pages, aliases] = [workerOver(cloud, fetcher, clock), workerOver(cloud, fetcher, clock)];
    // the pages: claimed (linked from elsewhere) and fetched by one container
    const owners = cloud.seen(id).owners;
    for (const t of tasks(
      Array.from({ length: 8 }, (_, k) => `${N}/p-${k + 1}.html`),
      1,
    )) {
      owners.set(t.fp, '00000000000000ff');
      await pages!([messageFor(t)]);
    }
    for (let i = 1; i <= 8; i++) await aliases!([messageFor(tasks([`${N}/node/${i}`], 1)[0]!)]);
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) => fetcher.count(`${N}/node/${i}`)),
      [1, 1, 1, 1, 1, 0, 0, 0],
      'two aliases naming two pages make the rule; its first three merges are audited; the rest are skipped',
    );
    const stored = cloud.table.rules.get(`${id} ${N}`);
    assert.equal(stored?.records.find((x) => x.name === 'alias-namespace /node/<n>')?.status, 'active');
  });

  it('for a minute after the rules changed, a record reads them when its copy is a second old', async () => {
    const { cloud, tasks } = supportTwo();
    const id = [...cloud.table.crawls.keys()][0]!;
    const clock = new TestClock();
    const ctx = new WorkerContainer({ clock, random: () => 0.5 }).contextFor(cloud.table.crawls.get(id)!);
    const table = cloud.table;
    const reads = () => table.calls.filter((c) => c === 'hostRules').length;
    const refresh = (at: number) => refreshHostRules({ table, now: at, log: () => {} }, ctx, id, H);
    await refresh(0);
    assert.equal(reads(), 1, 'first read');
    // no rules yet: the next read after a minute
    await refresh(30_000);
    assert.equal(reads(), 1);
    // another container stores a rule; this one reads it at its minute
    const other = workerOver(cloud, new MemoryFetcher(routes()), clock);
    for (const url of [`${H}/d1/`, `${H}/d1/index.html`, `${H}/d2/`, `${H}/d2/index.html`])
      await other([messageFor(tasks([url], 1)[0]!)]);
    await refresh(60_000);
    assert.equal(reads(), 2);
    // changed: re-read before records a second apart, for a minute
    await refresh(60_500);
    assert.equal(reads(), 2, 'half a second: no');
    await refresh(61_000);
    await refresh(62_000);
    assert.equal(reads(), 4);
    await refresh(125_000);
    assert.equal(reads(), 5, 'a minute later, unchanged since');
    await refresh(126_000);
    assert.equal(reads(), 5, 'back to once a minute');
  });

  it('rules news: a rewriting rule added or changing status is news; support, examples and alias namespaces are not', () => {
    const record = (name: string, rule: HostRuleRecord['rule'], status: RuleStatus, support = 1) => ({
      rule,
      name,
      status,
      support,
      examples: [],
    });
    const suffix = { kind: 'drop-suffix', suffix: 'index.html' } as const;
    const before = rulesShape([record('drop-suffix index.html', suffix, 'candidate')]);
    assert.equal(rulesShape([record('drop-suffix index.html', suffix, 'candidate', 4)]), before);
    assert.notEqual(rulesShape([record('drop-suffix index.html', suffix, 'active')]), before);
    const namespace = { kind: 'alias-namespace', dir: '/node/' } as const;
    assert.equal(
      rulesShape([
        record('drop-suffix index.html', suffix, 'candidate'),
        record('alias-namespace /node/<n>', namespace, 'active'),
      ]),
      before,
    );
  });

  it('once a host has a candidate rule, every page registers its hash: other containers learn from it', async () => {
    // The originals have no links, so no URL claim would register their content hashes
    // (step-content-seen.ts): without registering every page of a host with a candidate, the
    // second container never meets a pair and fetches every other form.
    const { cloud, first, tasks, fetchOwn, otherForms } = caseTwins(8);
    // one pair seen by the first container: a candidate, stored
    await fetchOwn(1);
    await first([messageFor(tasks([`${H}/Topics/T-1.html`], 1)[0]!)]);
    for (let i = 2; i <= 8; i++) await fetchOwn(i);
    assert.deepEqual(
      await otherForms(2),
      [1, 1, 1, 1, 0, 0, 0],
      'the second pair makes the rule; its first three merges are audited; the rest are merged',
    );
    const stored = [...cloud.table.rules.values()][0]!;
    assert.equal(stored.records.find((x) => x.name === 'case-insensitive')?.status, 'active');
  });

  it('a duplicate found after the step (the store read) teaches the rules of another container', async () => {
    // The originals queue a link each (so they register their hashes); the other forms, in
    // another container, queue nothing new: the store's read finds their originals.
    const { cloud, fetchOwn, otherForms } = caseTwins(8, (i) => [`/x/${i}`]);
    for (let i = 1; i <= 8; i++) await fetchOwn(i);
    assert.deepEqual(
      await otherForms(1),
      [1, 1, 1, 1, 1, 0, 0, 0],
      'two pairs teach the rule; its first three merges are audited; the rest are merged',
    );
    const copy = captured(cloud).find((p) => p.url === `${H}/Topics/T-1.html`);
    assert.equal(copy?.duplicateOf, `${H}/topics/t-1.html`);
  });

  it('two containers writing one host: the second merges the first and writes again; blocked wins', async () => {
    const table = new MemoryCrawlTable();
    const clock = new TestClock();
    const config = { seeds: [`${H}/`], duplicateUrlRuleAudit: 0 };
    const cloud = new MemoryCloud();
    const { id } = runningCrawl(cloud, config, clock);
    const crawl = cloud.table.crawls.get(id)!;
    const one = new WorkerContainer({ clock, random: () => 0.5 }).contextFor(crawl);
    const two = new WorkerContainer({ clock, random: () => 0.5 }).contextFor(crawl);
    const env = { table, now: clock.now(), log: () => {} };
    const see = (ctx: typeof one, path: string, content: string) =>
      ctx.urlRules!.observePage({
        url: `${H}${path}`,
        contentHash: content.padEnd(64, '0'),
      });
    await refreshHostRules(env, one, id, H);
    await refreshHostRules(env, two, id, H);
    for (const d of ['a', 'b', 'c']) {
      see(one, `/${d}/`, `${d}1`);
      see(one, `/${d}/index.html`, `${d}1`);
    }
    assert.equal(await saveHostRules(env, one, id, H), true);
    // the second saw the pair that refutes the rule, on its own pages
    see(two, '/x/', 'ff');
    see(two, '/x/index.html', 'ee');
    see(two, '/y/', 'dd');
    see(two, '/y/index.html', 'dd');
    assert.equal(await saveHostRules(env, two, id, H), true);
    const stored = table.rules.get(`${id} ${H}`)!;
    assert.equal(stored.version, 2);
    assert.equal(stored.records.find((r) => r.name === 'drop-suffix index.html')?.status, 'blocked');
    // the first reads it back (after the refresh period) and stops applying the rule
    assert.notEqual(one.urlRules!.rewrite(`${H}/z/index.html`), undefined);
    await refreshHostRules({ ...env, now: env.now + 61_000 }, one, id, H);
    assert.equal(one.urlRules!.rewrite(`${H}/z/index.html`), undefined);
    assert.equal(await saveHostRules(env, one, id, H), false, 'nothing new to write');
    assert.deepEqual(
      (await table.crawlRules(id)).map((r) => [r.origin, r.name, r.status]),
      [[H, 'drop-suffix index.html', 'blocked']],
    );
  });
});
