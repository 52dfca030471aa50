/**
 * The crawl items of the crawl table, as the API and the scheduler rely on them (CrawlRegistry):
 * a crawl id is created once, a read gives a copy, the catalog lists every crawl newest first in
 * pages that add up to all of them, a cancel moves only a running crawl, a finish leaves the
 * registry and keeps a cancelled crawl cancelled. With them, the crawl item's fields written apart
 * (CrawlAopicStore, AllowedHosts): a published AOPIC state never overwrites the admitted count,
 * allowed hosts are a set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import {
  aggregateCounters,
  type CompletionWatch,
  type CrawlCounters,
  type CrawlRecord,
  emptyHostCounts,
} from '../../functions/cloud/messages/crawl-records.ts';
import type {
  AllowedHosts,
  CrawlAopicStore,
  CrawlRegistry,
} from '../../functions/cloud/ports/cloud-ports.ts';
import { parseCrawlConfig } from '../../functions/core/config.ts';

/** A running crawl created at `createdAt` (ISO), with a fresh id (the catalog's keys want UUIDs). */
export function runningCrawl(createdAt = '2026-11-28T10:00:00.000Z'): CrawlRecord {
  const parsed = parseCrawlConfig({ seeds: ['http://registry.test/'] });
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return { id: randomUUID(), status: 'running', createdAt, config: parsed.config, seeds: 1 };
}

/** Counters as a crawl's end freezes them: two pages fetched of three found. */
function frozenCounters(): CrawlCounters {
  const host = { ...emptyHostCounts(), enqueued: 2, finished: 2, fetched: 2, requests: 2 };
  return aggregateCounters(1, [host]).counters;
}

