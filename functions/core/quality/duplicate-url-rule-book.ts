/**
 * The rule book: applies each origin's active duplicate-URL rules to a URL (docs/duplicate-urls.md).
 * Pure and cheap: no clock, no randomness (the audit sample is a hash of the URL), no I/O, and a
 * link costs one origin lookup when its origin has no active rule. What it answers it logs in each
 * rule's merge log, so that a rule blocked later gives the URL back (the learner's `RuleChange`).
 */

import type { SkipReason } from '../types.ts';
import {
  type DuplicateUrlRule,
  namespaceDir,
  type RuleRewrite,
  rewriteUrl,
  ruleKey,
} from './duplicate-url-rule.ts';
import {
  auditsIssued,
  type DuplicateUrlRuleState,
  type HostRules,
  type Imaged,
  type MergeExplanation,
  NO_PAGE,
  originOf,
  type RuleEntry,
} from './duplicate-url-rule-state.ts';
import type { LruMap } from './lru-map.ts';

/** The skip reason of a queued URL whose form a rule merged into another URL. */
export const DUPLICATE_URL_RULE_REASON: SkipReason = 'duplicate-url-rule';

/** Applying the rules to a URL: what the crawl step, the CLI's `canonicalize` and readmission ask. */
export interface UrlRuleBook {
  rewrite(url: string, options?: { queued?: boolean }): RuleRewrite | undefined;
  heldAs(url: string, options?: { queued?: boolean }): string | undefined;
  aliasNamespace(url: string, options?: { queued?: boolean }): DuplicateUrlRule | undefined;
  explain(a: string, b: string): MergeExplanation;
  activeRules(origin: string): readonly DuplicateUrlRule[];
  /** Grows whenever an answer grew a merge log or an audit list. */
  readonly mergeLogRevision: number;
}

/** The rule book over a shared state; see the module comment. */
export class DuplicateUrlRuleBook implements UrlRuleBook {
  readonly #s: DuplicateUrlRuleState;

  constructor(state: DuplicateUrlRuleState) {
    this.#s = state;
  }

  /**
   * The URL a link or a queued task should be crawled as, by its origin's active rules, with the
   * rules that rewrote it; undefined when no active rule changes it, when the URL is audited (one
   * of each rule's first `auditFirst` merges, or in the `auditShare` sample), or when a rule that
   * is not proven yet cannot log it. A URL it answers is remembered in each rule's merge log, and
   * given back if the rule is blocked (`RuleChange.readmit`; with `queued`, the URL of a queued
   * task, already claimed: `RuleChange.requeue`). The same URL gets the same answer until a rule
   * changes status.
   */
  rewrite(url: string, options: { queued?: boolean } = {}): RuleRewrite | undefined {
    const origin = originOf(url);
    const rules = this.#s.rules.peek(origin);
    if (rules === undefined || rules.active.length === 0) return undefined;
    const result = rewriteUrl(rules.active, url);
    if (result.url === url) return undefined;
    return this.#merges(rules, result.rules, url, options.queued === true) ? result : undefined;
  }

