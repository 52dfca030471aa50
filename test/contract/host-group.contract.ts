/**
 * The host item's FIFO group (HostItems: noteBacklog, startGroup, updateHost's `group`),
 * as functions/cloud/frontier/back-queues.ts relies on it: one starter wins an idle group (or the
 * same starter again), the group's size moves with the ledger exactly once, and a holder's write
 * that would leave the group idle fails with the group as it is when an offer came meanwhile
 * (nothing written), where a redelivered ledger is only "not counted"; the holder's write
 * remembers the starts it ended (`hostGroup` reads them, strongly consistent).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { emptyHostCounts } from '../../functions/cloud/messages/crawl-records.ts';
import type { BatchStateReader, HostItems } from '../../functions/cloud/ports/cloud-ports.ts';
import { readBatchState } from './read-batch-state.ts';

type GroupTable = HostItems & BatchStateReader;

const counts = () => ({ ...emptyHostCounts(), finished: 1 });

async function groupOf(table: GroupTable, crawlId: string, host: string) {
  const state = await readBatchState(table, { hosts: [{ crawlId, host }] });
  return state.hosts.get(`${crawlId} ${host}`)?.group;
}

/** Registers the contract's tests; `open` gives a fresh table. */
export function hostGroupContract(open: () => Promise<GroupTable>): void {
  it('one starter wins an idle group; the same starter may start it again, no one else', async () => {
    const table = await open();
    const noted = await table.noteBacklog('c', 'h.example');
    assert.equal(noted.queued, 0);
    assert.equal(noted.version, 1);
    assert.equal(await table.startGroup('c', 'h.example', 3, 'first'), true);
    assert.equal(await table.startGroup('c', 'h.example', 2, 'second'), false);
    assert.equal(await table.startGroup('c', 'h.example', 3, 'first'), true, 'a starter that came back');
    assert.equal((await table.noteBacklog('c', 'h.example')).queued, 3);
  });

  it('a start on a host item never written creates it; a noted start bumps the version, a plain one not', async () => {
    const table = await open();
    assert.equal(await table.startGroup('c', 'n.example', 2, 'first'), true);
    const plain = await groupOf(table, 'c', 'n.example');
    assert.equal(plain?.queued, 2);
    assert.equal(plain?.version, 0);
    assert.equal(await table.startGroup('c', 'm.example', 2, 'first', { noted: true }), true);
    const noted = await groupOf(table, 'c', 'm.example');
    assert.equal(noted?.version, 1);
    assert.equal(await table.startGroup('c', 'm.example', 2, 'second', { noted: true }), false);
    assert.equal((await groupOf(table, 'c', 'm.example'))?.version, 1, 'a failed start notes nothing');
  });

  it("the back queue's credits are stored with a counted ledger write only, replaced whole, removed when empty", async () => {
    const table = await open();
    await table.startGroup('c', 'k.example', 2, 'first');
    const credits = new Map([
      ['00ff00ff00ff00ff', { amount: 0.125, misses: 0 }],
      ['0123456789abcdef', { amount: 1e-7, misses: 3 }],
    ]);
    const write = (firstSeq: string, owed: typeof credits) => ({
      nextAllowedAt: 0,
      counts: counts(),
      ledger: { firstSeq, lastSeq: firstSeq },
      group: { queuedDelta: 0, credits: owed },
    });
    assert.equal((await table.updateHost('c', 'k.example', write('10', credits))).counted, true);
    assert.deepEqual((await groupOf(table, 'c', 'k.example'))?.credits, credits);
    const later = new Map([['00ff00ff00ff00ff', { amount: 0.5, misses: 1 }]]);
    assert.equal((await table.updateHost('c', 'k.example', write('10', later))).counted, false);
    assert.deepEqual(
      (await groupOf(table, 'c', 'k.example'))?.credits,
      credits,
      'a redelivered batch writes none',
    );
    await table.updateHost('c', 'k.example', write('11', later));
    assert.deepEqual((await groupOf(table, 'c', 'k.example'))?.credits, later, 'replaced, not merged');
    await table.updateHost('c', 'k.example', write('12', new Map()));
    assert.equal((await groupOf(table, 'c', 'k.example'))?.credits, undefined);
  });

  it('the ledger write moves the group once and ends the start; a redelivered one is not counted', async () => {
    const table = await open();
    await table.noteBacklog('c', 'g.example');
    await table.startGroup('c', 'g.example', 3, 'first');
    const write = {
      nextAllowedAt: 0,
      counts: counts(),
      ledger: { firstSeq: '10', lastSeq: '12' },
      group: { queuedDelta: -1, drained: 1 },
    };
    assert.equal((await table.updateHost('c', 'g.example', write)).counted, true);
    const again = await table.updateHost('c', 'g.example', write);
    assert.equal(again.counted, false);
    assert.equal(again.moved, undefined, 'a redelivered ledger is not a moved group');
    const group = await groupOf(table, 'c', 'g.example');
    assert.equal(group?.queued, 2);
    assert.equal(group?.drained, 1);
    assert.equal(group?.starter, undefined, 'the holder ended the start');
    assert.equal(await table.startGroup('c', 'g.example', 1, 'first'), false);
  });

  it('a holder remembers the starts it ended, the last few, counted once; hostGroup reads them', async () => {
    const table = await open();
    assert.deepEqual(await table.hostGroup('c', 'e.example'), { queued: 0, version: 0, drained: 0 });
    const end = (seq: string, ended: string[]) =>
      table.updateHost('c', 'e.example', {
        nextAllowedAt: 0,
        counts: counts(),
        ledger: { firstSeq: seq, lastSeq: seq },
        group: { queuedDelta: 0, ended },
      });
    await table.startGroup('c', 'e.example', 1, 'links:a');
    assert.equal((await end('10', ['links:a'])).counted, true);
    assert.equal((await end('10', ['links:a', 'again'])).counted, false);
    const group = await table.hostGroup('c', 'e.example');
    assert.deepEqual(group.ended, ['links:a'], 'a redelivered ledger writes none');
    assert.equal(group.starter, undefined);
    assert.equal(group.queued, 1);
    assert.deepEqual(
      (await groupOf(table, 'c', 'e.example'))?.ended,
      ['links:a'],
      'the batch reads them too',
    );
    await end('11', ['b', 'c', 'd', 'e']);
    assert.deepEqual((await table.hostGroup('c', 'e.example')).ended, ['b', 'c', 'd', 'e'], 'replaced whole');
  });

  it('a write that would leave the group idle fails, writing nothing, when an offer came since', async () => {
    const table = await open();
    await table.noteBacklog('c', 'i.example');
    await table.startGroup('c', 'i.example', 1, 'first');
    const seen = (await groupOf(table, 'c', 'i.example'))!;
    await table.noteBacklog('c', 'i.example'); // an offer while the holder works
    const result = await table.updateHost('c', 'i.example', {
      nextAllowedAt: 0,
      counts: counts(),
      ledger: { firstSeq: '20', lastSeq: '20' },
      group: { queuedDelta: -1, idleAt: seen.version },
    });
    assert.equal(result.counted, false);
    assert.equal(result.moved?.version, seen.version + 1);
    assert.equal(result.moved?.queued, 1, 'nothing written');
    const retry = await table.updateHost('c', 'i.example', {
      nextAllowedAt: 0,
      counts: counts(),
      ledger: { firstSeq: '20', lastSeq: '20' },
      group: { queuedDelta: -1, idleAt: result.moved!.version },
    });
    assert.equal(retry.counted, true);
    assert.equal((await groupOf(table, 'c', 'i.example'))?.queued, 0);
  });
}
