/**
 * The duplicate-URL rules' shared model (docs/duplicate-urls.md): each origin's rule table and
 * learning memory, with the bounds and counters the three faces keep together. Not a port: the
 * rule book (`duplicate-url-rule-book.ts`) reads it to apply rules, the learner
 * (`duplicate-url-rule-learner.ts`) grows it from observations, the snapshot
 * (`duplicate-url-rules-snapshot.ts`) persists and restores it; `DuplicateUrlRules` composes them.
 */

import type { DuplicateUrlRule, RuleRewrite } from './duplicate-url-rule.ts';
import { LruMap } from './lru-map.ts';

/** Settings of {@link DuplicateUrlRules}; the first two come from the crawl configuration. */
export interface DuplicateUrlRuleOptions {
  /** Distinct duplicate pairs before a rule is applied (default 3; the crawl configuration's `duplicateUrlRuleSupport` is 2). */
  minSupport?: number;
  /** Share of the URLs an active rule merges that are fetched anyway, to keep testing it (config `duplicateUrlRuleAudit`, default 0.02). */
  auditShare?: number;
  /** URLs (with their content hash) remembered per host for learning (default 1,000, least recently added forgotten first). */
  maxObservationsPerHost?: number;
  /**
   * Entries of learning memory over all hosts: remembered URLs plus the rules' image indexes
   * (default 50,000; about 200 bytes each, so 10 MB). Beyond it, the host observed least
   * recently forgets what it saw (its rules stay).
   */
  maxObservations?: number;
  /** Rules (candidates, active and blocked) kept per host (default 32; active rules are never dropped). */
  maxRulesPerHost?: number;
  /** Hosts whose rules are kept (default 100,000, least recently observed dropped first). */
  maxRuleHosts?: number;
  /** Example pairs kept per rule (default 5). */
  maxExamples?: number;
  /**
   * The first URLs each rule would merge that are fetched anyway, as the audit (default 3; 0 when
   * `auditShare` is 0), before the `auditShare` sample takes over; a rule is *proven* once its
   * support reaches `minSupport` plus this many pairs.
   */
  auditFirst?: number;
  /**
   * URLs a rule merged that it remembers, to queue them again should it be blocked (default 256 per
   * rule). A rule not proven yet whose log is full merges no more URLs (they are crawled as linked).
   */
  maxMergeLog?: number;
  /** Merge-log entries over all origins (default 50,000); when full, unproven rules stop merging. */
  maxMergeLogs?: number;
}

/** A fetched URL, as the learner needs it. */
export interface PageObservation {
  /** Canonical URL that was fetched. */
  url: string;
  /**
   * SHA-256 (hex) of the decoded body of a 2xx page; null when the URL gave no page (another
   * status, a network error, a soft 404): a miss never supports a rule, but a page and a miss
   * under two URLs a rule merges refute it.
   */
  contentHash: string | null;
  /** An earlier URL with the same content, as the content-seen store answered (it may be gone from memory here). */
  duplicateOf?: string;
  /** The URL the page declares canonical (`<link rel=canonical>`, canonicalized), a URL of its origin. */
  canonical?: string;
  /**
   * True when the declaration's href names that URL whatever the page's own URL (absolute, or
   * from the root): a page with the same bytes under another URL declares the same URL.
   */
  canonicalFixed?: boolean;
}

/** A page held under a form the active rules rewrite: its URL and its content digest (see `heldForms`). */
export type HeldForm = [url: string, digest: number];

/** Where a rule stands. */
export type RuleStatus = 'candidate' | 'active' | 'blocked';

/** One rule of one origin: a line of rules.json. */
export interface RuleRecord {
  /** `scheme://host[:port]`: rules are learned and applied per origin, never shared between ports. */
  origin: string;
  rule: DuplicateUrlRule;
  /** `ruleKey(rule)`, for people and for `grep`. */
  name: string;
  status: RuleStatus;
  /** Distinct duplicate pairs the rule merges. */
  support: number;
  /** The first few of those pairs. */
  examples: [string, string][];
  /** Pairs of the support where one page declared the other canonical (absent: none). */
  confirmed?: number;
  /**
   * Of its first merges, how many were fetched anyway as its audit (here or, merged, by another
   * learner: a cloud container does not audit again what another already did; absent: none).
   */
  audited?: number;
  /** The pair that blocked it (different contents, or a redirect to a URL it rewrites). */
  counterExample?: [string, string];
}

