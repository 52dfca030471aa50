/**
 * The per-host learner of duplicate-URL rules: one test per rule kind (learned from exact
 * duplicates, then applied), a counter-example that blocks each kind, redirects, the audit
 * sample, bounded memory, persistence and merging, and a property: an applied rule never merges
 * two URLs the observations showed to differ.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import {
  type DuplicateUrlRule,
  DuplicateUrlRuleError,
  rewriteUrl,
  ruleKey,
  sortRules,
} from '../../../functions/core/quality/duplicate-url-rule.ts';
import {
  type DuplicateUrlRuleOptions,
  DuplicateUrlRules,
  type DuplicateUrlRulesSnapshot,
  type RuleChange,
} from '../../../functions/core/quality/duplicate-url-rules.ts';

const H = 'h.example';
const O = `http://${H}`;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** A learner with no audit sample (tests that need it turn it on). */
function learner(
  options: DuplicateUrlRuleOptions = {},
  snapshot?: DuplicateUrlRulesSnapshot,
): DuplicateUrlRules {
  return new DuplicateUrlRules({ auditShare: 0, auditFirst: 0, ...options }, snapshot);
}

/** Observes a page of host H with the content named `content` (null: no page). */
function see(rules: DuplicateUrlRules, path: string, content: string | null, host = H): RuleChange[] {
  return rules.observePage({
    url: `http://${host}${path}`,
    contentHash: content === null ? null : sha(content),
  });
}

function statusOf(rules: DuplicateUrlRules, name: string, host = H): string | undefined {
  return rules.report().find((r) => r.origin === `http://${host}` && r.name === name)?.status;
}

/** Each kind: the pairs that teach it, a URL it then rewrites, and a pair that refutes it. */
const KINDS: {
  name: string;
  pairs: [string, string][];
  apply: [string, string];
  refute: [string, string];
}[] = [
  {
    name: 'drop-suffix index.html',
    pairs: [
      ['/a/', '/a/index.html'],
      ['/b/index.html', '/b/'],
      ['/c/', '/c/index.html'],
    ],
    apply: ['/z/index.html', '/z/'],
    refute: ['/q/index.html', '/q/'],
  },
  {
    name: 'trailing-slash',
    pairs: [
      ['/a/', '/a'],
      ['/b', '/b/'],
      ['/c/', '/c'],
    ],
    apply: ['/z', '/z/'],
    refute: ['/api', '/api/'],
  },
  {
    name: 'case-insensitive',
    pairs: [
      ['/a/x.html', '/A/x.html'],
      ['/B/Y.html', '/b/y.html'],
      ['/c.html', '/C.HTML'],
    ],
    apply: ['/Z/Q.html', '/z/q.html'],
    refute: ['/Readme', '/README'],
  },
  {
    name: 'ignore-param ref at /*',
    pairs: [
      ['/a', '/a?ref=nav'],
      ['/b?ref=home', '/b'],
      ['/c?ref=x', '/c?ref=y'],
    ],
    apply: ['/z?q=1&ref=side', '/z?q=1'],
    refute: ['/list?ref=new', '/list'],
  },
  {
    name: 'alias-prefix /en/ -> /',
    pairs: [
      ['/a.html', '/en/a.html'],
      ['/en/b/c.html', '/b/c.html'],
      ['/d/', '/en/d/'],
    ],
    apply: ['/en/z/q.html', '/z/q.html'],
    refute: ['/en/about.html', '/about.html'],
  },
];

describe('DuplicateUrlRules: each rule kind', () => {
  for (const kind of KINDS) {
    test(`${kind.name}: learned from 3 duplicate pairs, then applied`, () => {
      const rules = learner();
      const changes: RuleChange[] = [];
      kind.pairs.forEach(([a, b], i) => {
        changes.push(...see(rules, a, `page ${i}`));
        if (i === 2) assert.equal(statusOf(rules, kind.name), 'candidate', 'two pairs are not enough');
        changes.push(...see(rules, b, `page ${i}`));
      });
      assert.equal(statusOf(rules, kind.name), 'active');
      assert.deepEqual(
        changes.map((c) => c.status),
        ['active'],
      );
      const record = rules.report().find((r) => r.name === kind.name)!;
      assert.equal(record.support, 3);
      assert.equal(record.examples.length, 3);
      const rewritten = rules.rewrite(`${O}${kind.apply[0]}`);
      assert.equal(rewritten?.url, `${O}${kind.apply[1]}`);
      assert.equal(rewritten?.rules.length, 1);
      assert.equal(rules.rewrite(`${O}${kind.apply[1]}`), undefined, 'the target form stays');
      assert.equal(rules.rewrite(`http://other.example${kind.apply[0]}`), undefined, 'per origin');
      assert.equal(
        rules.rewrite(`http://${H}:8080${kind.apply[0]}`),
        undefined,
        'another port: another origin',
      );
      assert.equal(
        rules.rewrite(`https://${H}${kind.apply[0]}`),
        undefined,
        'another scheme: another origin',
      );
    });

    test(`${kind.name}: a counter-example seen first blocks it, whatever the support`, () => {
      const rules = learner();
      see(rules, kind.refute[0], 'one page');
      see(rules, kind.refute[1], 'another page');
      kind.pairs.forEach(([a, b], i) => {
        see(rules, a, `page ${i}`);
        see(rules, b, `page ${i}`);
      });
      const record = rules.report().find((r) => r.name === kind.name)!;
      assert.equal(record.status, 'blocked');
      assert.deepEqual(new Set(record.counterExample), new Set(kind.refute.map((p) => `${O}${p}`)));
      assert.equal(rules.rewrite(`${O}${kind.apply[0]}`), undefined);
    });

    test(`${kind.name}: a counter-example seen later turns the active rule off`, () => {
      const rules = learner();
      kind.pairs.forEach(([a, b], i) => {
        see(rules, a, `page ${i}`);
        see(rules, b, `page ${i}`);
      });
      assert.equal(statusOf(rules, kind.name), 'active');
      see(rules, kind.refute[0], 'one page');
      // a page and a miss are different contents too
      const changes = see(rules, kind.refute[1], null);
      assert.deepEqual(
        changes.map((c) => c.status),
        ['blocked'],
      );
      assert.equal(rules.rewrite(`${O}${kind.apply[0]}`), undefined);
      // and it stays off: more support does not bring it back
      see(rules, kind.apply[0], 'late');
      see(rules, kind.apply[1], 'late');
      assert.equal(statusOf(rules, kind.name), 'blocked');
    });
  }
});

