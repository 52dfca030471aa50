/**
 * URL canonicalization for the URL-seen test: one spelling per page, so that a page reached by
 * many spellings of its URL is fetched and stored once. The canonical URL is also the URL that is
 * fetched, so every rule keeps it naming the same resource on any server that follows RFC 3986,
 * except the rules the crawl configures on purpose (stripped parameters, query sorting) and the
 * path-slash collapse (see docs/canonicalization.md for the reasons and the trade-off).
 *
 * WHATWG parsing (`URL.parse`) does most of the work: IDNA, IPv4 forms, default ports, dot
 * segments (also `%2e`), backslashes, tabs and newlines. This file adds what WHATWG leaves alone.
 */

import { hexValue } from './hex-digit.ts';

/** Settings of a {@link UrlCanonicalizer}; the crawl configuration has the same names. */
export interface CanonicalizeOptions {
  /**
   * Query parameter names removed, compared case-insensitively; a trailing `*` makes a prefix
   * (`utm_*`). Also removes `;name=value` path parameters with these names (`;jsessionid=`).
   * See `DEFAULT_STRIP_PARAMS` in functions/core/config.ts.
   */
  stripParams: readonly string[];
  /** Sort the query's `&`-separated parts bytewise (stable). */
  sortQuery: boolean;
  /** Keep the fragment (default false: a fragment never reaches the server). */
  keepFragment?: boolean;
}

/**
 * Outcome of {@link UrlCanonicalizer.canonicalize}: the canonical URL with its politeness key
 * (`host`, lowercase host name without port) and robots.txt key (`origin`), or why it was rejected.
 */
export type CanonicalResult =
  | { ok: true; url: string; host: string; origin: string }
  | { ok: false; reason: 'invalid' | 'unsupported-scheme'; message: string };

// Percent-encoded bytes that RFC 3986 (2.3) lets us decode anywhere: A-Z a-z 0-9 - . _ ~
const UNRESERVED = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9\-._~]/.test(ch)) UNRESERVED[c] = 1;
}
const HEX_UPPER = '0123456789ABCDEF';

/**
 * Decodes escapes of unreserved characters, upper-cases the hex of the others and escapes a `%`
 * that starts no valid escape (`%zz` -> `%25zz`). Decoding happens once: `%2561` stays, since it
 * names the literal text `%61` on the server.
 */
function normalizePercent(s: string): string {
  let i = s.indexOf('%');
  if (i < 0) return s;
  let out = '';
  let from = 0;
  const n = s.length;
  while (i >= 0) {
    const hi = i + 2 < n ? hexValue(s.charCodeAt(i + 1)) : -1;
    const lo = hi >= 0 ? hexValue(s.charCodeAt(i + 2)) : -1;
    if (lo < 0) {
      out += `${s.slice(from, i)}%25`;
      from = i + 1;
    } else {
      const value = hi * 16 + lo;
      if (value < 128 && UNRESERVED[value] === 1) {
        out += s.slice(from, i) + String.fromCharCode(value);
        from = i + 3;
      } else if (s.charCodeAt(i + 1) >= 97 || s.charCodeAt(i + 2) >= 97) {
        out += `${s.slice(from, i)}%${HEX_UPPER[hi]}${HEX_UPPER[lo]}`;
        from = i + 3;
      }
      // else already canonical: leave it in the pending slice
      i += 2;
    }
    i = s.indexOf('%', i + 1);
  }
  return from === 0 ? s : out + s.slice(from);
}

const SLASH_RUN = /\/{2,}/g;
const DOT_RUN = /\.{2,}/g;

/**
 * Scheme at the start of a reference, lowercased; `''` when it surely has none; undefined when
 * a fast scan cannot tell (leading spaces or controls, tabs or newlines, which WHATWG removes
 * before it looks for the scheme).
 */
function leadingScheme(s: string): string | undefined {
  const first = s.charCodeAt(0);
  if (!((first >= 97 && first <= 122) || (first >= 65 && first <= 90))) {
    return first > 32 || Number.isNaN(first) ? '' : undefined;
  }
  const n = s.length;
  for (let i = 1; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 58) return s.slice(0, i).toLowerCase();
    const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
    const digit = c >= 48 && c <= 57;
    if (!(letter || digit || c === 43 || c === 45 || c === 46)) {
      return c === 9 || c === 10 || c === 13 ? undefined : '';
    }
  }
  return '';
}

/** True when the string holds a tab, CR or LF (WHATWG deletes them anywhere in a URL). */
function hasTabOrNewline(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 9 || c === 10 || c === 13) return true;
  }
  return false;
}

