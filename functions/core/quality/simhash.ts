/**
 * 64-bit SimHash (Charikar 2002) of a page's visible text, for the near-duplicate content test
 * (Manku, Jain and Das Sarma 2007 used 64-bit SimHash with Hamming distance 3 on 8 billion pages).
 *
 * The definition below is a stored format, like URL fingerprints: simhashes are kept in the
 * near-duplicate index across restarts and machines, so any change to it breaks resumed crawls.
 * test/unit/quality/simhash.test.ts freezes it with fixed vectors and checks this fast version
 * against a plain BigInt reference.
 *
 * Definition:
 * 1. Lowercase every code point by its Unicode simple lowercase mapping (`ch.toLowerCase()`, which
 *    is one code point for every character but U+0130 İ, whose simple mapping is `i`; no final
 *    sigma rule). Per code point, from a table: lowercasing the whole string first cost a third of
 *    the time.
 * 2. Tokens: maximal runs of letters, digits and combining marks (`\p{L}\p{N}\p{M}`). Characters of
 *    scripts written without spaces (Script_Extensions Han, Hiragana, Katakana, Thai, Lao, Khmer,
 *    Myanmar) are one token each, so Chinese or Japanese text is shingled as character n-grams.
 *    Everything else (spaces, punctuation, symbols, emoji) separates tokens.
 * 3. Token hash t: FNV-1a 32 over the token's UTF-16 code units, then murmur3's fmix32.
 * 4. Shingles: every run of `shingle` (default 3) consecutive tokens; a text with fewer tokens than
 *    that is one shingle of all its tokens. Shingle hash: hi = fmix32(x_A), lo = fmix32(x_B), where
 *    x_C = sum over the shingle's tokens t_i of t_i * C^(n-i) mod 2^32 (Horner: x = (x + t) * C),
 *    A = 0x9e3779b1, B = 0x85ebca77.
 * 5. Bit b of the SimHash is 1 when more than half of the shingle occurrences have bit b set
 *    (every occurrence votes, so a shingle's weight is its occurrence count; a tie gives 0).
 * 6. Written as 16 lowercase hex characters, hi then lo (the format of URL fingerprints). A text
 *    without tokens has SimHash {@link EMPTY_SIMHASH}.
 */

/** A SimHash as 16 lowercase hex characters (bits 63..0). */
export type Simhash = string;

/** SimHash of a text with no tokens. */
export const EMPTY_SIMHASH: Simhash = '0000000000000000';

/** Tokens per shingle when not given. */
export const DEFAULT_SHINGLE = 3;

/** Options of {@link simhash}. */
export interface SimhashOptions {
  /** Tokens per shingle, 1 to 8 (default 3). Part of the stored format: keep it fixed per crawl. */
  shingle?: number;
  /**
   * Texts whose token sequences are dropped wherever they occur whole and in order in the text,
   * before shingling: e.g. the path of the URL asked for, which error pages quote (the soft-404
   * test compares error pages without it). Slower; for a few pages only.
   */
  skip?: readonly string[];
}

/** A SimHash and what it was computed from. */
export interface SimhashResult {
  simhash: Simhash;
  /** Tokens in the text: near-duplicate decisions on a handful of tokens mean little. */
  tokens: number;
  /** Shingle occurrences that voted. */
  shingles: number;
}

/** A string that is not a SimHash was given where one was needed. */
export class SimhashFormatError extends Error {
  readonly code = 'SIMHASH_FORMAT';
  constructor(value: string) {
    super(`not a simhash (16 lowercase hex characters): ${JSON.stringify(value.slice(0, 40))}`);
    this.name = 'SimhashFormatError';
  }
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const MUL_HI = 0x9e3779b1 | 0;
const MUL_LO = 0x85ebca77 | 0;

/** Character classes. */
const SEP = 0;
const WORD = 1;
const SINGLE = 2;

const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
const SINGLE_CHAR =
  /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]$/u;