  /**
   * Whether `rules` (active) may merge `url` away: none audits it, and each can give it back (a
   * proven rule may; another only when its merge log holds the URL or has room). Logs the URL
   * (`queued`: a queued task's) when they may.
   */
  #merges(rules: HostRules, merging: readonly DuplicateUrlRule[], url: string, queued: boolean): boolean {
    // the active rules are the entries' own objects: found without building their keys
    const entries: RuleEntry[] = [];
    for (const entry of rules.entries.values()) if (merging.includes(entry.rule)) entries.push(entry);
    let audit = false;
    for (const entry of entries) if (this.#audits(rules, entry, url)) audit = true;
    if (audit) return false;
    for (const entry of entries) {
      if (this.#s.proven(entry) || entry.merged.has(url)) continue;
      if (entry.merged.size >= this.#s.maxMergeLog || this.#s.logged >= this.#s.maxMergeLogs) return false;
    }
    for (const entry of entries) {
      const logged = entry.merged.get(url);
      if (logged === true || (logged === false && !queued)) continue;
      if (logged === undefined) {
        if (entry.merged.size >= this.#s.maxMergeLog || this.#s.logged >= this.#s.maxMergeLogs) continue;
        this.#s.logged += 1;
      }
      entry.merged.set(url, queued);
      this.#s.logRevision += 1;
    }
    return true;
  }

  /** Whether the rule's audit fetches `url`: one of its first merges (`#firstAudits`), or the sample. */
  #audits(rules: HostRules, entry: RuleEntry, url: string): boolean {
    if (entry.audited.has(url)) return true;
    // a proven rule's first audits held (here, or in the learner whose support it merged)
    if (
      !this.#s.proven(entry) &&
      auditsIssued(entry) < this.#s.firstAudits(entry) &&
      !entry.merged.has(url)
    ) {
      entry.audited.add(url);
      this.#s.logged += 1;
      this.#s.logRevision += 1;
      // stored with the rule, so that other containers do not spend their own first audits
      rules.revision += 1;
      return true;
    }
    return this.#s.auditShare > 0 && auditPoint(url) < this.#s.auditShare;
  }

  /**
   * A page of the host fetched under another form that the active rules rewrite into `url`,
   * when the host's memory holds one (it was fetched before the rules applied): fetching `url`
   * would fetch that page again. Undefined when `url` is not the form the rules give, when the
   * memory holds no such page (or only a miss), and for the audit sample, which is fetched to
   * keep testing the rules.
   */
  heldAs(url: string, options: { queued?: boolean } = {}): string | undefined {
    const host = originOf(url);
    const rules = this.#s.rules.peek(host);
    const memory = this.#s.memory.get(host);
    if (rules === undefined || memory === undefined || rules.active.length === 0) return undefined;
    const active = rules.active;
    let index: LruMap<string, Imaged> | undefined;
    if (active.length === 1) index = memory.indexes.get(ruleKey(active[0]!));
    else if (memory.compositeFor === active) index = memory.composite;
    const held = index?.peek(url);
    if (held === undefined || held.hash === NO_PAGE || held.url === url) return undefined;
    if (memory.observations.peek(url) !== undefined || rewriteUrl(active, url).url !== url) return undefined;
    const merging = rewriteUrl(active, held.url).rules;
    return this.#merges(rules, merging, url, options.queued === true) ? held.url : undefined;
  }

  /**
   * The host's active alias namespace that holds `url` (`/node/62` under `alias-namespace
   * /node/<n>`): the page has another name the site links and declares canonical, so the URL is
   * not fetched. Undefined otherwise, and for the audit sample.
   */
  aliasNamespace(url: string, options: { queued?: boolean } = {}): DuplicateUrlRule | undefined {
    const rules = this.#s.rules.peek(originOf(url));
    if (rules === undefined || rules.active.length === 0) return undefined;
    const dir = namespaceDir(url);
    if (dir === undefined) return undefined;
    const rule = rules.active.find((r) => r.kind === 'alias-namespace' && r.dir === dir);
    if (rule === undefined || !this.#merges(rules, [rule], url, options.queued === true)) return undefined;
    return rule;
  }

  /** How the active rules of a's origin rewrite two URLs, and whether they end as one (no audit). */
  explain(a: string, b: string): MergeExplanation {
    const active = this.#s.rules.peek(originOf(a))?.active ?? [];
    const ra = rewriteUrl(active, a);
    const rb = rewriteUrl(active, b);
    return { a: ra, b: rb, merged: ra.url === rb.url };
  }

  /** The active rules of a host, in composition order. */
  activeRules(origin: string): readonly DuplicateUrlRule[] {
    return this.#s.rules.peek(origin)?.active ?? [];
  }

  /**
   * A number that grows whenever a rule's merge log or audit list grows (a runtime that keeps
   * lessons between snapshots, the embedded crawler, notes the check that grew it).
   */
  get mergeLogRevision(): number {
    return this.#s.logRevision;
  }
}

/** A URL's place in [0, 1): FNV-1a 32 over its UTF-16 code units, then murmur3's finalizer. */
export function auditPoint(url: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < url.length; i++) {
    h ^= url.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}
