import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EMPTY_SIMHASH,
  hammingDistance,
  isSimhash,
  popcount32,
  SimhashFormatError,
  simhash,
  simhashFromHalves,
  simhashHalves,
  simhashText,
} from '../../../functions/core/quality/simhash.ts';
import {
  randomProse,
  randomText,
  referenceSimhash,
  referenceTokenHash,
  referenceTokens,
  seeded,
} from './simhash-reference.ts';

// Computed once and checked against the BigInt reference. SimHashes are stored in the
// near-duplicate index: if this test fails, the definition changed and resumed crawls would compare
// new pages with incompatible old ones. Only characters assigned long ago (Unicode 6.1 or older), so a
// Node upgrade's Unicode tables cannot move them.
const VECTORS: [text: string, shingle: number, simhash: string, tokens: number][] = [
  ['', 3, '0000000000000000', 0],
  ['   ,.;!?  ', 3, '0000000000000000', 0],
  ['hello', 3, '31b84f9f94658c54', 1],
  ['Hello, World!', 3, '1914f8265c1dbfcc', 2],
  ['hello world', 3, '1914f8265c1dbfcc', 2],
  ['The quick brown fox jumps over the lazy dog.', 3, 'cbd1cc2eff8924d3', 9],
  ['the QUICK brown fox JUMPS over the lazy dog', 3, 'cbd1cc2eff8924d3', 9],
  ['東京都の天気は晴れです', 3, '32ffa533111ffbbb', 11],
  ['Привет, мир! Как дела?', 3, 'd0148211080200a0', 4],
  ['ΣΊΣΥΦΟΣ σοφός', 3, 'd3052345fd82795f', 2],
  ['İstanbul ıi', 3, '8ae8dc0cb68a1e0c', 2],
  ['नमस्ते दुनिया', 3, '068863a6decfd320', 2],
  ['ภาษาไทยง่าย', 3, 'b13be723baf5c7c5', 11],
  ['emoji 😀 between 👍🏽 words', 3, '1c9d14a7b49b390b', 3],
  ['Deseret \u{10400}\u{10401} and \u{20000}', 3, '08043251030410a0', 4],
  ['a b c d e f g h', 1, '32237b92c2949530', 8],
  ['a b c d e f g h', 5, 'abac62a26316210c', 8],
  ['one two', 3, '0e17a9dcf7b85e46', 2],
];

describe('simhash: frozen vectors', () => {
  it('gives the recorded SimHash and token count for each fixed text', () => {
    for (const [text, shingle, expected, tokens] of VECTORS) {
      const result = simhashText(text, { shingle });
      assert.equal(result.simhash, expected, JSON.stringify(text));
      assert.equal(result.tokens, tokens, JSON.stringify(text));
    }
  });

  it('gives the recorded SimHash for 2,000 words of generated prose (votes folded many times)', () => {
    const text = randomProse(seeded(2024), 2000);
    assert.equal(text.length, 9277);
    assert.deepEqual(simhashText(text), { simhash: '5dd2541f8f06a59e', tokens: 2000, shingles: 1998 });
  });

  it('pins the token hash and the tokenizer on a few values', () => {
    // FNV-1a 32 of "hello" is the published 0x4f9f2cab; fmix32 of that, computed with Python
    assert.equal(referenceTokenHash('hello').toString(16), '888d766e');
    assert.deepEqual(referenceTokens('Ab-c 東京 café 😀x'), ['ab', 'c', '東', '京', 'café', 'x']);
  });
});

describe('simhash: agrees with the plain BigInt reference', () => {
  it('on 600 random texts of mixed scripts, case, marks, emoji and lone surrogates', () => {
    const random = seeded(42);
    for (let i = 0; i < 600; i++) {
      const words = Math.floor(random() ** 2 * 700);
      const text = i % 2 === 0 ? randomText(random, words) : randomProse(random, words);
      const shingle = 1 + (i % 5);
      assert.equal(
        simhash(text, { shingle }),
        referenceSimhash(text, shingle),
        JSON.stringify(text.slice(0, 80)),
      );
    }
  });
});

