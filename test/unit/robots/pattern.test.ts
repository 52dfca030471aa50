/**
 * The wildcard matcher against a reference: Google's position-set algorithm (robots.cc `Matches`),
 * written out plainly here, on many generated patterns and paths.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePattern } from '../../../functions/core/robots/pattern.ts';

/** Google's matcher: the set of path positions the pattern prefix can reach, step by step. */
function referenceMatches(path: string, pattern: string): boolean {
  let positions = [0];
  for (let p = 0; p < pattern.length; p++) {
    const ch = pattern[p];
    if (ch === '$' && p === pattern.length - 1) return positions[positions.length - 1] === path.length;
    if (ch === '*') {
      const from = positions[0]!;
      positions = [];
      for (let i = from; i <= path.length; i++) positions.push(i);
    } else {
      positions = positions.filter((i) => i < path.length && path[i] === ch).map((i) => i + 1);
      if (positions.length === 0) return false;
    }
  }
  return true;
}

/** A small deterministic generator (no Math.random: failures must reproduce). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function randomText(next: () => number, alphabet: string, maxLength: number): string {
  const length = Math.floor(next() * (maxLength + 1));
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)];
  return out;
}

describe('compilePattern', () => {
  it('agrees with the position-set algorithm on 20,000 generated cases', () => {
    const next = lcg(9309);
    let matched = 0;
    for (let n = 0; n < 20_000; n++) {
      const pattern = `/${randomText(next, 'ab*$/', 7)}`;
      const path = `/${randomText(next, 'ab$/', 9)}`;
      const expected = referenceMatches(path, pattern);
      if (expected) matched++;
      assert.equal(compilePattern(pattern).matches(path), expected, `${pattern} vs ${path}`);
    }
    // Both outcomes must be well represented, or the comparison proves little.
    assert.ok(matched > 2_000 && matched < 18_000, `matched ${matched}`);
  });

  it('handles the anchor and literal dollars', () => {
    assert.equal(compilePattern('/a$').matches('/a'), true);
    assert.equal(compilePattern('/a$').matches('/ab'), false);
    assert.equal(compilePattern('/a$b').matches('/a$bc'), true, 'a $ inside is literal');
    assert.equal(compilePattern('/*.gif$').matches('/x.gif'), true);
    assert.equal(compilePattern('/*.gif$').matches('/x.gif?y'), false);
    assert.equal(compilePattern('/a*a$').matches('/a'), false, 'the pieces may not overlap');
    assert.equal(compilePattern('/a*a$').matches('/aa'), true);
    assert.equal(compilePattern('*').matches('/'), true);
    assert.equal(compilePattern('/**x').matches('/yx'), true);
  });

  it('stays linear on a pathological pattern over a long path', () => {
    const pattern = compilePattern('/*a*a*a*a*a*a*a*a*a*a*b');
    const path = `/${'a'.repeat(2048)}`;
    assert.equal(pattern.matches(path), false);
    assert.equal(pattern.matches(`${path}b`), true);
  });
});