/** An origin's rules without the origin (what the cloud stores per crawl and origin). */
export type HostRuleRecord = Omit<RuleRecord, 'origin'>;

/** The learner's state, JSON-safe. */
export interface DuplicateUrlRulesSnapshot {
  /**
   * Rules per origin, least recently observed first. (A snapshot from before rules were keyed by
   * origin has `hosts` instead, and is refused: its rules cannot be told apart by port.)
   */
  origins: { origin: string; rules: HostRuleRecord[] }[];
  /**
   * Learning memory per origin ([url, content digest in hex or "-" for a miss, and the canonical URL
   * its page declared, if another]), least recent first.
   */
  memory?: { origin: string; observations: ([string, string] | [string, string, string])[] }[];
  /**
   * Each rule's merge log (a queued task's URL written `q <url>`) and the URLs its audit fetched
   * (`name` is the rule's `ruleKey`).
   */
  merges?: { origin: string; name: string; merged: string[]; audited: string[] }[];
}

/** A rule that became active or blocked during an observation. */
export interface RuleChange {
  origin: string;
  rule: DuplicateUrlRule;
  status: 'active' | 'blocked';
  /**
   * For a blocked rule: the links it had merged (its merge log), never claimed nor crawled under
   * their own URL; the runtime admits them again as new links.
   */
  readmit?: string[];
  /**
   * For a blocked rule: the queued tasks it had skipped (merged at dispatch, or held forms), whose
   * URLs were claimed; the runtime queues them again directly.
   */
  requeue?: string[];
}

/** Two URLs as a host's active rules see them. */
export interface MergeExplanation {
  a: RuleRewrite;
  b: RuleRewrite;
  /** True when both end at the same URL. */
  merged: boolean;
}

export interface RuleEntry {
  rule: DuplicateUrlRule;
  key: string;
  status: RuleStatus;
  support: number;
  /** Pairs of the support confirmed by a declared canonical URL. */
  confirmed: number;
  examples: [string, string][];
  counterExample?: [string, string];
  /** URLs it merged, to give back if it is blocked: true for a queued task (claimed), false for a link. */
  merged: Map<string, boolean>;
  /** URLs it would have merged that were fetched as the audit of its first merges. */
  audited: Set<string>;
  /** First audits another learner reported (`RuleRecord.audited`, merged or restored). */
  auditedElsewhere: number;
}

export interface HostRules {
  entries: Map<string, RuleEntry>;
  /** The active rules in composition order (rebuilt when one changes status). */
  active: DuplicateUrlRule[];
  /** Grows whenever one of the host's rule records changes (see `hostRevision`). */
  revision: number;
}

/** A URL remembered under a rule's image. */
export interface Imaged {
  url: string;
  hash: number;
}

export interface HostMemory {
  /** URL -> content digest (or NO_PAGE). */
  observations: LruMap<string, number>;
  /** Content digest -> first remembered URL with it. */
  byHash: Map<number, string>;
  /**
   * URL -> the URL of its origin its page declared canonical: another URL, or itself when the
   * href was fixed (see `PageObservation.canonicalFixed`). Remembered URLs only.
   */
  declares: Map<string, string>;
  /** Redirect sources already counted (a retried step reports its redirect again). */
  redirects: LruMap<string, true>;
  /** Rule key -> image -> the first remembered URL the rule rewrites to that image. */
  indexes: Map<string, LruMap<string, Imaged>>;
  /** The same for all active rules together (when there are two or more); rebuilt when they change. */
  composite: LruMap<string, Imaged> | undefined;
  /** The active rules `composite` was built for. */
  compositeFor: readonly DuplicateUrlRule[];
  units: number;
  /** When (a tick of the learner) a page held under another form was last recorded (see `heldRevision`). */
  heldAt: number;
}

/** The digest of a URL that gave no page. */
export const NO_PAGE = -1;

/** The state the three faces share: options, rule tables and learning memory per origin. */
export class DuplicateUrlRuleState {
  readonly minSupport: number;
  readonly auditShare: number;
  readonly perHost: number;
  readonly maxUnits: number;
  readonly maxRules: number;
  readonly maxExamples: number;
  readonly auditFirst: number;
  readonly maxMergeLog: number;
  readonly maxMergeLogs: number;
  /** Merge-log and audit entries over all origins. */
  logged = 0;
  logRevision = 0;
  readonly rules: LruMap<string, HostRules>;
  /** Learning memory by host, least recently observed first (a Map re-inserted on use). */
  readonly memory = new Map<string, HostMemory>();
  units = 0;
  heldTick = 0;

