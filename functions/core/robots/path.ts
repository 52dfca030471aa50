/**
 * The part of a URL that robots.txt rules are matched against: path, params and query, without
 * the fragment. Same extraction as Google's `GetPathParamsQuery`, so that a bare path, a full URL,
 * a scheme-less `host/path` and the empty string all behave as in Google's suite.
 */

const SLASH = 0x2f;

/**
 * Returns the path, params and query of `url` (always starting with `/`), dropping scheme,
 * authority and fragment. `''` and URLs with no path give `/`. Works on full URLs, on `//host/path`,
 * on `host/path` and on bare paths; the value is not percent-encoded or otherwise changed.
 */
export function pathParamsQuery(url: string): string {
  // Fast path: what the crawler passes most often after a first call is a bare path.
  if (url.charCodeAt(0) === SLASH && url.charCodeAt(1) !== SLASH) {
    const hash = url.indexOf('#');
    return hash < 0 ? url : url.slice(0, hash);
  }
  // Initial two slashes (a scheme-relative URL) are skipped; the authority follows them.
  const searchStart = url.startsWith('//') ? 2 : 0;
  const earlyPath = firstOf(url, searchStart);
  let protocolEnd = url.indexOf('://', searchStart);
  // A `://` inside the path or query (`/a?u=http://b`) does not end a scheme.
  if (protocolEnd < 0 || (earlyPath >= 0 && earlyPath < protocolEnd)) protocolEnd = searchStart;
  else protocolEnd += 3;

  const pathStart = firstOf(url, protocolEnd);
  if (pathStart < 0) return '/';
  const hash = url.indexOf('#', searchStart);
  if (hash >= 0 && hash < pathStart) return '/';
  const pathEnd = hash < 0 ? url.length : hash;
  const path = url.slice(pathStart, pathEnd);
  return url.charCodeAt(pathStart) === SLASH ? path : `/${path}`;
}

/** Index of the first `/`, `?` or `;` at or after `from`, or -1. */
function firstOf(url: string, from: number): number {
  for (let i = from; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === SLASH || c === 0x3f || c === 0x3b) return i;
  }
  return -1;
}
