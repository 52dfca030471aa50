/**
 * The longest-match look-up, small (sorted scan) and large (indexed), against a plain reference:
 * every rule tried, the longest match kept, Allow winning a tie.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePattern } from '../../../functions/core/robots/pattern.ts';
import { type RobotsRule, RuleSet } from '../../../functions/core/robots/rule-set.ts';

function referenceAllowed(rules: readonly RobotsRule[], path: string): boolean {
  let best: RobotsRule | undefined;
  for (const rule of rules) {
    if (!compiled(rule.pattern).matches(path)) continue;
    const longer = best === undefined || rule.pattern.length > best.pattern.length;
    const tieAllow = best !== undefined && rule.pattern.length === best.pattern.length && rule.allow;
    if (longer || tieAllow) best = rule;
  }
  return best === undefined || best.allow;
}

const patterns = new Map<string, ReturnType<typeof compilePattern>>();
function compiled(pattern: string): ReturnType<typeof compilePattern> {
  let matcher = patterns.get(pattern);
  if (matcher === undefined) {
    matcher = compilePattern(pattern);
    patterns.set(pattern, matcher);
  }
  return matcher;
}

function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function text(next: () => number, alphabet: string, max: number): string {
  let out = '';
  const length = Math.floor(next() * (max + 1));
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)];
  return out;
}

function randomRules(next: () => number, count: number): RobotsRule[] {
  const rules: RobotsRule[] = [];
  for (let line = 1; line <= count; line++) {
    const wild = next() < 0.2;
    const pattern = `/${text(next, wild ? 'ab/*' : 'ab/', 6)}${next() < 0.15 ? '$' : ''}`;
    rules.push({ allow: next() < 0.5, pattern, line });
  }
  return rules;
}

describe('RuleSet', () => {
  for (const [label, count] of [
    ['small sets (sorted scan)', 12],
    ['large sets (indexed)', 400],
  ] as const) {
    it(`agrees with the reference on ${label}`, () => {
      const next = lcg(count);
      let allowed = 0;
      let total = 0;
      for (let set = 0; set < 30; set++) {
        const rules = randomRules(next, count);
        const ruleSet = new RuleSet(rules);
        for (let n = 0; n < 300; n++) {
          const path = `/${text(next, 'ab/', 8)}`;
          const expected = referenceAllowed(rules, path);
          const decided = ruleSet.decide(path);
          assert.equal(decided === undefined || decided.allow, expected, `${path} in set ${set}`);
          if (decided !== undefined) assert.ok(compilePattern(decided.pattern).matches(path));
          total++;
          if (expected) allowed++;
        }
      }
      assert.ok(allowed > total * 0.1 && allowed < total * 0.9, `allowed ${allowed} of ${total}`);
    });
  }

  it('reports the first of duplicate rules', () => {
    const rules: RobotsRule[] = [
      { allow: false, pattern: '/a', line: 3 },
      { allow: false, pattern: '/a', line: 7 },
    ];
    assert.equal(new RuleSet(rules).decide('/a/b')?.line, 3);
  });
});
