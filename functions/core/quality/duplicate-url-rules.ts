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

import type { SkipReason } from '../types.ts';
import {
  applyRule,
  checkRule,
  type DuplicateUrlRule,
  DuplicateUrlRuleError,
  deriveRules,
  inNamespace,
  namespaceDir,
  pathIn,
  type RuleRewrite,
  rewriteUrl,
  ruleKey,
  sortRules,
  splitUrl,
  widerScope,
} from './duplicate-url-rule.ts';
import { LruMap } from './lru-map.ts';

/** The skip reason of a queued URL whose form a rule merged into another URL. */
export const DUPLICATE_URL_RULE_REASON: SkipReason = 'duplicate-url-rule';

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

interface RuleEntry {
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

interface HostRules {
  entries: Map<string, RuleEntry>;
  /** The active rules in composition order (rebuilt when one changes status). */
  active: DuplicateUrlRule[];
  /** Grows whenever one of the host's rule records changes (see `hostRevision`). */
  revision: number;
}

/** A URL remembered under a rule's image. */
interface Imaged {
  url: string;
  hash: number;
}

interface HostMemory {
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
const NO_PAGE = -1;

/**
 * The first 52 bits of a SHA-256 hex digest as a number: ample to tell a host's pages apart, and a
 * number costs less memory than a string (a slice of the digest would keep all 64 characters).
 * Anything else given as a hash is folded by FNV-1a.
 */
function digestOf(contentHash: string): number {
  const head = contentHash.slice(0, 13);
  if (/^[0-9a-fA-F]{13}$/.test(head)) return Number.parseInt(head, 16);
  let h = 0x811c9dc5;
  for (let i = 0; i < contentHash.length; i++) h = Math.imul(h ^ contentHash.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Learns and applies per-host duplicate-URL rules; see the module comment. */
export class DuplicateUrlRules {
  readonly #minSupport: number;
  readonly #auditShare: number;
  readonly #perHost: number;
  readonly #maxUnits: number;
  readonly #maxRules: number;
  readonly #maxExamples: number;
  readonly #auditFirst: number;
  readonly #maxMergeLog: number;
  readonly #maxMergeLogs: number;
  /** Merge-log and audit entries over all origins. */
  #logged = 0;
  #logRevision = 0;
  /** Changes of rules blocked outside a crawl step, with what they give back (`takeGivenBack`). */
  readonly #givenBack = new Map<string, RuleChange[]>();
  /** URLs `#givenBack` holds (at most `maxMergeLogs`, but for the origin kept last). */
  #givenBackUrls = 0;
  readonly #rules: LruMap<string, HostRules>;
  /** Learning memory by host, least recently observed first (a Map re-inserted on use). */
  readonly #memory = new Map<string, HostMemory>();
  #units = 0;
  #heldTick = 0;

  constructor(options: DuplicateUrlRuleOptions = {}, snapshot?: DuplicateUrlRulesSnapshot) {
    this.#minSupport = positive('minSupport', options.minSupport ?? 3);
    const audit = options.auditShare ?? 0.02;
    if (!(audit >= 0 && audit < 1)) throw new RangeError(`auditShare must be in [0, 1), got ${audit}`);
    this.#auditShare = audit;
    this.#perHost = positive('maxObservationsPerHost', options.maxObservationsPerHost ?? 1000);
    this.#maxUnits = positive('maxObservations', options.maxObservations ?? 50_000);
    this.#maxRules = positive('maxRulesPerHost', options.maxRulesPerHost ?? 32);
    this.#maxExamples = positive('maxExamples', options.maxExamples ?? 5);
    // an audit share of 0 turns the audit off, its first merges too
    this.#auditFirst = Math.max(0, Math.floor(options.auditFirst ?? (audit > 0 ? 3 : 0)));
    this.#maxMergeLog = positive('maxMergeLog', options.maxMergeLog ?? 256);
    this.#maxMergeLogs = positive('maxMergeLogs', options.maxMergeLogs ?? 50_000);
    this.#rules = new LruMap(positive('maxRuleHosts', options.maxRuleHosts ?? 100_000), (_, rules) => {
      for (const entry of rules.entries.values()) this.#forgetLog(entry);
    });
    if (snapshot !== undefined) this.#restore(snapshot);
  }

  // ------------------------------------------------------------------------------- applying

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
    const rules = this.#rules.peek(origin);
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
      if (this.#proven(entry) || entry.merged.has(url)) continue;
      if (entry.merged.size >= this.#maxMergeLog || this.#logged >= this.#maxMergeLogs) return false;
    }
    for (const entry of entries) {
      const logged = entry.merged.get(url);
      if (logged === true || (logged === false && !queued)) continue;
      if (logged === undefined) {
        if (entry.merged.size >= this.#maxMergeLog || this.#logged >= this.#maxMergeLogs) continue;
        this.#logged += 1;
      }
      entry.merged.set(url, queued);
      this.#logRevision += 1;
    }
    return true;
  }

  /** Whether the rule's audit fetches `url`: one of its first merges (`#firstAudits`), or the sample. */
  #audits(rules: HostRules, entry: RuleEntry, url: string): boolean {
    if (entry.audited.has(url)) return true;
    // a proven rule's first audits held (here, or in the learner whose support it merged)
    if (!this.#proven(entry) && auditsIssued(entry) < this.#firstAudits(entry) && !entry.merged.has(url)) {
      entry.audited.add(url);
      this.#logged += 1;
      this.#logRevision += 1;
      // stored with the rule, so that other containers do not spend their own first audits
      rules.revision += 1;
      return true;
    }
    return this.#auditShare > 0 && auditPoint(url) < this.#auditShare;
  }

  /**
   * How many of its first merges a rule has fetched anyway: `auditFirst`, or one when a pair of its
   * support was confirmed by the site's own declaration (a page naming its twin canonical is no
   * coincidence of contents, which the first audits are there to catch).
   */
  #firstAudits(entry: RuleEntry): number {
    return entry.confirmed > 0 ? Math.min(1, this.#auditFirst) : this.#auditFirst;
  }

  /** An active rule whose support went its first audits' count past the threshold: they held. */
  #proven(entry: RuleEntry): boolean {
    return entry.status === 'active' && entry.support >= this.#minSupport + this.#firstAudits(entry);
  }