describe('simhash: properties', () => {
  it('ignores case, punctuation and the amount of whitespace', () => {
    assert.equal(simhash('Hello,   WORLD... how are you?'), simhash('hello world how are you'));
    assert.equal(simhash('line one\nline two'), simhash('line one line two'));
  });

  it('is the empty SimHash for a text without tokens, and one shingle for fewer tokens than a shingle', () => {
    assert.deepEqual(simhashText(''), { simhash: EMPTY_SIMHASH, tokens: 0, shingles: 0 });
    assert.deepEqual(simhashText(' \n\t— … 😀 '), { simhash: EMPTY_SIMHASH, tokens: 0, shingles: 0 });
    assert.deepEqual(simhashText('just two'), { simhash: simhash('just two'), tokens: 2, shingles: 1 });
    assert.notEqual(simhash('just two'), simhash('two just'));
  });

  it('is at distance 0 from itself and small from a one-word edit of a 500-word text', () => {
    const random = seeded(9);
    const distances: number[] = [];
    for (let trial = 0; trial < 300; trial++) {
      const words = randomProse(random, 500).split(' ');
      const base = words.join(' ');
      assert.equal(hammingDistance(simhash(base), simhash(base)), 0);
      const at = Math.floor(random() * words.length);
      words[at] = words[at] === 'zebra' ? 'okapi' : 'zebra';
      distances.push(hammingDistance(simhash(base), simhash(words.join(' '))));
    }
    distances.sort((a, b) => a - b);
    const mean = distances.reduce((a, b) => a + b, 0) / distances.length;
    // measured on python3-doc windows: mean 1.8, p90 4, p99 6 (docs/quality.md)
    assert.ok(mean <= 3, `mean ${mean}`);
    assert.ok(distances[Math.floor(0.9 * distances.length)]! <= 5, `p90 ${distances[270]}`);
    assert.ok(distances[Math.floor(0.5 * distances.length)]! <= 3, `median ${distances[150]}`);
  });

  it('puts unrelated texts about 32 bits apart', () => {
    const random = seeded(11);
    const distances: number[] = [];
    for (let trial = 0; trial < 300; trial++) {
      distances.push(hammingDistance(simhash(randomProse(random, 500)), simhash(randomProse(random, 500))));
    }
    const mean = distances.reduce((a, b) => a + b, 0) / distances.length;
    assert.ok(mean >= 28 && mean <= 36, `mean ${mean}`);
    const inside = distances.filter((d) => d >= 20 && d <= 44).length;
    assert.ok(inside >= 0.95 * distances.length, `${inside} of ${distances.length} within 32 ± 12`);
  });

  it('drops the token sequences given as skip wherever they occur whole and in order', () => {
    const skip = (text: string, ...sequences: string[]) => simhash(text, { skip: sequences });
    assert.equal(skip('x y /A/b-C z', 'a b c'), simhash('x y z'));
    assert.equal(skip('a b c x a b c y a b c', 'a b c'), simhash('x y'));
    assert.equal(skip('Sorry, /shop/item?id=7 is gone', '/shop/item', '?id=7'), simhash('sorry is gone'));
    assert.equal(skip('Sorry, /shop/item is gone', '/shop/item', '?id=7'), simhash('sorry is gone'));
    // out of order, interrupted or cut short: kept
    assert.equal(skip('a x b c', 'a b c'), simhash('a x b c'));
    assert.equal(skip('c b a', 'a b c'), simhash('c b a'));
    assert.equal(skip('x a b', 'a b c'), simhash('x a b'));
    // overlapping starts are found: "a a b" in "a a a b"
    assert.equal(skip('a a a b x', 'a a b'), simhash('a x'));
    // a shorter sequence inside the start of a longer one, at the very end of the text
    assert.equal(skip('x a b', 'a b c', 'b'), simhash('x a'));
    assert.equal(simhashText('a b c d', { skip: ['b c'] }).tokens, 2);
    assert.equal(skip('a b c', ''), simhash('a b c'));
  });

  it('refuses a shingle size outside 1..8', () => {
    for (const shingle of [0, 9, 1.5, Number.NaN]) {
      assert.throws(() => simhash('a b c', { shingle }), RangeError, String(shingle));
    }
  });
});

describe('hammingDistance and helpers', () => {
  it('counts differing bits across both halves', () => {
    assert.equal(hammingDistance('0000000000000000', '0000000000000000'), 0);
    assert.equal(hammingDistance('0000000000000000', 'ffffffffffffffff'), 64);
    assert.equal(hammingDistance('8000000000000001', '0000000000000000'), 2);
    assert.equal(hammingDistance('00000000ffffffff', 'ffffffff00000000'), 64);
    assert.equal(hammingDistance('0123456789abcdef', 'fedcba9876543210'), 64);
    assert.equal(hammingDistance('0f0f0f0f0f0f0f0f', '00ff00ff00ff00ff'), 32);
    const random = seeded(5);
    for (let i = 0; i < 200; i++) {
      const a = simhashFromHalves(random() * 2 ** 32, random() * 2 ** 32);
      const b = simhashFromHalves(random() * 2 ** 32, random() * 2 ** 32);
      const x = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
      assert.equal(hammingDistance(a, b), x.toString(2).replaceAll('0', '').length);
      assert.equal(hammingDistance(a, b), hammingDistance(b, a));
    }
  });

  it('refuses what is not a SimHash', () => {
    for (const bad of ['', 'ABCDEF0123456789', '0123456789abcde', '0123456789abcdef0', 'g123456789abcdef']) {
      assert.equal(isSimhash(bad), false);
      assert.throws(() => hammingDistance(bad, EMPTY_SIMHASH), SimhashFormatError, bad);
      assert.throws(() => simhashHalves(bad), { code: 'SIMHASH_FORMAT' });
    }
  });

  it('splits into halves and back', () => {
    assert.deepEqual(simhashHalves('fedcba9876543210'), [0xfedcba98, 0x76543210]);
    assert.equal(simhashFromHalves(0xfedcba98, 0x76543210), 'fedcba9876543210');
    assert.equal(simhashFromHalves(-1, 1), 'ffffffff00000001');
  });

  it('popcount32 matches counting bit by bit', () => {
    const random = seeded(3);
    for (let i = 0; i < 1000; i++) {
      const x = Math.floor(random() * 2 ** 32);
      let bits = 0;
      for (let b = 0; b < 32; b++) bits += Math.floor(x / 2 ** b) % 2;
      assert.equal(popcount32(x), bits);
    }
    assert.equal(popcount32(0xffffffff), 32);
    assert.equal(popcount32(-1), 32);
  });
});
