/**
 * Near-duplicate lookup without a linear scan: the permuted-tables idea of Manku, Jain and Das
 * Sarma (WWW 2007, "Detecting near-duplicates for web crawling"), by pigeonhole.
 *
 * Split the 64 bits into `blocks` blocks (by default k + 1). Two SimHashes within Hamming distance
 * k differ in at most k blocks, so they agree exactly on at least `blocks - k` of them; every set
 * of `blocks - k` blocks is one band, and its bits (with the band's number) are a key. A page is
 * filed under each of its band keys; a lookup reads the entries under its own keys only and
 * checks their distance. With k + 1 blocks there are k + 1 keys of 64 / (k + 1) bits each, so a
 * random entry shares a key with probability (k + 1) / 2^(64 / (k + 1)): 4 / 65,536 for k = 3.
 * More blocks give longer keys (fewer candidates) at the cost of more keys per page:
 * C(blocks, k) of them.
 */
import { hammingDistance, popcount32, type Simhash, simhashFromHalves, simhashHalves } from './simhash.ts';

/** Default Hamming distance for "near-duplicate" (Manku et al.: k = 3 for 64-bit SimHash). */
export const DEFAULT_NEAR_DISTANCE = 3;

/** Default cap on the entries a lookup reads under one band key (see {@link NearDuplicateIndexOptions}). */
export const DEFAULT_MAX_PER_BAND = 256;

/** An earlier page whose SimHash is within the asked distance. */
export interface NearMatch {
  url: string;
  simhash: Simhash;
  /** Hamming distance to the SimHash looked up. */
  distance: number;
}

/**
 * The near-duplicate content test: pages' SimHashes filed so that a lookup finds an earlier page
 * within a small Hamming distance without scanning them all.
 *
 * TODO(lead): move to functions/core/ports.ts with the other ports.
 */
export interface NearDuplicateIndex {
  /**
   * The nearest page filed so far whose SimHash is within distance `k` of `simhash`: smallest
   * distance, then earliest added. The entry of `self` (the URL asking) is never a match, so a
   * retried step does not find the page it filed before it died. `k` may not exceed the
   * index's own k. Found for certain unless every key it shares with the page holds more than
   * `maxPerBand` earlier entries (see {@link NearDuplicateIndexOptions}).
   */
  findNear(simhash: Simhash, k: number, self?: string): Promise<NearMatch | undefined>;
  /** Files a page. Idempotent per URL: a second add of a URL is ignored, whatever its SimHash. */
  add(simhash: Simhash, url: string): Promise<void>;
}

/** Shape and limits of an index; an index's layout cannot change once it holds entries. */
export interface NearDuplicateIndexOptions {
  /** Largest distance a lookup may ask for (default 3). */
  k?: number;
  /** Blocks the 64 bits are cut into, at least k + 1 (the default); see {@link bandKeys}. */
  blocks?: number;
  /**
   * A lookup reads at most this many entries under one band key, the earliest filed (default 256):
   * a cluster of thousands of near-identical pages would otherwise make each lookup read thousands
   * of rows. The earliest entries under a crowded key are the cluster's own first pages, which a
   * new member matches; a page outside the cluster is still found through its other keys.
   */
  maxPerBand?: number;
}

/** Counters of an index, to check that lookups stay cheap as it grows. */
export interface NearDuplicateStats {
  lookups: number;
  /** Entries read and compared during lookups (a page under two matching keys counts twice). */
  candidates: number;
  adds: number;
  /** Band keys read during lookups that held at least `maxPerBand` entries (reading stopped there). */
  keysAtCap: number;
}

/** Which bits make each band, for one (k, blocks). */
export interface BandLayout {
  k: number;
  blocks: number;
  /** Bit ranges [start, end) of each block; bit 0 is the first (most significant) bit of the hex. */
  ranges: [start: number, end: number][];
  /** For each band, the blocks it is made of (`blocks - k` of them, ascending). */
  bands: number[][];
}

const layouts = new Map<string, BandLayout>();

/**
 * The band layout for distance `k` and `blocks` blocks (default k + 1, at least 2). Blocks are as
 * even as possible, the first ones one bit longer. Bands are the (blocks - k)-subsets of the
 * blocks in lexicographic order.
 * @throws RangeError when k < 0, blocks <= k, blocks > 32 or there would be more than 4096 bands.
 */
export function bandLayout(k: number, blocks?: number): BandLayout {
  const b = blocks ?? Math.max(k + 1, 2);
  const id = `${k}/${b}`;
  const cached = layouts.get(id);
  if (cached !== undefined) return cached;
  if (!Number.isInteger(k) || k < 0 || !Number.isInteger(b) || b <= k || b < 2 || b > 32) {
    throw new RangeError(
      `band layout needs integers 0 <= k < blocks <= 32, blocks >= 2; got k=${k}, blocks=${b}`,
    );
  }
  const count = binomial(b, k);
  if (count > 4096) throw new RangeError(`k=${k} with ${b} blocks makes ${count} bands`);
  const bands = combinations(b, b - k);
  const ranges: [number, number][] = [];
  const base = Math.floor(64 / b);
  const extra = 64 % b;
  let start = 0;
  for (let i = 0; i < b; i++) {
    const end = start + base + (i < extra ? 1 : 0);
    ranges.push([start, end]);
    start = end;
  }
  const layout: BandLayout = { k, blocks: b, ranges, bands };
  layouts.set(id, layout);
  return layout;
}

