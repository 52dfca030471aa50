import type { SeenStore } from '../ports.ts';
import type { Fingerprint } from '../types.ts';
import type { ClockCache } from './clock-cache.ts';

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

/** Options of {@link UrlSeen}. */
export interface UrlSeenOptions {
  /**
   * Which of the fingerprints the store answered "seen" (claimed by another owner) may enter the
   * cache now; default: all. Where a claim is durable before its owner has queued the URL (the
   * cloud worker), caching it early would hide it from the owner's own retry, which must claim
   * and queue it again: the cloud caches it only once the owner is known to be finished.
   */
  cacheable?: (fps: readonly Fingerprint[]) => Promise<readonly boolean[]>;
  /**
   * Where `remember` sends the fingerprints this owner claimed and queued; default: the cache.
   * The cloud worker holds them until the page's record is durable, for the same reason.
   */
  remember?: (fps: readonly Fingerprint[]) => void;
  /** Receives every fingerprint looked up, in order (the URL-seen trace of the cache study). */
  trace?: (fps: readonly Fingerprint[]) => void;
  /**
   * True when a fingerprint the cache lacks is known, in memory, to be claimed by another owner
   * (one `cacheable` refused because that owner is not finished yet): answered "seen" without
   * the store, as a cache hit. Only the owner's own retry must not be told so.
   */
  claimedByOther?: (fp: Fingerprint) => boolean;
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
  readonly #cacheable: UrlSeenOptions['cacheable'];
  readonly #remember: UrlSeenOptions['remember'];
  readonly #trace: UrlSeenOptions['trace'];
  readonly #claimedByOther: UrlSeenOptions['claimedByOther'];

  /** `stats` may be shared by several instances over one cache (one per concurrent step). */
  constructor(cache: ClockCache, store: SeenStore, stats?: UrlSeenStats, options: UrlSeenOptions = {}) {
    this.#cache = cache;
    this.#store = store;
    this.stats = stats ?? { lookups: 0, cacheHits: 0, storeLookups: 0, claimed: 0 };
    this.#cacheable = options.cacheable;
    this.#remember = options.remember;
    this.#trace = options.trace;
    this.#claimedByOther = options.claimedByOther;
  }

  /**
   * For each fingerprint, in order: true when it is new and now claimed by `owner`. `hosts`, each
   * fingerprint's host, go to a store kept by host.
   */
  async claim(
    fps: readonly Fingerprint[],
    owner: Fingerprint,
    hosts?: readonly string[],
  ): Promise<boolean[]> {
    const result: boolean[] = new Array(fps.length).fill(false);
    const misses: Fingerprint[] = [];
    const missIndex: number[] = [];
    this.#trace?.(fps);
    for (let i = 0; i < fps.length; i++) {
      const fp = fps[i]!;
      this.stats.lookups += 1;
      if (this.#cache.has(fp) || this.#claimedByOther?.(fp) === true) {
        this.stats.cacheHits += 1;
      } else {
        misses.push(fp);
        missIndex.push(i);
      }
    }
    if (misses.length === 0) return result;
    this.stats.storeLookups += misses.length;
    const claimed = await this.#store.claim(
      misses,
      owner,
      hosts === undefined ? undefined : { hosts: missIndex.map((i) => hosts[i]!) },
    );
    const foreign: Fingerprint[] = [];
    for (let j = 0; j < misses.length; j++) {
      if (claimed[j]) {
        result[missIndex[j]!] = true;
        this.stats.claimed += 1;
      } else {
        foreign.push(misses[j]!);
      }
    }
    if (this.#cacheable === undefined) {
      // Durably seen by someone else: safe to remember at once.
      for (const fp of foreign) this.#cache.add(fp);
    } else if (foreign.length > 0) {
      const cacheable = await this.#cacheable(foreign);
      for (let j = 0; j < foreign.length; j++) if (cacheable[j]) this.#cache.add(foreign[j]!);
    }
    return result;
  }

  /** Adds fingerprints to the cache once they are safely in the frontier. */
  remember(fps: readonly Fingerprint[]): void {
    if (this.#remember !== undefined) this.#remember(fps);
    else for (const fp of fps) this.#cache.add(fp);
  }

  /** Cache hits / lookups (0 when nothing was looked up). */
  hitRate(): number {
    return this.stats.lookups === 0 ? 0 : this.stats.cacheHits / this.stats.lookups;
  }
}
