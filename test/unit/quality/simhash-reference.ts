/**
 * A plain reference SimHash, written from the definition in functions/core/quality/simhash.ts
 * without any of its speed tricks: tokens as strings, BigInt arithmetic, one vote per bit. The
 * fast version must agree with it on every text. Also seeded random text for the tests.
 */

const M32 = 0xffffffffn;

function fmix32(h: bigint): bigint {
  h ^= h >> 16n;
  h = (h * 0x85ebca6bn) & M32;
  h ^= h >> 13n;
  h = (h * 0xc2b2ae35n) & M32;
  h ^= h >> 16n;
  return h;
}

/** FNV-1a 32 over UTF-16 code units, then fmix32. */
export function referenceTokenHash(token: string): bigint {
  let h = 0x811c9dc5n;
  for (let i = 0; i < token.length; i++) h = ((h ^ BigInt(token.charCodeAt(i))) * 0x01000193n) & M32;
  return fmix32(h);
}

const WORD = /^[\p{L}\p{N}\p{M}]$/u;
const SINGLE =
  /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]$/u;

/** Lowercase per code point (simple mapping: İ -> i), then split into tokens. */
export function referenceTokens(text: string): string[] {
  const tokens: string[] = [];
  let word = '';
  for (const original of text) {
    const ch = original === '\u0130' ? 'i' : original.toLowerCase();
    if (!WORD.test(ch)) {
      if (word !== '') tokens.push(word);
      word = '';
    } else if (SINGLE.test(ch)) {
      if (word !== '') tokens.push(word);
      word = '';
      tokens.push(ch);
    } else {
      word += ch;
    }
  }
  if (word !== '') tokens.push(word);
  return tokens;
}

/** The 64-bit hash of a shingle given its tokens' hashes. */
export function referenceShingleHash(tokenHashes: bigint[]): bigint {
  let a = 0n;
  let b = 0n;
  for (const t of tokenHashes) {
    a = ((a + t) * 0x9e3779b1n) & M32;
    b = ((b + t) * 0x85ebca77n) & M32;
  }
  return (fmix32(a) << 32n) | fmix32(b);
}

/** SimHash by the book: +1 / -1 per bit per shingle occurrence, bit set when the sum is positive. */
export function referenceSimhash(text: string, shingle = 3): string {
  const hashes = referenceTokens(text).map(referenceTokenHash);
  if (hashes.length === 0) return '0000000000000000';
  const shingles: bigint[][] = [];
  if (hashes.length < shingle) shingles.push(hashes);
  for (let i = 0; i + shingle <= hashes.length; i++) shingles.push(hashes.slice(i, i + shingle));
  const sums = new Array<number>(64).fill(0);
  for (const s of shingles) {
    const h = referenceShingleHash(s);
    for (let bit = 0; bit < 64; bit++) sums[bit]! += (h >> BigInt(bit)) & 1n ? 1 : -1;
  }
  let out = 0n;
  for (let bit = 0; bit < 64; bit++) if (sums[bit]! > 0) out |= 1n << BigInt(bit);
  return out.toString(16).padStart(16, '0');
}

/** mulberry32: a small seeded generator, so that "random" tests are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pieces of text from many scripts and edge cases: Latin with accents and capitals, Greek with
 * final sigma, Turkish dotted I, Cyrillic, Han, kana, Thai, Hangul, Devanagari with vowel signs,
 * combining marks, digits, emoji and astral letters (Deseret capitals lowercase to Deseret small),
 * a Han extension-B ideograph, lone surrogates, punctuation and whitespace. */
const PIECES = [
  'the',
  'quick',
  'Brown',
  'FOX',
  'jumps',
  'über',
  'Ärger',
  'naïve',
  'café',
  'cafe\u0301',
  'ΣΊΣΥΦΟΣ',
  'σοφός',
  'İstanbul',
  'ıi',
  'Москва',
  'ПРИВЕТ',
  '東京都',
  '日本語のテキスト',
  'ひらがな',
  'カタカナー',
  'ภาษาไทย',
  '한국어',
  '텍스트',
  'हिन्दी',
  'नमस्ते',
  '2024',
  'x86_64',
  'v1.2.3',
  'A1B2',
  '😀',
  '👍🏽',
  '\u{10400}\u{10401}',
  '\u{20000}\u{20001}',
  '\ud800',
  '\udc00x',
  'x\ud83d',
  '—',
  '...',
  ',',
  ';',
  '"',
  "'",
  '(',
  ')',
  ' ',
  '  ',
  '\n',
  '\t',
  '\u00a0',
  '\u3000',
  '-',
  '_',
  'ǅ',
  'ﬁ',
  'ß',
  'ẞ',
  'Ⅻ',
  '①',
  '½',
  '\u0301',
  'ｆｕｌｌ',
];

/** A random text of `words` pieces joined by random separators. */
export function randomText(random: () => number, words: number): string {
  let text = '';
  for (let i = 0; i < words; i++) {
    text += PIECES[Math.floor(random() * PIECES.length)]!;
    text += random() < 0.8 ? ' ' : PIECES[Math.floor(random() * PIECES.length)]!;
  }
  return text;
}

/** English-like prose from a fixed vocabulary (for property tests when no real text is around). */
export function randomProse(random: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    // Zipf-like: small indexes much more often, like real word frequencies
    const index = Math.floor(VOCABULARY.length * random() ** 3);
    out.push(VOCABULARY[index]!);
  }
  return out.join(' ');
}

const VOCABULARY = (
  'the of and to a in is that for it as with was on be by this are or from at an not which have ' +
  'but all they were one has more their can will other been there if its also into these than ' +
  'then some would may such when only two first new time over used after most any where about ' +
  'between each through both under many those same while system data value function return ' +
  'module object string number list file error class method type example default server page ' +
  'crawler request response header body link index table query result process thread memory ' +
  'network address protocol version option setting command argument parameter variable buffer ' +
  'stream socket client library package source document section chapter figure note warning ' +
  'python postgres linux window window user group access control policy rule test case suite'
).split(' ');