/** Scheme of a string the fast scan could not read: WHATWG trims C0/space and drops tab/CR/LF first. */
function slowScheme(s: string): string | undefined {
  const m = /^[\x00-\x20]*([A-Za-z][A-Za-z0-9+\-.\t\n\r]*):/.exec(s);
  return m ? m[1]!.replace(/[\t\n\r]/g, '').toLowerCase() : undefined;
}

const INVALID_MESSAGE_MAX = 200;

function invalid(href: string, why: string): CanonicalResult {
  const shown = href.length > INVALID_MESSAGE_MAX ? `${href.slice(0, INVALID_MESSAGE_MAX)}...` : href;
  return { ok: false, reason: 'invalid', message: `${JSON.stringify(shown)}: ${why}` };
}

function unsupported(scheme: string): CanonicalResult {
  return {
    ok: false,
    reason: 'unsupported-scheme',
    message: `${scheme}: URLs are not crawled (only http and https)`,
  };
}

/** Entries of UrlCanonicalizer's result cache before it starts over (a few hundred KB). */
const KNOWN_MAX = 2048;
/**
 * Longer URLs are not remembered: the cache is for navigation links a site repeats, and a page of
 * 100 KB URLs (a long `<base href>`) would pin 200 MB here; V8 also hashes strings over 16,383
 * characters by their length alone, so such keys make every look-up compare whole strings.
 */
const KNOWN_URL_MAX = 4096;

/** The parts of a parsed http(s) base that relative links are resolved against, cached per base. */
interface BaseParts {
  key: string;
  url: URL | undefined;
  /** `scheme://host[:port]` (no userinfo: it is dropped anyway), when the base is http(s). */
  origin: string | undefined;
  /** `origin` + the base path up to and including its last `/`. */
  directory: string | undefined;
}

/**
 * Canonicalizes links for one crawl. Construct once from the crawl's settings; `canonicalize`
 * is on the hot path (every extracted link) and allocates little when a URL is already canonical.
 */
/**
 * True for a host's root page (path `/`, no query) in canonical form, which always has a path and
 * no fragment: the first `/` after the authority is the last character. A string scan, not a
 * parse: it runs for every link to a known URL.
 */
export function isRootUrl(canonicalUrl: string): boolean {
  const authority = canonicalUrl.indexOf('//');
  return authority >= 0 && canonicalUrl.indexOf('/', authority + 2) === canonicalUrl.length - 1;
}

export class UrlCanonicalizer {
  /** Matches a `key=value` part (or bare `key`) whose key is stripped; undefined when none is. */
  readonly #stripped: RegExp | undefined;
  /** Scratch list for the parts of one query (reused: canonicalize is not re-entrant). */
  readonly #parts: string[] = [];
  readonly #sortQuery: boolean;
  readonly #keepFragment: boolean;
  #base: BaseParts = { key: '', url: undefined, origin: undefined, directory: undefined };
  /**
   * Results by the absolute URL a relative link spells out: pages of a site repeat the same
   * navigation links, which then skip URL parsing and the rules below. Bounded; results are
   * never modified by callers.
   */
  readonly #known = new Map<string, CanonicalResult>();

  constructor(options: CanonicalizeOptions) {
    this.#stripped = strippedPattern(options.stripParams);
    this.#sortQuery = options.sortQuery;
    this.#keepFragment = options.keepFragment ?? false;
  }

  /**
   * Canonicalizes `href`, resolved against `base` when it is relative. Without a base, a string
   * with no scheme is read as `http://` + string (as a browser's address bar does).
   */
  canonicalize(href: string, base?: string | URL): CanonicalResult {
    const scheme = leadingScheme(href);
    if (scheme !== undefined && scheme !== '' && scheme !== 'http' && scheme !== 'https') {
      return unsupported(scheme);
    }
    let url: URL | null;
    if (base === undefined) {
      url = URL.parse(href);
      if (url === null) {
        const slow = scheme === undefined ? slowScheme(href) : scheme === '' ? undefined : scheme;
        if (slow !== undefined) {
          if (slow !== 'http' && slow !== 'https') return unsupported(slow);
        } else {
          url = URL.parse(`http://${href.replace(/^[\x00-\x20]+/, '')}`);
        }
      }
    } else if (scheme === '') {
      const absolute = this.#absolute(href, base);
      if (absolute === undefined) {
        url = this.#resolve(href, base);
      } else {
        // Without kept fragments, `page.html#a` and `page.html#b` are one entry (doc sites link
        // hundreds of anchors per page: one entry each churned the cache, +30 MB on the Python docs).
        const hash = this.#keepFragment ? -1 : absolute.indexOf('#');
        const key = hash < 0 ? absolute : absolute.slice(0, hash);
        const known = this.#known.get(key);
        if (known !== undefined) return known;
        url = URL.parse(absolute);
        if (url !== null) return this.#remember(key, this.#finish(href, url));
      }
    } else if (scheme !== undefined && href.startsWith('//', scheme.length + 1)) {
      // `http://...` never looks at the base (`http:foo` and `http:/foo` do)
      url = URL.parse(href);
    } else {
      const parts = this.#baseParts(base);
      url = parts.url === undefined ? URL.parse(href) : URL.parse(href, parts.url.href);
    }
    if (url === null) {
      const slow = scheme === undefined ? slowScheme(href) : undefined;
      if (slow !== undefined && slow !== 'http' && slow !== 'https') return unsupported(slow);
      return invalid(href, 'not a valid URL');
    }
    return this.#finish(href, url);
  }

