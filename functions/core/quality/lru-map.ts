/**
 * A Map with a capacity that forgets its least recently used entry first: the trap detectors'
 * bounded memory. A JavaScript Map iterates in insertion order, so re-inserting an entry on use
 * keeps the least recently used one first.
 */
export class LruMap<K, V> {
  readonly capacity: number;
  readonly #map = new Map<K, V>();
  readonly #onEvict: ((key: K, value: V) => void) | undefined;

  /** @param onEvict called with each entry pushed out by `set` (not by `delete`). */
  constructor(capacity: number, onEvict?: (key: K, value: V) => void) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.#onEvict = onEvict;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The value, marking the entry as just used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  /** The value, without marking the entry as used. */
  peek(key: K): V | undefined {
    return this.#map.get(key);
  }

  /** Sets the entry as just used; evicts the least recently used one beyond capacity. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.capacity) {
      const [oldKey, oldValue] = this.#map.entries().next().value as [K, V];
      this.#map.delete(oldKey);
      this.#onEvict?.(oldKey, oldValue);
    }
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Entries from least to most recently used. */
  entries(): IterableIterator<[K, V]> {
    return this.#map.entries();
  }
}