  /** Frees a rule's merge log and audit list (it was blocked or dropped). */
  #forgetLog(entry: RuleEntry): void {
    this.#logged -= entry.merged.size + entry.audited.size;
    entry.merged = new Map();
    entry.audited = new Set();
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
    const rules = this.#rules.peek(host);
    const memory = this.#memory.get(host);
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
    const rules = this.#rules.peek(originOf(url));
    if (rules === undefined || rules.active.length === 0) return undefined;
    const dir = namespaceDir(url);
    if (dir === undefined) return undefined;
    const rule = rules.active.find((r) => r.kind === 'alias-namespace' && r.dir === dir);
    if (rule === undefined || !this.#merges(rules, [rule], url, options.queued === true)) return undefined;
    return rule;
  }

  /**
   * Pages of the host this memory holds under a form one of its rules (active, or a candidate that
   * may become active) rewrites into another URL, newest first (at most `limit`): what `heldAs`
   * needs to skip the other form once the rule applies. A runtime whose learners are split (the
   * cloud's containers) shares them, so that a container that never saw the page still skips its
   * other form (`importHeld`).
   */
  heldForms(origin: string, limit = 32): HeldForm[] {
    const rules = this.#rules.peek(origin);
    const memory = this.#memory.get(origin);
    if (rules === undefined || memory === undefined) return [];
    const out: HeldForm[] = [];
    const seen = [...memory.observations.entries()];
    for (let i = seen.length - 1; i >= 0 && out.length < limit; i--) {
      const [url, hash] = seen[i]!;
      if (hash === NO_PAGE) continue;
      const images = imagesOf(rules, url);
      // A form whose page this memory also holds under the URL a rule gives tells nobody
      // anything new: the shared slots go to forms whose own URL may still be queued somewhere.
      if (images.length > 0 && !images.some((image) => memory.observations.peek(image) !== undefined))
        out.push([url, hash]);
    }
    return out;
  }

  /**
   * A number that grows whenever the host's memory records a page under a form its rules rewrite:
   * with `hostRevision` (the rules changed), whether `heldForms` may have news,
   * so that a runtime does not scan the memory after every page.
   */
  heldRevision(origin: string): number {
    return this.#memory.get(origin)?.heldAt ?? 0;
  }

  /**
   * Learns from pages another learner fetched (its `heldForms`), as if fetched here: the same
   * checks, candidates and blocks as `observePage`. Throws DuplicateUrlRuleError on a malformed
   * entry. Returns the rules that changed.
   */
  importHeld(origin: string, forms: readonly HeldForm[]): RuleChange[] {
    const host = origin;
    const changes: RuleChange[] = [];
    if (forms.length === 0) return changes;
    const memory = this.#memoryOf(host);
    for (const form of forms) {
      const [url, hash] = Array.isArray(form) ? form : [undefined, undefined];
      if (typeof url !== 'string' || !Number.isSafeInteger(hash) || (hash as number) < 0)
        throw new DuplicateUrlRuleError(`not a held form: ${JSON.stringify(form)}`);
      if (originOf(url) !== origin)
        throw new DuplicateUrlRuleError(`held form ${JSON.stringify(url)} is not a URL of ${origin}`);
      this.#record(host, memory, url, hash as number, changes);
    }
    this.#trim(host);
    this.#keepGivenBack(origin, changes);
    return changes;
  }

  /** How the active rules of a's origin rewrite two URLs, and whether they end as one (no audit). */
  explain(a: string, b: string): MergeExplanation {
    const active = this.#rules.peek(originOf(a))?.active ?? [];
    const ra = rewriteUrl(active, a);
    const rb = rewriteUrl(active, b);
    return { a: ra, b: rb, merged: ra.url === rb.url };
  }

  /**
   * A number that grows whenever a rule's merge log or audit list grows (a runtime that keeps
   * lessons between snapshots, the embedded crawler, notes the check that grew it).
   */
  get mergeLogRevision(): number {
    return this.#logRevision;
  }

  /**
   * Entries of learning memory held now (remembered URLs, redirects and image-index entries: at
   * most `maxObservations`, plus what the origin being observed holds beyond it) and of the rules'
   * merge logs and audit lists (at most `maxMergeLogs`).
   */
  get learningEntries(): number {
    return this.#units + this.#logged + this.#givenBackUrls;
  }

  /**
   * A number that grows whenever one of the host's rule records changes (a candidate added, its
   * support or examples grown, a status changed): a runtime that stores each host's rules
   * elsewhere (the cloud) writes them again only when it moved.
   */
  hostRevision(origin: string): number {
    return this.#rules.peek(origin)?.revision ?? 0;
  }

  /**
   * True when the host has a candidate or an active rule whose pairs are told by bytes: its pages'
   * contents teach or test the rules (the cloud registers every content hash of such a host, not
   * only of pages with new links, one write unit per page). An active alias namespace alone is
   * tested by what its audited aliases declare, so it does not make every page of a Drupal site
   * pay a write.
   */
  learnsFrom(origin: string): boolean {
    const rules = this.#rules.peek(origin);
    if (rules === undefined) return false;
    for (const entry of rules.entries.values()) {
      if (entry.status === 'blocked') continue;
      if (entry.status === 'active' && entry.rule.kind === 'alias-namespace') continue;
      return true;
    }
    return false;
  }

  /**
   * True when this learner's memory holds pages of the host: rules learned elsewhere may make some
   * of them held forms (the cloud's containers follow other containers' rule changes for these).
   */
  remembers(origin: string): boolean {
    return this.#memory.has(origin);
  }

