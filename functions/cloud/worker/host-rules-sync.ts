/**
 * Duplicate-URL rules shared between worker containers (docs/duplicate-urls.md, "For the
 * runtimes"; docs/cloud.md). Each container learns from the pages it fetches; an origin's rules are
 * stored per crawl and origin (`rules#<origin>` in the crawl table) and merged into a container's
 * learner with `mergeHost`:
 *
 * - **read** with each batch's state (one more key of its BatchGetItem per origin, 0.5 read unit:
 *   a container applies what another learned a moment ago), and by a record when its batch's read
 *   is older than `RULES_REFRESH_MS` (one GetItem), or than `RULES_REFRESH_RECENT_MS` in the
 *   minute after the rules changed (the held forms they make arrive then);
 * - **written** after a record changed them (a candidate, a pair of support, a status), and only
 *   then: a conditional write on the stored version; when another container wrote first, its
 *   rules are merged in and the write is tried again. Rules change a few times per origin and crawl,
 *   so the write units per page stay near zero.
 *
 * - **held forms** travel with the rules: the pages a container fetched under a form one of the
 *   origin's rules (active, or a candidate) rewrites (`heldForms`, at most `HELD_FORMS_SHARED`).
 *   Another container imports them (`importHeld`), so its `heldAs` skips the page's other form though it never fetched the page
 *   (without them, a form queued before the rule was learned was fetched again whenever another
 *   container dequeued it).
 *
 * - **news**: a write that adds a rule or changes a status is announced in the crawl's rules news
 *   (`announceHostRules`, read with every batch's state; alias namespaces, which make no held
 *   forms, are not news). A container whose memory holds pages of that origin reads its rules at
 *   its next batch, whatever origins the batch serves (`followRulesNews`), and shares the pages they
 *   make held forms. Without it, pages fetched under a form before any rule existed stayed in the
 *   memory of a container that did not serve the origin again for hundreds of requests, while
 *   others fetched the pages' own URLs.
 *
 * A failed read or write is logged, not thrown: the rules are advice that saves requests; a
 * container that misses them learns them again from its own pages.
 */

import type { HeldForm, HostRuleRecord } from '../../core/quality/duplicate-url-rules.ts';
import { judgeError } from '../../core/step/error-policy.ts';
import type { HostRulesStore, StoredHostRules } from '../ports/cloud-ports.ts';
import type { CrawlContext, RuleSync } from './container-state.ts';

/** A container reads an origin's stored rules itself when its batch's read is older than this, ms. */
export const RULES_REFRESH_MS = 60_000;
/**
 * For this long after it saw an origin's rules change, a container reads them before a record of the
 * origin when its copy is older than `RULES_REFRESH_RECENT_MS`: the held forms other containers
 * share follow a new rule by a batch or two, and a batch read before they came must not fetch the
 * pages they hold. About one read per second of an origin served, for a minute per rule change.
 */
export const RULES_RECENT_MS = 60_000;
export const RULES_REFRESH_RECENT_MS = 1_000;
/** Held forms shared per origin (newest first), and the longest URL shared: the item stays small. */
export const HELD_FORMS_SHARED = 32;
const HELD_URL_CHARS = 512;
/** Conditional writes tried before giving up until the origin's next change. */
const WRITE_TRIES = 3;
/**
 * Hosts of the rules news a batch follows at most (one GetItem each, run together). The reads a
 * crawl spends on news do not depend on it (each container reads each announced version once); it
 * bounds how long one batch's intake waits, and a lower bound left held forms waiting behind
 * other origins' news for several batches.
 */
export const NEWS_FOLLOWED_PER_BATCH = 16;

/** What the sync needs. */
export interface RulesSyncEnv {
  table: HostRulesStore;
  now: number;
  log: (line: string) => void;
}

/**
 * Merges an origin's stored rules and held forms, as read at `now` (undefined: none stored), into
 * the container's learner.
 */
