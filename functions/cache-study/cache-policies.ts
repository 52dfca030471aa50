/**
 * Cache replacement policies replayed over a URL-seen trace (Broder, Najork and Wiener, "Efficient
 * URL caching for World Wide Web crawling", WWW 2003): each counts the look-ups a cache of
 * `capacity` URLs would miss. URLs are the dense ids of `denseTrace`.
 *
 * The model: a hit is a look-up of a URL in the cache; every other look-up is a miss, the first
 * look-up of each URL included (a URL-seen cache cannot know a URL the crawl has not met: those
 * are the misses of an infinite cache). LRU, CLOCK and RANDOM insert every missed URL, evicting
 * one when full; STATIC never evicts; MIN may decline to insert. MIN is optimal in this model,
 * so no policy misses less.
 */

/** The policies of the study. */
export const CACHE_POLICIES = ['LRU', 'CLOCK', 'RANDOM', 'STATIC', 'MIN'] as const;
export type CachePolicy = (typeof CACHE_POLICIES)[number];

/** Settings of {@link countMisses}. */
export interface PolicyOptions {
  /** RANDOM's seed (the same seed gives the same evictions). Default 1. */
  seed?: number;
}

/**
 * Misses of `policy` with room for `capacity` URLs over the look-ups `ids` (URL ids 0 to
 * `distinct` - 1).
 * @throws RangeError when capacity is not a positive integer.
 */
export function countMisses(
  policy: CachePolicy,
  ids: Int32Array,
  distinct: number,
  capacity: number,
  options: PolicyOptions = {},
): number {
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new RangeError(`cache capacity must be a positive integer, got ${capacity}`);
  switch (policy) {
    case 'LRU':
      return lruMisses(ids, distinct, capacity);
    case 'CLOCK':
      return clockMisses(ids, distinct, capacity);
    case 'RANDOM':
      return randomMisses(ids, distinct, capacity, options.seed ?? 1);
    case 'STATIC':
      return staticMisses(ids, distinct, capacity);
    case 'MIN':
      return minMisses(ids, distinct, capacity);
  }
}

/** Least recently used: a doubly linked list through typed arrays, most recent at the head. */
export function lruMisses(ids: Int32Array, distinct: number, capacity: number): number {
  const NONE = -1;
  const prev = new Int32Array(distinct).fill(NONE);
  const next = new Int32Array(distinct).fill(NONE);
  const cached = new Uint8Array(distinct);
  let head = NONE;
  let tail = NONE;
  let size = 0;
  let misses = 0;
  const unlink = (x: number) => {
    const p = prev[x]!;
    const q = next[x]!;
    if (p === NONE) head = q;
    else next[p] = q;
    if (q === NONE) tail = p;
    else prev[q] = p;
  };
  const pushFront = (x: number) => {
    prev[x] = NONE;
    next[x] = head;
    if (head !== NONE) prev[head] = x;
    head = x;
    if (tail === NONE) tail = x;
  };
  for (let i = 0; i < ids.length; i++) {
    const x = ids[i]!;
    if (cached[x] === 1) {
      if (head !== x) {
        unlink(x);
        pushFront(x);
      }
      continue;
    }
    misses++;
    if (size === capacity) {
      const victim = tail;
      unlink(victim);
      cached[victim] = 0;
    } else {
      size++;
    }
    cached[x] = 1;
    pushFront(x);
  }
  return misses;
}

/**
 * CLOCK exactly as the crawler's `ClockCache`: a hit sets the entry's mark; a new entry takes the
 * next free place, or once full the first unmarked entry at or after the hand (clearing marks on
 * the way), unmarked, and the hand moves past it.
 */
export function clockMisses(ids: Int32Array, distinct: number, capacity: number): number {
  const where = new Int32Array(distinct).fill(-1);
  const holder = new Int32Array(capacity);
  const mark = new Uint8Array(capacity);
  let size = 0;
  let hand = 0;
  let misses = 0;
  for (let i = 0; i < ids.length; i++) {
    const x = ids[i]!;
    const entry = where[x]!;
    if (entry >= 0) {
      mark[entry] = 1;
      continue;
    }
    misses++;
    let slot: number;
    if (size < capacity) {
      slot = size++;
    } else {
      while (mark[hand] === 1) {
        mark[hand] = 0;
        hand = (hand + 1) % capacity;
      }
      slot = hand;
      hand = (hand + 1) % capacity;
      where[holder[slot]!] = -1;
    }
    holder[slot] = x;
    mark[slot] = 0;
    where[x] = slot;
  }
  return misses;
}