describe('DuplicateUrlRules: learning', () => {
  test('the support threshold is configurable; observations are idempotent', () => {
    const rules = learner({ minSupport: 2 });
    for (let i = 0; i < 3; i++) see(rules, '/a/', 'A'); // a retried step reports the same page again
    see(rules, '/a/index.html', 'A');
    see(rules, '/a/index.html', 'A');
    assert.equal(rules.report()[0]?.support, 1);
    see(rules, '/b/', 'B');
    see(rules, '/b/index.html', 'B');
    assert.equal(statusOf(rules, 'drop-suffix index.html'), 'active');
  });

  test("the content-seen store's duplicateOf counts when this memory never saw the original", () => {
    const rules = learner();
    for (const dir of ['a', 'b', 'c']) {
      rules.observePage({
        url: `${O}/${dir}/index.html`,
        contentHash: sha(dir),
        duplicateOf: `${O}/${dir}/`,
      });
    }
    assert.equal(statusOf(rules, 'drop-suffix index.html'), 'active');
  });

  test('two misses are not a duplicate pair; another origin of the host is not a pair', () => {
    const rules = learner({ minSupport: 1 });
    see(rules, '/a', null);
    see(rules, '/a/', null);
    rules.observePage({ url: 'https://h.example/b/', contentHash: sha('B') });
    see(rules, '/b', 'B');
    assert.deepEqual(rules.report(), []);
  });

  test('pairs that need two rules count for each once the other is active', () => {
    const rules = learner();
    for (const dir of ['a', 'b', 'c']) {
      see(rules, `/${dir}/`, dir);
      see(rules, `/${dir}`, dir);
    }
    assert.equal(statusOf(rules, 'trailing-slash'), 'active');
    for (const dir of ['d', 'e', 'f']) {
      see(rules, `/${dir}`, dir);
      see(rules, `/${dir}/index.html`, dir); // merged only by trailing-slash + drop-suffix
    }
    assert.equal(statusOf(rules, 'drop-suffix index.html'), 'active');
    assert.equal(rules.rewrite(`${O}/x/index.html`)?.url, `${O}/x/`);
    assert.equal(rules.rewrite(`${O}/x`)?.url, `${O}/x/`);
  });

  test('two rules that are right alone but wrong together are blocked together', () => {
    const rules = learner();
    for (const name of ['a.html', 'b/c.html', 'd.html']) {
      see(rules, `/${name}`, name);
      see(rules, `/en/${name}`, name);
      see(rules, `/Q/${name}`, `q ${name}`);
      see(rules, `/q/${name}`, `q ${name}`);
    }
    assert.deepEqual(
      rules.activeRules(O).map((r) => r.kind),
      ['case-insensitive', 'alias-prefix'],
    );
    // /EN/x.html is neither /en/x.html nor /x.html on this site
    see(rules, '/x.html', 'x');
    see(rules, '/EN/x.html', 'something else');
    assert.deepEqual(rules.activeRules(O), []);
  });

  test('a redirect teaches the rule that leads to its target, and refutes one that rewrites the target', () => {
    const rules = learner();
    for (const dir of ['a', 'b', 'c']) rules.observeRedirect(`${O}/${dir}`, `${O}/${dir}/`);
    rules.observeRedirect(`${O}/c`, `${O}/c/`); // reported again by a retried step
    assert.equal(rules.report()[0]?.support, 3);
    assert.equal(statusOf(rules, 'trailing-slash'), 'active');
    assert.equal(rules.rewrite(`${O}/d`)?.url, `${O}/d/`);
    const changes = rules.observeRedirect(`${O}/e/`, `${O}/e`);
    assert.deepEqual(
      changes.map((c) => [c.rule.kind, c.status]),
      [['trailing-slash', 'blocked']],
    );
    assert.equal(rules.rewrite(`${O}/d`), undefined);
  });

  test('observeDifferent blocks the rules that would merge the two URLs', () => {
    const rules = learner();
    for (const dir of ['a', 'b', 'c']) {
      see(rules, `/${dir}/`, dir);
      see(rules, `/${dir}/index.html`, dir);
    }
    assert.deepEqual(rules.observeDifferent(`${O}/x/index.html`, `${O}/y/`), []);
    assert.equal(rules.observeDifferent(`${O}/x/index.html`, `${O}/x/`).length, 1);
    assert.equal(statusOf(rules, 'drop-suffix index.html'), 'blocked');
  });

  test('the audit sample: a deterministic share of merged URLs is left as linked', () => {
    const rules = new DuplicateUrlRules({ auditShare: 0.25, auditFirst: 0 });
    for (const dir of ['a', 'b', 'c']) {
      see(rules, `/${dir}/`, dir);
      see(rules, `/${dir}/index.html`, dir);
    }
    let kept = 0;
    for (let i = 0; i < 2000; i++) {
      const url = `${O}/d${i}/index.html`;
      const first = rules.rewrite(url);
      assert.deepEqual(rules.rewrite(url), first, 'same answer every time');
      if (first === undefined) kept++;
    }
    assert.ok(kept > 400 && kept < 600, `${kept} of 2000 audited`);
  });

  test('heldAs: a page fetched under a merged form before the rules applied is not fetched again', () => {
    const rules = learner();
    see(rules, '/x/index.html', 'x'); // fetched before any rule: the crawl holds x under this form
    see(rules, '/y/index.html', null); // a miss under a merged form holds nothing
    assert.equal(rules.heldAs(`${O}/x/`), undefined, 'no active rule yet');
    for (const dir of ['a', 'b', 'c']) {
      see(rules, `/${dir}/`, dir);
      see(rules, `/${dir}/index.html`, dir);
    }
    assert.equal(rules.heldAs(`${O}/x/`), `${O}/x/index.html`);
    assert.equal(rules.heldAs(`${O}/y/`), undefined, 'a miss');
    assert.equal(rules.heldAs(`${O}/z/`), undefined, 'nothing fetched under another form');
    assert.equal(rules.heldAs(`${O}/a/`), undefined, 'fetched itself');
    assert.equal(rules.heldAs(`${O}/x/index.html`), undefined, 'not the form the rules give');
    // two active rules together (the composite index)
    for (const dir of ['d', 'e', 'f']) {
      see(rules, `/${dir}/`, dir);
      see(rules, `/${dir}`, dir);
    }
    assert.equal(rules.activeRules(O).length, 2);
    see(rules, '/w', 'w');
    assert.equal(rules.heldAs(`${O}/w/`), `${O}/w`);
    assert.equal(rules.heldAs(`${O}/x/`), `${O}/x/index.html`);
    // the audit sample is fetched anyway, to keep testing the rules
    const audited = new DuplicateUrlRules({ auditShare: 0.5, auditFirst: 0 });
    for (const dir of ['a', 'b', 'c']) {
      see(audited, `/${dir}/`, dir);
      see(audited, `/${dir}/index.html`, dir);
    }
    let held = 0;
    for (let i = 0; i < 200; i++) {
      see(audited, `/p${i}/index.html`, `p${i}`);
      if (audited.heldAs(`${O}/p${i}/`) !== undefined) held++;
    }
    assert.ok(held > 60 && held < 140, `${held} of 200 held, the rest audited`);
  });

  test('heldForms and importHeld: a learner that never fetched the page skips its other form', () => {
    const one = learner();
    see(one, '/x/index.html', 'x');
    see(one, '/y/index.html', null); // a miss is never shared as held
    assert.deepEqual(one.heldForms(O), [], 'no rule yet: nothing is held under another form');
    assert.equal(one.learnsFrom(O), false);
    for (const dir of ['a', 'b', 'c']) {
      see(one, `/${dir}/`, dir);
      see(one, `/${dir}/index.html`, dir);
    }
    see(one, '/d/index.html', 'd');
    see(one, '/e/index.html', 'e');
    const held = one.heldForms(O);
    assert.deepEqual(
      held.map(([url]) => url),
      [`${O}/e/index.html`, `${O}/d/index.html`, `${O}/x/index.html`],
      'newest first, only forms the rules rewrite, and not those whose own URL was fetched too (a, b, c)',
    );
    assert.equal(one.heldForms(O, 2).length, 2);
    const revision = one.heldRevision(O);
    see(one, '/q.html', 'q');
    assert.equal(one.heldRevision(O), revision, 'a page under its own form holds nothing new');
    see(one, '/q/index.html', 'q2');
    assert.ok(one.heldRevision(O) > revision, 'a page under a form the rules rewrite');
    const two = learner();
    two.mergeHost(O, one.hostRecords(O)!);
    assert.equal(two.heldAs(`${O}/x/`), undefined, 'the rules alone do not know the page');
    two.importHeld(O, held);
    assert.equal(two.heldAs(`${O}/x/`), `${O}/x/index.html`);
    assert.equal(two.heldAs(`${O}/y/`), undefined);
    assert.equal(two.learnsFrom(O), true, 'an active rule');
    assert.equal(two.learnsFrom('http://other.example'), false, 'no rule');
    assert.throws(() => two.importHeld(O, [['/z', -2]]), DuplicateUrlRuleError);
    assert.throws(() => two.importHeld(O, [[7, 1] as unknown as [string, number]]), /not a held form/);
  });

  test('hostRevision moves when a rule record of the host changes, and only then', () => {
    const rules = learner();
    assert.equal(rules.hostRevision(O), 0);
    see(rules, '/a/', 'a');
    assert.equal(rules.hostRevision(O), 0, 'no pair, no rule');
    see(rules, '/a/index.html', 'a');
    const candidate = rules.hostRevision(O);
    assert.ok(candidate > 0, 'a candidate');
    see(rules, '/p.html', 'p');
    assert.equal(rules.hostRevision(O), candidate, 'a page that changes no rule');
    see(rules, '/b/', 'b');
    see(rules, '/b/index.html', 'b');
    const support = rules.hostRevision(O);
    assert.ok(support > candidate, 'support');
    rules.mergeHost(O, rules.hostRecords(O)!);
    assert.equal(rules.hostRevision(O), support, 'merging what it holds changes nothing');
    rules.observeDifferent(`${O}/c/`, `${O}/c/index.html`);
    assert.ok(rules.hostRevision(O) > support, 'blocked');
    assert.equal(rules.hostRevision('http://other.example'), 0);
  });

  test('explain shows which rules merged two URLs', () => {
    const rules = learner();
    for (const dir of ['a', 'b', 'c']) {
      see(rules, `/${dir}/`, dir);
      see(rules, `/${dir}/index.html`, dir);
    }
    const why = rules.explain(`${O}/x/index.html`, `${O}/x/`);
    assert.equal(why.merged, true);
    assert.deepEqual(why.a.rules, [{ kind: 'drop-suffix', suffix: 'index.html' }]);
    assert.deepEqual(why.b.rules, []);
    assert.equal(rules.explain(`${O}/x/index.html`, `${O}/y/`).merged, false);
  });
});

