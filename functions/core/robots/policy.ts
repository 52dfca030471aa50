/**
 * What a robots.txt fetch means for the crawl (RFC 9309 §2.3-2.4): where the file lives, how a
 * status or network failure turns into a cache entry, and how long that entry holds.
 */
import type { RobotsEntry } from '../ports.ts';
import { completeLines } from './body.ts';
import { type ParsedRobots, parseRobots, uniformRobots } from './parse.ts';

/** RFC 9309 §2.4: a fetched robots.txt SHOULD NOT be used for more than 24 hours. */
export const MAX_ROBOTS_TTL_MS = 86_400_000;

/** The URL given to `robotsUrlFor` is not an absolute URL with an authority. */
export class RobotsUrlError extends Error {
  readonly code = 'INVALID_URL';
  constructor(url: string, options?: { cause?: unknown }) {
    super(`no robots.txt location for "${url}": not an absolute URL with a host`, options);
    this.name = 'RobotsUrlError';
  }
}

/**
 * The robots.txt URL for any URL: `scheme://authority/robots.txt` (RFC 9309 §2.3). The port is
 * kept unless it is the scheme's default; user info, path, query and fragment are dropped.
 * @throws RobotsUrlError when `url` is not absolute or has no host.
 */
export function robotsUrlFor(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw new RobotsUrlError(url, { cause });
  }
  if (parsed.host === '') throw new RobotsUrlError(url);
  return `${parsed.protocol}//${parsed.host}/robots.txt`;
}

/** The outcome of fetching robots.txt, after the fetch loop followed up to 5 redirects. */
export type RobotsFetchOutcome =
  | {
      status: number;
      /** Decoded body (see `decodeRobotsBody`). */
      body: string;
      /** Set when the fetcher cut the body: at its byte cap, or by its total timeout while trickling. */
      truncated?: 'length' | 'time';
    }
  /** A `FetchErrorCode`, or `'too-many-redirects'` when a 6th redirect was met. */
  | { error: string };

/** Cache lifetimes: `robotsTtlMs` for a file or a 4xx, `robotsErrorTtlMs` before retrying after a failure. */
export interface RobotsTtl {
  robotsTtlMs: number;
  robotsErrorTtlMs: number;
}

/**
 * Turns a robots.txt fetch outcome into a cache entry (RFC 9309 §2.3.1, §2.4):
 *
 * | outcome | entry | expires after |
 * |---|---|---|
 * | 2xx | 'rules' with the body | robotsTtlMs |
 * | 2xx cut at the byte cap | 'rules', the cut-off last line dropped | robotsTtlMs |
 * | 3xx (a redirect the fetch loop did not follow, e.g. no Location) | 'allow-all' | robotsTtlMs |
 * | 4xx except 429 ("unavailable") | 'allow-all' | robotsTtlMs |
 * | 429, 5xx, any other status ("unreachable") | 'disallow-all' | robotsErrorTtlMs |
 * | network error or timeout, or a body cut by the total timeout | 'disallow-all' | robotsErrorTtlMs |
 * | more than 5 redirects (`'too-many-redirects'`) | 'allow-all' | robotsTtlMs |
 *
 * Every lifetime is capped at 24 hours. 429 counts as unreachable, as Google treats it: the server
 * asks us to slow down, which is no licence to crawl everything.
 */
export function robotsEntryFromResponse(
  outcome: RobotsFetchOutcome,
  now: number,
  ttl: RobotsTtl,
): RobotsEntry {
  const ok = now + Math.min(ttl.robotsTtlMs, MAX_ROBOTS_TTL_MS);
  const retry = now + Math.min(ttl.robotsErrorTtlMs, MAX_ROBOTS_TTL_MS);
  if ('error' in outcome) {
    // RFC 9309 §2.3.1.2: past 5 redirects the file MAY be treated as unavailable.
    if (outcome.error === 'too-many-redirects') {
      return { status: 'allow-all', detail: outcome.error, fetchedAt: now, expiresAt: ok };
    }
    return { status: 'disallow-all', detail: outcome.error, fetchedAt: now, expiresAt: retry };
  }
  const { status } = outcome;
  const detail = String(status);
  if (status >= 200 && status < 300) {
    if (outcome.truncated === 'time') {
      // A body that trickled past the total timeout: the server is struggling, and the rules we
      // did not receive may forbid what we would fetch.
      return { status: 'disallow-all', detail: `${detail} timeout-total`, fetchedAt: now, expiresAt: retry };
    }
    const body = outcome.truncated === 'length' ? completeLines(outcome.body) : outcome.body;
    return { status: 'rules', body, detail, fetchedAt: now, expiresAt: ok };
  }
  if (status >= 300 && status < 500 && status !== 429) {
    return { status: 'allow-all', detail, fetchedAt: now, expiresAt: ok };
  }
  return { status: 'disallow-all', detail, fetchedAt: now, expiresAt: retry };
}

const memo = new WeakMap<RobotsEntry, { agent: string; maxBytes: number | undefined; rules: ParsedRobots }>();
const ALLOW_ALL = uniformRobots(true);
const DISALLOW_ALL = uniformRobots(false);

/**
 * The rules a cached entry stands for: the parsed body for 'rules', everything allowed for
 * 'allow-all', everything but `/robots.txt` disallowed for 'disallow-all'. The parse is remembered
 * per entry object (and agent), so keep the entry (or the result) per origin rather than reading
 * a fresh copy from the cache for every URL.
 */
export function rulesFromEntry(entry: RobotsEntry, agent: string, maxBytes?: number): ParsedRobots {
  if (entry.status === 'allow-all') return ALLOW_ALL;
  if (entry.status === 'disallow-all') return DISALLOW_ALL;
  const cached = memo.get(entry);
  if (cached !== undefined && cached.agent === agent && cached.maxBytes === maxBytes) return cached.rules;
  const rules = parseRobots(entry.body ?? '', agent, maxBytes === undefined ? {} : { maxBytes });
  memo.set(entry, { agent, maxBytes, rules });
  return rules;
}
