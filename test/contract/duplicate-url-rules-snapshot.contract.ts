/**
 * The duplicate-URL rules' snapshot contract (docs/duplicate-urls.md): what a store keeps of a
 * learner restores a learner that decides as the one saved. Written once and run against every
 * store that persists the rules: the snapshot itself as JSON, the embedded crawler's state file
 * (CrawlDb's saved quality state, read back by a resumed crawl), and the cloud's crawl table
 * (an item per crawl and origin, merged into a container's learner) in memory and on DynamoDB.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import { ruleKey } from '../../functions/core/quality/duplicate-url-rule.ts';
import {
  type DuplicateUrlRuleOptions,
  DuplicateUrlRules,
  type UrlRuleBook,
} from '../../functions/core/quality/duplicate-url-rules.ts';

/** A place that keeps a learner's rules, as one runtime persists and restores them. */
export interface RuleSnapshotStore {
  /** Persists what `rules` knows, as the runtime does (it may be called again with more). */
  save(rules: DuplicateUrlRules): Promise<void>;
  /** A new learner (a resumed crawl, another container) restored from what the store holds. */
  restore(options: DuplicateUrlRuleOptions): Promise<DuplicateUrlRules>;
}

/** No audit: every decision is the rules' own, so that two learners can be compared URL by URL. */
const OPTIONS: DuplicateUrlRuleOptions = { minSupport: 2, auditShare: 0, auditFirst: 0 };
const A = 'http://a.example';
/** The same host on another port: another origin, whose rules never mix with A's. */
const B = 'http://a.example:8080';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function see(rules: DuplicateUrlRules, url: string, content: string | null, canonical?: string): void {
  rules.observePage({
    url,
    contentHash: content === null ? null : sha(content),
    ...(canonical === undefined ? {} : { canonical }),
  });
}

/**
 * A learner that knows each kind of state a store must keep: at A an active parameter rule with a
 * page held under the form it rewrites, a blocked rule, a candidate, an active alias namespace; at
 * B an active case rule.
 */
function taught(): DuplicateUrlRules {
  const rules = new DuplicateUrlRules(OPTIONS);
  // fetched before the rule applies: a held form of /d once `ref` is ignored
  see(rules, `${A}/d?ref=x`, 'page d');
  see(rules, `${A}/a`, 'page a');
  see(rules, `${A}/a?ref=nav`, 'page a');
  see(rules, `${A}/b?ref=home`, 'page b');
  see(rules, `${A}/b`, 'page b');
  // trailing-slash: a counter-example first, so it is blocked whatever its support
  see(rules, `${A}/api`, 'the api');
  see(rules, `${A}/api/`, 'its index');
  see(rules, `${A}/x/`, 'page x');
  see(rules, `${A}/x`, 'page x');
  see(rules, `${A}/y/`, 'page y');
  see(rules, `${A}/y`, 'page y');
  // one pair: a candidate
  see(rules, `${A}/c/`, 'page c');
  see(rules, `${A}/c/index.html`, 'page c');
  // an alias that declares the page canonical, the page fetched first
  see(rules, `${A}/notes/mind-62.html`, 'page 62');
  see(rules, `${A}/node/62`, 'page 62', `${A}/notes/mind-62.html`);
  see(rules, `${B}/a/x.html`, 'b page x');
  see(rules, `${B}/A/x.html`, 'b page x');
  see(rules, `${B}/B/Y.html`, 'b page y');
  see(rules, `${B}/b/y.html`, 'b page y');
  return rules;
}

/** URLs whose answers the contract compares, with what `taught()` answers for each. */
const EXPECTED: [url: string, decision: Decision][] = [
  [`${A}/z?q=1&ref=side`, { rewrite: `${A}/z?q=1` }],
  [`${A}/z?q=1`, {}],
  [`${A}/q`, {}],
  [`${A}/q/index.html`, {}],
  [`${A}/node/7`, { alias: 'alias-namespace /node/<n>' }],
  [`${A}/d`, { held: `${A}/d?ref=x` }],
  [`${A}/Z/Q.html`, {}],
  [`${B}/Z/Q.html`, { rewrite: `${B}/z/q.html` }],
  [`${B}/z?ref=side`, {}],
  [`${B}/node/7`, {}],
];