/** Random replacement: the victim is drawn uniformly from the cache (mulberry32, seeded). */
export function randomMisses(ids: Int32Array, distinct: number, capacity: number, seed: number): number {
  const random = mulberry32(seed);
  const where = new Int32Array(distinct).fill(-1);
  const holder = new Int32Array(capacity);
  let size = 0;
  let misses = 0;
  for (let i = 0; i < ids.length; i++) {
    const x = ids[i]!;
    if (where[x]! >= 0) continue;
    misses++;
    let slot: number;
    if (size < capacity) {
      slot = size++;
    } else {
      slot = Math.floor(random() * capacity);
      where[holder[slot]!] = -1;
    }
    holder[slot] = x;
    where[x] = slot;
  }
  return misses;
}

/**
 * STATIC: the `capacity` most looked-up URLs of the whole trace (a first pass; ties go to the
 * URL met first) are kept once met, and nothing else is ever cached.
 */
export function staticMisses(ids: Int32Array, distinct: number, capacity: number): number {
  const counts = new Int32Array(distinct);
  for (let i = 0; i < ids.length; i++) counts[ids[i]!]!++;
  const kept = new Uint8Array(distinct);
  if (capacity >= distinct) {
    kept.fill(1);
  } else {
    const order = Int32Array.from({ length: distinct }, (_, x) => x).sort(
      (a, b) => counts[b]! - counts[a]! || a - b,
    );
    for (let r = 0; r < capacity; r++) kept[order[r]!] = 1;
  }
  const met = new Uint8Array(distinct);
  let misses = 0;
  for (let i = 0; i < ids.length; i++) {
    const x = ids[i]!;
    if (kept[x] === 1 && met[x] === 1) continue;
    met[x] = 1;
    misses++;
  }
  return misses;
}

/**
 * Belady's clairvoyant MIN: when the cache is full, of the cached URLs and the one just missed,
 * the one whose next look-up is farthest away is left out (a URL never looked up again first).
 * A max-heap of next-use times with lazy deletion: O(n log n).
 */
export function minMisses(ids: Int32Array, distinct: number, capacity: number): number {
  const n = ids.length;
  // nextUse[i]: the position of the next look-up of ids[i]; n + id when there is none (unique
  // keys, so a key names its URL: ids[key] below n, key - n above).
  const nextUse = new Float64Array(n);
  const last = new Float64Array(distinct).fill(-1);
  for (let i = n - 1; i >= 0; i--) {
    const x = ids[i]!;
    nextUse[i] = last[x]! >= 0 ? last[x]! : n + x;
    last[x] = i;
  }
  const urlOf = (key: number) => (key < n ? ids[key]! : key - n);
  const current = new Float64Array(distinct).fill(-1); // -1: not cached
  const heap = new MaxHeap(n);
  let size = 0;
  let misses = 0;
  for (let i = 0; i < n; i++) {
    const x = ids[i]!;
    const key = nextUse[i]!;
    if (current[x]! >= 0) {
      current[x] = key;
      heap.push(key);
      continue;
    }
    misses++;
    if (key >= n) continue; // never looked up again: caching it cannot help
    if (size < capacity) {
      size++;
    } else {
      // Drop stale heap entries (URLs evicted or looked up since).
      while (current[urlOf(heap.peek())] !== heap.peek()) heap.pop();
      const farthest = heap.peek();
      if (farthest < key) continue; // every cached URL is needed before x: leave x out
      heap.pop();
      current[urlOf(farthest)] = -1;
    }
    current[x] = key;
    heap.push(key);
  }
  return misses;
}

/** A binary max-heap of numbers in a typed array of fixed room. */
class MaxHeap {
  readonly #items: Float64Array;
  #size = 0;

  constructor(room: number) {
    this.#items = new Float64Array(Math.max(1, room));
  }

  peek(): number {
    return this.#items[0]!;
  }

  push(value: number): void {
    const items = this.#items;
    let i = this.#size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! >= value) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = value;
  }

  pop(): void {
    const items = this.#items;
    const value = items[--this.#size]!;
    const size = this.#size;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && items[child + 1]! > items[child]!) child++;
      if (items[child]! <= value) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = value;
  }
}

/** mulberry32: a small, fast, seeded generator of numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