let bmpTable: Int32Array | undefined;
/**
 * Code units from here up (CJK, kana, Hangul, compatibility and fullwidth forms: four fifths of
 * the table) are filled when a text first has one, so a crawl of pages in Latin, Greek, Cyrillic
 * or Indic scripts never pays for them. The scan tests `c < HIGH` where it tested `c < 0xd800`,
 * so the hot loop does not get slower.
 */
const HIGH = 0x3000;
let highFilled = false;

/**
 * For every BMP code unit: its lowercase code unit in bits 0-15 and its class above, built on first
 * use (15 to 30 ms for the whole table, once per process) so that the hot loop runs neither a
 * regular expression nor `toLowerCase`: a page in Cyrillic or Chinese is all non-ASCII. Filling it
 * lazily, 256 code units at a time, made every page about 10% slower (a check in the loop), for a
 * one-off saving.
 */
function table(): Int32Array {
  if (bmpTable !== undefined) return bmpTable;
  const t = new Int32Array(65536);
  fill(t, 0, HIGH);
  bmpTable = t;
  return t;
}

function fillHigh(t: Int32Array): void {
  fill(t, HIGH, 0x10000);
  highFilled = true;
}

function fill(t: Int32Array, from: number, to: number): void {
  for (let c = from; c < to; c++) {
    // surrogates are handled in pairs by the scanner; the rest lowercase to one code unit
    const lower = c >= 0xd800 && c <= 0xdfff ? c : lowerCodePoint(c);
    t[c] = lower | (classify(String.fromCharCode(lower)) << 16);
  }
}

/** Unicode simple lowercase mapping of one code point. */
function lowerCodePoint(cp: number): number {
  if (cp === 0x130) return 0x69; // İ: the full mapping is "i̇", the simple one "i"
  return String.fromCodePoint(cp).toLowerCase().codePointAt(0)!;
}

function classify(ch: string): number {
  if (!WORD_CHAR.test(ch)) return SEP;
  return SINGLE_CHAR.test(ch) ? SINGLE : WORD;
}

/** murmur3's 32-bit finalizer: every input bit flips each output bit with probability ~1/2. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Votes are counted 8 bit positions at a time: PACK[byte] holds the byte's 8 bits as 6-bit fields
 * of one float (bit j of the byte adds 64^j), so one addition counts 8 positions and a shingle
 * costs 8 additions instead of 64. 8 fields of 6 bits fit the 53 exact bits of a double.
 */
const PACK = Float64Array.from({ length: 256 }, (_, byte) => {
  let v = 0;
  for (let j = 0; j < 8; j++) if ((byte >> j) & 1) v += 64 ** j;
  return v;
});
/** A 6-bit field overflows after 63 votes: fold the fields into the full counters before that. */
const FLUSH_EVERY = 63;

/**
 * Streams token hashes into shingles and shingles into bit votes. Kept in one small class with
 * typed-array state (no per-token allocation): the text loop calls `token` once per word.
 */
class Shingler {
  readonly #size: number;
  /** The last `size` token hashes, oldest first. */
  readonly #window: Int32Array;
  /** Packed counters (see PACK): word w counts bits 8w..8w+7, bits 0-31 of lo then 0-31 of hi. */
  readonly #packed = new Float64Array(8);
  /** Ones per bit: 0-31 bits of lo, 32-63 bits of hi. */
  readonly #ones = new Float64Array(64);
  #pending = 0;
  /** Token sequences to drop (see SimhashOptions.skip); fields of the one class, so `token` stays monomorphic. */
  readonly #skip: number[][] | undefined;
  /** Tokens held back while they match the start of a sequence to drop. */
  readonly #held: number[] = [];
  /** When set, tokens are collected here instead of shingled. */
  readonly #collect: number[] | undefined;
  tokens = 0;
  shingles = 0;

  constructor(size: number, skip?: number[][], collect?: number[]) {
    this.#size = size;
    this.#window = new Int32Array(size);
    this.#skip = skip?.filter((sequence) => sequence.length > 0);
    this.#collect = collect;
  }