/** Observes a page of host H whose `<link rel=canonical>` names `canonical` (a path of H). */
function seeDeclaring(
  rules: DuplicateUrlRules,
  path: string,
  content: string,
  canonical: string,
): RuleChange[] {
  return rules.observePage({
    url: `${O}${path}`,
    contentHash: sha(content),
    canonical: `${O}${canonical}`,
  });
}

describe('DuplicateUrlRules: declared canonical URLs', () => {
  test('one pair whose page declares the other canonical is proof enough; the same pair undeclared is not', () => {
    const undeclared = learner({ minSupport: 3 });
    see(undeclared, '/a/', 'A');
    see(undeclared, '/a/index.html', 'A');
    assert.equal(statusOf(undeclared, 'drop-suffix index.html'), 'candidate');

    // the declaring page second, then first: both orders confirm the pair
    for (const declaringFirst of [false, true]) {
      const rules = learner({ minSupport: 3 });
      if (declaringFirst) seeDeclaring(rules, '/a/index.html', 'A', '/a/');
      see(rules, '/a/', 'A');
      if (!declaringFirst) seeDeclaring(rules, '/a/index.html', 'A', '/a/');
      assert.equal(
        statusOf(rules, 'drop-suffix index.html'),
        'active',
        `declaring page first: ${declaringFirst}`,
      );
      const record = rules.report().find((r) => r.name === 'drop-suffix index.html');
      assert.equal(record?.support, 1);
      assert.equal(record?.confirmed, 1);
      assert.equal(rules.rewrite(`${O}/z/index.html`)?.url, `${O}/z/`);
    }
  });

  test('a page that names itself by a fixed href confirms its twin: the same bytes name it too', () => {
    // the other form was fetched elsewhere (the content-seen store's duplicateOf): its declaration unknown here
    const own = (fixed: boolean) => {
      const rules = learner({ minSupport: 3 });
      rules.observePage({
        url: `${O}/a/`,
        contentHash: sha('A'),
        duplicateOf: `${O}/a/index.html`,
        canonical: `${O}/a/`,
        canonicalFixed: fixed,
      });
      return statusOf(rules, 'drop-suffix index.html');
    };
    assert.equal(own(true), 'active', 'absolute or from the root');
    assert.equal(own(false), 'candidate', 'a relative href names another URL from the other path');
  });

  test('a declaration that names a third URL confirms nothing', () => {
    const rules = learner({ minSupport: 3 });
    see(rules, '/a/', 'A');
    seeDeclaring(rules, '/a/index.html', 'A', '/elsewhere.html');
    assert.equal(statusOf(rules, 'drop-suffix index.html'), 'candidate');
  });

  test('a confirmed rule still falls to a counter-example', () => {
    const rules = learner({ minSupport: 3 });
    see(rules, '/a/', 'A');
    seeDeclaring(rules, '/a/index.html', 'A', '/a/');
    see(rules, '/q/', 'Q');
    see(rules, '/q/index.html', 'other');
    assert.equal(statusOf(rules, 'drop-suffix index.html'), 'blocked');
  });

  test('merging carries the confirmation: a container with one unconfirmed pair activates the rule', () => {
    const one = learner({ minSupport: 3 });
    see(one, '/a/', 'A');
    seeDeclaring(one, '/a/index.html', 'A', '/a/');
    const other = learner({ minSupport: 3 });
    see(other, '/b/', 'B');
    see(other, '/b/index.html', 'B');
    assert.equal(statusOf(other, 'drop-suffix index.html'), 'candidate');
    other.mergeHost(O, one.hostRecords(O)!);
    assert.equal(statusOf(other, 'drop-suffix index.html'), 'active');
  });

  test('a snapshot keeps what pages declared', () => {
    const rules = learner({ minSupport: 3 });
    seeDeclaring(rules, '/a/index.html', 'A', '/a/');
    const resumed = learner({ minSupport: 3 }, JSON.parse(JSON.stringify(rules.snapshot())));
    see(resumed, '/a/', 'A');
    assert.equal(statusOf(resumed, 'drop-suffix index.html'), 'active');
  });
});

