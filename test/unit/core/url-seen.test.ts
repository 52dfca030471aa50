import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SeenClaimOptions, SeenStore } from '../../../functions/core/ports.ts';
import type { Fingerprint } from '../../../functions/core/types.ts';
import { ClockCache } from '../../../functions/core/url-seen/clock-cache.ts';
import { UrlSeen } from '../../../functions/core/url-seen/url-seen.ts';

/**
 * The SeenStore contract in memory (ports.ts): a claim is true for the caller that inserted the
 * fingerprint and again for the same owner; it records every call so tests can see what reached it.
 */
class MemorySeenStore implements SeenStore {
  readonly owners = new Map<Fingerprint, Fingerprint>();
  readonly calls: Fingerprint[][] = [];
  readonly hosts: (readonly string[] | undefined)[] = [];
  async claim(
    fps: readonly Fingerprint[],
    owner: Fingerprint,
    options?: SeenClaimOptions,
  ): Promise<boolean[]> {
    this.calls.push([...fps]);
    this.hosts.push(options?.hosts);
    return fps.map((fp) => {
      const existing = this.owners.get(fp);
      if (existing === undefined) {
        this.owners.set(fp, owner);
        return true;
      }
      return existing === owner;
    });
  }
}

const fp = (n: number) => n.toString(16).padStart(16, '0');
const PAGE_A = fp(0xa0);
const PAGE_B = fp(0xb0);

describe('UrlSeen', () => {
  test('new fingerprints are claimed in the store, in input order', async () => {
    const store = new MemorySeenStore();
    const seen = new UrlSeen(new ClockCache(16), store);
    assert.deepEqual(await seen.claim([fp(1), fp(2), fp(3)], PAGE_A), [true, true, true]);
    assert.deepEqual(await seen.claim([fp(4), fp(2)], PAGE_B), [true, false]);
    assert.deepEqual(seen.stats, { lookups: 5, cacheHits: 0, storeLookups: 5, claimed: 4 });
  });

  test('a remembered fingerprint is answered by the cache without asking the store', async () => {
    const store = new MemorySeenStore();
    const seen = new UrlSeen(new ClockCache(16), store);
    await seen.claim([fp(1), fp(2)], PAGE_A);
    seen.remember([fp(1), fp(2)]);
    const calls = store.calls.length;
    assert.deepEqual(await seen.claim([fp(1), fp(5), fp(2)], PAGE_B), [false, true, false]);
    assert.deepEqual(store.calls.slice(calls), [[fp(5)]], 'only the miss reached the store');
    assert.equal(seen.stats.cacheHits, 2);
    assert.equal(seen.hitRate(), 2 / 5);
  });

  test("the misses' hosts reach the store with them, in the same order (a store kept by host needs them)", async () => {
    const store = new MemorySeenStore();
    const seen = new UrlSeen(new ClockCache(16), store);
    seen.remember([fp(2)]);
    await seen.claim([fp(1), fp(2), fp(3)], PAGE_A, ['a.example', 'b.example', 'c.example']);
    assert.deepEqual(store.calls, [[fp(1), fp(3)]]);
    assert.deepEqual(store.hosts, [['a.example', 'c.example']]);
    await seen.claim([fp(4)], PAGE_A);
    assert.equal(store.hosts[1], undefined, 'no hosts given, none passed');
  });

  test('all hits: the store is not called at all', async () => {
    const store = new MemorySeenStore();
    const cache = new ClockCache(16);
    cache.add(fp(7));
    const seen = new UrlSeen(cache, store);
    assert.deepEqual(await seen.claim([fp(7)], PAGE_A), [false]);
    assert.equal(store.calls.length, 0);
  });

  test('a fingerprint someone else claimed enters the cache at once', async () => {
    const store = new MemorySeenStore();
    const cache = new ClockCache(16);
    await new UrlSeen(new ClockCache(16), store).claim([fp(9)], PAGE_A); // another worker
    const seen = new UrlSeen(cache, store);
    assert.deepEqual(await seen.claim([fp(9)], PAGE_B), [false]);
    assert.equal(cache.has(fp(9)), true, 'durably seen by someone else: safe to cache');
  });

  test('a fingerprint we claimed enters the cache only through remember(), after the enqueue', async () => {
    const store = new MemorySeenStore();
    const cache = new ClockCache(16);
    const seen = new UrlSeen(cache, store);
    assert.deepEqual(await seen.claim([fp(1)], PAGE_A), [true]);
    assert.equal(cache.has(fp(1)), false, 'not cached before the caller enqueued it');
    // the enqueue failed and page A is retried: its claim must come back true so the child is enqueued again
    assert.deepEqual(await seen.claim([fp(1)], PAGE_A), [true]);
    assert.deepEqual(await seen.claim([fp(1)], PAGE_B), [false], 'other pages still see it as taken');
    seen.remember([fp(1)]);
    assert.equal(cache.has(fp(1)), true);
    assert.deepEqual(
      await seen.claim([fp(1)], PAGE_A),
      [false],
      'once enqueued, even the owner gets a cache hit',
    );
  });

  test('stats may be shared by several instances over one cache', async () => {
    const store = new MemorySeenStore();
    const cache = new ClockCache(16);
    const stats = { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 };
    const one = new UrlSeen(cache, store, stats);
    const two = new UrlSeen(cache, store, stats);
    await one.claim([fp(1)], PAGE_A);
    one.remember([fp(1)]);
    await two.claim([fp(1), fp(2)], PAGE_B);
    assert.deepEqual(stats, { lookups: 3, cacheHits: 1, storeLookups: 2, claimed: 2 });
    assert.equal(one.stats, two.stats);
  });

  test('an empty claim asks nothing', async () => {
    const store = new MemorySeenStore();
    const seen = new UrlSeen(new ClockCache(4), store);
    assert.deepEqual(await seen.claim([], PAGE_A), []);
    assert.equal(store.calls.length, 0);
    assert.equal(seen.hitRate(), 0);
  });
});
