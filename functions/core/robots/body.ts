/**
 * Getting a robots.txt body ready to parse: decoding bytes, the byte limit of RFC 9309 §2.5, and
 * dropping a line the limit (or the fetcher's cap) cut in two.
 */

const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** RFC 9309 §2.5: the parsing limit MUST be at least 500 KiB. */
export const MIN_ROBOTS_BYTES = 512_000;
/** Bytes parsed when no limit is given (512 KiB, the config default `maxRobotsBytes`). */
export const DEFAULT_ROBOTS_BYTES = 512 * 1024;

/**
 * Decodes a robots.txt body as UTF-8 (RFC 9309 §2.3), invalid bytes becoming U+FFFD. A UTF-8 BOM,
 * or any leading part of one (`EF`, `EF BB`), is skipped first, as Google's parser does: a cut-off
 * BOM would otherwise turn the first line into garbage.
 */
export function decodeRobotsBody(bytes: Uint8Array): string {
  let skip = 0;
  while (skip < BOM.length && skip < bytes.length && bytes[skip] === BOM[skip]) skip++;
  return decoder.decode(skip === 0 ? bytes : bytes.subarray(skip));
}

/**
 * Drops the last line when it has no line end: what a byte cap leaves behind is a rule cut short
 * (`Allow: /foo/bar` becoming `Allow: /f` would allow far more than the file says), so the rule is
 * ignored rather than honoured half. Returns `body` itself when it ends with CR or LF.
 */
export function completeLines(body: string): string {
  let i = body.length - 1;
  while (i >= 0) {
    const c = body.charCodeAt(i);
    if (c === LF || c === CR) break;
    i--;
  }
  return i === body.length - 1 ? body : body.slice(0, i + 1);
}

/** What `limitRobotsBody` kept. */
export interface LimitedBody {
  text: string;
  /** `true` when content past the limit was dropped. */
  cut: boolean;
}

/**
 * Keeps the lines that lie entirely within the first `maxBytes` UTF-8 bytes of `body` (RFC 9309
 * §2.5: a rule inside the limit is honoured, what lies past it may be ignored). `maxBytes` below
 * 512,000 is raised to it. Costs nothing for bodies that cannot exceed the limit.
 */
export function limitRobotsBody(body: string, maxBytes: number = DEFAULT_ROBOTS_BYTES): LimitedBody {
  const limit = Math.max(MIN_ROBOTS_BYTES, maxBytes);
  // A UTF-16 code unit is at most 3 UTF-8 bytes (a surrogate pair, two units, is 4).
  if (body.length * 3 <= limit) return { text: body, cut: false };
  let bytes = 0;
  let i = 0;
  for (; i < body.length; i++) {
    const c = body.charCodeAt(i);
    let n = 3;
    if (c < 0x80) n = 1;
    else if (c < 0x800) n = 2;
    else if (c >= 0xd800 && c < 0xdc00 && isLowSurrogate(body.charCodeAt(i + 1))) n = 4;
    if (bytes + n > limit) break;
    bytes += n;
    if (n === 4) i++;
  }
  if (i >= body.length) return { text: body, cut: false };
  // The line in progress at the cut is complete only if a line end follows right there.
  const next = body.charCodeAt(i);
  const text = next === LF || next === CR ? body.slice(0, i) : completeLines(body.slice(0, i));
  return { text, cut: true };
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c < 0xe000;
}
