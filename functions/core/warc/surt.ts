/**
 * SURT key of a URL as pywb and warcio index it: scheme dropped, lower-cased, a leading `www`/`wwwN`
 * label dropped, host labels reversed and joined with commas, the port kept when not the default,
 * then `)`, the path and the query with its `&`-separated arguments sorted; the fragment is dropped.
 * `https://www.Example.com:8080/a/B?z=1&a=2` -> `com,example:8080)/a/b?a=2&z=1`.
 * This is warcio's `getSurt` (so `warcio cdx-index` rebuilds the same index) except that the key is
 * lower-cased after parsing too, as python's surt does, for IRIs whose escapes come out upper case.
 * A string that is not an http(s) URL is returned unchanged, as warcio does.
 */
export function surt(url: string): string {
  if (!url.startsWith('http:') && !url.startsWith('https:')) return url;
  let parsed: URL;
  try {
    parsed = new URL(url.replace(/^(https?:\/\/)www\d*\./i, '$1').toLowerCase());
  } catch {
    return url;
  }
  let key = parsed.hostname.split('.').reverse().join(',');
  if (parsed.port) key += `:${parsed.port}`;
  key += `)${parsed.pathname}`;
  if (parsed.search) key += `?${parsed.search.slice(1).split('&').sort().join('&')}`;
  // Parsing percent-encodes non-ASCII in upper case; python's surt (pywb) lower-cases the whole key.
  return key.toLowerCase();
}
