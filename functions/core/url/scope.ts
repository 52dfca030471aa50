import { getDomain } from 'tldts';
import type { SkipReason } from '../types.ts';

/** Scope and URL-trap settings; the crawl configuration has the same names. */
export interface ScopeOptions {
  /** host: the seeds' host names; domain: their registrable domains; any: everything. */
  scope: 'host' | 'domain' | 'any';
  /** Regular expressions (validated by parseCrawlConfig); when any is given, a URL must match one. */
  include: readonly string[];
  /** Regular expressions; a URL matching any of them is skipped. */
  exclude: readonly string[];
  /** Seeds are depth 0; deeper URLs are skipped. */
  maxDepth: number;
  /** Canonical URLs longer than this many characters are skipped. */
  maxUrlLength: number;
  /** A path in which one non-empty segment occurs more than this many times is a trap. */
  maxSegmentRepeats: number;
}

// Private suffixes count (github.io, blogspot.com, s3.amazonaws.com): `alice.github.io` is one
// site, and a crawl of it must not wander into every other github.io site.
const DOMAIN_OPTIONS = {
  allowPrivateDomains: true,
  extractHostname: false,
  detectIp: true,
  validateHostname: false,
} as const;

/** Bound on the per-host decision cache: a broad crawl meets far more hosts than it keeps. */
const HOST_CACHE_LIMIT = 4096;

/** Above this many segments, counting with a Map beats comparing every pair. */
const SEGMENT_PAIRS_MAX = 24;

/** True when `length` characters of `s` from `a` equal those from `b`. */
function sameChars(s: string, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) {
    if (s.charCodeAt(a + k) !== s.charCodeAt(b + k)) return false;
  }
  return true;
}

/** True when one of the n slices occurs more than limit times (the Map way, for long paths). */
function hasRepeatedSlice(s: string, starts: number[], ends: number[], n: number, limit: number): boolean {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const slice = s.slice(starts[i], ends[i]);
    const count = (counts.get(slice) ?? 0) + 1;
    if (count > limit) return true;
    counts.set(slice, count);
  }
  return false;
}

/**
 * The registrable domain of a host by the public suffix list; an IP address, a single-label host
 * (`localhost`) or a bare public suffix is its own domain.
 */
export function registrableDomain(host: string): string {
  return getDomain(host, DOMAIN_OPTIONS) ?? host;
}

/**
 * Decides whether a canonical URL may be queued: scope, include/exclude patterns, depth, and the
 * trap rules (URL length, repeated path segments). Built once per crawl; `check` runs on every
 * extracted link.
 */