  /**
   * The absolute URL a path-relative or root-relative reference spells out from an http(s) base,
   * or undefined for the other references (resolved by #resolve).
   */
  #absolute(href: string, base: string | URL): string | undefined {
    const parts = this.#baseParts(base);
    if (parts.origin !== undefined && href.length > 0 && !hasTabOrNewline(href)) {
      const c0 = href.charCodeAt(0);
      // WHATWG resolves these exactly like the absolute URL spelled out from the base's origin and
      // directory (the base path is already normalized, so re-reading it changes nothing).
      if (c0 === 47) {
        const c1 = href.charCodeAt(1);
        if (c1 !== 47 && c1 !== 92) return parts.origin + href;
      } else if (c0 > 32 && c0 !== 92 && c0 !== 63 && c0 !== 35 && parts.directory !== undefined) {
        // a scheme was ruled out by the caller, so this is a path-relative reference
        return parts.directory + href;
      }
    }
    return undefined;
  }

  /** Resolves a relative reference against the whole base. */
  #resolve(href: string, base: string | URL): URL | null {
    const parts = this.#baseParts(base);
    return parts.url === undefined ? null : URL.parse(href, parts.url.href);
  }

  #remember(absolute: string, result: CanonicalResult): CanonicalResult {
    if (result.ok && absolute.length <= KNOWN_URL_MAX) {
      if (this.#known.size >= KNOWN_MAX) this.#known.clear();
      // Not the key itself: it holds the href, a slice of its page's HTML, which would keep the
      // whole page in memory as long as the entry lives. The canonical URL (a string of the URL
      // parser's) is the same text for links already canonical; the others are copied.
      const key = result.url === absolute ? result.url : (JSON.parse(JSON.stringify(absolute)) as string);
      this.#known.set(key, result);
    }
    return result;
  }

  #baseParts(base: string | URL): BaseParts {
    const key = typeof base === 'string' ? base : base.href;
    if (key === this.#base.key && this.#base.url !== undefined) return this.#base;
    const url = typeof base === 'string' ? (URL.parse(base) ?? undefined) : base;
    let origin: string | undefined;
    let directory: string | undefined;
    if (url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:')) {
      origin = `${url.protocol}//${url.host}`;
      const path = url.pathname;
      directory = origin + path.slice(0, path.lastIndexOf('/') + 1);
    }
    this.#base = { key, url, origin, directory };
    return this.#base;
  }

  /** Applies the rules WHATWG parsing leaves out to an already parsed URL. */
  #finish(input: string, url: URL): CanonicalResult {
    const href = url.href;
    let schemeEnd: number;
    if (href.startsWith('http:')) schemeEnd = 5;
    else if (href.startsWith('https:')) schemeEnd = 6;
    else return unsupported(url.protocol.slice(0, -1));

    const authorityStart = schemeEnd + 2;
    // special URLs always serialize a path starting with '/', and '/' cannot occur in the host
    // or in userinfo (WHATWG escapes it there)
    const pathStart = href.indexOf('/', authorityStart);
    const hashAt = href.indexOf('#', pathStart);
    const end = hashAt < 0 ? href.length : hashAt;
    let queryAt = href.indexOf('?', pathStart);
    if (queryAt > end) queryAt = -1;

    let changed = hashAt >= 0;
    let host = url.hostname;
    let origin: string;
    // '@' inside userinfo is escaped, so the last one before the path ends the userinfo
    const at = href.lastIndexOf('@', pathStart);
    const hasUserinfo = at >= authorityStart;
    if (host.charCodeAt(0) === 46 || host.charCodeAt(host.length - 1) === 46 || host.includes('..')) {
      host = host.replace(DOT_RUN, '.');
      let from = 0;
      let to = host.length;
      while (from < to && host.charCodeAt(from) === 46) from++;
      while (to > from && host.charCodeAt(to - 1) === 46) to--;
      host = host.slice(from, to);
      if (host === '') return invalid(input, 'the host has no name once its dots are removed');
      const port = url.port;
      origin = `${href.slice(0, authorityStart)}${host}${port === '' ? '' : `:${port}`}`;
      changed = true;
    } else if (hasUserinfo) {
      origin = href.slice(0, authorityStart) + href.slice(at + 1, pathStart);
      changed = true;
    } else {
      origin = href.slice(0, pathStart);
    }

    const rawPath = href.slice(pathStart, queryAt < 0 ? end : queryAt);
    const path = this.#path(rawPath);
    if (path !== rawPath) changed = true;

    let query = '';
    if (queryAt >= 0) {
      const rawQuery = href.slice(queryAt + 1, end);
      const q = this.#query(rawQuery);
      query = q === undefined ? '' : `?${q}`;
      if (q !== rawQuery) changed = true;
    }

    let fragment = '';
    if (hashAt >= 0 && this.#keepFragment) {
      // '#' inside a fragment is not valid RFC 3986; WHATWG leaves it raw
      fragment = `#${normalizePercent(href.slice(hashAt + 1)).replaceAll('#', '%23')}`;
    }

    const canonical = changed ? origin + path + query + fragment : href;
    return { ok: true, url: canonical, host, origin };
  }

  #path(path: string): string {
    let p = path;
    if (p.includes('//')) p = p.replace(SLASH_RUN, '/');
    p = normalizePercent(p);
    if (this.#stripped !== undefined && p.includes(';')) p = this.#stripPathParams(p);
    return p;
  }

  /** Removes `;name=value` path parameters (Java's `;jsessionid=`) whose name is stripped. */
  #stripPathParams(path: string): string {
    const segments = path.split('/');
    let changed = false;
    for (let s = 0; s < segments.length; s++) {
      const segment = segments[s]!;
      const semi = segment.indexOf(';');
      if (semi < 0) continue;
      const params = segment.slice(semi + 1).split(';');
      const kept = params.filter((param) => !this.#stripped!.test(param));
      if (kept.length !== params.length) {
        changed = true;
        segments[s] =
          kept.length === 0 ? segment.slice(0, semi) : `${segment.slice(0, semi)};${kept.join(';')}`;
      }
    }
    return changed ? segments.join('/') : path;
  }

  /** Canonical query without its `?`, or undefined when stripping left nothing. */
  #query(raw: string): string | undefined {
    const q = normalizePercent(raw);
    const stripped = this.#stripped;
    // split by hand into a reused list: split/filter/sort/join allocate and cost ~4x more here
    const parts = this.#parts;
    let n = 0;
    let removed = false;
    let from = 0;
    for (;;) {
      const amp = q.indexOf('&', from);
      const part = amp < 0 ? q.slice(from) : q.slice(from, amp);
      if (stripped !== undefined && part !== '' && stripped.test(part)) removed = true;
      else parts[n++] = part;
      if (amp < 0) break;
      from = amp + 1;
    }
    if (removed) {
      // once a parameter is gone, empty parts left around it carry nothing
      let kept = 0;
      for (let i = 0; i < n; i++) if (parts[i] !== '') parts[kept++] = parts[i]!;
      n = kept;
      if (n === 0) return undefined;
    }
    let moved = false;
    if (this.#sortQuery) {
      // stable insertion sort (queries are short); `>` compares UTF-16 code units, and the query
      // is ASCII here, so the order is bytewise
      for (let i = 1; i < n; i++) {
        const part = parts[i]!;
        let j = i - 1;
        while (j >= 0 && parts[j]! > part) {
          parts[j + 1] = parts[j]!;
          j--;
        }
        if (j !== i - 1) {
          parts[j + 1] = part;
          moved = true;
        }
      }
    }
    let out = q;
    if (removed || moved) {
      out = parts[0]!;
      for (let i = 1; i < n; i++) out += `&${parts[i]}`;
    }
    parts.length = 0;
    return out;
  }
}

/** One case-insensitive pattern for all stripped names: `name` exactly, `name*` as a prefix. */
function strippedPattern(names: readonly string[]): RegExp | undefined {
  if (names.length === 0) return undefined;
  const alternatives = names.map((name) => {
    const prefix = name.endsWith('*');
    const escaped = (prefix ? name.slice(0, -1) : name).replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
    return prefix ? `${escaped}[^=]*` : escaped;
  });
  return new RegExp(`^(?:${alternatives.join('|')})(?:=|$)`, 'i');
}