interface Decision {
  rewrite?: string;
  alias?: string;
  held?: string;
}

function decide(rules: UrlRuleBook, url: string): Decision {
  const out: Decision = {};
  const rewritten = rules.rewrite(url);
  if (rewritten !== undefined) out.rewrite = rewritten.url;
  const alias = rules.aliasNamespace(url);
  if (alias !== undefined) out.alias = ruleKey(alias);
  const held = rules.heldAs(url);
  if (held !== undefined) out.held = held;
  return out;
}

/** Each rule's origin, name and status (support and examples may be merged differently). */
function statuses(rules: DuplicateUrlRules): string[] {
  return rules
    .report()
    .map((r) => `${r.origin} ${r.name} ${r.status}`)
    .sort();
}

const STATUSES = [
  `${A} alias-namespace /node/<n> active`,
  `${A} drop-suffix index.html candidate`,
  `${A} ignore-param ref at /* active`,
  // the pairs' own scopes, which the widened rule explains
  `${A} ignore-param ref at /a candidate`,
  `${A} ignore-param ref at /b candidate`,
  `${A} trailing-slash blocked`,
  `${B} case-insensitive active`,
];

/** Registers the contract's tests; `open` gives a fresh, empty store for each. */
export function ruleSnapshotContract(open: () => Promise<RuleSnapshotStore>): void {
  it('the learner the contract saves decides as it expects (the reference)', () => {
    const rules = taught();
    assert.deepEqual(statuses(rules), STATUSES);
    for (const [url, decision] of EXPECTED) assert.deepEqual(decide(rules, url), decision, url);
  });

  it('a restored learner has the same rules and decides every URL as the one saved', async () => {
    const store = await open();
    await store.save(taught());
    const restored = await store.restore(OPTIONS);
    assert.deepEqual(statuses(restored), STATUSES);
    for (const [url, decision] of EXPECTED) assert.deepEqual(decide(restored, url), decision, url);
    assert.deepEqual(restored.activeRules(A).map(ruleKey).sort(), [
      'alias-namespace /node/<n>',
      'ignore-param ref at /*',
    ]);
  });

  it('a restored learner keeps learning: a counter-example blocks the restored rule as it blocks the saved one', async () => {
    const store = await open();
    const saved = taught();
    await store.save(saved);
    const restored = await store.restore(OPTIONS);
    for (const rules of [saved, restored]) {
      see(rules, `${A}/list?ref=new`, 'new items');
      see(rules, `${A}/list`, 'all items');
      assert.ok(statuses(rules).includes(`${A} ignore-param ref at /* blocked`));
      assert.equal(rules.rewrite(`${A}/z?q=1&ref=side`), undefined);
      // B's rules learned nothing from A's pages
      assert.equal(rules.rewrite(`${B}/Z/Q.html`)?.url, `${B}/z/q.html`);
    }
  });

  it('a store saved again holds the newer rules', async () => {
    const store = await open();
    const rules = taught();
    await store.save(rules);
    see(rules, `${A}/c2/`, 'page c2');
    see(rules, `${A}/c2/index.html`, 'page c2');
    await store.save(rules);
    const restored = await store.restore(OPTIONS);
    assert.ok(statuses(restored).includes(`${A} drop-suffix index.html active`));
    assert.equal(restored.rewrite(`${A}/q/index.html`)?.url, `${A}/q/`);
  });

  it('an empty store restores a learner that knows no rule', async () => {
    const restored = await (await open()).restore(OPTIONS);
    assert.deepEqual(restored.report(), []);
    for (const [url] of EXPECTED) assert.deepEqual(decide(restored, url), {}, url);
  });
}