export function mergeStoredRules(
  env: Omit<RulesSyncEnv, 'table'>,
  ctx: CrawlContext,
  crawlId: string,
  origin: string,
  stored: StoredHostRules | undefined,
): void {
  const rules = ctx.urlRules;
  if (rules === undefined) return;
  const known = ctx.ruleSync.get(origin);
  try {
    // News of this container not stored yet (a failed write, or learned before a failed read)
    const pending = rules.hostRevision(origin) !== (known?.revision ?? 0);
    const moved = stored !== undefined && stored.version !== known?.version;
    if (moved) {
      rules.mergeHost(origin, stored.records);
      rules.importHeld(origin, stored.held ?? []);
    }
    // Up to date with the store unless it has news of its own, or its memory refuted a stored rule.
    const current = !pending && storedHolds(stored?.records ?? [], rules.hostRecords(origin) ?? []);
    const revision = current ? rules.hostRevision(origin) : (known?.revision ?? -1);
    const held = moved
      ? new Set((stored.held ?? []).map(([url]) => url))
      : (known?.held ?? new Set<string>());
    const shape = moved ? rulesShape(stored.records) : (known?.shape ?? '');
    const changed = known !== undefined && shape !== known.shape;
    ctx.ruleSync.set(origin, {
      version: stored?.version ?? 0,
      readAt: env.now,
      revision,
      held,
      // rules learned elsewhere may make pages of this memory held forms: look again at the next save
      heldRevision: moved ? -1 : (known?.heldRevision ?? -1),
      shape,
      changedAt: changed ? env.now : (known?.changedAt ?? 0),
    });
  } catch (error) {
    env.log(`duplicate-URL rules of ${origin} (${crawlId}) not merged: ${judgeError(error).message}`);
    ctx.ruleSync.set(origin, { ...(known ?? unsynced(env.now)), readAt: env.now });
  }
}

/** Reads and merges the origin's stored rules when this container's copy is stale. */
export async function refreshHostRules(
  env: RulesSyncEnv,
  ctx: CrawlContext,
  crawlId: string,
  origin: string,
): Promise<void> {
  if (ctx.urlRules === undefined) return;
  const known = ctx.ruleSync.get(origin);
  const recent = known !== undefined && known.changedAt > 0 && env.now - known.changedAt < RULES_RECENT_MS;
  const maxAge = recent ? RULES_REFRESH_RECENT_MS : RULES_REFRESH_MS;
  if (known !== undefined && env.now - known.readAt < maxAge) return;
  let stored: StoredHostRules | undefined;
  try {
    stored = await env.table.hostRules(crawlId, origin);
  } catch (error) {
    env.log(`duplicate-URL rules of ${origin} (${crawlId}) not read: ${judgeError(error).message}`);
    ctx.ruleSync.set(origin, { ...(known ?? unsynced(env.now)), readAt: env.now });
    return;
  }
  mergeStoredRules(env, ctx, crawlId, origin, stored);
}

/** Where a container stands with an origin it has not synced yet. */
function unsynced(now: number): RuleSync {
  return { version: 0, readAt: now, revision: 0, held: new Set(), heldRevision: 0, shape: '', changedAt: 0 };
}

/**
 * An origin's rules as news sees them: each rewriting rule's name and status (support and examples
 * left out, and alias namespaces, which rewrite nothing and so make no held forms).
 */
export function rulesShape(records: readonly HostRuleRecord[]): string {
  return records
    .filter((r) => r.rule.kind !== 'alias-namespace')
    .map((r) => `${r.name}=${r.status}`)
    .sort()
    .join('\n');
}

/**
 * Follows the crawl's rules news (origin -> stored version announced, as the batch read it): for the
 * origins this container's memory holds pages of and whose announced rules it has not read (at most
 * `NEWS_FOLLOWED_PER_BATCH`, leaving out `skip`, the batch's own origins, which came with the
 * batch), reads the rules, merges them and stores the held forms they make. Resolves the origins followed.
 */
