/**
 * The learner: grows each origin's duplicate-URL rules from what the crawl observes (pages, their
 * declared canonical URLs, redirects) and from rules or pages other learners share (the cloud's
 * containers); see the module comment of `duplicate-url-rules.ts` for candidates, support,
 * counter-examples and audits. Pure: no clock, no randomness, no I/O; memory bounded by the
 * options of the shared state.
 */

import {
  applyRule,
  checkRule,
  type DuplicateUrlRule,
  DuplicateUrlRuleError,
  deriveRules,
  inNamespace,
  namespaceDir,
  pathIn,
  rewriteUrl,
  ruleKey,
  sortRules,
  splitUrl,
  widerScope,
} from './duplicate-url-rule.ts';
import {
  type DuplicateUrlRuleState,
  type HeldForm,
  type HostMemory,
  type HostRuleRecord,
  type HostRules,
  type Imaged,
  NO_PAGE,
  originOf,
  type PageObservation,
  type RuleChange,
  type RuleEntry,
} from './duplicate-url-rule-state.ts';
import { LruMap } from './lru-map.ts';

/** Learning the rules: what the runtimes tell of the pages they fetched, and what they share. */
export interface UrlRuleLearner {
  observePage(observation: PageObservation): RuleChange[];
  observeRedirect(from: string, to: string): RuleChange[];
  observeDeclared(url: string, canonical: string): RuleChange[];
  observeDifferent(a: string, b: string): RuleChange[];
  importHeld(origin: string, forms: readonly HeldForm[]): RuleChange[];
  mergeHost(origin: string, records: readonly HostRuleRecord[]): RuleChange[];
  takeGivenBack(origin: string): RuleChange[];
  heldForms(origin: string, limit?: number): HeldForm[];
  heldRevision(origin: string): number;
  learnsFrom(origin: string): boolean;
  remembers(origin: string): boolean;
  /** Entries of learning memory and merge logs held now. */
  readonly learningEntries: number;
}

/** The learner over a shared state; see the module comment. */
export class DuplicateUrlRuleLearner implements UrlRuleLearner {
  readonly #s: DuplicateUrlRuleState;
  /** Changes of rules blocked outside a crawl step, with what they give back (`takeGivenBack`). */
  readonly #givenBack = new Map<string, RuleChange[]>();
  /** URLs `#givenBack` holds (at most `maxMergeLogs`, but for the origin kept last). */
  #givenBackUrls = 0;

  constructor(state: DuplicateUrlRuleState) {
    this.#s = state;
  }

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
    const memory = this.#s.memoryOf(host);
    const { canonical } = observation;
    if (
      canonical !== undefined &&
      (canonical !== url || observation.canonicalFixed === true) &&
      sameOrigin(url, canonical) &&
      memory.observations.peek(url) === undefined
    ) {
      memory.declares.set(url, canonical);
      this.#s.count(memory, 1);
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
    this.#s.trim(host);
    return changes;
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
    const memory = this.#s.memoryOf(host);
    const rules = this.#s.hostRules(host);
    for (const entry of [...rules.entries.values()]) {
      if (entry.status !== 'blocked' && applyRule(entry.rule, to) !== to) {
        this.#block(host, rules, entry, [from, to], changes);
      }
    }
    if (memory.redirects.peek(from) === undefined) {
      memory.redirects.set(from, true);
      this.#s.count(memory, 1);
      this.#samePair(host, memory, from, to, changes, to);
    }
    this.#refreshComposite(host, rules, memory, changes);
    this.#s.trim(host);
    return changes;
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
    const memory = this.#s.memoryOf(host);
    const hash = memory.observations.peek(url);
    const declared = memory.observations.peek(canonical);
    if (hash === undefined || hash === NO_PAGE || declared === hash) return changes;
    const rules = this.#s.hostRules(host);
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
    this.#s.trim(host);
    return changes;
  }

  /** Learns that two URLs of one host served different contents (known to the runtime from elsewhere). */
  observeDifferent(a: string, b: string): RuleChange[] {
    const host = originOf(a);
    const changes: RuleChange[] = [];
    if (a === b || !sameOrigin(a, b)) return changes;
    const rules = this.#s.rules.get(host);
    if (rules === undefined) return changes;
    for (const entry of [...rules.entries.values()]) {
      if (entry.status !== 'blocked' && this.#blames(entry.rule, a, b, rules.active)) {
        this.#block(host, rules, entry, [a, b], changes);
      }
    }
    return changes;
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
    const memory = this.#s.memoryOf(host);
    for (const form of forms) {
      const [url, hash] = Array.isArray(form) ? form : [undefined, undefined];
      if (typeof url !== 'string' || !Number.isSafeInteger(hash) || (hash as number) < 0)
        throw new DuplicateUrlRuleError(`not a held form: ${JSON.stringify(form)}`);
      if (originOf(url) !== origin)
        throw new DuplicateUrlRuleError(`held form ${JSON.stringify(url)} is not a URL of ${origin}`);
      this.#record(host, memory, url, hash as number, changes);
    }
    this.#s.trim(host);
    this.#keepGivenBack(origin, changes);
    return changes;
  }