describe('DuplicateUrlRules: alias namespaces', () => {
  const NS = 'alias-namespace /node/<n>';

  test('learned from an alias that declares the page canonical: other URLs of the namespace are skipped', () => {
    const rules = learner({ minSupport: 3 });
    see(rules, '/notes/mind-62.html', 'page 62');
    const changes = seeDeclaring(rules, '/node/62', 'page 62', '/notes/mind-62.html');
    assert.deepEqual(changes, [
      { origin: O, rule: { kind: 'alias-namespace', dir: '/node/' }, status: 'active' },
    ]);
    assert.deepEqual(rules.aliasNamespace(`${O}/node/7`), { kind: 'alias-namespace', dir: '/node/' });
    for (const url of [
      `${O}/node/7/edit`,
      `${O}/node/7?x=1`,
      `${O}/node/abc`,
      `${O}/nodes/7`,
      `${O}/a/node/7`,
    ])
      assert.equal(rules.aliasNamespace(url), undefined, url);
    assert.equal(rules.aliasNamespace('http://other.example/node/7'), undefined);
    // it rewrites nothing
    assert.equal(rules.rewrite(`${O}/node/7`), undefined);
  });

  test('the alias fetched before its page teaches nothing: the page may be linked by its alias only', () => {
    const rules = learner({ minSupport: 3 });
    seeDeclaring(rules, '/node/62', 'page 62', '/notes/mind-62.html');
    see(rules, '/notes/mind-62.html', 'page 62');
    assert.equal(statusOf(rules, NS), undefined);
    // the content-seen store's order counts, whatever this memory saw first
    const told = learner({ minSupport: 3 });
    told.observePage({
      url: `${O}/node/63`,
      contentHash: sha('page 63'),
      canonical: `${O}/notes/mind-63.html`,
    });
    told.observePage({
      url: `${O}/node/63`,
      contentHash: sha('page 63'),
      duplicateOf: `${O}/notes/mind-63.html`,
    });
    assert.equal(statusOf(told, NS), 'active', 'the store says the page came first');
  });

  test('not derived without a declaration, nor from a page outside any namespace', () => {
    const rules = learner({ minSupport: 1 });
    see(rules, '/about.html', 'about');
    see(rules, '/node/5', 'about');
    assert.equal(statusOf(rules, NS), undefined, 'same content, no declaration');
    see(rules, '/team.html', 'team');
    seeDeclaring(rules, '/people/team', 'team', '/team.html');
    assert.ok(
      !rules.report().some((r) => r.rule.kind === 'alias-namespace'),
      'a last segment that is no number',
    );
  });

  test('counter-example: a page of its own under the namespace, before or after the rule, blocks it', () => {
    for (const ownFirst of [true, false]) {
      const rules = learner({ minSupport: 3 });
      if (ownFirst) see(rules, '/node/9', 'a page only /node/9 has');
      see(rules, '/notes/mind-62.html', 'page 62');
      seeDeclaring(rules, '/node/62', 'page 62', '/notes/mind-62.html');
      if (!ownFirst) {
        assert.equal(statusOf(rules, NS), 'active');
        see(rules, '/node/9', 'a page only /node/9 has');
      }
      assert.equal(statusOf(rules, NS), 'blocked', `own page first: ${ownFirst}`);
      assert.equal(rules.aliasNamespace(`${O}/node/7`), undefined);
    }
  });

  test('an alias whose page is not fetched yet (it declares another canonical URL) is no counter-example', () => {
    const rules = learner({ minSupport: 3 });
    see(rules, '/notes/mind-62.html', 'page 62');
    seeDeclaring(rules, '/node/62', 'page 62', '/notes/mind-62.html');
    seeDeclaring(rules, '/node/63', 'page 63', '/notes/mind-63.html');
    assert.equal(statusOf(rules, NS), 'active');
  });

  test('declarations alone: two aliases naming two known pages make the namespace; one, or one page twice, does not', () => {
    const rules = learner({ minSupport: 2 });
    const alias = (n: number, page: string) => {
      seeDeclaring(rules, `/node/${n}`, `page ${n}`, page);
      return rules.observeDeclared(`${O}/node/${n}`, `${O}${page}`);
    };
    alias(1, '/a.html');
    assert.equal(statusOf(rules, NS), 'candidate');
    alias(2, '/a.html');
    assert.equal(statusOf(rules, NS), 'candidate', 'the same page named twice');
    rules.observeDeclared(`${O}/node/1`, `${O}/a.html`);
    assert.equal(statusOf(rules, NS), 'candidate', 'the same alias again');
    const changes = alias(3, '/b.html');
    assert.deepEqual(changes, [
      { origin: O, rule: { kind: 'alias-namespace', dir: '/node/' }, status: 'active' },
    ]);
    // a URL outside any namespace, or a page this memory never saw, teaches nothing
    const other = learner({ minSupport: 1 });
    seeDeclaring(other, '/about', 'about', '/a.html');
    other.observeDeclared(`${O}/about`, `${O}/a.html`);
    other.observeDeclared(`${O}/node/9`, `${O}/a.html`);
    assert.deepEqual(other.report(), []);
  });

  test('declarations alone: a declared page held with other bytes blocks the namespace', () => {
    const rules = learner({ minSupport: 2 });
    seeDeclaring(rules, '/node/1', 'page 1', '/a.html');
    rules.observeDeclared(`${O}/node/1`, `${O}/a.html`);
    see(rules, '/b.html', 'page b');
    seeDeclaring(rules, '/node/2', 'not page b', '/b.html');
    rules.observeDeclared(`${O}/node/2`, `${O}/b.html`);
    assert.equal(statusOf(rules, NS), 'blocked');
  });

  test('an active namespace alone does not make every page of its host register its bytes (learnsFrom)', () => {
    const rules = learner({ minSupport: 2 });
    seeDeclaring(rules, '/node/1', 'page 1', '/a.html');
    rules.observeDeclared(`${O}/node/1`, `${O}/a.html`);
    assert.equal(rules.learnsFrom(O), true, 'a candidate: the next pair may confirm it');
    seeDeclaring(rules, '/node/2', 'page 2', '/b.html');
    rules.observeDeclared(`${O}/node/2`, `${O}/b.html`);
    assert.equal(statusOf(rules, NS), 'active');
    assert.equal(rules.learnsFrom(O), false);
    see(rules, '/c/', 'C');
    see(rules, '/c/index.html', 'C');
    assert.equal(rules.learnsFrom(O), true, 'a rewriting candidate');
  });

  test('stored and merged like any rule', () => {
    const rules = learner({ minSupport: 3 });
    see(rules, '/notes/mind-62.html', 'page 62');
    seeDeclaring(rules, '/node/62', 'page 62', '/notes/mind-62.html');
    const records = JSON.parse(JSON.stringify(rules.hostRecords(O)));
    const other = learner({ minSupport: 3 });
    other.mergeHost(O, records);
    assert.ok(other.aliasNamespace(`${O}/node/8`));
    assert.throws(
      () => other.mergeHost(O, [{ ...records[0], rule: { kind: 'alias-namespace', dir: '/' } }]),
      DuplicateUrlRuleError,
    );
  });
});

