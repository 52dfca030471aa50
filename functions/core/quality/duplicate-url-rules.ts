/**
 * Learns each origin's duplicate-URL rules from the pages a crawl fetches, and applies the proven
 * ones before the URL-seen test (docs/duplicate-urls.md). Rules are keyed by origin (scheme, host,
 * port), taken from the URLs themselves: a site on one port never teaches another.
 *
 * - **Candidates** come from exact duplicates within one host: two URLs of one origin whose bodies
 *   have the same content hash (seen here, or reported by the content-seen store as
 *   `duplicateOf`), or a redirect within the origin. `deriveRules` names the rules that explain
 *   the pair.
 * - **Support**: distinct duplicate pairs the rule is needed to merge (one per newly observed URL).
 * - **Counter-example**: two URLs the rule would merge whose contents differ (a page and a miss
 *   count as different), or a redirect whose target the rule would rewrite. One blocks the rule
 *   for good.
 * - A pair is **confirmed** when one URL's page declares the other its canonical URL
 *   (`<link rel=canonical>`): the site itself says both name one page, which no coincidence of
 *   contents (two empty result pages) does. One confirmed pair is proof enough. The same bytes
 *   hold the same declaration, so a page that names itself by an href that does not depend on its
 *   URL (absolute, or from the root) makes its twin name it too.
 * - A rule is **active** once it has `minSupport` pairs, or one confirmed pair, and no
 *   counter-example. Active rules rewrite URLs (`rewrite`), except each rule's first merges
 *   (`auditFirst`; one for a confirmed rule) and then a deterministic sample (`auditShare`), still
 *   fetched as linked, so a rule keeps meeting the pairs that could refute it. It is **proven**
 *   once its first audits held (support `minSupport` plus their count).
 * - A parameter rule (`ignore-param`) is scoped to the path it was learned on, or to the directory
 *   that pairs on two paths share (`widened`).
 * - Each rule logs what it merged (`maxMergeLog`); when it is blocked, its change gives the URLs
 *   back (`readmit`, `requeue`), and a rule not proven merges no more than its log holds.
 * - An **alias namespace** (`/node/<n>`) is learned from declarations: a URL `<dir><number>`
 *   whose page is the same as an earlier URL's and declares that URL canonical (a confirmed pair),
 *   or, without the bytes to compare, two such URLs naming two pages the crawl knew
 *   (`observeDeclared`). It rewrites nothing: URLs it holds are skipped (`aliasNamespace`), but for
 *   the audit sample. A page of the namespace that is new and declares no other canonical URL
 *   refutes it.
 *
 * Pure: no clock, no randomness (the audit sample is a hash of the URL), no I/O. Memory is bounded
 * (see {@link DuplicateUrlRuleOptions}); `snapshot()` and the constructor persist and restore it.
 */

import type { DuplicateUrlRule, RuleRewrite } from './duplicate-url-rule.ts';
import { DuplicateUrlRuleBook, type UrlRuleBook } from './duplicate-url-rule-book.ts';
import { DuplicateUrlRuleLearner, type UrlRuleLearner } from './duplicate-url-rule-learner.ts';
import {
  type DuplicateUrlRuleOptions,
  DuplicateUrlRuleState,
  type DuplicateUrlRulesSnapshot,
  type HeldForm,
  type HostRuleRecord,
  type MergeExplanation,
  type PageObservation,
  type RuleChange,
  type RuleRecord,
} from './duplicate-url-rule-state.ts';
import {
  hostRevision,
  hostRuleRecords,
  reportRules,
  restoreRules,
  snapshotRules,
  type UrlRuleSnapshot,
} from './duplicate-url-rules-snapshot.ts';

export { auditPoint, DUPLICATE_URL_RULE_REASON, type UrlRuleBook } from './duplicate-url-rule-book.ts';
export type { UrlRuleLearner } from './duplicate-url-rule-learner.ts';
export type {
  DuplicateUrlRuleOptions,
  DuplicateUrlRulesSnapshot,
  HeldForm,
  HostRuleRecord,
  MergeExplanation,
  PageObservation,
  RuleChange,
  RuleRecord,
  RuleStatus,
} from './duplicate-url-rule-state.ts';
export { sortRuleRecords, type UrlRuleSnapshot } from './duplicate-url-rules-snapshot.ts';

