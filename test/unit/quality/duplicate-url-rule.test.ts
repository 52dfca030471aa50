/**
 * What one duplicate-URL rule does to a URL, how rules compose, and which rules a pair of URLs
 * with one content proposes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  applyRule,
  checkRule,
  type DuplicateUrlRule,
  DuplicateUrlRuleError,
  deriveRules,
  lowerPath,
  rewriteUrl,
  ruleKey,
  sortRules,
  splitUrl,
  widerScope,
} from '../../../functions/core/quality/duplicate-url-rule.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';

const O = 'http://h.example';
const CASE: DuplicateUrlRule = { kind: 'case-insensitive' };
const SLASH: DuplicateUrlRule = { kind: 'trailing-slash' };
const INDEX: DuplicateUrlRule = { kind: 'drop-suffix', suffix: 'index.html' };
const REF: DuplicateUrlRule = { kind: 'ignore-param', name: 'ref', at: '/*' };
const EN: DuplicateUrlRule = { kind: 'alias-prefix', from: '/en/', to: '/' };

describe('applyRule', () => {
  test('case-insensitive lowercases the path, not the query or the hex of escapes', () => {
    assert.equal(
      applyRule(CASE, `${O}/Docs/A%2Fb%C3%A9.HTML?Q=X`),
      `${O}/docs/a%2fb%C3%A9.html?Q=X`.replace('%2f', '%2F'),
    );
    assert.equal(lowerPath('/A%2F%C3%A9B'), '/a%2F%C3%A9b');
    assert.equal(applyRule(CASE, `${O}/docs/`), `${O}/docs/`);
  });

  test('trailing-slash adds the slash to a last segment without a dot, and only there', () => {
    assert.equal(applyRule(SLASH, `${O}/docs`), `${O}/docs/`);
    assert.equal(applyRule(SLASH, `${O}/docs?x=1`), `${O}/docs/?x=1`);
    assert.equal(applyRule(SLASH, `${O}/docs/`), `${O}/docs/`);
    assert.equal(applyRule(SLASH, `${O}/a/page.html`), `${O}/a/page.html`);
    assert.equal(applyRule(SLASH, `${O}/`), `${O}/`);
  });

  test('drop-suffix drops a whole last segment only', () => {
    assert.equal(applyRule(INDEX, `${O}/dir/index.html`), `${O}/dir/`);
    assert.equal(applyRule(INDEX, `${O}/index.html?x=1`), `${O}/?x=1`);
    assert.equal(applyRule(INDEX, `${O}/dir/myindex.html`), `${O}/dir/myindex.html`);
    assert.equal(applyRule(INDEX, `${O}/dir/index.html/x`), `${O}/dir/index.html/x`);
  });

  test('ignore-param applies at its path, or under its directory followed by *', () => {
    const at = (where: string): DuplicateUrlRule => ({ kind: 'ignore-param', name: 'id', at: where });
    assert.equal(applyRule(at('/item'), `${O}/item?id=3`), `${O}/item`);
    assert.equal(applyRule(at('/item'), `${O}/item/x?id=3`), `${O}/item/x?id=3`);
    assert.equal(applyRule(at('/teach'), `${O}/item?id=3`), `${O}/item?id=3`);
    assert.equal(applyRule(at('/a/*'), `${O}/a/b/c?id=3`), `${O}/a/b/c`);
    assert.equal(applyRule(at('/a/*'), `${O}/ab?id=3`), `${O}/ab?id=3`);
    assert.equal(ruleKey(at('/a/*')), 'ignore-param id at /a/*');
    assert.equal(widerScope('/a/p', '/a/q/r'), '/a/*');
    assert.equal(widerScope('/p', '/q'), '/*');
    assert.equal(widerScope('/a/b/*', '/a/c'), '/a/*');
    assert.equal(widerScope('/ab/x', '/ac/y'), '/*');
    // a rule stored before parameter rules had a scope applied to the whole origin
    assert.deepEqual(checkRule({ kind: 'ignore-param', name: 'ref' }), {
      kind: 'ignore-param',
      name: 'ref',
      at: '/*',
    });
    assert.throws(() => checkRule({ kind: 'ignore-param', name: 'ref', at: 'x' }), /at must be a path/);
  });

  test('ignore-param removes every occurrence of the name, and the ? when nothing is left', () => {
    assert.equal(applyRule(REF, `${O}/p?ref=a`), `${O}/p`);
    assert.equal(applyRule(REF, `${O}/p?a=1&ref=x&ref=y&z=2`), `${O}/p?a=1&z=2`);
    assert.equal(applyRule(REF, `${O}/p?refs=1&xref=2`), `${O}/p?refs=1&xref=2`);
    assert.equal(applyRule(REF, `${O}/p?ref`), `${O}/p`);
  });

  test('alias-prefix replaces a leading directory', () => {
    assert.equal(applyRule(EN, `${O}/en/a/b.html`), `${O}/a/b.html`);
    assert.equal(applyRule(EN, `${O}/enx/a`), `${O}/enx/a`);
    assert.equal(applyRule(EN, `${O}/a/en/b`), `${O}/a/en/b`);
    const up: DuplicateUrlRule = { kind: 'alias-prefix', from: '/a/b/', to: '/a/' };
    assert.equal(applyRule(up, `${O}/a/b/b/c`), `${O}/a/b/c`);
    assert.equal(rewriteUrl([up], `${O}/a/b/b/c`).url, `${O}/a/c`);
  });

  test('splitUrl cuts origin, path and query', () => {
    assert.deepEqual(splitUrl('http://h:8080/a/b?c=1&d'), {
      origin: 'http://h:8080',
      path: '/a/b',
      query: 'c=1&d',
    });
    assert.deepEqual(splitUrl('https://h/?'), { origin: 'https://h', path: '/', query: '' });
  });
});

describe('rewriteUrl', () => {
  test('applies the rules in the fixed order and names the ones that changed the URL', () => {
    const rules = sortRules([REF, SLASH, INDEX, EN, CASE]);
    assert.deepEqual(
      rules.map((r) => r.kind),
      ['case-insensitive', 'alias-prefix', 'drop-suffix', 'trailing-slash', 'ignore-param'],
    );
    const out = rewriteUrl(rules, `${O}/EN/Docs/Index.html?ref=nav`);
    assert.equal(out.url, `${O}/docs/`);
    assert.deepEqual(out.rules, [CASE, EN, INDEX, REF]);
    assert.deepEqual(rewriteUrl(rules, `${O}/docs/`), { url: `${O}/docs/`, rules: [] });
  });

  test('reaches a fixed point even when an alias target needs the case rule', () => {
    const odd: DuplicateUrlRule = { kind: 'alias-prefix', from: '/m/', to: '/Mobile/' };
    const rules = sortRules([CASE, odd]);
    const once = rewriteUrl(rules, `${O}/m/x`).url;
    assert.equal(once, `${O}/mobile/x`);
    assert.equal(rewriteUrl(rules, once).url, once);
  });

  test('property: idempotent and origin-preserving for random rule sets and URLs', () => {
    const canonicalizer = new UrlCanonicalizer({ stripParams: [], sortQuery: true });
    let seed = 7;
    const rand = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const segments = [
      'a',
      'B',
      'en',
      'EN',
      'index.html',
      'Index.HTML',
      'x.php',
      'docs',
      'Docs',
      '%C3%A9',
      '',
    ];
    const pool: DuplicateUrlRule[] = [
      CASE,
      SLASH,
      INDEX,
      REF,
      EN,
      { kind: 'drop-suffix', suffix: 'x.php' },
      { kind: 'alias-prefix', from: '/docs/', to: '/B/' },
      { kind: 'alias-prefix', from: '/a/b/', to: '/' },
      { kind: 'ignore-param', name: 'p', at: '/*' },
      { kind: 'ignore-param', name: 'q', at: '/a' },
    ];
    for (let i = 0; i < 2000; i++) {
      const rules = sortRules(pool.filter(() => rand() < 0.5));
      const path = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(segments)).join('/');
      const query = rand() < 0.5 ? '' : `?${['p=1', 'ref=x', 'q=2'].filter(() => rand() < 0.6).join('&')}`;
      const canonical = canonicalizer.canonicalize(`${O}/${path}${query}`);
      assert.ok(canonical.ok);
      const once = rewriteUrl(rules, canonical.url);
      assert.equal(rewriteUrl(rules, once.url).url, once.url, `${canonical.url} under ${rules.map(ruleKey)}`);
      assert.ok(once.url.startsWith(`${O}/`));
      assert.equal(once.rules.length === 0, once.url === canonical.url);
    }
  });
});

describe('deriveRules', () => {
  test('proposes the rule of each kind of duplicate pair', () => {
    assert.deepEqual(deriveRules(`${O}/Docs/A.html`, `${O}/docs/a.html`), [CASE]);
    assert.deepEqual(deriveRules(`${O}/docs`, `${O}/docs/`), [SLASH]);
    assert.deepEqual(deriveRules(`${O}/docs/index.html`, `${O}/docs/`), [INDEX]);
    assert.deepEqual(deriveRules(`${O}/docs/index.php`, `${O}/docs`), [
      { kind: 'drop-suffix', suffix: 'index.php' },
    ]);
    // a parameter rule is scoped to the path the pair shares, or to the common directory
    const atP: DuplicateUrlRule = { kind: 'ignore-param', name: 'ref', at: '/p' };
    assert.deepEqual(deriveRules(`${O}/p?a=1&ref=x`, `${O}/p?a=1`), [atP]);
    assert.deepEqual(deriveRules(`${O}/p?ref=x`, `${O}/p?ref=y`), [atP]);
    assert.deepEqual(deriveRules(`${O}/d/P?ref=x`, `${O}/d/p`), [
      { kind: 'case-insensitive' },
      { kind: 'ignore-param', name: 'ref', at: '/d/*' },
    ]);
    assert.deepEqual(deriveRules(`${O}/en/a/b.html`, `${O}/a/b.html`), [EN]);
    assert.deepEqual(deriveRules(`${O}/a/b.html`, `${O}/en/a/b.html`), [EN]);
    assert.deepEqual(deriveRules(`${O}/v2/x/`, `${O}/v1/x/`), [
      { kind: 'alias-prefix', from: '/v2/', to: '/v1/' },
    ]);
  });

  test('proposes nothing it cannot name: ids, two differing parameters, another origin, bare names', () => {
    assert.deepEqual(deriveRules(`${O}/node/17`, `${O}/articles/river-17.html`), []);
    assert.deepEqual(deriveRules(`${O}/p?a=1&b=2`, `${O}/p`), []);
    assert.deepEqual(deriveRules(`${O}/a`, 'http://other.example/a/'), []);
    assert.deepEqual(deriveRules(`${O}/shop/all`, `${O}/shop/`), []);
    assert.deepEqual(deriveRules(`${O}/`, `${O}/en/`), []);
    assert.deepEqual(deriveRules(`${O}/a.html`, `${O}/a.html/`), []);
  });

  test('a redirect decides the direction and keeps its target untouched', () => {
    assert.deepEqual(deriveRules(`${O}/new/a/b.html`, `${O}/old/a/b.html`, `${O}/new/a/b.html`), [
      { kind: 'alias-prefix', from: '/old/', to: '/new/' },
    ]);
    // `/` -> `/en/` would grow `/en/a` into `/en/en/a` forever: no rule
    assert.deepEqual(deriveRules(`${O}/a/b.html`, `${O}/en/a/b.html`, `${O}/en/a/b.html`), []);
    assert.deepEqual(deriveRules(`${O}/docs`, `${O}/docs/`, `${O}/docs/`), [SLASH]);
    assert.deepEqual(deriveRules(`${O}/docs/`, `${O}/docs`, `${O}/docs`), []);
    assert.deepEqual(deriveRules(`${O}/about`, `${O}/About`, `${O}/About`), []);
  });
});

describe('checkRule', () => {
  test('accepts every rule it wrote and names what is wrong with the rest', () => {
    for (const rule of [CASE, SLASH, INDEX, REF, EN])
      assert.deepEqual(checkRule(JSON.parse(JSON.stringify(rule))), rule);
    for (const bad of [
      null,
      { kind: 'nope' },
      { kind: 'alias-prefix', from: '/a', to: '/' },
      { kind: 'alias-prefix', from: '/a/', to: '/a/' },
      { kind: 'alias-prefix', from: '/', to: '/en/' },
      { kind: 'drop-suffix', suffix: 'a/b' },
      { kind: 'ignore-param', name: '' },
    ]) {
      assert.throws(() => checkRule(bad), DuplicateUrlRuleError);
    }
    assert.equal(ruleKey(EN), 'alias-prefix /en/ -> /');
  });
});