  /** The active rules of a host, in composition order. */
  activeRules(origin: string): readonly DuplicateUrlRule[] {
    return this.#rules.peek(origin)?.active ?? [];
  }

  // ------------------------------------------------------------------------------- learning

  /**
   * Learns from one fetched URL: checks every rule of its host against what was seen (blocking
   * those it refutes), and derives candidates when its content was seen under another URL of the
   * origin. Idempotent per URL while the host's memory holds it. Returns the rules that changed.
   */
  observePage(observation: PageObservation): RuleChange[] {
    const { url, duplicateOf } = observation;
    const host = originOf(url);
    const hash = observation.contentHash === null ? NO_PAGE : digestOf(observation.contentHash);
    const changes: RuleChange[] = [];
    const memory = this.#memoryOf(host);
    const { canonical } = observation;
    if (
      canonical !== undefined &&
      (canonical !== url || observation.canonicalFixed === true) &&
      sameOrigin(url, canonical) &&
      memory.observations.peek(url) === undefined
    ) {
      memory.declares.set(url, canonical);
      this.#count(memory, 1);
    }
    if (
      duplicateOf !== undefined &&
      duplicateOf !== url &&
      hash !== NO_PAGE &&
      sameOrigin(url, duplicateOf)
    ) {
      // what the content-seen store knows, though this memory may have forgotten it or never seen it
      // (it was fetched before `url`, whatever this memory saw first)
      if (memory.observations.peek(duplicateOf) === undefined)
        this.#record(host, memory, duplicateOf, hash, changes, url);
    }
    this.#record(host, memory, url, hash, changes);
    if (hash !== NO_PAGE && duplicateOf === undefined && memory.byHash.get(hash) === url)
      this.#refuteNamespace(host, memory, url, changes);
    this.#trim(host);
    return changes;
  }

  /**
   * The host's entry of an alias namespace; a new candidate first meets what the memory holds (a
   * page of its own there blocks it). Undefined when the host's rule table has no room.
   */
  #namespaceEntry(
    host: string,
    rules: HostRules,
    memory: HostMemory,
    namespace: DuplicateUrlRule,
    changes: RuleChange[],
  ): RuleEntry | undefined {
    const key = ruleKey(namespace);
    const known = rules.entries.get(key);
    if (known !== undefined) return known;
    const entry = this.#addCandidate(host, rules, namespace, key);
    if (entry !== undefined) this.#replayNamespace(host, rules, memory, entry, changes);
    return entry;
  }

