/**
 * A frontier message is a CrawlTask as JSON, whose `cash` is the AOPIC key: the task's cash less
 * the crawl's redistribution bonus when it was sent (the worker adds the bonus of the moment it
 * fetches, so a task waiting in the queue gains what every known page gains). The FIFO message
 * group is the crawl and host (one
 * request in flight per host and crawl, from the queue itself); the deduplication id is the crawl
 * and URL fingerprint, plus the attempt number for deliberate re-sends, which would otherwise be
 * dropped as duplicates for five minutes.
 */
import { createHash } from 'node:crypto';
import type { SitemapFetch } from '../../core/sitemap/sitemap-plan.ts';
import type { CrawlTask } from '../../core/types.ts';

/** SQS limit on MessageGroupId and MessageDeduplicationId. */
const MAX_ID_LENGTH = 128;
const FINGERPRINT = /^[0-9a-f]{16}$/;

/** `<crawlId>#<host>`; hosts too long for SQS's 128 characters are replaced by their SHA-256. */
export function messageGroupId(task: Pick<CrawlTask, 'crawlId' | 'host'>): string {
  const id = `${task.crawlId}#${task.host}`;
  if (id.length <= MAX_ID_LENGTH) return id;
  return `${task.crawlId}#${createHash('sha256').update(task.host).digest('hex').slice(0, 64)}`;
}

/**
 * `<crawlId>#<fp>` for a first send, `<crawlId>#<fp>#a<attempt>` for a retry's re-send,
 * `#r<id>` appended for a task the worker re-sent in place of a message that waited too long, and
 * `#t<turn>` for the send that put it in its group (the same id when that send is redone).
 */
export function deduplicationId(
  task: Pick<CrawlTask, 'crawlId' | 'fp' | 'attempt' | 'resentFrom' | 'turn'>,
): string {
  const base =
    task.attempt > 0 ? `${task.crawlId}#${task.fp}#a${task.attempt}` : `${task.crawlId}#${task.fp}`;
  const resent = task.resentFrom === undefined ? base : `${base}#r${task.resentFrom}`;
  return task.turn === undefined ? resent : `${resent}#t${task.turn}`;
}

/** A short, stable name of a message, for {@link CrawlTask.resentFrom}. */
export function resendId(messageId: string): string {
  return createHash('sha256').update(messageId).digest('hex').slice(0, 16);
}

/** A message body parsed as a JSON object, or why it is not one. */
export function parseJsonObject(
  body: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, problem: 'body is not JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problem: 'body is not a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** The message body of a task. */
export function encodeTask(task: CrawlTask): string {
  return JSON.stringify(task);
}

/** A body that is a task, or why it is not. */
export type DecodedTask = { ok: true; task: CrawlTask } | { ok: false; problem: string };

/**
 * Parses and checks a message body. Only the shape is checked (types, fingerprint format); whether
 * the crawl exists is the worker's business.
 */
export function decodeTask(body: string): DecodedTask {
  const parsed = parseJsonObject(body);
  if (!parsed.ok) return parsed;
  const t = parsed.value;
  const problems: string[] = [];
  for (const key of ['crawlId', 'url', 'host'] as const) {
    if (typeof t[key] !== 'string' || t[key] === '') problems.push(`${key} must be a non-empty string`);
  }
  if (typeof t.fp !== 'string' || !FINGERPRINT.test(t.fp)) problems.push('fp must be 16 hex digits');
  for (const key of ['depth', 'redirects', 'attempt'] as const) {
    if (!Number.isInteger(t[key]) || (t[key] as number) < 0) problems.push(`${key} must be an integer >= 0`);
  }
  if (typeof t.cash !== 'number' || !Number.isFinite(t.cash)) problems.push('cash must be a number');
  if (t.parent !== undefined && (typeof t.parent !== 'string' || !FINGERPRINT.test(t.parent))) {
    problems.push('parent must be 16 hex digits');
  }
  if (
    t.parentSimhash !== undefined &&
    (typeof t.parentSimhash !== 'string' || !FINGERPRINT.test(t.parentSimhash))
  ) {
    problems.push('parentSimhash must be 16 hex digits');
  }
  const sitemap = t.sitemap === undefined ? undefined : sitemapFetchOf(t.sitemap);
  if (typeof sitemap === 'string') problems.push(sitemap);
  if (t.lastmod !== undefined && (typeof t.lastmod !== 'string' || t.lastmod.length > 64)) {
    problems.push('lastmod must be a string of at most 64 characters');
  }
  if (problems.length > 0) return { ok: false, problem: problems.join('; ') };
  const task: CrawlTask = {
    crawlId: t.crawlId as string,
    url: t.url as string,
    fp: t.fp as string,
    host: t.host as string,
    depth: t.depth as number,
    redirects: t.redirects as number,
    attempt: t.attempt as number,
    cash: t.cash as number,
  };
  if (typeof t.parent === 'string') task.parent = t.parent;
  if (typeof t.parentSimhash === 'string') task.parentSimhash = t.parentSimhash;
  if (t.generated === true) task.generated = true;
  if (typeof t.resentFrom === 'string' && FINGERPRINT.test(t.resentFrom)) task.resentFrom = t.resentFrom;
  if (typeof t.turn === 'string' && FINGERPRINT.test(t.turn)) task.turn = t.turn;
  if (sitemap !== undefined && typeof sitemap !== 'string') task.sitemap = sitemap;
  if (typeof t.lastmod === 'string') task.lastmod = t.lastmod;
  if (t.listed === true) task.listed = true;
  return { ok: true, task };
}

const SITEMAP_SOURCES: readonly SitemapFetch['from'][] = ['robots', 'default', 'index'];

/** A sitemap task's file (its scope and budget, see sitemap-plan.ts), or what is wrong with it. */
function sitemapFetchOf(value: unknown): SitemapFetch | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'sitemap must be an object';
  const v = value as Record<string, unknown>;
  const count = (key: string, min: number) => Number.isInteger(v[key]) && (v[key] as number) >= min;
  if (
    typeof v.url !== 'string' ||
    typeof v.scope !== 'string' ||
    typeof v.granted !== 'boolean' ||
    !count('level', 0) ||
    !count('files', 1) ||
    !count('entries', 0) ||
    !SITEMAP_SOURCES.includes(v.from as SitemapFetch['from'])
  ) {
    return 'sitemap must have url, scope, granted, level, from, files and entries';
  }
  return {
    url: v.url,
    scope: v.scope,
    granted: v.granted,
    level: v.level as number,
    from: v.from as SitemapFetch['from'],
    files: v.files as number,
    entries: v.entries as number,
  };
}
