/**
 * The HostBacklog contract (functions/cloud/ports/cloud-ports.ts), written once, run against every
 * adapter: a host's back queue answers its richest tasks first (most cash, equal cash by
 * fingerprint), every resolved `add` is seen by the next `richest`, and `add` and `remove` are
 * idempotent.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { HostBacklog } from '../../functions/cloud/ports/cloud-ports.ts';
import type { CrawlTask } from '../../functions/core/types.ts';
import { fingerprint } from '../../functions/core/url/fingerprint.ts';

let next = 0;

/** A task for `host` with `cash`; distinct URLs on every call. */
function task(crawlId: string, host: string, cash: number): CrawlTask {
  next += 1;
  const url = `http://${host}/backlog/${next}`;
  return { crawlId, url, fp: fingerprint(url), host, depth: 1, redirects: 0, attempt: 0, cash };
}

/** Most cash first, equal cash by fingerprint (the order every reader agrees on). */
function richestFirst(a: CrawlTask, b: CrawlTask): number {
  return b.cash - a.cash || (a.fp < b.fp ? -1 : a.fp > b.fp ? 1 : 0);
}

/** Registers the contract's tests; `open` gives two instances over one backend. */
export function hostBacklogContract(open: () => Promise<{ a: HostBacklog; b: HostBacklog }>): void {
  it('answers the richest first, equal cash by fingerprint, and only `limit` of them', async () => {
    const { a, b } = await open();
    const cash = [0.5, 3, 0, 1.25, 3, 1e-9, 700, 0.5, 2];
    const tasks = cash.map((c) => task('crawl-1', 'rich.test', c));
    await a.add('crawl-1', 'rich.test', tasks.slice(0, 4));
    await a.add('crawl-1', 'rich.test', tasks.slice(4));
    const sorted = [...tasks].sort(richestFirst);
    assert.deepEqual(await b.richest('crawl-1', 'rich.test', 100), sorted, 'all, richest first, unchanged');
    assert.deepEqual(await b.richest('crawl-1', 'rich.test', 3), sorted.slice(0, 3));
    assert.deepEqual(await b.richest('crawl-1', 'rich.test', 0), []);
  });

  it('is strongly consistent: a resolved add is seen by the next richest, of any instance', async () => {
    const { a, b } = await open();
    for (let i = 0; i < 5; i++) {
      const t = task('crawl-1', 'fresh.test', 10 + i);
      await a.add('crawl-1', 'fresh.test', [t]);
      assert.deepEqual(await b.richest('crawl-1', 'fresh.test', 1), [t], `add ${i} seen at once`);
    }
  });

  it('add is idempotent: the same task added twice waits once', async () => {
    const { a, b } = await open();
    const one = task('crawl-1', 'twice.test', 1);
    const two = task('crawl-1', 'twice.test', 2);
    await a.add('crawl-1', 'twice.test', [one, two]);
    await b.add('crawl-1', 'twice.test', [one]);
    await a.add('crawl-1', 'twice.test', [two, one]);
    // Twice in one call too (one BatchWriteItem refuses a key given twice).
    await a.add('crawl-1', 'twice.test', [one, one]);
    assert.deepEqual(await a.richest('crawl-1', 'twice.test', 10), [two, one]);
  });

  it('remove takes out what richest returned, idempotently, and leaves the rest', async () => {
    const { a, b } = await open();
    const tasks = [5, 4, 3, 2, 1].map((c) => task('crawl-1', 'take.test', c));
    await a.add('crawl-1', 'take.test', tasks);
    const head = await a.richest('crawl-1', 'take.test', 2);
    await a.remove('crawl-1', 'take.test', [...head, ...head]);
    await b.remove('crawl-1', 'take.test', head);
    assert.deepEqual(await b.richest('crawl-1', 'take.test', 10), tasks.slice(2));
    await a.remove('crawl-1', 'take.test', []);
    await a.remove('crawl-1', 'take.test', tasks.slice(2));
    assert.deepEqual(await a.richest('crawl-1', 'take.test', 10), []);
  });

  it('keeps hosts and crawls apart', async () => {
    const { a, b } = await open();
    const x = task('crawl-1', 'apart.test', 1);
    const y = task('crawl-2', 'apart.test', 1);
    const z = task('crawl-1', 'apart-too.test', 1);
    await a.add('crawl-1', 'apart.test', [x]);
    await a.add('crawl-2', 'apart.test', [y]);
    await a.add('crawl-1', 'apart-too.test', [z]);
    assert.deepEqual(await b.richest('crawl-1', 'apart.test', 10), [x]);
    assert.deepEqual(await b.richest('crawl-2', 'apart.test', 10), [y]);
    assert.deepEqual(await b.richest('crawl-1', 'apart-too.test', 10), [z]);
    assert.deepEqual(await b.richest('crawl-3', 'apart.test', 10), []);
  });

  it('copies values: changing a task after add or after richest changes nothing stored', async () => {
    const { a, b } = await open();
    const t = task('crawl-1', 'copy.test', 1);
    const kept = structuredClone(t);
    await a.add('crawl-1', 'copy.test', [t]);
    t.depth = 99;
    const [got] = await a.richest('crawl-1', 'copy.test', 1);
    assert.ok(got !== undefined);
    got.url = 'http://copy.test/changed';
    assert.deepEqual(await b.richest('crawl-1', 'copy.test', 1), [kept]);
  });
}
