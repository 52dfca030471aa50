import type { SeenStore } from '../ports.ts';
import type { ClockCache } from './clock-cache.ts';
import type { Fingerprint } from './types.ts';

/** Counters of the URL-seen test, for progress lines, summaries and the cost benchmark. */
export interface UrlSeenStats {
  /** Distinct-per-page fingerprints tested. */
  lookups: number;
  /** Answered "seen" by the in-memory cache, without touching the store. */
  cacheHits: number;
  /** Sent to the durable store. */
  storeLookups: number;
  /** Newly claimed (went to the frontier). */
  claimed: number;
}

/**
 * The URL-seen test (Mercator §3.8): a warm in-memory CLOCK cache of fingerprints in front of the
 * durable SeenStore. A cache hit means "seen"; a miss asks the store, which claims new URLs.
 *
 * A fingerprint the store just claimed for us enters the cache only through `remember`, after the
 * caller has enqueued it: if enqueueing fails and the page is retried, the cache must not hide the
 * children the retry has to enqueue again.
 */
export class UrlSeen {
  readonly stats: UrlSeenStats;
  readonly #cache: ClockCache;
  readonly #store: SeenStore;

  /** `stats` may be shared by several instances over one cache (one per concurrent step). */
  constructor(cache: ClockCache, store: SeenStore, stats?: UrlSeenStats) {
    this.#cache = cache;
    this.#store = store;
    this.stats = stats ?? { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 };
  }

  /** For each fingerprint, in order: true when it is new and now claimed by `owner`. */
  async claim(fps: readonly Fingerprint[], owner: Fingerprint): Promise<boolean[]> {
    const result: boolean[] = new Array(fps.length).fill(false);
    const misses: Fingerprint[] = [];
    const missIndex: number[] = [];
    for (let i = 0; i < fps.length; i++) {
      const fp = fps[i]!;
      this.stats.lookups += 1;
      if (this.#cache.has(fp)) {
        this.stats.cacheHits += 1;
      } else {
        misses.push(fp);
        missIndex.push(i);
      }
    }
    if (misses.length === 0) return result;
    this.stats.storeLookups += misses.length;
    const claimed = await this.#store.claim(misses, owner);
    for (let j = 0; j < misses.length; j++) {
      if (claimed[j]) {
        result[missIndex[j]!] = true;
        this.stats.claimed += 1;
      } else {
        // Durably seen by someone else: safe to remember at once.
        this.#cache.add(misses[j]!);
      }
    }
    return result;
  }

  /** Adds fingerprints to the cache once they are safely in the frontier. */
  remember(fps: readonly Fingerprint[]): void {
    for (const fp of fps) this.#cache.add(fp);
  }

  /** Cache hits / lookups (0 when nothing was looked up). */
  hitRate(): number {
    return this.stats.lookups === 0 ? 0 : this.stats.cacheHits / this.stats.lookups;
  }
}
