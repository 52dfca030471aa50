/**
 * The SeenStore contract (functions/core/ports.ts), written once, run against every adapter.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ClaimGate, OwnedSeenStore } from '../../functions/cloud/ports/cloud-ports.ts';
import type { SeenStore } from '../../functions/core/ports.ts';
import type { Fingerprint } from '../../functions/core/types.ts';

/** Two stores over one backend (two workers), fresh for each test. */
export interface SeenStorePair {
  a: SeenStore;
  b: SeenStore;
}

let next = 0;
/** Distinct fingerprints for each call (stores may be shared across tests). */
function fps(n: number): Fingerprint[] {
  return Array.from({ length: n }, () => {
    next += 1;
    return (0x1000_0000_0000_0000n + BigInt(next) * 0x9e37_79b9n).toString(16).padStart(16, '0').slice(-16);
  });
}

/** Each fingerprint's host: three hosts, so a claim spans several of a store kept by host. */
export function hostsOf(batch: readonly Fingerprint[]): string[] {
  return batch.map((fp) => `h${Number.parseInt(fp.slice(-1), 16) % 3}.example`);
}

/** A claim as the crawl step makes it: with each fingerprint's host. */
function claim(store: SeenStore, batch: readonly Fingerprint[], owner: string): Promise<boolean[]> {
  return store.claim(batch, owner, { hosts: hostsOf(batch) });
}

/** A claim through the worker's gate. */
function gated(
  store: OwnedSeenStore,
  batch: readonly Fingerprint[],
  owner: string,
  gate: ClaimGate,
): Promise<boolean[]> {
  return store.claim(batch, owner, { hosts: hostsOf(batch), gate });
}

const OWNER = 'aaaaaaaaaaaaaaaa';
const OTHER = 'bbbbbbbbbbbbbbbb';

/** Registers the contract's tests in the current `describe`. */
export function seenStoreContract(open: () => Promise<SeenStorePair>): void {
  it('claims new fingerprints, and answers false to another owner afterwards', async () => {
    const { a } = await open();
    const batch = fps(5);
    assert.deepEqual(await claim(a, batch, OWNER), [true, true, true, true, true]);
    assert.deepEqual(await claim(a, batch, OTHER), [false, false, false, false, false]);
  });

  it('answers true again to the same owner (a redelivered parent re-enqueues its children)', async () => {
    const { a, b } = await open();
    const batch = fps(3);
    assert.deepEqual(await claim(a, batch, OWNER), [true, true, true]);
    assert.deepEqual(await claim(a, batch, OWNER), [true, true, true], 'idempotent per (fp, owner)');
    assert.deepEqual(await claim(b, batch, OWNER), [true, true, true], 'through another instance too');
  });

  it('answers in input order for a mix of new, own and foreign fingerprints', async () => {
    const { a } = await open();
    const [x, y, z, w] = fps(4) as [string, string, string, string];
    await claim(a, [x], OWNER);
    await claim(a, [y], OTHER);
    assert.deepEqual(await claim(a, [z, y, x, w], OWNER), [true, false, true, true]);
    assert.deepEqual(await claim(a, [], OWNER), []);
  });

  it('a fingerprint claimed through one instance is seen through another, by any host mix', async () => {
    const { a, b } = await open();
    const batch = fps(12);
    assert.deepEqual(await claim(a, batch.slice(0, 6), OWNER), Array(6).fill(true));
    assert.deepEqual(await claim(b, batch, OTHER), [...Array(6).fill(false), ...Array(6).fill(true)]);
    assert.deepEqual(await claim(a, batch, OWNER), [...Array(6).fill(true), ...Array(6).fill(false)]);
  });

  it('of two claimers racing for the same new fingerprints, exactly one wins each', async () => {
    const { a, b } = await open();
    const batch = fps(20);
    const [ra, rb] = await Promise.all([
      Promise.all(batch.map((fp) => claim(a, [fp], OWNER))),
      Promise.all(batch.map((fp) => claim(b, [fp], OTHER))),
    ]);
    for (let i = 0; i < batch.length; i++) {
      const wins = Number(ra[i]![0]) + Number(rb[i]![0]);
      assert.equal(wins, 1, `fingerprint ${batch[i]} claimed by ${wins} claimers`);
    }
  });
}

/**
 * The cloud worker's OwnedSeenStore (functions/cloud/ports/cloud-ports.ts) on top of SeenStore:
 * the gate is shown every fingerprint found unclaimed, never one this store knows claimed (a store
 * that keeps claims by host may also show one another store claimed since it last read that
 * host's log: its answer stays false), and, answering false, claims none of them; the store
 * remembers the owner it found for a fingerprint it was asked about.
 */
export function ownedSeenStoreContract(open: () => Promise<{ a: OwnedSeenStore; b: OwnedSeenStore }>): void {
  it('the gate sees the unclaimed, not its own claims; refused, they stay unclaimed and the rest answer as ever', async () => {
    const { a, b } = await open();
    const [own, foreign, fresh1, fresh2] = fps(4) as [string, string, string, string];
    await claim(a, [own], OWNER);
    await claim(b, [foreign], OTHER);
    const shown: string[][] = [];
    const refused = await gated(a, [fresh1, own, foreign, fresh2], OWNER, async (unclaimed) => {
      shown.push([...unclaimed].sort());
      return false;
    });
    assert.equal(shown.length, 1, 'the gate is asked once');
    const seenByGate = shown[0]!.filter((fp) => fp !== foreign);
    assert.deepEqual(seenByGate, [fresh1, fresh2].sort(), 'every unclaimed one, and not its own claim');
    assert.deepEqual(refused, [false, true, false, false]);
    assert.deepEqual(
      await gated(b, [fresh1], OTHER, async () => true),
      [true],
      'refused by the gate: not claimed',
    );
    const passed = await gated(a, [fresh1, fresh2, foreign], OWNER, async () => true);
    assert.deepEqual(passed, [false, true, false]);
    assert.equal(a.ownerOf(foreign), OTHER, 'the owner found is remembered');
    assert.equal(a.ownerOf(fresh1), OTHER);
  });
}
