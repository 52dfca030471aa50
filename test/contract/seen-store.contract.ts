/**
 * The SeenStore contract (functions/core/ports.ts), written once, run against every adapter.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { OwnedSeenStore } from '../../functions/cloud/ports/cloud-ports.ts';
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

const OWNER = 'aaaaaaaaaaaaaaaa';
const OTHER = 'bbbbbbbbbbbbbbbb';

/** Registers the contract's tests in the current `describe`. */
export function seenStoreContract(open: () => Promise<SeenStorePair>): void {
  it('claims new fingerprints, and answers false to another owner afterwards', async () => {
    const { a } = await open();
    const batch = fps(5);
    assert.deepEqual(await a.claim(batch, OWNER), [true, true, true, true, true]);
    assert.deepEqual(await a.claim(batch, OTHER), [false, false, false, false, false]);
  });

  it('answers true again to the same owner (a redelivered parent re-enqueues its children)', async () => {
    const { a, b } = await open();
    const batch = fps(3);
    assert.deepEqual(await a.claim(batch, OWNER), [true, true, true]);
    assert.deepEqual(await a.claim(batch, OWNER), [true, true, true], 'idempotent per (fp, owner)');
    assert.deepEqual(await b.claim(batch, OWNER), [true, true, true], 'through another instance too');
  });

  it('answers in input order for a mix of new, own and foreign fingerprints', async () => {
    const { a } = await open();
    const [x, y, z, w] = fps(4) as [string, string, string, string];
    await a.claim([x], OWNER);
    await a.claim([y], OTHER);
    assert.deepEqual(await a.claim([z, y, x, w], OWNER), [true, false, true, true]);
    assert.deepEqual(await a.claim([], OWNER), []);
  });

  it('has() is false before a claim and true after', async () => {
    const { a, b } = await open();
    const [x] = fps(1) as [string];
    assert.equal(await a.has(x), false);
    await a.claim([x], OWNER);
    assert.equal(await a.has(x), true);
    assert.equal(await b.has(x), true);
  });

  it('of two claimers racing for the same new fingerprints, exactly one wins each', async () => {
    const { a, b } = await open();
    const batch = fps(20);
    const [ra, rb] = await Promise.all([
      Promise.all(batch.map((fp) => a.claim([fp], OWNER))),
      Promise.all(batch.map((fp) => b.claim([fp], OTHER))),
    ]);
    for (let i = 0; i < batch.length; i++) {
      const wins = Number(ra[i]![0]) + Number(rb[i]![0]);
      assert.equal(wins, 1, `fingerprint ${batch[i]} claimed by ${wins} claimers`);
    }
  });
}

/**
 * The cloud worker's OwnedSeenStore (functions/cloud/ports/cloud-ports.ts) on top of SeenStore:
 * the gate is shown exactly the fingerprints found unclaimed and, answering false, claims none of
 * them; the store remembers the owner it found for a fingerprint it was asked about.
 */
export function ownedSeenStoreContract(open: () => Promise<{ a: OwnedSeenStore; b: OwnedSeenStore }>): void {
  it('the gate sees only the unclaimed; refused, they stay unclaimed and the rest answer as ever', async () => {
    const { a, b } = await open();
    const [own, foreign, fresh1, fresh2] = fps(4) as [string, string, string, string];
    await a.claim([own], OWNER);
    await b.claim([foreign], OTHER);
    const shown: string[][] = [];
    const refused = await a.claim([fresh1, own, foreign, fresh2], OWNER, async (unclaimed) => {
      shown.push([...unclaimed].sort());
      return false;
    });
    assert.deepEqual(shown, [[fresh1, fresh2].sort()]);
    assert.deepEqual(refused, [false, true, false, false]);
    assert.equal(await b.has(fresh1), false, 'refused by the gate: not claimed');
    const passed = await a.claim([fresh1, fresh2], OWNER, async () => true);
    assert.deepEqual(passed, [true, true]);
    assert.equal(a.ownerOf(foreign), OTHER, 'the owner found is remembered');
  });
}