  token(t: number): void {
    if (this.#collect !== undefined) this.#collect.push(t);
    else if (this.#skip !== undefined) this.#hold(t);
    else this.#shingle(t);
  }

  /**
   * Holds tokens back while they are the start of a sequence to drop; drops a whole sequence,
   * releases the oldest held token when no sequence can match any more (or the text ended).
   */
  #hold(t: number): void {
    this.#held.push(t);
    this.#drain(false);
  }

  #drain(ended: boolean): void {
    const held = this.#held;
    while (held.length > 0) {
      let prefix = false;
      for (const sequence of this.#skip!) {
        if (sequence.length < held.length || !held.every((h, i) => h === sequence[i])) continue;
        if (sequence.length === held.length) {
          held.length = 0;
          return;
        }
        prefix = true;
      }
      if (prefix && !ended) return;
      this.#shingle(held.shift()!);
    }
  }

  #shingle(t: number): void {
    const w = this.#window;
    const size = this.#size;
    const n = this.tokens++;
    if (n < size) {
      w[n] = t;
      if (n + 1 < size) return;
    } else {
      for (let i = 1; i < size; i++) w[i - 1] = w[i]!;
      w[size - 1] = t;
    }
    this.#vote(size);
  }

  /** Releases the tokens still held back (a text ending inside the start of a sequence to drop). */
  release(): void {
    if (this.#skip !== undefined) this.#drain(true);
  }

  /** The majority bits as [hi, lo] (unsigned); a text shorter than a shingle is one shingle. */
  finish(): [number, number] {
    if (this.tokens > 0 && this.tokens < this.#size) this.#vote(this.tokens);
    this.#flush();
    const half = this.shingles / 2;
    const ones = this.#ones;
    let hi = 0;
    let lo = 0;
    for (let b = 0; b < 32; b++) {
      if (ones[b]! > half) lo |= 1 << b;
      if (ones[32 + b]! > half) hi |= 1 << b;
    }
    return [hi >>> 0, lo >>> 0];
  }

  #vote(n: number): void {
    const w = this.#window;
    let a = 0;
    let b = 0;
    for (let i = 0; i < n; i++) {
      const t = w[i]!;
      a = Math.imul(a + t, MUL_HI);
      b = Math.imul(b + t, MUL_LO);
    }
    const hi = fmix32(a);
    const lo = fmix32(b);
    const p = this.#packed;
    p[0]! += PACK[lo & 255]!;
    p[1]! += PACK[(lo >>> 8) & 255]!;
    p[2]! += PACK[(lo >>> 16) & 255]!;
    p[3]! += PACK[lo >>> 24]!;
    p[4]! += PACK[hi & 255]!;
    p[5]! += PACK[(hi >>> 8) & 255]!;
    p[6]! += PACK[(hi >>> 16) & 255]!;
    p[7]! += PACK[hi >>> 24]!;
    this.shingles++;
    if (++this.#pending === FLUSH_EVERY) this.#flush();
  }

  #flush(): void {
    const p = this.#packed;
    const ones = this.#ones;
    for (let w = 0; w < 8; w++) {
      let v = p[w]!;
      for (let j = 0; j < 8; j++) {
        const rest = Math.floor(v / 64);
        ones[8 * w + j]! += v - rest * 64;
        v = rest;
      }
      p[w] = 0;
    }
    this.#pending = 0;
  }
}

function shingleSize(options: SimhashOptions | undefined): number {
  const size = options?.shingle ?? DEFAULT_SHINGLE;
  if (!Number.isInteger(size) || size < 1 || size > 8) {
    throw new RangeError(`shingle must be an integer from 1 to 8, got ${size}`);
  }
  return size;
}

/**
 * SimHash of a text with its token and shingle counts (see the module comment for the exact
 * definition). Linear in the text: about 10 µs per 1,000 characters of English on a shared
 * 2-vCPU VM, where a bare `charCodeAt` loop over the same text takes 3 (docs/quality.md).
 */
