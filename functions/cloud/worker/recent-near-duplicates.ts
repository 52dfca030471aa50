/**
 * The cloud worker's near-duplicate index: the SimHashes of the pages this container fetched
 * lately, in memory. A shared index would cost a DynamoDB write per page plus reads per band;
 * near-duplicates are a quality signal (a page is still fetched and recorded), so each warm
 * container keeps its own, bounded: two generations of at most `capacity` pages each, the older
 * dropped when the newer fills. A page near one fetched by another container, or long ago, is
 * not flagged.
 */
import {
  MemoryNearDuplicateIndex,
  type NearDuplicateIndex,
  type NearMatch,
} from '../../core/quality/near-duplicate.ts';
import type { Simhash } from '../../core/quality/simhash.ts';

export class RecentNearDuplicates implements NearDuplicateIndex {
  readonly #k: number;
  readonly #capacity: number;
  #current: MemoryNearDuplicateIndex;
  #previous: MemoryNearDuplicateIndex | undefined;

  constructor(k: number, capacity = 20_000) {
    this.#k = k;
    this.#capacity = capacity;
    this.#current = new MemoryNearDuplicateIndex({ k });
  }

  /** Pages remembered (both generations). */
  get size(): number {
    return this.#current.size + (this.#previous?.size ?? 0);
  }

  async findNear(simhash: Simhash, k: number, self?: string): Promise<NearMatch | undefined> {
    const older = await this.#previous?.findNear(simhash, k, self);
    const newer = await this.#current.findNear(simhash, k, self);
    if (older === undefined) return newer;
    // The earlier page wins ties, as in one index.
    return newer !== undefined && newer.distance < older.distance ? newer : older;
  }

  async add(simhash: Simhash, url: string): Promise<void> {
    if (this.#current.size >= this.#capacity) {
      this.#previous = this.#current;
      this.#current = new MemoryNearDuplicateIndex({ k: this.#k });
    }
    await this.#current.add(simhash, url);
  }
}
