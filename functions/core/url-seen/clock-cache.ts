import type { Fingerprint } from '../types.ts';

/**
 * A fixed-size set of 64-bit fingerprints with CLOCK replacement (Mercator's URL-seen cache).
 *
 * Our own rather than `lru-cache`: a Map of 2^18 string keys costs ~30 MB and a pointer chase per
 * hit; this keeps keys as two 32-bit words in typed arrays (~4.5 MB for 2^18 entries, no garbage),
 * and CLOCK is the approximation of LRU that Broder, Najork and Wiener found as good as LRU for URL
 * streams. Lookups hash the low word: fingerprints are SHA-256 bits, already uniform.
 */
export class ClockCache {
  readonly capacity: number;
  // Entry arrays (the clock): the key of each entry and its "recently used" mark.
  #hi: Uint32Array;
  #lo: Uint32Array;
  #mark: Uint8Array;
  #size = 0;
  #hand = 0;
  // Open-addressing index: slot -> entry + 1 (0 = empty). Twice the capacity keeps probes short.
  #slots: Int32Array;
  #mask: number;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('cache capacity must be a positive integer');
    this.capacity = capacity;
    this.#hi = new Uint32Array(capacity);
    this.#lo = new Uint32Array(capacity);
    this.#mark = new Uint8Array(capacity);
    let tableSize = 2;
    while (tableSize < capacity * 2) tableSize *= 2;
    this.#slots = new Int32Array(tableSize);
    this.#mask = tableSize - 1;
  }

  get size(): number {
    return this.#size;
  }

  /** True when present; marks the entry as recently used. */
  has(fp: Fingerprint): boolean {
    const hi = parseInt(fp.slice(0, 8), 16) >>> 0;
    const lo = parseInt(fp.slice(8, 16), 16) >>> 0;
    const entry = this.#find(hi, lo);
    if (entry < 0) return false;
    this.#mark[entry] = 1;
    return true;
  }

  /** Adds the fingerprint (no-op when present), evicting by CLOCK when full. */
  add(fp: Fingerprint): void {
    const hi = parseInt(fp.slice(0, 8), 16) >>> 0;
    const lo = parseInt(fp.slice(8, 16), 16) >>> 0;
    if (this.#find(hi, lo) >= 0) return;
    let entry: number;
    if (this.#size < this.capacity) {
      entry = this.#size++;
    } else {
      // Sweep: clear marks until an unmarked entry is found; it is the victim.
      while (this.#mark[this.#hand] === 1) {
        this.#mark[this.#hand] = 0;
        this.#hand = (this.#hand + 1) % this.capacity;
      }
      entry = this.#hand;
      this.#hand = (this.#hand + 1) % this.capacity;
      this.#unindex(entry);
    }
    this.#hi[entry] = hi;
    this.#lo[entry] = lo;
    this.#mark[entry] = 0;
    let slot = lo & this.#mask;
    while (this.#slots[slot] !== 0) slot = (slot + 1) & this.#mask;
    this.#slots[slot] = entry + 1;
  }

  #find(hi: number, lo: number): number {
    let slot = lo & this.#mask;
    for (;;) {
      const stored = this.#slots[slot]!;
      if (stored === 0) return -1;
      const entry = stored - 1;
      if (this.#lo[entry] === lo && this.#hi[entry] === hi) return entry;
      slot = (slot + 1) & this.#mask;
    }
  }

  /** Removes an entry's slot with backward-shift deletion (no tombstones, probes stay short). */
  #unindex(entry: number): void {
    const mask = this.#mask;
    let slot = this.#lo[entry]! & mask;
    while (this.#slots[slot] !== entry + 1) slot = (slot + 1) & mask;
    let hole = slot;
    let next = (hole + 1) & mask;
    for (;;) {
      const stored = this.#slots[next]!;
      if (stored === 0) break;
      const home = this.#lo[stored - 1]! & mask;
      // Move `next` back into the hole if its home slot is not between the hole and it (cyclically).
      const distanceFromHome = (next - home) & mask;
      const distanceFromHole = (next - hole) & mask;
      if (distanceFromHome >= distanceFromHole) {
        this.#slots[hole] = stored;
        hole = next;
      }
      next = (next + 1) & mask;
    }
    this.#slots[hole] = 0;
  }
}