  /**
   * Merges a host's rules learned elsewhere (another container, a stored item): a rule blocked
   * on either side stays blocked; support is the larger count, or the distinct example pairs of
   * both when that is more; a rule with enough support becomes active. Throws
   * DuplicateUrlRuleError on a malformed record.
   */
  mergeHost(origin: string, records: readonly HostRuleRecord[]): RuleChange[] {
    const changes: RuleChange[] = [];
    const rules = this.#s.hostRules(origin);
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
      const examples = [...pairs.values()].slice(0, this.#s.maxExamples);
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
    this.#reindex(origin, rules, changes);
    this.#keepGivenBack(origin, changes);
    return changes;
  }

  /**
   * Builds the image indexes of every origin whose memory was restored (a snapshot keeps the
   * remembered URLs, not the indexes): without them `heldAs` finds no held form until the origin's
   * next page. Rules the memory refutes are blocked, their URLs kept for `takeGivenBack`.
   */
  reindexRestored(): void {
    for (const origin of [...this.#s.memory.keys()]) {
      const rules = this.#s.rules.peek(origin);
      if (rules === undefined) continue;
      const changes: RuleChange[] = [];
      this.#reindex(origin, rules, changes);
      this.#keepGivenBack(origin, changes);
      // the indexes count against the memory's budget, as they do while learning
      this.#s.trim(origin);
    }
  }

  /** Files the origin's memory under each rule's index and the active rules' composite. */
  #reindex(origin: string, rules: HostRules, changes: RuleChange[]): void {
    const memory = this.#s.memory.get(origin);
    if (memory === undefined) return;
    for (const entry of [...rules.entries.values()])
      this.#indexOf(origin, rules, memory, entry, changes, false);
    this.#refreshComposite(origin, rules, memory, changes);
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
   * Pages of the host this memory holds under a form one of its rules (active, or a candidate that
   * may become active) rewrites into another URL, newest first (at most `limit`): what `heldAs`
   * needs to skip the other form once the rule applies. A runtime whose learners are split (the
   * cloud's containers) shares them, so that a container that never saw the page still skips its
   * other form (`importHeld`).
   */
  heldForms(origin: string, limit = 32): HeldForm[] {
    const rules = this.#s.rules.peek(origin);
    const memory = this.#s.memory.get(origin);
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
    return this.#s.memory.get(origin)?.heldAt ?? 0;
  }

  /**
   * True when the host has a candidate or an active rule whose pairs are told by bytes: its pages'
   * contents teach or test the rules (the cloud registers every content hash of such a host, not
   * only of pages with new links, one write unit per page). An active alias namespace alone is
   * tested by what its audited aliases declare, so it does not make every page of a Drupal site
   * pay a write.
   */
  learnsFrom(origin: string): boolean {
    const rules = this.#s.rules.peek(origin);
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
    return this.#s.memory.has(origin);
  }

  /**
   * Entries of learning memory held now (remembered URLs, redirects and image-index entries: at
   * most `maxObservations`, plus what the origin being observed holds beyond it) and of the rules'
   * merge logs and audit lists (at most `maxMergeLogs`).
   */
  get learningEntries(): number {
    return this.#s.units + this.#s.logged + this.#givenBackUrls;
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
   * A new page under an alias namespace that declares no other canonical URL is a page of its own
   * there: it blocks the namespace.
   */
  #refuteNamespace(host: string, memory: HostMemory, url: string, changes: RuleChange[]): void {
    const rules = this.#s.rules.peek(host);
    const dir = rules === undefined ? undefined : namespaceDir(url);
    if (rules === undefined || dir === undefined || declaresOther(memory, url)) return;
    const entry = rules.entries.get(ruleKey({ kind: 'alias-namespace', dir }));
    if (entry !== undefined) this.#block(host, rules, entry, [url, url], changes);
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
    this.#s.count(memory, 1);
    const rules = this.#s.rules.get(host);
    if (hash !== NO_PAGE && rules !== undefined && rewrittenBy(rules, url))
      memory.heldAt = ++this.#s.heldTick;
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
    const after = this.#s.rules.peek(host);
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
      this.#s.count(memory, 1);
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
      if (memory.composite !== undefined) this.#s.count(memory, -memory.composite.size);
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
    const rules = this.#s.hostRules(host);
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
    return new LruMap<string, Imaged>(this.#s.perHost, () => this.#s.count(memory, -1));
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
    if (entry.examples.length < this.#s.maxExamples) entry.examples.push([a, b]);
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
    if (entry.status === 'candidate' && (entry.support >= this.#s.minSupport || entry.confirmed > 0)) {
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
    this.#s.forgetLog(entry);
    changes.push(change);
    this.#dropIndex(host, entry.key);
  }

  #dropIndex(host: string, key: string): void {
    const memory = this.#s.memory.get(host);
    const index = memory?.indexes.get(key);
    if (memory === undefined || index === undefined) return;
    memory.indexes.delete(key);
    this.#s.count(memory, -index.size);
  }

  /** Adds a candidate, making room by dropping the weakest candidate, then the oldest blocked rule. */
  #addCandidate(host: string, rules: HostRules, rule: DuplicateUrlRule, key: string): RuleEntry | undefined {
    if (rules.entries.size >= this.#s.maxRules) {
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
      this.#s.forgetLog(drop);
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
      if (this.#givenBackUrls <= this.#s.maxMergeLogs || waiting === origin) break;
      this.#givenBack.delete(waiting);
      this.#givenBackUrls -= urlsGivenBack(changes);
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

function pairKey([a, b]: readonly [string, string]): string {
  return a < b ? `${a} ${b}` : `${b} ${a}`;
}

function sameOrigin(a: string, b: string): boolean {
  return splitUrl(a).origin === splitUrl(b).origin;
}

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
