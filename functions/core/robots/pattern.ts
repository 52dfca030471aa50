/**
 * robots.txt path patterns: normalisation of the written value, and a matcher for `*` and a final
 * `$` that never backtracks.
 *
 * Percent-encoding follows RFC 9309 §2.2.2 rather than Google's literal comparison: a
 * percent-encoded unreserved character (`%62` = `b`) is decoded in both pattern and path, so
 * `Allow: /foo/bar/%62%61%7A` matches `/foo/bar/baz`. Google keeps the escapes and would not match;
 * its suite's `ID_Encoding` expects that and is the one record we knowingly fail.
 */

import { hexValue } from '../url/hex-digit.ts';

const PERCENT = 0x25;
const DOLLAR = 0x24;
const HEX = '0123456789ABCDEF';
const utf8 = new TextEncoder();

/**
 * Normalises an Allow/Disallow value for comparison: characters outside US-ASCII become their
 * UTF-8 bytes percent-encoded (`á` -> `%C3%A1`, Google's `MaybeEscapePattern`), existing escapes are
 * upper-cased (`%aa` -> `%AA`), and escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`) are
 * decoded (RFC 9309 §2.2.2). `*` and `$` are kept as written.
 */
export function normalizePattern(value: string): string {
  let out = '';
  let copiedTo = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === PERCENT) {
      const replacement = normalizeEscape(value, i);
      if (replacement === undefined) continue;
      out += value.slice(copiedTo, i) + replacement;
      i += 2;
      copiedTo = i + 1;
    } else if (c >= 0x80) {
      // Encode the whole run of non-ASCII at once so surrogate pairs stay together.
      let end = i + 1;
      while (end < value.length && value.charCodeAt(end) >= 0x80) end++;
      out += value.slice(copiedTo, i);
      for (const byte of utf8.encode(value.slice(i, end))) out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
      i = end - 1;
      copiedTo = end;
    }
  }
  return copiedTo === 0 ? value : out + value.slice(copiedTo);
}

/**
 * Normalises the percent-escapes of a URL path the way `normalizePattern` does (unreserved decoded,
 * the rest upper-cased). Other characters are left alone: the crawler passes canonical URLs whose
 * non-ASCII is already encoded. Returns `path` itself when it has no `%`, which is the common case.
 */
export function normalizePathEscapes(path: string): string {
  let i = path.indexOf('%');
  if (i < 0) return path;
  let out = '';
  let copiedTo = 0;
  for (; i >= 0; i = path.indexOf('%', i + 1)) {
    const replacement = normalizeEscape(path, i);
    if (replacement === undefined) continue;
    out += path.slice(copiedTo, i) + replacement;
    i += 2;
    copiedTo = i + 1;
  }
  return copiedTo === 0 ? path : out + path.slice(copiedTo);
}

/**
 * For a `%` at `i` followed by two hex digits: the decoded character if unreserved, else the
 * escape upper-cased. `undefined` when there is nothing to change (or it is not an escape).
 */
function normalizeEscape(text: string, i: number): string | undefined {
  const hi = hexValue(text.charCodeAt(i + 1));
  const lo = hexValue(text.charCodeAt(i + 2));
  if (hi < 0 || lo < 0) return undefined;
  const code = hi * 16 + lo;
  if (isUnreserved(code)) return String.fromCharCode(code);
  // Already upper-case (or digits): leave it, and allocate nothing.
  if (text.charCodeAt(i + 1) < 0x61 && text.charCodeAt(i + 2) < 0x61) return undefined;
  return `%${HEX[hi]}${HEX[lo]}`;
}

function isUnreserved(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e
  );
}

/**
 * A compiled path pattern. Matching is a prefix match (`/fish` matches `/fish.html`); `*` matches
 * any run of characters; a `$` at the very end anchors at the end of the path; a `$` elsewhere is
 * literal, as in Google's matcher.
 */
export interface PathPattern {
  /** The normalised pattern as written (with `*` and `$`). */
  readonly source: string;
  /** `true` when `path` (already normalised) is matched by the pattern. */
  matches(path: string): boolean;
}

/**
 * Compiles a normalised pattern. Patterns with `*` match by greedy leftmost search of the literal
 * pieces between stars: with no other metacharacter this is exact, and it costs at most one
 * `indexOf` per piece, so `/*a*a*a*a*b` over a long path cannot blow up as a backtracking regex can.
 */
export function compilePattern(source: string): PathPattern {
  const anchored = source.length > 0 && source.charCodeAt(source.length - 1) === DOLLAR;
  const body = anchored ? source.slice(0, -1) : source;
  if (body.indexOf('*') < 0) {
    return anchored
      ? { source, matches: (path) => path === body }
      : { source, matches: (path) => path.startsWith(body) };
  }
  // Collapse runs of stars; they mean the same as one.
  const pieces = body.split('*');
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, anchored ? -1 : undefined).filter((p) => p.length > 0);
  return {
    source,
    matches(path) {
      if (!path.startsWith(first)) return false;
      let pos = first.length;
      for (const piece of middle) {
        const at = path.indexOf(piece, pos);
        if (at < 0) return false;
        pos = at + piece.length;
      }
      // Anchored: the last piece must end the path and not overlap what the earlier pieces used.
      return !anchored || (path.length - last.length >= pos && path.endsWith(last));
    },
  };
}
