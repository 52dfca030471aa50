import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClockCache } from '../../../functions/core/url-seen/clock-cache.ts';

/** A fingerprint from two 32-bit words (the cache hashes the low word). */
function fp(hi: number, lo: number): string {
  return (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
}

/** The textbook CLOCK: entries in a ring, a mark per entry, a hand that clears marks until it finds an unmarked victim. */
class ReferenceClock {
  readonly keys: string[] = [];
  readonly marks: number[] = [];
  hand = 0;
  constructor(readonly capacity: number) {}
  has(key: string): boolean {
    const i = this.keys.indexOf(key);
    if (i < 0) return false;
    this.marks[i] = 1;
    return true;
  }
  add(key: string): void {
    if (this.keys.includes(key)) return;
    if (this.keys.length < this.capacity) {
      this.keys.push(key);
      this.marks.push(0);
      return;
    }
    while (this.marks[this.hand] === 1) {
      this.marks[this.hand] = 0;
      this.hand = (this.hand + 1) % this.capacity;
    }
    this.keys[this.hand] = key;
    this.marks[this.hand] = 0;
    this.hand = (this.hand + 1) % this.capacity;
  }
}

/** Deterministic pseudo-random numbers (so a failure can be replayed). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('ClockCache', () => {
  test('hit and miss, size, no duplicate entries', () => {
    const cache = new ClockCache(4);
    const a = fp(1, 1);
    assert.equal(cache.has(a), false);
    cache.add(a);
    cache.add(a);
    assert.equal(cache.has(a), true);
    assert.equal(cache.size, 1);
    assert.equal(cache.has(fp(2, 1)), false, 'same low word, other high word: a different key');
    assert.equal(cache.has(fp(1, 2)), false);
  });

  test('never holds more than its capacity', () => {
    const cache = new ClockCache(5);
    for (let i = 0; i < 100; i++) cache.add(fp(i, i * 7919));
    assert.equal(cache.size, 5);
    assert.equal(cache.capacity, 5);
    let present = 0;
    for (let i = 0; i < 100; i++) if (cache.has(fp(i, i * 7919))) present++;
    assert.equal(present, 5);
  });

  test('evicts by CLOCK: a key used since the hand last passed survives one sweep', () => {
    const [a, b, c, d, e, f] = [1, 2, 3, 4, 5, 6].map((i) => fp(i, i)) as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const cache = new ClockCache(3);
    cache.add(a);
    cache.add(b);
    cache.add(c);
    assert.equal(cache.has(a), true); // marks a
    cache.add(d); // the hand clears a's mark and takes b
    assert.equal(cache.has(b), false);
    assert.equal(cache.has(c), true); // marks c; the hand now points at c
    cache.add(e); // clears c, takes a (its mark was cleared by the first sweep)
    assert.equal(cache.has(a), false);
    cache.add(f); // the hand is at d, unmarked: d goes
    assert.equal(cache.has(d), false);
    assert.deepEqual(
      [c, e, f].map((k) => cache.has(k)),
      [true, true, true],
    );
  });

  test('matches a reference CLOCK on random workloads, with long probe chains', () => {
    for (const [capacity, seed] of [
      [1, 1],
      [3, 2],
      [8, 3],
      [16, 4],
      [64, 5],
    ] as const) {
      const random = lcg(seed);
      const cache = new ClockCache(capacity);
      const reference = new ReferenceClock(capacity);
      // few distinct low words: most keys share a home slot, so deletions must shift chains back
      const pool = Array.from({ length: capacity * 4 + 3 }, (_, i) =>
        fp(Math.floor(random() * 2 ** 32), (i % 3) + Math.floor(random() * 4) * 2 ** 20),
      );
      for (let step = 0; step < 5000; step++) {
        const key = pool[Math.floor(random() * pool.length)]!;
        if (random() < 0.5) {
          cache.add(key);
          reference.add(key);
        } else {
          assert.equal(cache.has(key), reference.has(key), `capacity ${capacity}, step ${step}: has(${key})`);
        }
        assert.equal(cache.size, reference.keys.length);
      }
      // after all those evictions every remaining key is still findable, and nothing else is
      for (const key of pool) {
        assert.equal(cache.has(key), reference.has(key), `capacity ${capacity}: final has(${key})`);
      }
    }
  });

  test('backward-shift deletion keeps every remaining key findable (vs a Set of the live keys)', () => {
    const random = lcg(99);
    const capacity = 32;
    const cache = new ClockCache(capacity);
    const reference = new ReferenceClock(capacity);
    for (let step = 0; step < 20_000; step++) {
      // all keys hash near the same few slots, and the ring wraps around the table's end
      const lo = ((63 - (step % 5)) & 63) + Math.floor(random() * 1000) * 64;
      const key = fp(step, lo);
      cache.add(key);
      reference.add(key);
      if (step % 97 === 0) {
        const live = new Set(reference.keys);
        for (const k of live) assert.ok(cache.has(k) && reference.has(k), `step ${step}: lost ${k}`);
      }
    }
  });

  test('rejects a capacity that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new ClockCache(bad), RangeError);
  });
});
