import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CACHE_POLICIES,
  type CachePolicy,
  clockMisses,
  countMisses,
  lruMisses,
  minMisses,
  randomMisses,
  staticMisses,
} from '../../../functions/cache-study/cache-policies.ts';
import { ClockCache } from '../../../functions/core/url-seen/clock-cache.ts';
import { seeded } from '../quality/simhash-reference.ts';

/** 'ABBAC' -> ids by first appearance (A = 0, B = 1, ...), as denseTrace numbers them. */
function trace(letters: string): { ids: Int32Array; distinct: number } {
  const index = new Map<string, number>();
  const ids = Int32Array.from([...letters], (c) => {
    if (!index.has(c)) index.set(c, index.size);
    return index.get(c)!;
  });
  return { ids, distinct: index.size };
}

const misses = (policy: CachePolicy, letters: string, capacity: number) => {
  const { ids, distinct } = trace(letters);
  return countMisses(policy, ids, distinct, capacity);
};

/** A skewed random trace: a few URLs looked up often, most rarely (like links to a site's nav). */
function skewedTrace(seed: number, length: number, universe: number): { ids: Int32Array; distinct: number } {
  const random = seeded(seed);
  const raw = Array.from({ length }, () => Math.floor(random() ** 3 * universe));
  const index = new Map<number, number>();
  const ids = Int32Array.from(raw, (u) => {
    if (!index.has(u)) index.set(u, index.size);
    return index.get(u)!;
  });
  return { ids, distinct: index.size };
}

/**
 * The fewest misses any policy can have (a hit needs the URL in the cache; after each look-up
 * the cache may keep any subset of its URLs and the URL looked up, within capacity): breadth
 * over every reachable cache state. Only for tiny traces.
 */
function bruteForceOptimum(ids: Int32Array, capacity: number): number {
  let states = new Map<number, number>([[0, 0]]); // cache as a bit set -> fewest misses so far
  for (const x of ids) {
    const next = new Map<number, number>();
    for (const [cache, cost] of states) {
      const hit = (cache >> x) & 1;
      const after = cost + (hit ? 0 : 1);
      const base = cache | (1 << x);
      // every subset of `base` within capacity (keeping x or not)
      for (let subset = base; ; subset = (subset - 1) & base) {
        if (popcount(subset) <= capacity) {
          const best = next.get(subset);
          if (best === undefined || after < best) next.set(subset, after);
        }
        if (subset === 0) break;
      }
    }
    states = next;
  }
  return Math.min(...states.values());
}

function popcount(x: number): number {
  let n = 0;
  for (let v = x; v !== 0; v &= v - 1) n++;
  return n;
}

describe('cache policies on hand-worked traces', () => {
  it('A B C A B D A with room for 2: LRU and CLOCK miss all 7, STATIC and MIN only the first look-ups', () => {
    // LRU: C evicts A, A evicts B, B evicts C, D evicts A, A evicts B: every look-up misses.
    assert.equal(misses('LRU', 'ABCABDA', 2), 7);
    // CLOCK: nothing is marked before it is evicted, so it is FIFO here: 7 as well.
    assert.equal(misses('CLOCK', 'ABCABDA', 2), 7);
    // STATIC keeps the two most looked-up, A (3) and B (2): misses A, B, C, D once each.
    assert.equal(misses('STATIC', 'ABCABDA', 2), 4);
    // MIN never caches C or D (not looked up again): A and B stay and hit.
    assert.equal(misses('MIN', 'ABCABDA', 2), 4);
  });

  it('A B B A C B with room for 2: CLOCK gives B its second chance, LRU does not', () => {
    // LRU: A, B miss; B, A hit; C evicts B (least recent); B misses.
    assert.equal(misses('LRU', 'ABBACB', 2), 4);
    // CLOCK: both hits mark; C sweeps both marks off and evicts A (slot 0); B still hits.
    assert.equal(misses('CLOCK', 'ABBACB', 2), 3);
    assert.equal(misses('STATIC', 'ABBACB', 2), 3);
    assert.equal(misses('MIN', 'ABBACB', 2), 3);
  });

  it('a cycle one longer than the cache: LRU misses every look-up, MIN about one in capacity', () => {
    const letters = 'ABCDE'.repeat(40); // 200 look-ups of 5 URLs, room for 4
    assert.equal(misses('LRU', letters, 4), 200);
    assert.equal(misses('CLOCK', letters, 4), 200);
    const min = misses('MIN', letters, 4);
    assert.ok(min <= 5 + Math.ceil(195 / 4), `MIN ${min}`);
    assert.ok(misses('RANDOM', letters, 4) < 200, 'RANDOM escapes the cycle');
    // STATIC keeps A-D (equal counts, first met first) and misses every E.
    assert.equal(misses('STATIC', letters, 4), 4 + 40);
  });

  it('with room for every URL, each policy misses each URL once', () => {
    const { ids, distinct } = skewedTrace(3, 2000, 300);
    for (const policy of CACHE_POLICIES) {
      assert.equal(countMisses(policy, ids, distinct, distinct), distinct, policy);
      assert.equal(countMisses(policy, ids, distinct, distinct * 4), distinct, policy);
    }
  });

  it('with room for one URL, LRU, CLOCK and RANDOM miss whenever the URL changes', () => {
    const letters = 'AABBBABCCA';
    const changes = 1 + [...letters].filter((c, i) => i > 0 && c !== letters[i - 1]).length;
    for (const policy of ['LRU', 'CLOCK', 'RANDOM'] as const)
      assert.equal(misses(policy, letters, 1), changes);
  });

  it('an empty trace has no misses', () => {
    for (const policy of CACHE_POLICIES) assert.equal(countMisses(policy, new Int32Array(0), 0, 8), 0);
  });

  it('refuses a capacity that is not a positive integer', () => {
    const { ids, distinct } = trace('AB');
    assert.throws(() => countMisses('LRU', ids, distinct, 0), RangeError);
    assert.throws(() => countMisses('MIN', ids, distinct, 1.5), RangeError);
  });
});