  /** A new alias namespace meets what the memory holds: a page of its own there blocks it. */
  #replayNamespace(
    host: string,
    rules: HostRules,
    memory: HostMemory,
    entry: RuleEntry,
    changes: RuleChange[],
  ): void {
    const seen = [...memory.observations.entries()];
    const urlsOf = new Map<number, number>();
    for (const [, hash] of seen) urlsOf.set(hash, (urlsOf.get(hash) ?? 0) + 1);
    for (const [url, hash] of seen) {
      if (hash === NO_PAGE || urlsOf.get(hash) !== 1 || declaresOther(memory, url)) continue;
      if (inNamespace(entry.rule, url)) {
        this.#block(host, rules, entry, [url, url], changes);
        return;
      }
    }
  }

  /**
   * Learns from a page of the host's `<dir><number>` URLs that no content pair explains (in the
   * cloud, the page it names may have been fetched by another container without registering its
   * bytes) but that declares `canonical`, a URL outside the namespace the crawl had already reached
   * through other pages' links: one unconfirmed pair of the alias namespace. Two such aliases
   * naming two different pages activate it (the support threshold); a declared page this memory
   * holds with other contents blocks it. Call it after `observePage` of the same URL.
   */
  observeDeclared(url: string, canonical: string): RuleChange[] {
    const host = originOf(url);
    const changes: RuleChange[] = [];
    const dir = namespaceDir(url);
    if (
      dir === undefined ||
      url === canonical ||
      namespaceDir(canonical) === dir ||
      !sameOrigin(url, canonical)
    )
      return changes;
    const memory = this.#memoryOf(host);
    const hash = memory.observations.peek(url);
    const declared = memory.observations.peek(canonical);
    if (hash === undefined || hash === NO_PAGE || declared === hash) return changes;
    const rules = this.#hostRules(host);
    const namespace: DuplicateUrlRule = { kind: 'alias-namespace', dir };
    if (declared !== undefined && declared !== NO_PAGE) {
      // the site names a page whose bytes differ: its declarations are not to be trusted here
      const known = rules.entries.get(ruleKey(namespace));
      if (known !== undefined) this.#block(host, rules, known, [url, canonical], changes);
      return changes;
    }
    const entry = this.#namespaceEntry(host, rules, memory, namespace, changes);
    if (entry === undefined || entry.status === 'blocked') return changes;
    // once per alias, and per page named: a site that names one page everywhere proves nothing
    if (entry.examples.some(([a, b]) => a === url || b === canonical)) return changes;
    this.#support(host, rules, entry, url, canonical, changes, false);
    this.#trim(host);
    return changes;
  }

  /**
   * A new page under an alias namespace that declares no other canonical URL is a page of its own
   * there: it blocks the namespace.
   */
  #refuteNamespace(host: string, memory: HostMemory, url: string, changes: RuleChange[]): void {
    const rules = this.#rules.peek(host);
    const dir = rules === undefined ? undefined : namespaceDir(url);
    if (rules === undefined || dir === undefined || declaresOther(memory, url)) return;
    const entry = rules.entries.get(ruleKey({ kind: 'alias-namespace', dir }));
    if (entry !== undefined) this.#block(host, rules, entry, [url, url], changes);
  }

  /**
   * Learns from a redirect within one origin (`from` answered 3xx with `to`): the server says both
   * name one page, so it supports the rules that rewrite `from` into `to`; and a rule that would
   * rewrite `to` is refuted (it would send the crawl in a circle). Runtimes must not apply the
   * rules to a redirect's target: the server named that form.
   */
  observeRedirect(from: string, to: string): RuleChange[] {
    const host = originOf(from);
    const changes: RuleChange[] = [];
    if (from === to || !sameOrigin(from, to)) return changes;
    const memory = this.#memoryOf(host);
    const rules = this.#hostRules(host);
    for (const entry of [...rules.entries.values()]) {
      if (entry.status !== 'blocked' && applyRule(entry.rule, to) !== to) {
        this.#block(host, rules, entry, [from, to], changes);
      }
    }
    if (memory.redirects.peek(from) === undefined) {
      memory.redirects.set(from, true);
      this.#count(memory, 1);
      this.#samePair(host, memory, from, to, changes, to);
    }
    this.#refreshComposite(host, rules, memory, changes);
    this.#trim(host);
    return changes;
  }

  /** Learns that two URLs of one host served different contents (known to the runtime from elsewhere). */
  observeDifferent(a: string, b: string): RuleChange[] {
    const host = originOf(a);
    const changes: RuleChange[] = [];
    if (a === b || !sameOrigin(a, b)) return changes;
    const rules = this.#rules.get(host);
    if (rules === undefined) return changes;
    for (const entry of [...rules.entries.values()]) {
      if (entry.status !== 'blocked' && this.#blames(entry.rule, a, b, rules.active)) {
        this.#block(host, rules, entry, [a, b], changes);
      }
    }
    return changes;
  }

  /** `newer`: a remembered URL known to have been fetched after `url` (the content-seen store said so). */
  #record(
    host: string,
    memory: HostMemory,
    url: string,
    hash: number,
    changes: RuleChange[],
    newer?: string,
  ): void {
    if (memory.observations.peek(url) !== undefined) return;
    memory.observations.set(url, hash);
    this.#count(memory, 1);
    const rules = this.#rules.get(host);
    if (hash !== NO_PAGE && rules !== undefined && rewrittenBy(rules, url)) memory.heldAt = ++this.#heldTick;
    if (rules !== undefined) {
      for (const entry of [...rules.entries.values()]) {
        const index = this.#indexOf(host, rules, memory, entry, changes, false);
        if (index !== undefined) this.#checkOne(host, rules, memory, entry, index, url, hash, changes);
      }
    }
    if (hash !== NO_PAGE) {
      const first = memory.byHash.get(hash);
      if (first === undefined) memory.byHash.set(hash, url);
      else if (first !== url && sameOrigin(first, url)) {
        if (first === newer) this.#samePair(host, memory, first, url, changes);
        else this.#samePair(host, memory, url, first, changes);
      }
    }
    const after = this.#rules.peek(host);
    if (after !== undefined) {
      this.#refreshComposite(host, after, memory, changes);
      const composite = memory.composite;
      if (composite !== undefined) this.#checkComposite(host, after, memory, composite, url, hash, changes);
    }
  }

  /**
   * Files a URL under one rule's image, blocking the rule when another remembered URL with that
   * image (the image itself, or one the rule rewrites to it) had different content.
   */
  #checkOne(
    host: string,
    rules: HostRules,
    memory: HostMemory,
    entry: RuleEntry,
    index: LruMap<string, Imaged>,
    url: string,
    hash: number,
    changes: RuleChange[],
  ): boolean {
    const clash = this.#file(memory, index, applyRule(entry.rule, url), url, hash);
    if (clash === undefined) return false;
    this.#block(host, rules, entry, [clash, url], changes);
    return true;
  }

  /**
   * Files `url` (content `hash`) under `image` in `index` and returns a remembered URL with that
   * image whose content differs, if any.
   */
  #file(
    memory: HostMemory,
    index: LruMap<string, Imaged>,
    image: string,
    url: string,
    hash: number,
  ): string | undefined {
    if (image === url) {
      const other = index.peek(url);
      return other !== undefined && other.hash !== hash ? other.url : undefined;
    }
    const fixed = memory.observations.peek(image);
    if (fixed !== undefined && fixed !== hash) return image;
    const other = index.peek(image);
    if (other === undefined) {
      index.set(image, { url, hash });
      this.#count(memory, 1);
      return undefined;
    }
    return other.url !== url && other.hash !== hash ? other.url : undefined;
  }

  /**
   * The same for all active rules together: two URLs they merge with different contents block
   * the rules needed to merge them (all the rules that rewrote them when none alone is needed).
   */
  #checkComposite(
    host: string,
    rules: HostRules,
    memory: HostMemory,
    composite: LruMap<string, Imaged>,
    url: string,
    hash: number,
    changes: RuleChange[],
  ): void {
    const active = rules.active;
    const clash = this.#file(memory, composite, rewriteUrl(active, url).url, url, hash);
    if (clash === undefined) return;
    const blamed = active.filter((rule) => this.#blames(rule, url, clash, active));
    const culprits =
      blamed.length > 0 ? blamed : [...rewriteUrl(active, url).rules, ...rewriteUrl(active, clash).rules];
    for (const rule of culprits) {
      const entry = rules.entries.get(ruleKey(rule));
      if (entry !== undefined) this.#block(host, rules, entry, [clash, url], changes);
    }
    this.#refreshComposite(host, rules, memory, changes);
  }

  /**
   * Rebuilds the composite index when the active rules changed, replaying the host's memory (which
   * may block rules and change them again: it repeats until they hold).
   */
  #refreshComposite(host: string, rules: HostRules, memory: HostMemory, changes: RuleChange[]): void {
    while (memory.compositeFor !== rules.active) {
      const active = rules.active;
      if (memory.composite !== undefined) this.#count(memory, -memory.composite.size);
      memory.compositeFor = active;
      if (active.length < 2) {
        memory.composite = undefined; // one rule alone is checked by its own index
        continue;
      }
      const composite = this.#newIndex(memory);
      memory.composite = composite;
      for (const [url, hash] of [...memory.observations.entries()]) {
        this.#checkComposite(host, rules, memory, composite, url, hash, changes);
        if (rules.active !== active) break;
      }
    }
  }

  /**
   * Two URLs of one origin with one content: support for the rules that merge them, and new
   * candidates. `a` is the URL observed last, `b` the one it duplicates.
   */
  #samePair(
    host: string,
    memory: HostMemory,
    a: string,
    b: string,
    changes: RuleChange[],
    target?: string,
  ): void {
    const rules = this.#hostRules(host);
    const confirmed = target === undefined && declared(memory, a, b);
    for (const entry of [...rules.entries.values()]) {
      if (entry.status !== 'blocked' && this.#needed(entry.rule, a, b, rules.active)) {
        this.#support(host, rules, entry, a, b, changes, confirmed);
      }
    }
    const namespace = confirmed ? namespaceOf(memory, a, b) : undefined;
    if (namespace !== undefined) {
      const entry = this.#namespaceEntry(host, rules, memory, namespace, changes);
      if (entry !== undefined && entry.status !== 'blocked')
        this.#support(host, rules, entry, a, b, changes, true);
    }
    for (const rule of widened(rules, deriveRules(a, b, target))) {
      const key = ruleKey(rule);
      if (rules.entries.has(key)) continue;
      const entry = this.#addCandidate(host, rules, rule, key);
      if (entry === undefined) continue;
      // its image index replays what this host's memory holds: earlier pairs and counter-examples
      this.#indexOf(host, rules, memory, entry, changes, true);
      // a redirect pair is not in the memory, so the replay could not count it
      if (target !== undefined && entry.status !== 'blocked' && this.#needed(rule, a, b, rules.active)) {
        this.#support(host, rules, entry, a, b, changes, false);
      }
    }
  }

  /**
   * The image index of a rule in this host's memory, built on first use by replaying the
   * remembered URLs (blocking the rule on a counter-example, and for a new candidate counting the
   * duplicate pairs it merges); undefined once the rule is blocked.
   */
  #indexOf(
    host: string,
    rules: HostRules,
    memory: HostMemory,
    entry: RuleEntry,
    changes: RuleChange[],
    countSupport: boolean,
  ): LruMap<string, Imaged> | undefined {
    // an alias namespace rewrites nothing: no image to file, support only from its pairs
    if (entry.status === 'blocked' || entry.rule.kind === 'alias-namespace') return undefined;
    const existing = memory.indexes.get(entry.key);
    if (existing !== undefined) return existing;
    const index = this.#newIndex(memory);
    memory.indexes.set(entry.key, index);
    for (const [url, hash] of [...memory.observations.entries()]) {
      if (this.#checkOne(host, rules, memory, entry, index, url, hash, changes)) return undefined;
      if (!countSupport || hash === NO_PAGE) continue;
      const first = memory.byHash.get(hash);
      if (first !== undefined && first !== url && this.#needed(entry.rule, url, first, rules.active)) {
        this.#support(host, rules, entry, url, first, changes, declared(memory, url, first));
      }
    }
    return index;
  }

  #newIndex(memory: HostMemory): LruMap<string, Imaged> {
    return new LruMap<string, Imaged>(this.#perHost, () => this.#count(memory, -1));
  }

  /** Counts learning-memory entries, per host and in all. */
  #count(memory: HostMemory, delta: number): void {
    memory.units += delta;
    this.#units += delta;
  }

  /** Whether `rule` is needed to merge a and b: with the other active rules it does, without it they do not. */
  #needed(rule: DuplicateUrlRule, a: string, b: string, active: readonly DuplicateUrlRule[]): boolean {
    const key = ruleKey(rule);
    const others = active.filter((r) => ruleKey(r) !== key);
    const withRule = sortRules([...others, rule]);
    if (rewriteUrl(withRule, a).url !== rewriteUrl(withRule, b).url) return false;
    return others.length === 0 || rewriteUrl(others, a).url !== rewriteUrl(others, b).url;
  }

  /** Whether two different pages refute `rule`: it merges them alone, or it is needed to merge them. */
  #blames(rule: DuplicateUrlRule, a: string, b: string, active: readonly DuplicateUrlRule[]): boolean {
    return applyRule(rule, a) === applyRule(rule, b) || this.#needed(rule, a, b, active);
  }

  #support(
    host: string,
    rules: HostRules,
    entry: RuleEntry,
    a: string,
    b: string,
    changes: RuleChange[],
    confirmed: boolean,
  ): void {
    if (entry.examples.length < this.#maxExamples) entry.examples.push([a, b]);
    if (confirmed) entry.confirmed += 1;
    this.#setSupport(host, rules, entry, entry.support + 1, changes);
  }

  #setSupport(
    host: string,
    rules: HostRules,
    entry: RuleEntry,
    support: number,
    changes: RuleChange[],
  ): void {
    entry.support = support;
    rules.revision += 1;
    if (entry.status === 'candidate' && (entry.support >= this.#minSupport || entry.confirmed > 0)) {
      entry.status = 'active';
      rules.active = sortRules([...rules.active, entry.rule]);
      changes.push({ origin: host, rule: entry.rule, status: 'active' });
    }
  }

  #block(
    host: string,
    rules: HostRules,
    entry: RuleEntry,
    pair: [string, string],
    changes: RuleChange[],
  ): void {
    if (entry.status === 'blocked') return;
    rules.revision += 1;
    const wasActive = entry.status === 'active';
    entry.status = 'blocked';
    entry.counterExample = pair;
    if (wasActive) rules.active = rules.active.filter((r) => r !== entry.rule);
    const change: RuleChange = { origin: host, rule: entry.rule, status: 'blocked' };
    // what it merged was never crawled under its own URL: give it back
    const readmit = [...entry.merged].filter(([, queued]) => !queued).map(([url]) => url);
    const requeue = [...entry.merged].filter(([, queued]) => queued).map(([url]) => url);
    if (readmit.length > 0) change.readmit = readmit;
    if (requeue.length > 0) change.requeue = requeue;
    this.#forgetLog(entry);
    changes.push(change);
    this.#dropIndex(host, entry.key);
  }

  #dropIndex(host: string, key: string): void {
    const memory = this.#memory.get(host);
    const index = memory?.indexes.get(key);
    if (memory === undefined || index === undefined) return;
    memory.indexes.delete(key);
    this.#count(memory, -index.size);
  }

  /** Adds a candidate, making room by dropping the weakest candidate, then the oldest blocked rule. */
  #addCandidate(host: string, rules: HostRules, rule: DuplicateUrlRule, key: string): RuleEntry | undefined {
    if (rules.entries.size >= this.#maxRules) {
      let drop: RuleEntry | undefined;
      for (const entry of rules.entries.values()) {
        if (entry.status === 'candidate' && (drop === undefined || entry.support < drop.support))
          drop = entry;
      }
      if (drop === undefined) {
        for (const entry of rules.entries.values()) {
          if (entry.status === 'blocked') {
            drop = entry;
            break;
          }
        }
      }
      if (drop === undefined) return undefined;
      this.#forgetLog(drop);
      rules.entries.delete(drop.key);
      this.#dropIndex(host, drop.key);
    }
    const entry: RuleEntry = {
      rule,
      key,
      status: 'candidate',
      support: 0,
      confirmed: 0,
      examples: [],
      merged: new Map(),
      audited: new Set(),
      auditedElsewhere: 0,
    };
    rules.entries.set(key, entry);
    rules.revision += 1;
    return entry;
  }

  #hostRules(host: string): HostRules {
    let rules = this.#rules.get(host);
    if (rules === undefined) {
      rules = { entries: new Map(), active: [], revision: 0 };
      this.#rules.set(host, rules);
    }
    return rules;
  }

  #memoryOf(host: string): HostMemory {
    let memory = this.#memory.get(host);
    if (memory === undefined) {
      const fresh: HostMemory = {
        observations: new LruMap(this.#perHost, (url, hash) => {
          this.#count(fresh, -1);
          if (fresh.byHash.get(hash) === url) fresh.byHash.delete(hash);
          if (fresh.declares.delete(url)) this.#count(fresh, -1);
        }),
        byHash: new Map(),
        declares: new Map(),
        redirects: new LruMap(this.#perHost, () => this.#count(fresh, -1)),
        indexes: new Map(),
        composite: undefined,
        compositeFor: [],
        units: 0,
        heldAt: 0,
      };
      memory = fresh;
    } else {
      this.#memory.delete(host);
    }
    this.#memory.set(host, memory);
    return memory;
  }

  /** Forgets the least recently observed hosts' memory (not `keep`'s) until the budget holds. */
  #trim(keep: string): void {
    for (const [host, memory] of this.#memory) {
      if (this.#units <= this.#maxUnits) return;
      if (host === keep) continue;
      this.#memory.delete(host);
      this.#units -= memory.units;
    }
  }

  // ------------------------------------------------------------------------------- reporting

  /** Every host's rules (rules.json): active first, then candidates and blocked, most support first. */
  report(): RuleRecord[] {
    const out: RuleRecord[] = [];
    for (const [origin, rules] of this.#rules.entries()) {
      for (const record of hostRecords(rules)) out.push({ origin, ...record });
    }
    return sortRuleRecords(out);
  }

  /** One host's rules, to store per crawl and host (the cloud); undefined when it has none. */
  hostRecords(origin: string): HostRuleRecord[] | undefined {
    const rules = this.#rules.peek(origin);
    return rules === undefined || rules.entries.size === 0 ? undefined : hostRecords(rules);
  }

  /**
   * Merges a host's rules learned elsewhere (another container, a stored item): a rule blocked
   * on either side stays blocked; support is the larger count, or the distinct example pairs of
   * both when that is more; a rule with enough support becomes active. Throws
   * DuplicateUrlRuleError on a malformed record.
   */
  mergeHost(origin: string, records: readonly HostRuleRecord[]): RuleChange[] {
    const changes: RuleChange[] = [];
    const rules = this.#hostRules(origin);
    for (const record of records) {
      const rule = checkRule(record.rule);
      const key = ruleKey(rule);
      const entry = rules.entries.get(key) ?? this.#addCandidate(origin, rules, rule, key);
      if (entry === undefined) continue;
      if (record.status === 'blocked') {
        this.#block(origin, rules, entry, record.counterExample ?? ['', ''], changes);
        continue;
      }
      const pairs = new Map<string, [string, string]>();
      for (const pair of [...entry.examples, ...record.examples])
        pairs.set(pairKey(pair), [pair[0], pair[1]]);
      const examples = [...pairs.values()].slice(0, this.#maxExamples);
      if (examples.length !== entry.examples.length) rules.revision += 1;
      entry.examples = examples;
      const support = Math.max(entry.support, record.support, pairs.size);
      const confirmed = Math.max(entry.confirmed, Number(record.confirmed) || 0);
      // the stored count may include this learner's own audits (written, then read back)
      const reported = Math.floor(Number(record.audited) || 0) - entry.audited.size;
      entry.auditedElsewhere = Math.max(entry.auditedElsewhere, reported);
      if (support > entry.support || confirmed > entry.confirmed) {
        entry.confirmed = confirmed;
        this.#setSupport(origin, rules, entry, support, changes);
      }
    }
    // what this origin's memory saw may refute a rule learned elsewhere
    const memory = this.#memory.get(origin);
    if (memory !== undefined) {
      for (const entry of [...rules.entries.values()])
        this.#indexOf(origin, rules, memory, entry, changes, false);
      this.#refreshComposite(origin, rules, memory, changes);
    }
    this.#keepGivenBack(origin, changes);
    return changes;
  }

  /**
   * Keeps what rules blocked outside a crawl step (`mergeHost`, `importHeld`) gave back, for the
   * origin's next step to collect (`takeGivenBack`): the runtime that merges stored rules has no
   * page to admit them with.
   */
  #keepGivenBack(origin: string, changes: readonly RuleChange[]): void {
    const back = changes.filter((c) => c.readmit !== undefined || c.requeue !== undefined);
    if (back.length === 0) return;
    const kept = this.#givenBack.get(origin) ?? [];
    kept.push(...back);
    this.#givenBack.delete(origin);
    this.#givenBack.set(origin, kept);
    this.#givenBackUrls += urlsGivenBack(back);
    // bounded like the logs they came from: the origins waiting longest lose theirs first
    for (const [waiting, changes] of this.#givenBack) {
      if (this.#givenBackUrls <= this.#maxMergeLogs || waiting === origin) break;
      this.#givenBack.delete(waiting);
      this.#givenBackUrls -= urlsGivenBack(changes);
    }
  }

  /**
   * The blocked rules' changes (with the URLs they give back) that `mergeHost` or `importHeld`
   * produced for the origin since the last call, for a crawl step of the origin to crawl after
   * all; forgotten once taken.
   */
  takeGivenBack(origin: string): RuleChange[] {
    const back = this.#givenBack.get(origin);
    if (back === undefined) return [];
    this.#givenBack.delete(origin);
    this.#givenBackUrls -= urlsGivenBack(back);
    return back;
  }

  /**
   * The state to persist: every host's rules, and with `memory` (default true) what each host's
   * learning memory holds (at most `maxObservations` URLs in all).
   */
  snapshot(options: { memory?: boolean } = {}): DuplicateUrlRulesSnapshot {
    const snapshot: DuplicateUrlRulesSnapshot = {
      origins: [...this.#rules.entries()]
        .filter(([, rules]) => rules.entries.size > 0)
        .map(([origin, rules]) => ({ origin, rules: hostRecords(rules) })),
    };
    if (options.memory !== false) {
      const merges: NonNullable<DuplicateUrlRulesSnapshot['merges']> = [];
      for (const [origin, rules] of this.#rules.entries()) {
        for (const entry of rules.entries.values()) {
          if (entry.merged.size + entry.audited.size > 0)
            merges.push({
              origin,
              name: entry.key,
              merged: [...entry.merged].map(([url, queued]) => (queued ? `q ${url}` : url)),
              audited: [...entry.audited],
            });
        }
      }
      if (merges.length > 0) snapshot.merges = merges;
      snapshot.memory = [...this.#memory].map(([origin, memory]) => ({
        origin,
        observations: [...memory.observations.entries()].map(([url, hash]) => {
          const written = hash === NO_PAGE ? '-' : hash.toString(16);
          const canonical = memory.declares.get(url);
          return canonical === undefined
            ? ([url, written] as [string, string])
            : ([url, written, canonical] as [string, string, string]);
        }),
      }));
    }
    return snapshot;
  }

  #restore(snapshot: DuplicateUrlRulesSnapshot): void {
    if (!Array.isArray(snapshot.origins))
      throw new DuplicateUrlRuleError(
        'not a snapshot of duplicate-URL rules keyed by origin (one keyed by host name, from before rules kept ports apart, cannot be told apart by port: learn them again)',
      );
    for (const { origin, rules } of snapshot.origins) {
      const table = this.#hostRules(origin);
      for (const record of rules) {
        const rule = checkRule(record.rule);
        const key = ruleKey(rule);
        const entry: RuleEntry = {
          rule,
          key,
          status: checkStatus(record.status),
          support: Math.max(0, Math.floor(Number(record.support) || 0)),
          confirmed: Math.max(0, Math.floor(Number(record.confirmed) || 0)),
          examples: (record.examples ?? []).map(([a, b]): [string, string] => [String(a), String(b)]),
          merged: new Map(),
          audited: new Set(),
          auditedElsewhere: Math.max(0, Math.floor(Number(record.audited) || 0)),
        };
        if (record.counterExample !== undefined)
          entry.counterExample = [String(record.counterExample[0]), String(record.counterExample[1])];
        // a threshold raised since the snapshot keeps an active rule active: it was proven then
        table.entries.set(key, entry);
      }
      table.active = sortRules(
        [...table.entries.values()].filter((e) => e.status === 'active').map((e) => e.rule),
      );
    }
    for (const { origin, name, merged, audited } of snapshot.merges ?? []) {
      const entry = this.#rules.peek(origin)?.entries.get(name);
      if (entry === undefined) continue;
      for (const url of merged.slice(0, this.#maxMergeLog).map(String)) {
        if (url.startsWith('q ')) entry.merged.set(url.slice(2), true);
        else entry.merged.set(url, false);
      }
      for (const url of audited.slice(0, this.#auditFirst)) entry.audited.add(String(url));
      this.#logged += entry.merged.size + entry.audited.size;
      // the rule's count (`audited`) included these
      entry.auditedElsewhere = Math.max(0, entry.auditedElsewhere - entry.audited.size);
    }
    for (const { origin: host, observations } of snapshot.memory ?? []) {
      const memory = this.#memoryOf(host);
      for (const [url, written, canonical] of observations) {
        const hash = written === '-' ? NO_PAGE : Number.parseInt(String(written), 16);
        if (!Number.isFinite(hash))
          throw new DuplicateUrlRuleError(`not a content digest: ${JSON.stringify(written)}`);
        if (memory.observations.peek(url) !== undefined) continue;
        memory.observations.set(url, hash);
        this.#count(memory, 1);
        if (typeof canonical === 'string') {
          memory.declares.set(url, canonical);
          this.#count(memory, 1);
        }
        if (hash !== NO_PAGE && !memory.byHash.has(hash)) memory.byHash.set(hash, url);
      }
      this.#trim(host);
    }
  }
}

/** The URLs the host's active rules, or each candidate, rewrite `url` into (none: no rule does). */
function imagesOf(rules: HostRules, url: string): string[] {
  const images: string[] = [];
  if (rules.active.length > 0) {
    const active = rewriteUrl(rules.active, url).url;
    if (active !== url) images.push(active);
  }
  for (const entry of rules.entries.values()) {
    if (entry.status !== 'candidate') continue;
    const image = applyRule(entry.rule, url);
    if (image !== url) images.push(image);
  }
  return images;
}

/**
 * The rules a pair derives, and for a parameter rule the wider rule of each scope where the origin
 * has the same parameter's rule on another path (not blocked): pairs on two paths show the
 * parameter changes nothing under their common directory. The wider rule starts as a candidate and
 * counts the pairs the memory holds under it.
 */
function widened(rules: HostRules, derived: DuplicateUrlRule[]): DuplicateUrlRule[] {
  const out: DuplicateUrlRule[] = [];
  for (const rule of derived) {
    if (rule.kind !== 'ignore-param') {
      out.push(rule);
      continue;
    }
    const others: Extract<DuplicateUrlRule, { kind: 'ignore-param' }>[] = [];
    for (const entry of rules.entries.values()) {
      const other = entry.rule;
      if (other.kind === 'ignore-param' && other.name === rule.name && entry.status !== 'blocked')
        others.push(other);
    }
    // a pair a rule of a wider scope already explains proposes no narrower one (it supports that one)
    const path = rule.at.replace(/\*$/, '');
    if (others.some((other) => other.at !== rule.at && other.at.endsWith('*') && pathIn(other.at, path)))
      continue;
    out.push(rule);
    for (const other of others) {
      if (other.at === rule.at) continue;
      const at = widerScope(rule.at, other.at);
      if (!out.some((r) => r.kind === 'ignore-param' && r.name === rule.name && r.at === at))
        out.push({ kind: 'ignore-param', name: rule.name, at });
    }
  }
  return out;
}

/** First audits a rule issued: its own and those other learners reported. */
function auditsIssued(entry: RuleEntry): number {
  return entry.audited.size + entry.auditedElsewhere;
}

/** How many URLs blocked rules' changes give back. */
function urlsGivenBack(changes: readonly RuleChange[]): number {
  let n = 0;
  for (const c of changes) n += (c.readmit?.length ?? 0) + (c.requeue?.length ?? 0);
  return n;
}

/** True when an active rule, or a candidate, of the host rewrites `url` into another URL. */
function rewrittenBy(rules: HostRules, url: string): boolean {
  return imagesOf(rules, url).length > 0;
}

/**
 * True when one of two URLs with the same bytes declared the other canonical: by its own
 * declaration, or by naming itself with a fixed href, which its twin's bytes hold too.
 */
function declared(memory: HostMemory, a: string, b: string): boolean {
  const ofA = memory.declares.get(a);
  const ofB = memory.declares.get(b);
  return ofA === b || ofB === a || ofA === a || ofB === b;
}

/** True when the URL's page declared another URL canonical. */
function declaresOther(memory: HostMemory, url: string): boolean {
  const canonical = memory.declares.get(url);
  return canonical !== undefined && canonical !== url;
}

/**
 * The alias namespace a confirmed pair shows, if any: `alias`, the URL observed last, is
 * `<dir><number>` and declares `page`, outside that namespace, canonical. The page must have come
 * first: the crawl reached it through the site's links, not only through its alias's declaration,
 * so skipping the namespace's other URLs does not lose pages only aliases link.
 */
function namespaceOf(memory: HostMemory, alias: string, page: string): DuplicateUrlRule | undefined {
  const dir = namespaceDir(alias);
  return dir !== undefined && memory.declares.get(alias) === page && namespaceDir(page) !== dir
    ? { kind: 'alias-namespace', dir }
    : undefined;
}

/** Rule records in the order of rules.json: by host; active, candidates, blocked; most support first; by name. */
export function sortRuleRecords(records: RuleRecord[]): RuleRecord[] {
  const order: Record<RuleStatus, number> = { active: 0, candidate: 1, blocked: 2 };
  return records.sort(
    (a, b) =>
      (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0) ||
      order[a.status] - order[b.status] ||
      b.support - a.support ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}

function hostRecords(rules: HostRules): HostRuleRecord[] {
  return [...rules.entries.values()].map((entry) => {
    const record: HostRuleRecord = {
      rule: { ...entry.rule },
      name: entry.key,
      status: entry.status,
      support: entry.support,
      examples: entry.examples.map(([a, b]): [string, string] => [a, b]),
    };
    if (entry.confirmed > 0) record.confirmed = entry.confirmed;
    const audited = auditsIssued(entry);
    if (audited > 0) record.audited = audited;
    if (entry.counterExample !== undefined) record.counterExample = [...entry.counterExample];
    return record;
  });
}

function checkStatus(status: unknown): RuleStatus {
  if (status === 'candidate' || status === 'active' || status === 'blocked') return status;
  throw new DuplicateUrlRuleError(`not a rule status: ${JSON.stringify(status)}`);
}

function pairKey([a, b]: readonly [string, string]): string {
  return a < b ? `${a} ${b}` : `${b} ${a}`;
}

/** The key of a URL's rules: its origin, `scheme://host[:port]` (canonical URLs drop default ports). */
function originOf(url: string): string {
  // splitUrl's origin without cutting the path and query (rewrite asks it of every link)
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  return slash < 0 ? url : url.slice(0, slash);
}

function sameOrigin(a: string, b: string): boolean {
  return splitUrl(a).origin === splitUrl(b).origin;
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
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
