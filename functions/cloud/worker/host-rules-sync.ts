/**
 * Duplicate-URL rules shared between worker containers (docs/duplicate-urls.md, "For the
 * runtimes"; docs/cloud.md). Each container learns from the pages it fetches; a host's rules are
 * stored per crawl and host (`rules#<host>` in the crawl table) and merged into a container's
 * learner with `mergeHost`:
 *
 * - **read** before a record of the host runs, when this container has not read them for
 *   `RULES_REFRESH_MS` (one GetItem, 0.5 read unit, per host and container and minute at most);
 * - **written** after a record changed them (a candidate, a pair of support, a status), and only
 *   then: a conditional write on the stored version; when another container wrote first, its
 *   rules are merged in and the write is tried again. Rules change a few times per host and crawl,
 *   so the write units per page stay near zero.
 *
 * A failed read or write is logged, not thrown: the rules are advice that saves requests; a
 * container that misses them learns them again from its own pages.
 */
import { judgeError } from '../../core/error-policy.ts';
import type { HostRuleRecord } from '../../core/quality/duplicate-url-rules.ts';
import type { CrawlTableStore } from '../ports/cloud-ports.ts';
import type { CrawlContext } from './container-state.ts';

/** A container reads a host's stored rules again after this long, ms. */
export const RULES_REFRESH_MS = 60_000;
/** Conditional writes tried before giving up until the host's next change. */
const WRITE_TRIES = 3;

/** What the sync needs. */
export interface RulesSyncEnv {
  table: CrawlTableStore;
  now: number;
  log: (line: string) => void;
}

/** Merges the host's stored rules into the container's learner when its copy is stale. */
export async function refreshHostRules(
  env: RulesSyncEnv,
  ctx: CrawlContext,
  crawlId: string,
  host: string,
): Promise<void> {
  const rules = ctx.urlRules;
  if (rules === undefined) return;
  const known = ctx.ruleSync.get(host);
  if (known !== undefined && env.now - known.readAt < RULES_REFRESH_MS) return;
  try {
    const stored = await env.table.hostRules(crawlId, host);
    // News of this container not stored yet (a failed write, or learned before a failed read)
    const pending = rules.hostRevision(host) !== (known?.revision ?? 0);
    if (stored !== undefined && stored.version !== known?.version) rules.mergeHost(host, stored.records);
    // Up to date with the store unless it has news of its own, or its memory refuted a stored rule.
    const current = !pending && storedHolds(stored?.records ?? [], rules.hostRecords(host) ?? []);
    const revision = current ? rules.hostRevision(host) : (known?.revision ?? -1);
    ctx.ruleSync.set(host, { version: stored?.version ?? 0, readAt: env.now, revision });
  } catch (error) {
    env.log(`duplicate-URL rules of ${host} (${crawlId}) not read: ${judgeError(error).message}`);
    ctx.ruleSync.set(host, { version: known?.version ?? 0, readAt: env.now, revision: known?.revision ?? 0 });
  }
}

/** True when `stored` says all that `mine` says: each rule there, with its status, and as much support. */
function storedHolds(stored: readonly HostRuleRecord[], mine: readonly HostRuleRecord[]): boolean {
  const byName = new Map(stored.map((r) => [r.name, r]));
  return mine.every((r) => {
    const s = byName.get(r.name);
    return s !== undefined && s.status === r.status && s.support >= r.support;
  });
}

/**
 * Stores the host's rules when this container's learner changed them since they were last read
 * or written. Resolves whether a write went through.
 */
export async function saveHostRules(
  env: RulesSyncEnv,
  ctx: CrawlContext,
  crawlId: string,
  host: string,
): Promise<boolean> {
  const rules = ctx.urlRules;
  if (rules === undefined) return false;
  const known = ctx.ruleSync.get(host) ?? { version: 0, readAt: env.now, revision: 0 };
  if (rules.hostRevision(host) === known.revision) return false;
  let version = known.version;
  try {
    for (let attempt = 0; attempt < WRITE_TRIES; attempt++) {
      const records = rules.hostRecords(host) ?? [];
      const written = await env.table.putHostRules(crawlId, host, records, version);
      if (written.written) {
        ctx.ruleSync.set(host, {
          version: written.version,
          readAt: known.readAt,
          revision: rules.hostRevision(host),
        });
        return true;
      }
      // Another container wrote first: take its rules in (blocked on either side stays blocked).
      rules.mergeHost(host, written.stored.records);
      version = written.stored.version;
    }
    env.log(`duplicate-URL rules of ${host} (${crawlId}) not written: ${WRITE_TRIES} conflicts`);
  } catch (error) {
    env.log(`duplicate-URL rules of ${host} (${crawlId}) not written: ${judgeError(error).message}`);
  }
  ctx.ruleSync.set(host, { ...known, version });
  return false;
}