describe('MIN is optimal', () => {
  it('equals the brute-force optimum on 300 tiny random traces', () => {
    const random = seeded(11);
    for (let trial = 0; trial < 300; trial++) {
      const universe = 2 + Math.floor(random() * 5);
      const length = 1 + Math.floor(random() * 14);
      const capacity = 1 + Math.floor(random() * 3);
      const letters = Array.from({ length }, () => 'ABCDEFG'[Math.floor(random() * universe)]).join('');
      const { ids, distinct } = trace(letters);
      assert.equal(
        minMisses(ids, distinct, capacity),
        bruteForceOptimum(ids, capacity),
        `${letters} with room for ${capacity}`,
      );
    }
  });

  it('never misses more than any other policy, at any size', () => {
    for (const seed of [1, 2, 3, 4]) {
      const { ids, distinct } = skewedTrace(seed, 20_000, 5_000);
      for (const capacity of [1, 4, 16, 64, 256, 1024, 4096]) {
        const min = minMisses(ids, distinct, capacity);
        assert.ok(min >= distinct, 'no fewer than the first look-ups');
        for (const policy of CACHE_POLICIES) {
          const other = countMisses(policy, ids, distinct, capacity, { seed });
          assert.ok(min <= other, `seed ${seed}, room for ${capacity}: MIN ${min} > ${policy} ${other}`);
        }
      }
    }
  });
});

describe('the simulated CLOCK is the crawler’s ClockCache', () => {
  it('misses exactly where ClockCache misses (has, then add on a miss)', () => {
    for (const [seed, capacity] of [
      [5, 16],
      [6, 100],
      [7, 1000],
    ] as const) {
      const { ids, distinct } = skewedTrace(seed, 30_000, 4_000);
      const cache = new ClockCache(capacity);
      let expected = 0;
      for (const id of ids) {
        const fp = id.toString(16).padStart(16, '0');
        if (!cache.has(fp)) {
          expected++;
          cache.add(fp);
        }
      }
      assert.equal(clockMisses(ids, distinct, capacity), expected, `room for ${capacity}`);
    }
  });
});

describe('RANDOM and LRU', () => {
  it('RANDOM is reproducible from its seed', () => {
    const { ids, distinct } = skewedTrace(8, 10_000, 3_000);
    assert.equal(randomMisses(ids, distinct, 128, 42), randomMisses(ids, distinct, 128, 42));
    const seeds = new Set([1, 2, 3, 4, 5].map((seed) => randomMisses(ids, distinct, 128, seed)));
    assert.ok(seeds.size > 1, 'different seeds evict differently');
  });

  it('LRU matches a plain array implementation on random traces', () => {
    const { ids, distinct } = skewedTrace(9, 5_000, 800);
    for (const capacity of [1, 3, 50, 400]) {
      const order: number[] = [];
      let expected = 0;
      for (const id of ids) {
        const at = order.indexOf(id);
        if (at >= 0) order.splice(at, 1);
        else {
          expected++;
          if (order.length === capacity) order.pop();
        }
        order.unshift(id);
      }
      assert.equal(lruMisses(ids, distinct, capacity), expected, `room for ${capacity}`);
    }
  });

  it('STATIC keeps the most looked-up URLs, ties to the URL met first', () => {
    // counts: A 2, B 2, C 3; room for 2 keeps C and A (A met before B)
    assert.equal(misses('STATIC', 'ABCCACB', 2), 3 + 1);
    assert.equal(staticMisses(trace('ABCCACB').ids, 3, 3), 3);
  });
});
