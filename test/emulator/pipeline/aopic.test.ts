/**
 * AOPIC in the cloud over real tables and a real queue: the parked set (DynamoParkedUrls), the
 * worker parking a generated link and crediting a parked URL, and the scheduler's step (the
 * lambda page's bonus, admission of the richest parked URLs, the page budget, completion).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DynamoParkedUrls } from '../../../functions/adapters/aws/dynamo-parked-urls.ts';
import { createAwsSchedulerDeps } from '../../../functions/cloud/lambdas/aws-wiring.ts';
import { createScheduler } from '../../../functions/cloud/lambdas/scheduler/handler.ts';
import { decodeTask } from '../../../functions/cloud/messages/task-message.ts';
import { HOLD_BACK_FRESH_MS } from '../../../functions/cloud/worker/aopic-admission.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { seedTasks } from '../../../functions/core/step/crawl-page.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import { fingerprint } from '../../../functions/core/url/fingerprint.ts';
import { type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { QUICK_CRAWL } from './helpers.ts';
import { openWorkerHarness, type WorkerHarness } from './worker-harness.ts';

function html(title: string, links: string[]): string {
  return `<!doctype html><title>${title}</title><p>${title}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}`;
}

describe('AOPIC in the cloud', () => {
  let h: WorkerHarness;
  let site: SiteServer;
  let seq = 0;
  const next = () => ++seq;

  before(async () => {
    h = await openWorkerHarness();
    // /hub links 60 articles and a calendar; a calendar month links the next month (a generated
    // link: a tenth of a share) and an article; articles link nothing new.
    site = await startSite((req, res) => {
      const path = req.url ?? '/';
      if (path === '/robots.txt') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      if (path === '/hub') {
        const links = Array.from({ length: 60 }, (_, i) => `/article/${i}`);
        res.end(html('hub', [...links, '/cal/2026/01']));
      } else if (path.startsWith('/cal/2026/')) {
        const month = Number(path.slice('/cal/2026/'.length));
        res.end(html(`month ${month}`, [`/cal/2026/${String(month + 1).padStart(2, '0')}`, '/article/1']));
      } else if (path === '/article/1') {
        res.end(html('article 1', ['/cal/2026/02']));
      } else {
        res.end(html(`page ${path}`, []));
      }
    }, '127.0.0.9');
  });
  after(async () => {
    await h?.close();
    await site?.close();
  });

  // No sitemaps: these tests count the requests (test/unit/cloud/rules-and-sitemaps.test.ts).
  const base = QUICK_CRAWL;

  async function crawl(extra: Record<string, unknown> = {}) {
    const config = { seeds: [`${site.origin}/hub`], ...base, ...extra };
    const id = await h.startCrawl(config);
    const parsed = parseCrawlConfig(config);
    assert.ok(parsed.ok);
    const canonicalizer = new UrlCanonicalizer(parsed.config);
    const task = (path: string, cash: number, depth = 1): CrawlTask => ({
      ...seedTasks(id, [`${site.origin}${path}`], canonicalizer).tasks[0]!,
      depth,
      cash,
    });
    // The API queued the seed; these tests hand the worker their own records instead.
    for (const record of await h.receive()) await h.settle([record], { batchItemFailures: [] });
    return { id, task };
  }

  const fp = (path: string) => fingerprint(`${site.origin}${path}`);

  describe('the parked set (DynamoParkedUrls)', () => {
    it('parks for the first parker only, lists richest first across shards, credits, unparks once', async () => {
      const { id, task } = await crawl();
      const parked = new DynamoParkedUrls(h.aws.clients.doc, h.env.urlTable);
      const paths = ['/p/a', '/p/b', '/p/c', '/p/d', '/p/e'];
      await parked.park(
        id,
        paths.map((p, i) => ({ task: task(p, i + 1), owner: 'owner-1', key: (i + 1) / 100 })),
      );
      // Another page's park (it lost the URL-seen claim, so the worker never sends it) is refused.
      await parked.park(id, [{ task: task('/p/a', 1), owner: 'owner-2', key: 99 }]);
      const richest = await parked.richest(id, 3);
      assert.deepEqual(
        richest.map((p) => [new URL(p.task.url).pathname, p.key]),
        [
          ['/p/e', 0.05],
          ['/p/d', 0.04],
          ['/p/c', 0.03],
        ],
      );
      assert.equal(richest[0]!.task.fp, fp('/p/e'));
      const gone = await parked.credit(
        id,
        new Map([
          [fp('/p/a'), 0.1],
          [fp('/nowhere'), 0.1],
        ]),
      );
      assert.deepEqual(gone, [fp('/nowhere')]);
      assert.equal(
        new URL((await parked.richest(id, 1))[0]!.task.url).pathname,
        '/p/a',
        'credited to the top',
      );
      assert.equal(await parked.unpark(id, [fp('/p/a'), fp('/p/b')]), 2);
      assert.equal(await parked.unpark(id, [fp('/p/a')]), 0, 'once');
      // The owner's page redelivered after a crash parks again: an admitted URL stays admitted
      // (it is in the frontier), and the others keep their parked state.
      await parked.park(id, [
        { task: task('/p/a', 1), owner: 'owner-1', key: 99 },
        { task: task('/p/c', 3), owner: 'owner-1', key: 0.03 },
      ]);
      assert.equal((await parked.richest(id, 1))[0]!.task.url, `${site.origin}/p/e`, 'not parked again');
      assert.equal((await parked.richest(id, 10)).length, 3);
    });
  });

  describe('trap and duplicate defences in the worker', () => {
    let soft: SiteServer;
    const words = Array.from({ length: 300 }, (_, i) => `word${(i * 7919) % 1000}`).join(' ');
    before(async () => {
      // Every unknown path answers 200 with the same page (a soft-404 site); /print is /story
      // without its navigation; /story links a calendar month years ahead.
      soft = await startSite((req, res) => {
        const path = req.url ?? '/';
        if (path === '/robots.txt') {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html' });
        if (path === '/story') res.end(html(`story ${words}`, ['/print', '/cal/2099/01', '/other']));
        else if (path === '/print') res.end(html(`story ${words}`, []));
        else res.end(html('Sorry, that page does not exist on this site at all.', []));
      }, '127.0.0.10');
    });
    after(() => soft?.close());

    it('probes the site once, flags soft 404s and near-duplicates, refuses far-future calendar links', async () => {
      const config = { seeds: [`${soft.origin}/story`], ...base, soft404Probe: true };
      const id = await h.startCrawl(config);
      const parsed = parseCrawlConfig(config);
      assert.ok(parsed.ok);
      const [story, print, other] = seedTasks(
        id,
        ['/story', '/print', '/other'].map((p) => `${soft.origin}${p}`),
        new UrlCanonicalizer(parsed.config),
      ).tasks;
      const worker = h.worker();
      for (const task of [story!, print!, other!]) {
        const response = await worker([h.record({ ...task, depth: 1 }, next())]);
        assert.deepEqual(response.batchItemFailures, []);
      }
      const probes = soft.paths().filter((p) => p.startsWith('/crawlstack-probe-'));
      assert.equal(probes.length, 1, soft.paths().join(' '));
      await h.archiveAll();
      const pages = await h.pages(id);
      const at = (path: string) => pages.find((p) => p.url === `${soft.origin}${path}`);
      assert.equal(at('/print')?.nearDuplicateOf, `${soft.origin}/story`);
      assert.equal(at('/other')?.reason, 'soft-404');
      assert.ok(at('/story')?.simhash?.match(/^[0-9a-f]{16}$/));
      assert.ok((at('/story')?.importance ?? 0) > 0, 'importance estimate stored with the page');
      const { view } = (await h.progress(id))!;
      assert.equal(view.counters.linksSkipped.calendar, 1);
      assert.equal(view.counters.byReason['soft-404'], 1);
    });
  });

  describe('worker and scheduler', () => {
    it('parks a generated link, credits it from another page, and the scheduler admits it with its cash', async () => {
      const { id, task } = await crawl();
      const worker = h.worker({ creditFlushMs: 0 });
      // The hub: 61 new links at a typical share each, which also warms the admission gauge.
      let response = await worker([h.record(task('/hub', 1), next())]);
      assert.deepEqual(response.batchItemFailures, []);
      // A calendar month: its next month is a generated link (a tenth of a share): parked.
      // Records handed over behind the hub's carry no sequence number: the hub's links are in the
      // queue now, numbered by the stand-in from where the hub's number left off.
      response = await worker([h.record(task('/cal/2026/01', 0.9 / 61, 2), undefined)]);
      assert.deepEqual(response.batchItemFailures, []);
      let { view, aopic } = (await h.progress(id))!;
      assert.equal(view.counters.parked, 1);
      assert.equal(view.counters.discovered, 1 + 61 + 1);
      const parked = new DynamoParkedUrls(h.aws.clients.doc, h.env.urlTable);
      const [waiting] = await parked.richest(id, 10);
      assert.equal(waiting?.task.url, `${site.origin}/cal/2026/02`);
      const before = waiting!.key;
      // Article 1 links the parked month too: a credit, written at the end of its batch.
      response = await worker([h.record(task('/article/1', 0.9 / 61, 2), undefined)]);
      assert.deepEqual(response.batchItemFailures, []);
      const [credited] = await parked.richest(id, 10);
      assert.ok(credited!.key > before + 0.01, `credited: ${before} -> ${credited!.key}`);
      ({ view, aopic } = (await h.progress(id))!);
      assert.ok(aopic.lambda > 0, 'taxes reached the lambda page');
      assert.ok(aopic.history > 1, 'fetched cash became history');

      // The scheduler spreads the lambda page as a bonus; the month is far poorer than the pages
      // being fetched and the frontier holds 60 articles: it stays parked.
      const tick = () => createScheduler(createAwsSchedulerDeps(h.aws.clients, h.env))();
      assert.equal((await tick())[id], 'running');
      let crawlItem = (await h.table.getCrawl(id))!;
      assert.ok(crawlItem.aopic !== undefined && crawlItem.aopic.bonus > 0);
      assert.equal(crawlItem.aopic.admitted, 0);
      assert.equal((await parked.richest(id, 10)).length, 1);
      // The worker crawls the queue dry (the stand-in hands out a group's messages in order); the
      // batch that leaves the frontier dry admits the month itself (dry-admission.ts) instead of
      // waiting for the scheduler's next tick, and the drain goes on to fetch it.
      const drained: { url: string; cash: number }[] = [];
      let parkedKey = credited!.key;
      for (let records = await h.receive(); records.length > 0; records = await h.receive()) {
        for (const record of records) {
          const decoded = decodeTask(record.body);
          if (decoded.ok) drained.push(decoded.task);
        }
        await h.settle(records, await worker(records));
        parkedKey = (await parked.richest(id, 1))[0]?.key ?? parkedKey;
      }
      assert.equal((await h.progress(id))!.view.counters.queued, 0);
      // Each admitted month parks the next one, admitted in its turn when the frontier is dry
      // again, until the calendar rule refuses months too far ahead.
      crawlItem = (await h.table.getCrawl(id))!;
      assert.ok((crawlItem.aopic?.admitted ?? 0) >= 1, `admitted ${crawlItem.aopic?.admitted}`);
      assert.equal((await parked.richest(id, 10)).length, 0);
      const month = drained.find((task) => task.url.endsWith('/cal/2026/02'));
      assert.ok(month !== undefined, 'the admitted month was fetched');
      // The message carries the key, credited once more if article 1's queued copy was fetched
      // (the host's recent fetches drop it as a copy while article 1 is among them; the worker adds
      // the bonus when it fetches).
      assert.ok(month.cash >= credited!.key && month.cash >= parkedKey - 1e-12, `${month.cash} ${parkedKey}`);
      assert.equal((await h.progress(id))!.view.counters.parked, 0);
    });

    it('does not admit beyond the page budget, and a crawl with only parked URLs left over ends', async () => {
      const { id, task } = await crawl({ maxPages: 2 });
      const worker = h.worker();
      await worker([h.record(task('/hub', 1), next())]);
      // A budgeted crawl holds a task far poorer than what its batches have been fetching while
      // they go on (AOPIC's hold-back): the month goes once the hub's batch is no longer recent.
      await new Promise((resolve) => setTimeout(resolve, HOLD_BACK_FRESH_MS));
      await worker([h.record(task('/cal/2026/01', 0.9 / 61, 2), undefined)]);
      assert.equal((await h.progress(id))!.view.counters.parked, 1);
      // Two pages fetched: the budget is spent. The 60 queued articles end as max-pages.
      const queued = (await h.progress(id))!.view.counters;
      assert.equal(queued.queued, 60, JSON.stringify(queued));
      const finish = (await h.progress(id))!.view;
      const tick = () => createScheduler(createAwsSchedulerDeps(h.aws.clients, h.env))();
      assert.equal((await tick())[id], 'running');
      assert.equal((await h.table.getCrawl(id))!.aopic?.admitted ?? 0, 0, 'no budget: nothing admitted');
      assert.equal(finish.counters.fetched, 2);
      // Drain the queue as the worker would: each task over the budget is finished unfetched.
      for (;;) {
        const records = await h.receive();
        if (records.length === 0) break;
        const mine = records.filter(
          (r) => decodeTask(r.body).ok && (decodeTask(r.body) as { task: CrawlTask }).task.crawlId === id,
        );
        await h.settle(records, await worker(mine));
        await h.settle(
          records.filter((r) => !mine.includes(r)),
          { batchItemFailures: [] },
        );
      }
      const view = (await h.progress(id))!.view;
      // The 60 articles. The queued copy of the month these tests handed over by hand is dropped
      // unfetched and uncounted: the month is among the host's recent fetches (a copy).
      assert.equal(view.counters.byReason['max-pages'], 60);
      assert.equal(view.counters.parked, 1);
      await h.archiveAll(); // a crawl is done only once its pages are archived
      // Every URL finished or parked for good, no message of it in SQS, every page archived: the
      // first tick ends it (its own work).
      assert.equal((await tick())[id], 'done');
      const done = (await h.table.getCrawl(id))!;
      assert.equal(done.counters?.parked, 1);
      assert.equal(done.lost, 0);
    });
  });
});
