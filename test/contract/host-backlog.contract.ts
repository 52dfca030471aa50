/**
 * The HostBacklog contract (functions/cloud/ports/cloud-ports.ts), written once, run against every
 * adapter: a host's back queue keeps tasks as turns of at most BACKLOG_TURN cut richest first and
 * answers its richest turn first, every resolved `add` is seen by the next `richest`, and `add` and
 * `remove` are idempotent.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BACKLOG_TURN } from '../../functions/cloud/lambda-settings.ts';
import type { BacklogTurn, HostBacklog } from '../../functions/cloud/ports/cloud-ports.ts';
import type { CrawlTask } from '../../functions/core/types.ts';
import { fingerprint } from '../../functions/core/url/fingerprint.ts';

let next = 0;

/** A task for `host` with `cash`; distinct URLs on every call. */
function task(crawlId: string, host: string, cash: number): CrawlTask {
  next += 1;
  const url = `http://${host}/backlog/${next}`;
  return { crawlId, url, fp: fingerprint(url), host, depth: 1, redirects: 0, attempt: 0, cash };
}

/** Most cash first, equal cash in the order added. */
function richestFirst(a: CrawlTask, b: CrawlTask): number {
  return b.cash - a.cash;
}

const urls = (turns: readonly BacklogTurn[]) => turns.map((t) => t.tasks.map((x) => x.url));

/** Registers the contract's tests; `open` gives two instances over one backend. */
export function hostBacklogContract(open: () => Promise<{ a: HostBacklog; b: HostBacklog }>): void {
  it('keeps tasks as turns of at most BACKLOG_TURN, richest first; answers the richest turn first', async () => {
    const { a, b } = await open();
    const cash = [0.5, 4, 0, 1.25, 3, 1e-9, 700, 0.5, 2, 9, 8, 7, 6, 5];
    const tasks = cash.map((c) => task('crawl-1', 'rich.test', c));
    await a.add('crawl-1', 'rich.test', tasks.slice(0, 4));
    await a.add('crawl-1', 'rich.test', tasks.slice(4));
    const first = [...tasks.slice(0, 4)].sort(richestFirst);
    const second = [...tasks.slice(4)].sort(richestFirst);
    const expected = [
      second.slice(0, BACKLOG_TURN),
      first,
      second.slice(BACKLOG_TURN, 2 * BACKLOG_TURN),
    ].sort((x, y) => y[0]!.cash - x[0]!.cash);
    const all = await b.richest('crawl-1', 'rich.test', 100);
    assert.deepEqual(
      all.map((t) => t.tasks),
      expected,
      'each add cut into turns, richest turn first, each unchanged',
    );
    assert.deepEqual(urls(await b.richest('crawl-1', 'rich.test', 1)), urls(all.slice(0, 1)));
    assert.deepEqual(await b.richest('crawl-1', 'rich.test', 0), []);
  });

  it('is strongly consistent: a resolved add is seen by the next richest, of any instance', async () => {
    const { a, b } = await open();
    for (let i = 0; i < 5; i++) {
      const t = task('crawl-1', 'fresh.test', 10 + i);
      await a.add('crawl-1', 'fresh.test', [t]);
      assert.deepEqual(
        (await b.richest('crawl-1', 'fresh.test', 1)).map((x) => x.tasks),
        [[t]],
        `add ${i} seen at once`,
      );
    }
  });

  it('add is idempotent: the same tasks added again wait once', async () => {
    const { a, b } = await open();
    const one = task('crawl-1', 'twice.test', 1);
    const two = task('crawl-1', 'twice.test', 2);
    await a.add('crawl-1', 'twice.test', [one, two]);
    await b.add('crawl-1', 'twice.test', [two, one]);
    await a.add('crawl-1', 'twice.test', [one, two, one]);
    assert.deepEqual(
      (await a.richest('crawl-1', 'twice.test', 10)).map((t) => t.tasks),
      [[two, one]],
    );
  });

  it('remove takes out what richest returned, idempotently, and leaves the rest', async () => {
    const { a, b } = await open();
    const early = [50, 40].map((c) => task('crawl-1', 'take.test', c));
    const late = [5, 4].map((c) => task('crawl-1', 'take.test', c));
    await a.add('crawl-1', 'take.test', early);
    await a.add('crawl-1', 'take.test', late);
    const head = await a.richest('crawl-1', 'take.test', 1);
    await a.remove('crawl-1', 'take.test', [...head, ...head]);
    await b.remove('crawl-1', 'take.test', head);
    assert.deepEqual(
      (await b.richest('crawl-1', 'take.test', 10)).map((t) => t.tasks),
      [late],
    );
    await a.remove('crawl-1', 'take.test', []);
    await a.remove('crawl-1', 'take.test', await a.richest('crawl-1', 'take.test', 10));
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
    const only = async (crawl: string, host: string) =>
      (await b.richest(crawl, host, 10)).flatMap((t) => t.tasks);
    assert.deepEqual(await only('crawl-1', 'apart.test'), [x]);
    assert.deepEqual(await only('crawl-2', 'apart.test'), [y]);
    assert.deepEqual(await only('crawl-1', 'apart-too.test'), [z]);
    assert.deepEqual(await only('crawl-3', 'apart.test'), []);
  });

  it('copies values: changing a task after add or after richest changes nothing stored', async () => {
    const { a, b } = await open();
    const t = task('crawl-1', 'copy.test', 1);
    const kept = structuredClone(t);
    await a.add('crawl-1', 'copy.test', [t]);
    t.depth = 99;
    const [got] = await a.richest('crawl-1', 'copy.test', 1);
    assert.ok(got !== undefined);
    got.tasks[0]!.url = 'http://copy.test/changed';
    assert.deepEqual((await b.richest('crawl-1', 'copy.test', 1))[0]?.tasks, [kept]);
  });
}