export class ScopeRules {
  readonly #scope: ScopeOptions['scope'];
  readonly #include: RegExp[];
  readonly #exclude: RegExp[];
  readonly #maxDepth: number;
  readonly #maxUrlLength: number;
  readonly #maxSegmentRepeats: number;
  readonly #hosts = new Set<string>();
  readonly #domains = new Set<string>();
  readonly #decisions = new Map<string, boolean>();
  /** Scratch offsets of the path segments of the URL being checked. */
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];

  /**
   * @param seeds canonical seed URLs; with scope 'host' or 'domain' they define the allowed set.
   */
  constructor(options: ScopeOptions, seeds: readonly string[]) {
    this.#scope = options.scope;
    this.#include = options.include.map((pattern) => new RegExp(pattern));
    this.#exclude = options.exclude.map((pattern) => new RegExp(pattern));
    this.#maxDepth = options.maxDepth;
    this.#maxUrlLength = options.maxUrlLength;
    this.#maxSegmentRepeats = options.maxSegmentRepeats;
    for (const seed of seeds) {
      const url = URL.parse(seed);
      if (url !== null) this.allowHost(url.hostname);
    }
  }

  /**
   * Returns undefined when the URL may be queued, else the first reason it may not, in this
   * order: 'url-length', 'repeated-segments', 'scope', 'exclude', 'include', 'max-depth'.
   * @param canonicalUrl output of `UrlCanonicalizer.canonicalize`
   * @param host its `host` (lowercase host name without port)
   * @param depth link distance from a seed (seeds are 0)
   * @param anyHost skip the scope test (a sitemap host the user named: `sitemapHosts`)
   */
  check(canonicalUrl: string, host: string, depth: number, anyHost = false): SkipReason | undefined {
    if (canonicalUrl.length > this.#maxUrlLength) return 'url-length';
    if (this.#hasRepeatedSegment(canonicalUrl)) return 'repeated-segments';
    if (!anyHost && !this.#inScope(host)) return 'scope';
    for (const pattern of this.#exclude) {
      if (pattern.test(canonicalUrl)) return 'exclude';
    }
    if (this.#include.length > 0 && !this.#include.some((pattern) => pattern.test(canonicalUrl))) {
      return 'include';
    }
    if (depth > this.#maxDepth) return 'max-depth';
    return undefined;
  }

  /**
   * Adds a host to the allowed set: with scope 'host' the host itself, with 'domain' its
   * registrable domain. Used when a seed redirects to another site (`example.com` ->
   * `www.example.org`) so the crawl follows the site where it moved.
   */
  allowHost(host: string): void {
    const lower = host.toLowerCase();
    this.#hosts.add(lower);
    this.#domains.add(registrableDomain(lower));
    // earlier "no" answers may now be "yes"
    this.#decisions.clear();
  }

  /** True when the crawl's scope (host, domain or any) takes this host, whatever its URLs' paths. */
  hostInScope(host: string): boolean {
    return this.#inScope(host.toLowerCase());
  }

  #inScope(host: string): boolean {
    if (this.#scope === 'any') return true;
    if (this.#scope === 'host') return this.#hosts.has(host);
    let allowed = this.#decisions.get(host);
    if (allowed === undefined) {
      allowed = this.#domains.has(registrableDomain(host));
      if (this.#decisions.size >= HOST_CACHE_LIMIT) this.#decisions.clear();
      this.#decisions.set(host, allowed);
    }
    return allowed;
  }

  /** True when one non-empty, non-numeric path segment occurs more than maxSegmentRepeats times. */
  #hasRepeatedSegment(url: string): boolean {
    const limit = this.#maxSegmentRepeats;
    const authority = url.indexOf('//');
    const pathStart = url.indexOf('/', authority < 0 ? 0 : authority + 2);
    if (pathStart < 0) return false;
    let pathEnd = url.length;
    const query = url.indexOf('?', pathStart);
    if (query >= 0) pathEnd = query;
    const hash = url.indexOf('#', pathStart);
    if (hash >= 0 && hash < pathEnd) pathEnd = hash;

    // offsets, not slices: most paths are too short to hold limit + 1 copies of anything
    const starts = this.#starts;
    const ends = this.#ends;
    let n = 0;
    let from = pathStart + 1;
    while (from <= pathEnd) {
      let to = url.indexOf('/', from);
      if (to < 0 || to > pathEnd) to = pathEnd;
      // Numbers repeat innocently (`/2024/01/01/`), so only segments with a non-digit count.
      if (to > from && !allDigits(url, from, to)) {
        starts[n] = from;
        ends[n] = to;
        n++;
      }
      from = to + 1;
    }
    if (n <= limit) return false;
    if (n > SEGMENT_PAIRS_MAX) return hasRepeatedSlice(url, starts, ends, n, limit);
    // few segments: compare pairs in place rather than allocate a Map of slices
    for (let i = 0; i + limit < n; i++) {
      const length = ends[i]! - starts[i]!;
      let count = 1;
      for (let j = i + 1; j < n; j++) {
        if (
          ends[j]! - starts[j]! === length &&
          sameChars(url, starts[i]!, starts[j]!, length) &&
          ++count > limit
        ) {
          return true;
        }
      }
    }
    return false;
  }
}

function allDigits(url: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = url.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
