/**
 * The host item's ledger and politeness state (HostItems: updateHost, doneSeqs, hosts, someHosts),
 * as the worker and the scheduler rely on them: a batch's counts are added once per message
 * sequence (a redelivered batch is "not counted", its politeness state still written), the first
 * request of a host is told once, the ledger position is readable, and the host reads give every
 * host of a crawl (or the first few by name). The FIFO group fields are host-group.contract.ts.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  emptyHostCounts,
  type HostCounts,
  sequenceKey,
} from '../../functions/cloud/messages/crawl-records.ts';
import type { HostItems, HostUpdate } from '../../functions/cloud/ports/cloud-ports.ts';

const counts = (more: Partial<HostCounts>): HostCounts => ({ ...emptyHostCounts(), ...more });

const batch = (firstSeq: string, lastSeq: string, nextAllowedAt: number): HostUpdate => ({
  nextAllowedAt,
  counts: counts({ finished: 2, fetched: 2, requests: 2 }),
  ledger: { firstSeq, lastSeq },
});

/** Registers the contract's tests; `open` gives a fresh table. */
export function hostLedgerContract(open: () => Promise<HostItems>): void {
  it('counts a batch once: the redelivered batch is not counted, its politeness state is written', async () => {
    const table = await open();
    assert.deepEqual(await table.updateHost('c', 'h.example', batch('5', '7', 1_000)), {
      counted: true,
      firstRequest: true,
    });
    const again = await table.updateHost('c', 'h.example', {
      ...batch('5', '7', 2_000),
      crawlDelayMs: 3_000,
    });
    assert.equal(again.counted, false);
    assert.equal(again.firstRequest, false);
    const [host] = await table.hosts('c');
    assert.equal(host?.finished, 2, 'counted once');
    assert.equal(host?.requests, 2);
    assert.equal(host?.nextAllowedAt, 2_000, 'politeness follows the latest write');
    assert.equal(host?.crawlDelayMs, 3_000);
  });

  it('counts the next batch of the group; the first request is told once', async () => {
    const table = await open();
    await table.updateHost('c', 'h.example', batch('5', '7', 0));
    assert.deepEqual(await table.updateHost('c', 'h.example', batch('8', '12', 0)), {
      counted: true,
      firstRequest: false,
    });
    assert.equal((await table.hosts('c'))[0]?.finished, 4);
    assert.deepEqual(
      await table.doneSeqs('c', ['h.example', 'unknown.example']),
      new Map([['h.example', sequenceKey('12')]]),
    );
  });

  it("a root page's credit: added while it waits, taken off by the counted write that handled it, then refused", async () => {
    const table = await open();
    assert.equal(await table.addRootCredit('c', 'h.example', 0.5), false, 'no host item: not written');
    assert.deepEqual(await table.hosts('c'), []);
    await table.updateHost('c', 'h.example', batch('1', '1', 0));
    assert.equal(await table.addRootCredit('c', 'h.example', 0.25), true);
    assert.equal(await table.addRootCredit('c', 'h.example', 0.125), true);
    assert.equal((await table.hosts('c'))[0]?.rootCredit, 0.375, 'credits add up');
    // A redelivered batch (not counted) does not take it off.
    await table.updateHost('c', 'h.example', { ...batch('1', '1', 0), root: { used: 0.375 } });
    assert.equal((await table.hosts('c'))[0]?.rootHandled, undefined);
    // The batch that handled the root used 0.25; 0.125 came after it read the item.
    await table.updateHost('c', 'h.example', { ...batch('2', '3', 0), root: { used: 0.25 } });
    const [host] = await table.hosts('c');
    assert.equal(host?.rootHandled, true);
    assert.equal(host?.rootCredit, 0.125);
    assert.equal(await table.addRootCredit('c', 'h.example', 0.5), false, 'handled: no more');
    assert.equal((await table.hosts('c'))[0]?.rootCredit, 0.125);
  });

  it("the host's last fetched URLs are replaced by a counted write only, in order", async () => {
    const table = await open();
    const first = ['00000000000000a1', 'ffffffffffffffff', '0123456789abcdef'];
    await table.updateHost('c', 'h.example', { ...batch('5', '7', 0), recentlyFetched: first });
    assert.deepEqual((await table.hosts('c'))[0]?.recentlyFetched, first);
    // A redelivered batch's write is not counted: the list stays the first try's.
    await table.updateHost('c', 'h.example', {
      ...batch('5', '7', 0),
      recentlyFetched: ['00000000000000b2'],
    });
    assert.deepEqual((await table.hosts('c'))[0]?.recentlyFetched, first);
    const next = [...first.slice(1), '00000000000000c3'];
    await table.updateHost('c', 'h.example', { ...batch('8', '9', 0), recentlyFetched: next });
    assert.deepEqual((await table.hosts('c'))[0]?.recentlyFetched, next);
  });

  it('a write without a ledger always counts; one without requests is no first request', async () => {
    const table = await open();
    const update = { nextAllowedAt: 0, counts: counts({ enqueued: 3 }) };
    assert.deepEqual(await table.updateHost('c', 'h.example', update), {
      counted: true,
      firstRequest: false,
    });
    assert.deepEqual(await table.updateHost('c', 'h.example', update), {
      counted: true,
      firstRequest: false,
    });
    assert.equal((await table.hosts('c'))[0]?.enqueued, 6);
  });

  it("reads every host of a crawl, or the first few by name, and no other crawl's", async () => {
    const table = await open();
    for (const host of ['c.example', 'a.example', 'b.example']) {
      await table.updateHost('x', host, { nextAllowedAt: 0, counts: counts({ requests: 1 }) });
    }
    await table.updateHost('y', 'z.example', { nextAllowedAt: 0, counts: counts({ requests: 1 }) });
    assert.deepEqual((await table.hosts('x')).map((h) => h.host).sort(), [
      'a.example',
      'b.example',
      'c.example',
    ]);
    assert.deepEqual(
      (await table.someHosts('x', 2)).map((h) => h.host),
      ['a.example', 'b.example'],
    );
    assert.deepEqual(await table.hosts('none'), []);
  });
}