export function simhashText(text: string, options?: SimhashOptions): SimhashResult {
  const skip = options?.skip?.map(tokenHashes);
  const shingler = new Shingler(shingleSize(options), skip);
  scan(text, shingler);
  shingler.release();
  if (shingler.tokens === 0) return { simhash: EMPTY_SIMHASH, tokens: 0, shingles: 0 };
  const [hi, lo] = shingler.finish();
  return { simhash: hex8(hi) + hex8(lo), tokens: shingler.tokens, shingles: shingler.shingles };
}

/** The hashes of a text's tokens, in order (step 3 of the definition). */
function tokenHashes(text: string): number[] {
  const hashes: number[] = [];
  scan(text, new Shingler(1, undefined, hashes));
  return hashes;
}

/** Steps 1 to 3 of the definition: feeds the text's token hashes to `shingler`. */
function scan(text: string, shingler: Shingler): void {
  const t = table();
  const n = text.length;
  let h = FNV_OFFSET;
  let inWord = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    let cls: number;
    let u = c; // lowercased code unit
    let u2 = -1; // lowercased low surrogate of an astral code point
    if (c < 0x30) {
      cls = SEP; // controls, space, punctuation and symbols below '0': most separators
    } else if (c < HIGH) {
      const v = t[c]!;
      cls = v >>> 16;
      u = v & 0xffff;
    } else if (c < 0xd800 || c > 0xdfff) {
      if (!highFilled) fillHigh(t);
      const v = t[c]!;
      cls = v >>> 16;
      u = v & 0xffff;
    } else {
      const low = c <= 0xdbff && i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (low >= 0xdc00 && low <= 0xdfff) {
        i++;
        const lower = String.fromCodePoint(lowerCodePoint(((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000));
        cls = classify(lower);
        u = lower.charCodeAt(0);
        u2 = lower.charCodeAt(1);
      } else {
        cls = SEP; // a lone surrogate
      }
    }
    if (cls === WORD) {
      h = Math.imul(h ^ u, FNV_PRIME);
      if (u2 >= 0) h = Math.imul(h ^ u2, FNV_PRIME);
      inWord = true;
      continue;
    }
    if (inWord) {
      shingler.token(fmix32(h));
      h = FNV_OFFSET;
      inWord = false;
    }
    if (cls === SINGLE) {
      let g = Math.imul(FNV_OFFSET ^ u, FNV_PRIME);
      if (u2 >= 0) g = Math.imul(g ^ u2, FNV_PRIME);
      shingler.token(fmix32(g));
    }
  }
  if (inWord) shingler.token(fmix32(h));
}

/** SimHash of a text: 16 lowercase hex characters. See {@link simhashText}. */
export function simhash(text: string, options?: SimhashOptions): Simhash {
  return simhashText(text, options).simhash;
}

function hex8(x: number): string {
  return x.toString(16).padStart(8, '0');
}

const SIMHASH_PATTERN = /^[0-9a-f]{16}$/;

/** True when `value` is 16 lowercase hex characters. */
export function isSimhash(value: string): boolean {
  return SIMHASH_PATTERN.test(value);
}

/**
 * The two 32-bit halves of a SimHash as unsigned numbers, [bits 63..32, bits 31..0].
 * @throws SimhashFormatError when `value` is not 16 lowercase hex characters.
 */
export function simhashHalves(value: Simhash): [hi: number, lo: number] {
  if (!SIMHASH_PATTERN.test(value)) throw new SimhashFormatError(value);
  return [Number.parseInt(value.slice(0, 8), 16), Number.parseInt(value.slice(8), 16)];
}

/** The SimHash whose halves are `hi` and `lo` (taken as unsigned 32-bit). */
export function simhashFromHalves(hi: number, lo: number): Simhash {
  return hex8(hi >>> 0) + hex8(lo >>> 0);
}

/** Number of 1 bits in the low 32 bits of `x` (SWAR, no table). */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/**
 * Number of bit positions in which two SimHashes differ (0 to 64).
 * @throws SimhashFormatError when either is not 16 lowercase hex characters.
 */
export function hammingDistance(a: Simhash, b: Simhash): number {
  const [ahi, alo] = simhashHalves(a);
  const [bhi, blo] = simhashHalves(b);
  return popcount32(ahi ^ bhi) + popcount32(alo ^ blo);
}
