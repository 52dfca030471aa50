/**
 * A fixed set of lowercase names (tag or attribute names) looked up straight in the HTML source,
 * ASCII case-insensitively, without cutting and lowercasing a string per lookup: a page has
 * hundreds of tags, and those short strings were a tenth of what a crawl allocates. A name with a
 * non-ASCII character takes the slow path (`String#toLowerCase` maps a few of them to ASCII, the
 * Kelvin sign to `k`), so the answer is always that of `names.get(name.toLowerCase())`.
 */
export class NameTable<V> {
  readonly #names: (string | undefined)[];
  readonly #values: V[];
  readonly #mask: number;
  readonly #maxLength: number;

  /** @param entries lowercase ASCII names and their values */
  constructor(entries: Iterable<readonly [string, V]>) {
    const byName = new Map(entries);
    let size = 16;
    while (size < byName.size * 4) size *= 2;
    this.#mask = size - 1;
    this.#names = new Array<string | undefined>(size).fill(undefined);
    this.#values = new Array<V>(size);
    let maxLength = 0;
    for (const [name, value] of byName) {
      if (!/^[\x00-\x40\x5b-\x7f]*$/.test(name)) throw new Error(`not a lowercase ASCII name: ${name}`);
      maxLength = Math.max(maxLength, name.length);
      let slot = hashOf(name, 0, name.length) & this.#mask;
      while (this.#names[slot] !== undefined) slot = (slot + 1) & this.#mask;
      this.#names[slot] = name;
      this.#values[slot] = value;
    }
    this.#maxLength = maxLength;
  }

  /** The slot of `source[start, end)` lowercased, or -1 when it is not in the table. */
  slotOf(source: string, start: number, end: number): number {
    const length = end - start;
    // Lowercasing never shortens a string, so a longer name cannot match.
    if (length === 0 || length > this.#maxLength) return -1;
    let h = length;
    for (let i = start; i < end; i++) {
      let c = source.charCodeAt(i);
      if (c >= 0x80) return this.#slowSlotOf(source.slice(start, end).toLowerCase());
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      h = (Math.imul(h, 31) + c) | 0;
    }
    const names = this.#names;
    for (let slot = h & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const name = names[slot];
      if (name === undefined) return -1;
      if (name.length === length && sameLowercase(source, start, name)) return slot;
    }
  }

  /** The name in a slot returned by `slotOf`. */
  name(slot: number): string {
    return this.#names[slot]!;
  }

  /** The value in a slot returned by `slotOf`. */
  value(slot: number): V {
    return this.#values[slot]!;
  }

  /** The value for `source[start, end)` lowercased, or `missing`. */
  get<M>(source: string, start: number, end: number, missing: M): V | M {
    const slot = this.slotOf(source, start, end);
    return slot < 0 ? missing : this.#values[slot]!;
  }

  #slowSlotOf(lowered: string): number {
    for (let slot = hashOf(lowered, 0, lowered.length) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const name = this.#names[slot];
      if (name === undefined) return -1;
      if (name === lowered) return slot;
    }
  }
}

function hashOf(name: string, start: number, end: number): number {
  let h = end - start;
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + name.charCodeAt(i)) | 0;
  return h;
}

/** `source` from `start` equals the lowercase ASCII `name` when its A-Z are lowercased. */
function sameLowercase(source: string, start: number, name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    let c = source.charCodeAt(start + i);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c !== name.charCodeAt(i)) return false;
  }
  return true;
}