/** Registers the contract's tests; `open` gives a fresh table. */
export function crawlRegistryContract(open: () => Promise<CrawlRegistry>): void {
  it('creates a crawl once: a second create of the id rejects and keeps the first', async () => {
    const table = await open();
    const crawl = runningCrawl();
    await table.createCrawl(crawl);
    await assert.rejects(table.createCrawl({ ...crawl, seeds: 7 }));
    const read = await table.getCrawl(crawl.id);
    assert.deepEqual(read, crawl);
    assert.deepEqual(await table.registeredCrawls(), [crawl.id]);
  });

  it('reads undefined for an unknown crawl and gives copies (changing one changes nothing stored)', async () => {
    const table = await open();
    assert.equal(await table.getCrawl(randomUUID()), undefined);
    const crawl = runningCrawl();
    await table.createCrawl(crawl);
    crawl.seeds = 99;
    const read = await table.getCrawl(crawl.id);
    assert.equal(read?.seeds, 1, 'the store kept what was written, not the caller object');
    if (read !== undefined) read.status = 'done';
    assert.equal((await table.getCrawl(crawl.id))?.status, 'running');
  });

  it('lists every crawl newest first, in pages that add up to all of them once', async () => {
    const table = await open();
    const crawls = [1, 2, 3, 4, 5].map((minute) => runningCrawl(`2026-11-28T10:0${minute}:00.000Z`));
    for (const crawl of [crawls[2]!, crawls[0]!, crawls[4]!, crawls[1]!, crawls[3]!])
      await table.createCrawl(crawl);
    const ids: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const listed = await table.listCrawls(2, after);
      assert.ok(listed !== undefined, 'a `next` this store handed out is accepted');
      assert.ok(listed.crawls.length <= 2);
      ids.push(...listed.crawls.map((c) => c.id));
      if (listed.next === undefined) break;
      after = listed.next;
    }
    assert.deepEqual(ids, crawls.map((c) => c.id).reverse());
    const first = await table.listCrawls(10);
    assert.equal(first?.crawls[0]?.status, 'running', 'pages carry the crawl records');
  });

  it('lists nothing for an `after` it did not hand out', async () => {
    const table = await open();
    await table.createCrawl(runningCrawl());
    assert.equal(await table.listCrawls(5, 'not a key'), undefined);
  });

  it('cancels only a running crawl; unknown ids resolve undefined', async () => {
    const table = await open();
    assert.equal(await table.cancelCrawl(randomUUID()), undefined);
    const running = runningCrawl();
    await table.createCrawl(running);
    assert.equal(await table.cancelCrawl(running.id), 'cancelled');
    assert.equal(await table.cancelCrawl(running.id), 'cancelled', 'a second cancel changes nothing');
    assert.deepEqual(
      await table.registeredCrawls(),
      [running.id],
      'a cancelled crawl drains in the registry',
    );
    const done = runningCrawl();
    await table.createCrawl(done);
    await table.finishCrawl(done.id, {
      status: 'done',
      finishedAt: '2026-11-28T11:00:00.000Z',
      counters: frozenCounters(),
      lost: 0,
    });
    assert.equal(await table.cancelCrawl(done.id), 'done');
  });

  it('finishes a crawl: it leaves the registry with its counters frozen; a cancelled one stays cancelled', async () => {
    const table = await open();
    const a = runningCrawl();
    const b = runningCrawl();
    await table.createCrawl(a);
    await table.createCrawl(b);
    const frozen = frozenCounters();
    await table.finishCrawl(a.id, {
      status: 'failed',
      finishedAt: '2026-11-28T11:00:00.000Z',
      counters: frozen,
      lost: 1,
    });
    const finished = await table.getCrawl(a.id);
    assert.equal(finished?.status, 'failed');
    assert.equal(finished?.finishedAt, '2026-11-28T11:00:00.000Z');
    assert.equal(finished?.lost, 1);
    assert.deepEqual(finished?.counters, frozen);
    assert.deepEqual(await table.registeredCrawls(), [b.id]);
    await table.cancelCrawl(b.id);
    await table.finishCrawl(b.id, {
      status: 'done',
      finishedAt: '2026-11-28T12:00:00.000Z',
      counters: frozen,
      lost: 0,
    });
    assert.equal((await table.getCrawl(b.id))?.status, 'cancelled');
    assert.deepEqual(await table.registeredCrawls(), []);
  });

  it('stores and clears the scheduler watch', async () => {
    const table = await open();
    const crawl = runningCrawl();
    await table.createCrawl(crawl);
    const watch: CompletionWatch = { kind: 'idle', signature: '2/3', since: 1_000, ticks: 2 };
    await table.setWatch(crawl.id, watch);
    assert.deepEqual((await table.getCrawl(crawl.id))?.watch, watch);
    await table.setWatch(crawl.id, undefined);
    assert.equal((await table.getCrawl(crawl.id))?.watch, undefined);
  });
}

/** Registers the tests of the crawl item's separately written fields; `open` gives a fresh table. */
export function crawlItemFieldsContract(
  open: () => Promise<CrawlRegistry & CrawlAopicStore & AllowedHosts>,
): void {
  it('a published AOPIC state keeps the admitted count, which only addAdmitted moves', async () => {
    const table = await open();
    const crawl = runningCrawl();
    await table.createCrawl(crawl);
    await table.addAdmitted(crawl.id, 3);
    await table.setAopic(crawl.id, { bonus: 1.5, lambdaSpent: 2, admitted: 0, history: 4, fetched: 5 });
    await table.addAdmitted(crawl.id, 2);
    await table.addAdmitted(crawl.id, 0);
    assert.deepEqual((await table.getCrawl(crawl.id))?.aopic, {
      bonus: 1.5,
      lambdaSpent: 2,
      admitted: 5,
      history: 4,
      fetched: 5,
    });
  });

  it('allowed hosts are a set on the crawl item', async () => {
    const table = await open();
    const crawl = runningCrawl();
    await table.createCrawl(crawl);
    await table.addAllowedHosts(crawl.id, ['b.example', 'a.example']);
    await table.addAllowedHosts(crawl.id, ['a.example', 'c.example']);
    await table.addAllowedHosts(crawl.id, []);
    assert.deepEqual((await table.getCrawl(crawl.id))?.allowedHosts?.sort(), [
      'a.example',
      'b.example',
      'c.example',
    ]);
  });
}
