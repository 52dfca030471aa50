import type { Fingerprint } from '../types.ts';

/**
 * An exact, growing set of 64-bit fingerprints in typed arrays: 18-36 bytes per member (two 32-bit
 * words and a used flag per slot, at most half the slots full), where a Set of 16-character
 * strings costs ~60.
 * What reading a crawl's records once needs to drop repeated URLs without holding URL text.
 * Members are SHA-256 bits, so the low word is already a uniform hash.
 */
export class FingerprintSet {
  #hi = new Uint32Array(1024);
  #lo = new Uint32Array(1024);
  /** 1 where a slot holds a member (a fingerprint of all zero bits is a member too). */
  #used = new Uint8Array(1024);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `fp`; true when it was not a member before. */
  add(fp: Fingerprint): boolean {
    const hi = Number.parseInt(fp.slice(0, 8), 16) >>> 0;
    const lo = Number.parseInt(fp.slice(8, 16), 16) >>> 0;
    if (this.#size * 2 >= this.#used.length) this.#grow();
    const mask = this.#used.length - 1;
    for (let slot = lo & mask; ; slot = (slot + 1) & mask) {
      if (this.#used[slot] === 0) {
        this.#used[slot] = 1;
        this.#hi[slot] = hi;
        this.#lo[slot] = lo;
        this.#size += 1;
        return true;
      }
      if (this.#hi[slot] === hi && this.#lo[slot] === lo) return false;
    }
  }

  #grow(): void {
    const [hi, lo, used] = [this.#hi, this.#lo, this.#used];
    const size = used.length * 2;
    this.#hi = new Uint32Array(size);
    this.#lo = new Uint32Array(size);
    this.#used = new Uint8Array(size);
    const mask = size - 1;
    for (let i = 0; i < used.length; i++) {
      if (used[i] === 0) continue;
      let slot = lo[i]! & mask;
      while (this.#used[slot] === 1) slot = (slot + 1) & mask;
      this.#used[slot] = 1;
      this.#hi[slot] = hi[i]!;
      this.#lo[slot] = lo[i]!;
    }
  }
}