  constructor(options: DuplicateUrlRuleOptions = {}) {
    this.minSupport = positive('minSupport', options.minSupport ?? 3);
    const audit = options.auditShare ?? 0.02;
    if (!(audit >= 0 && audit < 1)) throw new RangeError(`auditShare must be in [0, 1), got ${audit}`);
    this.auditShare = audit;
    this.perHost = positive('maxObservationsPerHost', options.maxObservationsPerHost ?? 1000);
    this.maxUnits = positive('maxObservations', options.maxObservations ?? 50_000);
    this.maxRules = positive('maxRulesPerHost', options.maxRulesPerHost ?? 32);
    this.maxExamples = positive('maxExamples', options.maxExamples ?? 5);
    // an audit share of 0 turns the audit off, its first merges too
    this.auditFirst = Math.max(0, Math.floor(options.auditFirst ?? (audit > 0 ? 3 : 0)));
    this.maxMergeLog = positive('maxMergeLog', options.maxMergeLog ?? 256);
    this.maxMergeLogs = positive('maxMergeLogs', options.maxMergeLogs ?? 50_000);
    this.rules = new LruMap(positive('maxRuleHosts', options.maxRuleHosts ?? 100_000), (_, rules) => {
      for (const entry of rules.entries.values()) this.forgetLog(entry);
    });
  }

  /** Frees a rule's merge log and audit list (it was blocked or dropped). */
  forgetLog(entry: RuleEntry): void {
    this.logged -= entry.merged.size + entry.audited.size;
    entry.merged = new Map();
    entry.audited = new Set();
  }

  /**
   * How many of its first merges a rule has fetched anyway: `auditFirst`, or one when a pair of its
   * support was confirmed by the site's own declaration (a page naming its twin canonical is no
   * coincidence of contents, which the first audits are there to catch).
   */
  firstAudits(entry: RuleEntry): number {
    return entry.confirmed > 0 ? Math.min(1, this.auditFirst) : this.auditFirst;
  }

  /** An active rule whose support went its first audits' count past the threshold: they held. */
  proven(entry: RuleEntry): boolean {
    return entry.status === 'active' && entry.support >= this.minSupport + this.firstAudits(entry);
  }

  /** Counts learning-memory entries, per host and in all. */
  count(memory: HostMemory, delta: number): void {
    memory.units += delta;
    this.units += delta;
  }

  hostRules(host: string): HostRules {
    let rules = this.rules.get(host);
    if (rules === undefined) {
      rules = { entries: new Map(), active: [], revision: 0 };
      this.rules.set(host, rules);
    }
    return rules;
  }

  memoryOf(host: string): HostMemory {
    let memory = this.memory.get(host);
    if (memory === undefined) {
      const fresh: HostMemory = {
        observations: new LruMap(this.perHost, (url, hash) => {
          this.count(fresh, -1);
          if (fresh.byHash.get(hash) === url) fresh.byHash.delete(hash);
          if (fresh.declares.delete(url)) this.count(fresh, -1);
        }),
        byHash: new Map(),
        declares: new Map(),
        redirects: new LruMap(this.perHost, () => this.count(fresh, -1)),
        indexes: new Map(),
        composite: undefined,
        compositeFor: [],
        units: 0,
        heldAt: 0,
      };
      memory = fresh;
    } else {
      this.memory.delete(host);
    }
    this.memory.set(host, memory);
    return memory;
  }

  /** Forgets the least recently observed hosts' memory (not `keep`'s) until the budget holds. */
  trim(keep: string): void {
    for (const [host, memory] of this.memory) {
      if (this.units <= this.maxUnits) return;
      if (host === keep) continue;
      this.memory.delete(host);
      this.units -= memory.units;
    }
  }
}

/** First audits a rule issued: its own and those other learners reported. */
export function auditsIssued(entry: RuleEntry): number {
  return entry.audited.size + entry.auditedElsewhere;
}

/** The key of a URL's rules: its origin, `scheme://host[:port]` (canonical URLs drop default ports). */
export function originOf(url: string): string {
  // splitUrl's origin without cutting the path and query (rewrite asks it of every link)
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  return slash < 0 ? url : url.slice(0, slash);
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
