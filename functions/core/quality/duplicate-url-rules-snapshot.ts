/**
 * The snapshot: persists and restores the duplicate-URL rules' state (the embedded crawl's saved
 * state and rules.json; the cloud's rule items per crawl and origin). A restored state gives the
 * same decisions as the one snapshotted (test/contract/duplicate-url-rules-snapshot.ts).
 */

import { checkRule, DuplicateUrlRuleError, ruleKey, sortRules } from './duplicate-url-rule.ts';
import {
  auditsIssued,
  type DuplicateUrlRuleState,
  type DuplicateUrlRulesSnapshot,
  type HostRuleRecord,
  type HostRules,
  NO_PAGE,
  type RuleEntry,
  type RuleRecord,
  type RuleStatus,
} from './duplicate-url-rule-state.ts';

/** Persisting the rules: the whole state, the rules.json report, one origin's records to store. */
export interface UrlRuleSnapshot {
  snapshot(options?: { memory?: boolean }): DuplicateUrlRulesSnapshot;
  report(): RuleRecord[];
  hostRecords(origin: string): HostRuleRecord[] | undefined;
  hostRevision(origin: string): number;
}

/**
 * The state to persist: every host's rules, and with `memory` (default true) what each host's
 * learning memory holds (at most `maxObservations` URLs in all).
 */
export function snapshotRules(
  s: DuplicateUrlRuleState,
  options: { memory?: boolean } = {},
): DuplicateUrlRulesSnapshot {
  const snapshot: DuplicateUrlRulesSnapshot = {
    origins: [...s.rules.entries()]
      .filter(([, rules]) => rules.entries.size > 0)
      .map(([origin, rules]) => ({ origin, rules: hostRecords(rules) })),
  };
  if (options.memory !== false) {
    const merges: NonNullable<DuplicateUrlRulesSnapshot['merges']> = [];
    for (const [origin, rules] of s.rules.entries()) {
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
    snapshot.memory = [...s.memory].map(([origin, memory]) => ({
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

/** Restores a snapshot into a fresh state. Throws DuplicateUrlRuleError on a malformed one. */
export function restoreRules(s: DuplicateUrlRuleState, snapshot: DuplicateUrlRulesSnapshot): void {
  if (!Array.isArray(snapshot.origins))
    throw new DuplicateUrlRuleError(
      'not a snapshot of duplicate-URL rules keyed by origin (one keyed by host name, from before rules kept ports apart, cannot be told apart by port: learn them again)',
    );
  for (const { origin, rules } of snapshot.origins) {
    const table = s.hostRules(origin);
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
    const entry = s.rules.peek(origin)?.entries.get(name);
    if (entry === undefined) continue;
    for (const url of merged.slice(0, s.maxMergeLog).map(String)) {
      if (url.startsWith('q ')) entry.merged.set(url.slice(2), true);
      else entry.merged.set(url, false);
    }
    for (const url of audited.slice(0, s.auditFirst)) entry.audited.add(String(url));
    s.logged += entry.merged.size + entry.audited.size;
    // the rule's count (`audited`) included these
    entry.auditedElsewhere = Math.max(0, entry.auditedElsewhere - entry.audited.size);
  }
  for (const { origin: host, observations } of snapshot.memory ?? []) {
    const memory = s.memoryOf(host);
    for (const [url, written, canonical] of observations) {
      const hash = written === '-' ? NO_PAGE : Number.parseInt(String(written), 16);
      if (!Number.isFinite(hash))
        throw new DuplicateUrlRuleError(`not a content digest: ${JSON.stringify(written)}`);
      if (memory.observations.peek(url) !== undefined) continue;
      memory.observations.set(url, hash);
      s.count(memory, 1);
      if (typeof canonical === 'string') {
        memory.declares.set(url, canonical);
        s.count(memory, 1);
      }
      if (hash !== NO_PAGE && !memory.byHash.has(hash)) memory.byHash.set(hash, url);
    }
    s.trim(host);
  }
}

/** Every host's rules (rules.json): active first, then candidates and blocked, most support first. */
export function reportRules(s: DuplicateUrlRuleState): RuleRecord[] {
  const out: RuleRecord[] = [];
  for (const [origin, rules] of s.rules.entries()) {
    for (const record of hostRecords(rules)) out.push({ origin, ...record });
  }
  return sortRuleRecords(out);
}

/** One host's rules, to store per crawl and host (the cloud); undefined when it has none. */
export function hostRuleRecords(s: DuplicateUrlRuleState, origin: string): HostRuleRecord[] | undefined {
  const rules = s.rules.peek(origin);
  return rules === undefined || rules.entries.size === 0 ? undefined : hostRecords(rules);
}

/**
 * A number that grows whenever one of the host's rule records changes (a candidate added, its
 * support or examples grown, a status changed): a runtime that stores each host's rules
 * elsewhere (the cloud) writes them again only when it moved.
 */
export function hostRevision(s: DuplicateUrlRuleState, origin: string): number {
  return s.rules.peek(origin)?.revision ?? 0;
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