function binomial(n: number, m: number): number {
  let c = 1;
  for (let i = 1; i <= m; i++) c = (c * (n - m + i)) / i;
  return Math.round(c);
}

function combinations(n: number, m: number): number[][] {
  const out: number[][] = [];
  const pick: number[] = [];
  const walk = (from: number): void => {
    if (pick.length === m) {
      out.push([...pick]);
      return;
    }
    for (let i = from; i <= n - (m - pick.length); i++) {
      pick.push(i);
      walk(i + 1);
      pick.pop();
    }
  };
  walk(0);
  return out;
}

/** Bits [start, end) of the 64-bit value hi:lo as a number (end - start <= 32). */
function bitsOf(hi: number, lo: number, start: number, end: number): number {
  const length = end - start;
  if (end <= 32) return Math.floor(hi / 2 ** (32 - end)) % 2 ** length;
  if (start >= 32) return Math.floor(lo / 2 ** (64 - end)) % 2 ** length;
  const low = end - 32;
  return (hi % 2 ** (32 - start)) * 2 ** low + Math.floor(lo / 2 ** (32 - low));
}

/**
 * The band keys of a SimHash for distance `k`: `<band>:<hex of each block of the band, joined by
 * ".">`, e.g. `2:9f3a` for the third 16-bit block when k = 3. Two SimHashes within distance k share
 * at least one key (pigeonhole). Part of the stored format of the local index.
 * @throws SimhashFormatError when `simhash` is not 16 lowercase hex characters.
 */
export function bandKeys(simhash: Simhash, k: number = DEFAULT_NEAR_DISTANCE, blocks?: number): string[] {
  const [hi, lo] = simhashHalves(simhash);
  const layout = bandLayout(k, blocks);
  const values = layout.ranges.map(([start, end]) => bitsOf(hi, lo, start, end).toString(16));
  return layout.bands.map((band, i) => `${i}:${band.map((block) => values[block]).join('.')}`);
}

/** True when two SimHashes differ in at most `k` bits. */
export function isNear(a: Simhash, b: Simhash, k: number = DEFAULT_NEAR_DISTANCE): boolean {
  return hammingDistance(a, b) <= k;
}

interface Entry {
  hi: number;
  lo: number;
  url: string;
  seq: number;
}

/**
 * A {@link NearDuplicateIndex} in memory: band key -> entries in the order added. For tests and
 * crawls small enough to keep every page's SimHash in memory (about 100 bytes plus the URL each).
 */
export class MemoryNearDuplicateIndex implements NearDuplicateIndex {
  readonly layout: BandLayout;
  readonly maxPerBand: number;
  readonly stats: NearDuplicateStats = { lookups: 0, candidates: 0, adds: 0, keysAtCap: 0 };
  readonly #bands = new Map<string, Entry[]>();
  readonly #urls = new Set<string>();
  #seq = 0;

  constructor(options: NearDuplicateIndexOptions = {}) {
    this.layout = bandLayout(options.k ?? DEFAULT_NEAR_DISTANCE, options.blocks);
    this.maxPerBand = positiveInteger('maxPerBand', options.maxPerBand ?? DEFAULT_MAX_PER_BAND);
  }

  /** Pages filed. */
  get size(): number {
    return this.#urls.size;
  }

  async findNear(simhash: Simhash, k: number = this.layout.k, self?: string): Promise<NearMatch | undefined> {
    checkDistance(k, this.layout);
    const [hi, lo] = simhashHalves(simhash);
    this.stats.lookups++;
    let best: Entry | undefined;
    let bestDistance = 0;
    for (const key of bandKeys(simhash, this.layout.k, this.layout.blocks)) {
      const entries = this.#bands.get(key);
      if (entries === undefined) continue;
      const count = Math.min(entries.length, this.maxPerBand);
      if (entries.length >= this.maxPerBand) this.stats.keysAtCap++;
      this.stats.candidates += count;
      for (let i = 0; i < count; i++) {
        const entry = entries[i]!;
        const d = popcount32(entry.hi ^ hi) + popcount32(entry.lo ^ lo);
        if (d > k || entry.url === self) continue;
        if (best === undefined || d < bestDistance || (d === bestDistance && entry.seq < best.seq)) {
          best = entry;
          bestDistance = d;
        }
      }
    }
    if (best === undefined) return undefined;
    return { url: best.url, simhash: simhashFromHalves(best.hi, best.lo), distance: bestDistance };
  }

  async add(simhash: Simhash, url: string): Promise<void> {
    const [hi, lo] = simhashHalves(simhash);
    if (this.#urls.has(url)) return;
    this.#urls.add(url);
    this.stats.adds++;
    const entry: Entry = { hi, lo, url, seq: this.#seq++ };
    for (const key of bandKeys(simhash, this.layout.k, this.layout.blocks)) {
      const entries = this.#bands.get(key);
      if (entries === undefined) this.#bands.set(key, [entry]);
      else entries.push(entry);
    }
  }
}

/**
 * Checks a lookup distance against an index layout.
 * @throws RangeError when `k` is not an integer in [0, layout.k].
 */
export function checkDistance(k: number, layout: BandLayout): void {
  if (!Number.isInteger(k) || k < 0 || k > layout.k) {
    throw new RangeError(`distance must be an integer from 0 to the index's k (${layout.k}), got ${k}`);
  }
}

/**
 * Checks that a count setting is a positive integer and returns it.
 * @throws RangeError when it is not.
 */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