describe('DuplicateUrlRules: memory, persistence, merging', () => {
  test('memory stays within its budget over many hosts; rules outlive the memory', () => {
    const rules = learner({ maxObservations: 3000, maxObservationsPerHost: 500 });
    for (let h = 0; h < 40; h++) {
      const host = `h${h}.example`;
      for (let i = 0; i < 700; i++) {
        see(rules, `/p${i}/`, `${h} ${i}`, host);
        if (i % 50 === 0) see(rules, `/p${i}`, `${h} ${i}`, host);
      }
      assert.ok(rules.learningEntries <= 3000 + 500 * 3, `${rules.learningEntries} entries`);
    }
    assert.ok(rules.learningEntries <= 4500);
    assert.equal(rules.report().filter((r) => r.status === 'active').length, 40);
  });

  test('a snapshot restores rules and memory: a counter-example after resume still blocks', () => {
    const rules = learner();
    for (const dir of ['a', 'b', 'c']) {
      see(rules, `/${dir}/`, dir);
      see(rules, `/${dir}`, dir);
    }
    see(rules, '/api/', 'api docs');
    const snapshot = JSON.parse(JSON.stringify(rules.snapshot()));
    const resumed = learner({}, snapshot);
    assert.deepEqual(resumed.report(), rules.report());
    assert.equal(resumed.rewrite(`${O}/z`)?.url, `${O}/z/`);
    see(resumed, '/api', 'the api itself');
    assert.equal(statusOf(resumed, 'trailing-slash'), 'blocked');
    const rulesOnly = learner({}, rules.snapshot({ memory: false }));
    assert.equal(rulesOnly.learningEntries, 0);
    assert.equal(rulesOnly.rewrite(`${O}/z`)?.url, `${O}/z/`);
  });

  test('a malformed snapshot is refused with the reason', () => {
    assert.throws(
      () => learner({}, { origins: [{ origin: O, rules: [{ rule: { kind: 'x' } } as never] }] }),
      /not a duplicate-URL rule/,
    );
  });

  test('merging two containers: support from both, blocked on either side wins', () => {
    const one = learner();
    const two = learner();
    see(one, '/a/', 'a');
    see(one, '/a/index.html', 'a');
    see(one, '/b/', 'b');
    see(one, '/b/index.html', 'b');
    see(two, '/c/', 'c');
    see(two, '/c/index.html', 'c');
    see(two, '/d', 'd');
    see(two, '/d/', 'd');
    const changes = one.mergeHost(O, two.hostRecords(O)!);
    assert.deepEqual(
      changes.map((c) => [c.rule.kind, c.status]),
      [['drop-suffix', 'active']],
    );
    assert.equal(statusOf(one, 'trailing-slash'), 'candidate');
    see(two, '/e/', 'e');
    see(two, '/e/index.html', 'something else');
    assert.equal(statusOf(two, 'drop-suffix index.html'), 'blocked');
    one.mergeHost(O, two.hostRecords(O)!);
    assert.equal(statusOf(one, 'drop-suffix index.html'), 'blocked');
    assert.equal(one.rewrite(`${O}/x/index.html`), undefined);
  });

  test('the crawl configuration holds the thresholds, with bounds', () => {
    const parsed = parseCrawlConfig({ seeds: ['http://h.example/'] });
    assert.ok(parsed.ok);
    assert.deepEqual(
      [
        parsed.config.duplicateUrlRules,
        parsed.config.duplicateUrlRuleSupport,
        parsed.config.duplicateUrlRuleAudit,
      ],
      [true, 2, 0.02],
    );
    for (const bad of [
      { duplicateUrlRuleSupport: 0 },
      { duplicateUrlRuleAudit: 0.6 },
      { duplicateUrlRules: 'yes' },
    ]) {
      assert.ok(!parseCrawlConfig({ seeds: ['http://h.example/'], ...bad }).ok, JSON.stringify(bad));
    }
  });

  test('options are checked', () => {
    assert.throws(() => new DuplicateUrlRules({ minSupport: 0 }), RangeError);
    assert.throws(() => new DuplicateUrlRules({ auditShare: 1 }), RangeError);
    assert.throws(() => new DuplicateUrlRules({ maxObservations: 1.5 }), RangeError);
  });
});