export async function followRulesNews(
  env: RulesSyncEnv,
  ctx: CrawlContext,
  crawlId: string,
  news: ReadonlyMap<string, number>,
  skip: ReadonlySet<string>,
): Promise<string[]> {
  const rules = ctx.urlRules;
  if (rules === undefined) return [];
  const origins: string[] = [];
  for (const [origin, version] of news) {
    if (origins.length >= NEWS_FOLLOWED_PER_BATCH) break;
    if (skip.has(origin) || !rules.remembers(origin)) continue;
    if ((ctx.ruleSync.get(origin)?.version ?? 0) >= version) continue;
    origins.push(origin);
  }
  await Promise.all(
    origins.map(async (origin) => {
      let stored: StoredHostRules | undefined;
      try {
        stored = await env.table.hostRules(crawlId, origin);
      } catch (error) {
        env.log(`duplicate-URL rules of ${origin} (${crawlId}) not read: ${judgeError(error).message}`);
        return;
      }
      mergeStoredRules(env, ctx, crawlId, origin, stored);
      await saveHostRules(env, ctx, crawlId, origin);
    }),
  );
  return origins;
}

/** True when `stored` says all that `mine` says: each rule there, with its status, and as much support. */
function storedHolds(stored: readonly HostRuleRecord[], mine: readonly HostRuleRecord[]): boolean {
  const byName = new Map(stored.map((r) => [r.name, r]));
  return mine.every((r) => {
    const s = byName.get(r.name);
    return s !== undefined && s.status === r.status && s.support >= r.support;
  });
}

/** The held forms this container shares for the origin (its memory, with what it imported). */
function sharedHeld(ctx: CrawlContext, origin: string): HeldForm[] {
  const forms = ctx.urlRules?.heldForms(origin, HELD_FORMS_SHARED * 2) ?? [];
  return forms.filter(([url]) => url.length <= HELD_URL_CHARS).slice(0, HELD_FORMS_SHARED);
}

/**
 * Stores the origin's rules when this container's learner changed them, or holds a held form the
 * store lacks, since they were last read or written. Resolves whether a write went through.
 */
export async function saveHostRules(
  env: RulesSyncEnv,
  ctx: CrawlContext,
  crawlId: string,
  origin: string,
): Promise<boolean> {
  const rules = ctx.urlRules;
  if (rules === undefined) return false;
  const known = ctx.ruleSync.get(origin) ?? unsynced(env.now);
  // The memory is scanned for held forms only when a rule or a held page moved since last time.
  const heldRevision = rules.heldRevision(origin);
  if (rules.hostRevision(origin) === known.revision && heldRevision === known.heldRevision) return false;
  let held = sharedHeld(ctx, origin);
  if (rules.hostRevision(origin) === known.revision && held.every(([url]) => known.held.has(url))) {
    ctx.ruleSync.set(origin, { ...known, heldRevision });
    return false;
  }
  let version = known.version;
  let shape = known.shape;
  try {
    for (let attempt = 0; attempt < WRITE_TRIES; attempt++) {
      const records = rules.hostRecords(origin) ?? [];
      const written = await env.table.putHostRules(crawlId, origin, records, version, held);
      if (written.written) {
        const writtenShape = rulesShape(records);
        ctx.ruleSync.set(origin, {
          version: written.version,
          readAt: known.readAt,
          revision: rules.hostRevision(origin),
          held: new Set(held.map(([url]) => url)),
          heldRevision: rules.heldRevision(origin),
          shape: writtenShape,
          changedAt: writtenShape !== shape ? env.now : known.changedAt,
        });
        if (writtenShape !== shape) await announce(env, crawlId, origin, written.version);
        return true;
      }
      // Another container wrote first: take its rules in (blocked on either side stays blocked).
      rules.mergeHost(origin, written.stored.records);
      rules.importHeld(origin, written.stored.held ?? []);
      version = written.stored.version;
      shape = rulesShape(written.stored.records);
      held = sharedHeld(ctx, origin);
    }
    env.log(`duplicate-URL rules of ${origin} (${crawlId}) not written: ${WRITE_TRIES} conflicts`);
  } catch (error) {
    env.log(`duplicate-URL rules of ${origin} (${crawlId}) not written: ${judgeError(error).message}`);
  }
  ctx.ruleSync.set(origin, { ...known, version, shape });
  return false;
}

/** Announces an origin's rule change (logged, not thrown: news saves requests, it decides nothing). */
async function announce(env: RulesSyncEnv, crawlId: string, origin: string, version: number): Promise<void> {
  try {
    await env.table.announceHostRules(crawlId, origin, version);
  } catch (error) {
    env.log(`duplicate-URL rules news of ${origin} (${crawlId}) not written: ${judgeError(error).message}`);
  }
}