/**
 * A runtime's whole duplicate-URL rules: one state with its three faces, the rule book
 * (`UrlRuleBook`), the learner (`UrlRuleLearner`) and the snapshot (`UrlRuleSnapshot`). Its owner
 * (the embedded crawl state, a cloud container) hands each caller only the face it uses.
 */
export class DuplicateUrlRules implements UrlRuleBook, UrlRuleLearner, UrlRuleSnapshot {
  readonly #state: DuplicateUrlRuleState;
  readonly #book: DuplicateUrlRuleBook;
  readonly #learner: DuplicateUrlRuleLearner;

  /** Throws RangeError on a bad option, DuplicateUrlRuleError on a malformed snapshot. */
  constructor(options: DuplicateUrlRuleOptions = {}, snapshot?: DuplicateUrlRulesSnapshot) {
    this.#state = new DuplicateUrlRuleState(options);
    this.#book = new DuplicateUrlRuleBook(this.#state);
    this.#learner = new DuplicateUrlRuleLearner(this.#state);
    if (snapshot !== undefined) {
      restoreRules(this.#state, snapshot);
      this.#learner.reindexRestored();
    }
  }

  // the rule book

  rewrite(url: string, options: { queued?: boolean } = {}): RuleRewrite | undefined {
    return this.#book.rewrite(url, options);
  }

  heldAs(url: string, options: { queued?: boolean } = {}): string | undefined {
    return this.#book.heldAs(url, options);
  }

  aliasNamespace(url: string, options: { queued?: boolean } = {}): DuplicateUrlRule | undefined {
    return this.#book.aliasNamespace(url, options);
  }

  explain(a: string, b: string): MergeExplanation {
    return this.#book.explain(a, b);
  }

  activeRules(origin: string): readonly DuplicateUrlRule[] {
    return this.#book.activeRules(origin);
  }

  get mergeLogRevision(): number {
    return this.#book.mergeLogRevision;
  }

  // the learner

  observePage(observation: PageObservation): RuleChange[] {
    return this.#learner.observePage(observation);
  }

  observeRedirect(from: string, to: string): RuleChange[] {
    return this.#learner.observeRedirect(from, to);
  }

  observeDeclared(url: string, canonical: string): RuleChange[] {
    return this.#learner.observeDeclared(url, canonical);
  }

  observeDifferent(a: string, b: string): RuleChange[] {
    return this.#learner.observeDifferent(a, b);
  }

  importHeld(origin: string, forms: readonly HeldForm[]): RuleChange[] {
    return this.#learner.importHeld(origin, forms);
  }

  mergeHost(origin: string, records: readonly HostRuleRecord[]): RuleChange[] {
    return this.#learner.mergeHost(origin, records);
  }

  takeGivenBack(origin: string): RuleChange[] {
    return this.#learner.takeGivenBack(origin);
  }

  heldForms(origin: string, limit?: number): HeldForm[] {
    return this.#learner.heldForms(origin, limit);
  }

  heldRevision(origin: string): number {
    return this.#learner.heldRevision(origin);
  }

  learnsFrom(origin: string): boolean {
    return this.#learner.learnsFrom(origin);
  }

  remembers(origin: string): boolean {
    return this.#learner.remembers(origin);
  }

  get learningEntries(): number {
    return this.#learner.learningEntries;
  }

  // the snapshot

  snapshot(options: { memory?: boolean } = {}): DuplicateUrlRulesSnapshot {
    return snapshotRules(this.#state, options);
  }

  report(): RuleRecord[] {
    return reportRules(this.#state);
  }

  hostRecords(origin: string): HostRuleRecord[] | undefined {
    return hostRuleRecords(this.#state, origin);
  }

  hostRevision(origin: string): number {
    return hostRevision(this.#state, origin);
  }
}