describe('DuplicateUrlRules: property', () => {
  /**
   * A random site: which duplicate forms its server really has, a few exceptions where a form is
   * another page after all, and pages whose URLs are drawn from every form. Observed in random
   * order; then no two observed URLs with different contents may end as one URL.
   */
  function randomSite(seed: number) {
    let s = seed;
    const rand = () => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
    const truth = {
      caseless: rand() < 0.5,
      slash: rand() < 0.5,
      index: rand() < 0.5,
      ref: rand() < 0.5,
      en: rand() < 0.5,
    };
    const names = Array.from({ length: 30 }, (_, i) => `p${i}`);
    const exceptions = new Set(names.filter(() => rand() < 0.1));
    /** The page a path names on this site (a string), or null for a miss. */
    const contentOf = (path: string, query: string): string | null => {
      let p = path;
      let q = query;
      if (truth.en && p.startsWith('/en/')) p = p.slice(3);
      else if (p.startsWith('/en/')) return null;
      if (truth.caseless) p = p.toLowerCase();
      else if (p !== p.toLowerCase()) return null;
      const name = /^\/(p\d+)/.exec(p.toLowerCase())?.[1] ?? '';
      if (p.endsWith('/index.html')) {
        if (!truth.index) return null;
        p = p.slice(0, -'index.html'.length);
      }
      if (!p.endsWith('/')) {
        if (!truth.slash) return null;
        p = `${p}/`;
      }
      if (q.includes('ref=')) {
        if (!truth.ref) return `${p} with ${q}`; // ref matters here: another page
        q = q.replace(/&?ref=[a-z]+/, '').replace(/^&/, '');
      }
      // the exceptions: a form that serves another page (a rule may not merge it)
      if (exceptions.has(name) && path !== path.toLowerCase()) return `${p} odd case`;
      if (exceptions.has(name) && path.endsWith('index.html')) return `${p} odd index`;
      return `${p}?${q}`;
    };
    const observations: [string, string | null][] = [];
    for (let i = 0; i < 120; i++) {
      const name = names[Math.floor(rand() * names.length)]!;
      const form = rand();
      let path = `/${name}/`;
      if (form < 0.3) path = `/${name}`;
      else if (form < 0.5) path = `/${name}/index.html`;
      if (rand() < 0.3) path = `/${path.slice(1, 2).toUpperCase()}${path.slice(2)}`;
      if (rand() < 0.3) path = `/en${path}`;
      const query = rand() < 0.3 ? `ref=${['nav', 'side', 'home'][Math.floor(rand() * 3)]}` : '';
      observations.push([`${path}${query === '' ? '' : `?${query}`}`, contentOf(path, query)]);
    }
    return observations;
  }

  test('an applied rule never merges two URLs the observations showed to differ', () => {
    let activeSeen = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rules = learner({ minSupport: 2 });
      const observations = randomSite(seed);
      const content = new Map<string, string | null>();
      for (const [path, page] of observations) {
        see(rules, path, page);
        content.set(`${O}${path}`, page);
      }
      const active = rules.activeRules(O);
      activeSeen += active.length;
      const byImage = new Map<string, string | null>();
      for (const [url, page] of content) {
        const image = rules.explain(url, url).a.url;
        assert.equal(rewriteUrl(sortRules(active as DuplicateUrlRule[]), url).url, image);
        if (!byImage.has(image)) byImage.set(image, page);
        else
          assert.equal(
            byImage.get(image),
            page,
            `seed ${seed}: ${url} merged into ${image} under ${JSON.stringify(active)}`,
          );
      }
    }
    assert.ok(activeSeen > 300, `rules were learned (${activeSeen} active over all sites)`);
  });
});

