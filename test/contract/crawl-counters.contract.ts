/**
 * A crawl's running totals in the crawl table (CrawlCounterStore), as the worker and the API rely
 * on them: shards add up (every addition counts, to whichever shard, and a crawl's shards are its
 * own), and the `budget` item adds the pages fetched (read with the batch state). Counting a
 * redelivered batch once is the host ledger's job (host-ledger.contract.ts), not the shards'.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  aggregateCounters,
  COUNTER_SHARDS,
  type CounterShard,
  emptyHostCounts,
} from '../../functions/cloud/messages/crawl-records.ts';
import type { BatchStateReader, CrawlCounterStore } from '../../functions/cloud/ports/cloud-ports.ts';
import { readBatchState } from './read-batch-state.ts';

type CounterTable = CrawlCounterStore & BatchStateReader;

const shard = (counts: Partial<CounterShard>): CounterShard => ({
  ...emptyHostCounts(),
  hosts: 0,
  ...counts,
});

async function budgetOf(table: CounterTable, crawlId: string): Promise<number | undefined> {
  const state = await readBatchState(table, { budgets: [crawlId] });
  return state.budgets.get(crawlId);
}

/** Registers the contract's tests; `open` gives a fresh table. */
export function crawlCountersContract(open: () => Promise<CounterTable>): void {
  it('starts with no shards', async () => {
    const table = await open();
    assert.deepEqual(await table.counterShards('c'), []);
  });

  it('shards add up: every addition counts once, whichever shard it went to', async () => {
    const table = await open();
    await table.addToShard('c', 0, shard({ finished: 2, fetched: 2, requests: 3, bytes: 100, hosts: 1 }));
    await table.addToShard(
      'c',
      COUNTER_SHARDS - 1,
      shard({ finished: 1, fetched: 1, requests: 1, bytes: 50 }),
    );
    await table.addToShard('c', 0, shard({ finished: 1, failed: 1, requests: 1, hosts: 1 }));
    const shards = await table.counterShards('c');
    assert.ok(shards.length <= 2, 'one item per shard written');
    const sum = shards.reduce(
      (acc, s) => ({
        finished: acc.finished + s.finished,
        fetched: acc.fetched + s.fetched,
        failed: acc.failed + s.failed,
        requests: acc.requests + s.requests,
        bytes: acc.bytes + s.bytes,
        hosts: acc.hosts + s.hosts,
      }),
      { finished: 0, fetched: 0, failed: 0, requests: 0, bytes: 0, hosts: 0 },
    );
    assert.deepEqual(sum, { finished: 4, fetched: 3, failed: 1, requests: 5, bytes: 150, hosts: 2 });
    const { counters } = aggregateCounters(1, shards);
    assert.equal(counters.fetched, 3, 'the API sums shards as it sums host items');
  });

  it("a crawl's shards are its own", async () => {
    const table = await open();
    await table.addToShard('a', 1, shard({ finished: 5 }));
    await table.addToShard('b', 1, shard({ finished: 7 }));
    const finished = async (id: string) =>
      (await table.counterShards(id)).reduce((n, s) => n + s.finished, 0);
    assert.equal(await finished('a'), 5);
    assert.equal(await finished('b'), 7);
  });

  it('the budget adds the pages fetched; nothing is stored before the first page', async () => {
    const table = await open();
    await table.addBudget('c', 0);
    assert.equal(await budgetOf(table, 'c'), undefined);
    await table.addBudget('c', 3);
    await table.addBudget('c', 2);
    assert.equal(await budgetOf(table, 'c'), 5);
    assert.equal(await budgetOf(table, 'other'), undefined);
  });

  it("the budget item keeps the crawl's dispatch average, as the last batch to fetch set it", async () => {
    const table = await open();
    await table.addBudget('c', 2);
    assert.equal((await readBatchState(table, { budgets: ['c'] })).dispatch.get('c'), undefined);
    await table.addBudget('c', 3, { cash: 0.25, at: 1_000 });
    await table.addBudget('c', 1, { cash: 0.2, at: 2_000 });
    const state = await readBatchState(table, { budgets: ['c'] });
    assert.equal(state.budgets.get('c'), 6);
    assert.deepEqual(state.dispatch.get('c'), { cash: 0.2, at: 2_000 });
  });
}