describe('DuplicateUrlRules: sites that try to poison the rules (issue 24)', () => {
  /** Observes `path` of `origin` (default O) with the content named `content`. */
  const seeAt = (rules: DuplicateUrlRules, origin: string, path: string, content: string | null) =>
    rules.observePage({ url: `${origin}${path}`, contentHash: content === null ? null : sha(content) });

  /** A learner whose `ignore-param id at /item` is active (three URLs with one content). */
  function baited(options: DuplicateUrlRuleOptions = {}): DuplicateUrlRules {
    const rules = learner({ minSupport: 2, ...options });
    for (const n of [1, 2, 3]) see(rules, `/item?id=${n}`, 'bait');
    assert.equal(statusOf(rules, 'ignore-param id at /item'), 'active');
    return rules;
  }

  test('rules are kept per origin: another port or scheme of the host name neither teaches nor applies them', () => {
    const rules = learner({ minSupport: 2 });
    const bait = `http://${H}:8081`;
    for (const n of [1, 2, 3]) seeAt(rules, bait, `/item?id=${n}`, 'bait');
    for (const n of [1, 2]) {
      seeAt(rules, bait, `/Doc-${n}`, `doc ${n}`);
      seeAt(rules, bait, `/doc-${n}`, `doc ${n}`);
    }
    assert.deepEqual(
      rules.report().map((r) => [r.origin, r.name, r.status]),
      [
        [bait, 'case-insensitive', 'active'],
        [bait, 'ignore-param id at /item', 'active'],
      ],
    );
    assert.equal(rules.rewrite(`${bait}/item?id=9`)?.url, `${bait}/item`);
    for (const other of [O, `http://${H}:8082`, `https://${H}:8081`]) {
      assert.equal(rules.rewrite(`${other}/item?id=9`), undefined, other);
      assert.equal(rules.rewrite(`${other}/Notes`), undefined, other);
    }
    assert.equal(rules.hostRecords(bait)?.length, 2);
    assert.equal(rules.hostRecords(H), undefined, 'a host name is not a key');
    // a pair across two ports of one host name teaches nothing
    const apart = learner({ minSupport: 1 });
    apart.observePage({ url: `${bait}/a?id=1`, contentHash: sha('x') });
    apart.observePage({ url: `${O}/a?id=2`, contentHash: sha('x'), duplicateOf: `${bait}/a?id=1` });
    assert.deepEqual(apart.report(), []);
  });

  test('a snapshot is keyed by origin; one keyed by host name is refused with the reason', () => {
    const rules = baited();
    const snapshot = JSON.parse(JSON.stringify(rules.snapshot())) as DuplicateUrlRulesSnapshot;
    assert.deepEqual(
      snapshot.origins.map((o) => o.origin),
      [O],
    );
    const old = {
      hosts: [{ host: H, rules: snapshot.origins[0]!.rules }],
    } as unknown as DuplicateUrlRulesSnapshot;
    assert.throws(
      () => learner({}, old),
      (error: unknown) => {
        assert.ok(error instanceof DuplicateUrlRuleError);
        assert.match(error.message, /keyed by origin/);
        return true;
      },
    );
  });

  test('a parameter rule applies at the path it was learned on, not elsewhere on the origin', () => {
    const rules = learner({ minSupport: 2 });
    for (const n of [1, 2, 3]) see(rules, `/teach?id=${n}`, 'bait');
    assert.equal(statusOf(rules, 'ignore-param id at /teach'), 'active');
    assert.equal(rules.rewrite(`${O}/teach?id=9&q=1`)?.url, `${O}/teach?q=1`);
    assert.equal(rules.rewrite(`${O}/item?id=9`), undefined);
    assert.equal(rules.rewrite(`${O}/teach/x?id=9`), undefined, 'a path under it is another path');
    // many pairs on one path never make it wider
    for (const n of [4, 5, 6, 7]) see(rules, `/teach?id=${n}`, 'bait');
    assert.deepEqual(
      rules.report().map((r) => r.name),
      ['ignore-param id at /teach'],
    );
  });

  test('pairs on two paths widen a parameter rule to their common directory', () => {
    const rules = learner({ minSupport: 2 });
    see(rules, '/a/p?ref=x', 'p');
    see(rules, '/a/p', 'p');
    assert.equal(statusOf(rules, 'ignore-param ref at /a/p'), 'candidate');
    see(rules, '/a/q/r?ref=y', 'q');
    see(rules, '/a/q/r', 'q');
    assert.equal(statusOf(rules, 'ignore-param ref at /a/*'), 'active', JSON.stringify(rules.report()));
    assert.equal(rules.rewrite(`${O}/a/z?ref=1`)?.url, `${O}/a/z`);
    assert.equal(rules.rewrite(`${O}/b/z?ref=1`), undefined);
    // pairs on paths elsewhere widen it to the origin: those its narrower rule does not merge count
    see(rules, '/b/s?ref=z', 's');
    see(rules, '/b/s', 's');
    assert.equal(statusOf(rules, 'ignore-param ref at /*'), 'candidate');
    see(rules, '/c/t?ref=z', 't');
    see(rules, '/c/t', 't');
    assert.equal(statusOf(rules, 'ignore-param ref at /*'), 'active');
    assert.equal(rules.rewrite(`${O}/c?ref=1`)?.url, `${O}/c`);
  });

  test("each rule's first merges are audited (fetched as linked), then its sample", () => {
    const rules = baited({ auditShare: 0.02, auditFirst: 3 });
    const answers = [4, 5, 6, 7, 8].map((n) => rules.rewrite(`${O}/item?id=${n}`)?.url);
    assert.deepEqual(answers, [undefined, undefined, undefined, `${O}/item`, `${O}/item`]);
    assert.equal(rules.rewrite(`${O}/item?id=4`), undefined, 'an audited URL stays audited');
    assert.equal(rules.rewrite(`${O}/item?id=7`)?.url, `${O}/item`, 'a merged URL stays merged');
    // another rule of the origin has its own first audits
    for (const d of ['x', 'y']) {
      see(rules, `/${d}/`, d);
      see(rules, `/${d}/index.html`, d);
    }
    const suffix = [1, 2, 3, 4].map((n) => rules.rewrite(`${O}/z${n}/index.html`)?.url);
    assert.deepEqual(suffix, [undefined, undefined, undefined, `${O}/z4/`]);
    // an audited URL that proves to be another page blocks the rule
    const changes = see(rules, '/item?id=4', 'item 4');
    assert.deepEqual(
      changes.map((c) => [ruleKey(c.rule), c.status]),
      [['ignore-param id at /item', 'blocked']],
    );
  });

  test('a rule proven in another learner (its first audits held there) is not audited first again', () => {
    const one = baited({ auditShare: 0.02, auditFirst: 3 });
    for (const n of [4, 5, 6]) assert.equal(one.rewrite(`${O}/item?id=${n}`), undefined, 'audited');
    for (const n of [4, 5, 6]) see(one, `/item?id=${n}`, 'bait'); // they held: proven
    const two = learner({ minSupport: 2, auditShare: 0.02, auditFirst: 3 });
    two.mergeHost(O, one.hostRecords(O)!);
    assert.equal(two.rewrite(`${O}/item?id=7`)?.url, `${O}/item`);
    const fresh = learner({ minSupport: 2, auditShare: 0.02, auditFirst: 3 });
    fresh.mergeHost(O, baited().hostRecords(O)!);
    assert.equal(fresh.rewrite(`${O}/item?id=7`), undefined, 'not proven: audited first');
  });

  test('first audits another learner already made are not made again (the stored rule counts them)', () => {
    const one = baited({ auditShare: 0.02, auditFirst: 3 });
    const before = one.hostRevision(O);
    for (const n of [4, 5]) assert.equal(one.rewrite(`${O}/item?id=${n}`), undefined, 'audited');
    assert.ok(one.hostRevision(O) > before, 'the count is news to store');
    assert.equal(one.hostRecords(O)![0]!.audited, 2);
    one.mergeHost(O, one.hostRecords(O)!); // its own count, read back, is not counted twice
    assert.equal(one.hostRecords(O)![0]!.audited, 2);
    const two = learner({ minSupport: 2, auditShare: 0.02, auditFirst: 3 });
    for (const n of [1, 2, 3]) see(two, `/item?id=${n}`, 'bait');
    two.mergeHost(O, one.hostRecords(O)!);
    const answers = [6, 7].map((n) => two.rewrite(`${O}/item?id=${n}`)?.url);
    assert.deepEqual(answers, [undefined, `${O}/item`], 'one audit left of three');
    assert.equal(two.hostRecords(O)![0]!.audited, 3);
  });

  test('a rule the site confirmed by a declaration audits its first merge only', () => {
    const rules = learner({ minSupport: 2, auditShare: 0.02, auditFirst: 3 });
    see(rules, '/a/', 'a');
    seeDeclaring(rules, '/a/index.html', 'a', '/a/');
    assert.equal(statusOf(rules, 'drop-suffix index.html'), 'active');
    const answers = [1, 2, 3].map((n) => rules.rewrite(`${O}/z${n}/index.html`)?.url);
    assert.deepEqual(answers, [undefined, `${O}/z2/`, `${O}/z3/`]);
  });

  test('a blocked rule gives back what it merged: links to admit again, queued tasks to queue again', () => {
    const rules = baited();
    assert.equal(rules.rewrite(`${O}/item?id=10`)?.url, `${O}/item`);
    assert.equal(rules.rewrite(`${O}/item?id=11&x=1`)?.url, `${O}/item?x=1`);
    assert.equal(rules.rewrite(`${O}/item?id=12`, { queued: true })?.url, `${O}/item`);
    assert.equal(
      rules.rewrite(`${O}/item?id=10`, { queued: true })?.url,
      `${O}/item`,
      'queued after it was linked',
    );
    assert.equal(rules.heldAs(`${O}/item`, { queued: true }), `${O}/item?id=1`, 'a held form skipped');
    const changes = see(rules, '/item?id=13', 'another item');
    assert.equal(changes.length, 1);
    const [blocked] = changes;
    assert.equal(blocked?.status, 'blocked');
    assert.deepEqual(blocked?.readmit, [`${O}/item?id=11&x=1`]);
    assert.deepEqual(blocked?.requeue?.sort(), [`${O}/item`, `${O}/item?id=10`, `${O}/item?id=12`]);
    assert.equal(rules.rewrite(`${O}/item?id=14`), undefined);
    assert.equal(rules.learningEntries, rules.snapshot().memory!.flatMap((m) => m.observations).length);
  });

  test('a rule blocked by what another learner stored gives back its merges at the next step of the origin', () => {
    const rules = baited();
    assert.equal(rules.rewrite(`${O}/item?id=10`)?.url, `${O}/item`);
    const other = baited();
    see(other, '/item?id=11', 'item 11'); // another container meets the counter-example
    const changes = rules.mergeHost(O, other.hostRecords(O)!);
    assert.deepEqual(
      changes.map((c) => [c.status, c.readmit]),
      [['blocked', [`${O}/item?id=10`]]],
    );
    assert.deepEqual(
      rules.takeGivenBack(O).map((c) => c.readmit),
      [[`${O}/item?id=10`]],
      'kept for the step that takes them',
    );
    assert.deepEqual(rules.takeGivenBack(O), [], 'taken once');
    assert.deepEqual(rules.takeGivenBack('http://other.example'), []);
    // what waits is bounded like the logs (maxMergeLogs): the origin waiting longest loses it first
    const tight = learner({ minSupport: 2, maxMergeLogs: 2 });
    const blockAt = (origin: string) => {
      const refuter = learner({ minSupport: 2 });
      for (const n of [1, 2, 3]) seeAt(refuter, origin, `/item?id=${n}`, 'bait');
      seeAt(refuter, origin, '/item?id=11', 'item 11');
      tight.mergeHost(origin, refuter.hostRecords(origin)!);
    };
    for (const origin of ['http://a.example', 'http://b.example']) {
      for (const n of [1, 2, 3]) seeAt(tight, origin, `/item?id=${n}`, 'bait');
      for (const n of [5, 6]) assert.ok(tight.rewrite(`${origin}/item?id=${n}`), `${origin} merges`);
      blockAt(origin);
    }
    assert.deepEqual(tight.takeGivenBack('http://a.example'), []);
    assert.deepEqual(
      tight.takeGivenBack('http://b.example').flatMap((c) => c.readmit),
      ['http://b.example/item?id=5', 'http://b.example/item?id=6'],
    );
  });

  test('a rule not proven stops merging when its merge log is full; proven, it merges on', () => {
    // active at 2 pairs, proven at 2 + 1 (its one audit)
    const rules = baited({ auditFirst: 1, maxMergeLog: 3 });
    assert.equal(rules.rewrite(`${O}/item?id=10`), undefined, 'the audit');
    const merged = [11, 12, 13, 14].map((n) => rules.rewrite(`${O}/item?id=${n}`)?.url);
    assert.deepEqual(merged, [`${O}/item`, `${O}/item`, `${O}/item`, undefined], 'the log holds three');
    assert.equal(rules.rewrite(`${O}/item?id=12`)?.url, `${O}/item`, 'a URL in the log stays merged');
    // the audited URL is the bait too: a third pair, the rule is proven
    see(rules, '/item?id=10', 'bait');
    assert.equal(rules.rewrite(`${O}/item?id=14`)?.url, `${O}/item`);
    // a full global budget stops unproven rules as well
    const tight = baited({ auditFirst: 1, maxMergeLogs: 2 });
    const answers = [10, 11, 12, 13].map((n) => tight.rewrite(`${O}/item?id=${n}`)?.url);
    assert.deepEqual(answers, [undefined, `${O}/item`, undefined, undefined]);
  });

  test('merge logs and audits are kept in the snapshot: a block after a restart still gives them back', () => {
    const rules = baited({ auditShare: 0.02, auditFirst: 1 });
    assert.equal(rules.rewrite(`${O}/item?id=4`), undefined, 'audited');
    assert.equal(rules.rewrite(`${O}/item?id=5`)?.url, `${O}/item`);
    assert.equal(rules.rewrite(`${O}/item?id=6`, { queued: true })?.url, `${O}/item`);
    const snapshot = JSON.parse(JSON.stringify(rules.snapshot())) as DuplicateUrlRulesSnapshot;
    assert.deepEqual(snapshot.merges, [
      {
        origin: O,
        name: 'ignore-param id at /item',
        merged: [`${O}/item?id=5`, `q ${O}/item?id=6`],
        audited: [`${O}/item?id=4`],
      },
    ]);
    const resumed = learner({ minSupport: 2, auditShare: 0.02, auditFirst: 1 }, snapshot);
    assert.equal(resumed.rewrite(`${O}/item?id=4`), undefined, 'still audited');
    const [blocked] = see(resumed, '/item?id=4', 'item 4');
    assert.deepEqual(blocked?.readmit, [`${O}/item?id=5`]);
    assert.deepEqual(blocked?.requeue, [`${O}/item?id=6`]);
  });
});
