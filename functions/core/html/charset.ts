import { isUtf8 } from 'node:buffer';
import { decoderFor } from './encoding.ts';
import { prescanCharset } from './meta-prescan.ts';

/** A response body decoded to text, with the encoding used and where it came from. */
export interface DecodedBody {
  text: string;
  /** WHATWG encoding name: `utf-8`, `windows-1252`, `shift_jis`, ... */
  charset: string;
  source: 'bom' | 'header' | 'meta' | 'default';
}

const UTF8 = decoderFor('utf-8')!;
const WINDOWS_1252 = decoderFor('windows-1252')!;

/**
 * Decodes bytes to text (HTML encoding sniffing, in order): a BOM (UTF-8, UTF-16LE/BE); the
 * Content-Type `charset` parameter; a `<meta charset>` / `<meta http-equiv=content-type>` prescan
 * of the first 1024 bytes. Unknown labels fall through to the next step. Unlabelled bodies decode
 * as UTF-8 when they are valid UTF-8 (an incomplete sequence cut off at the end, as a byte cap
 * leaves it, does not count) and as windows-1252 otherwise: nearly all of today's unlabelled pages
 * are UTF-8, and the ones that are not are almost always legacy Western pages, which is why
 * windows-1252 is the HTML default. Never throws; malformed bytes become U+FFFD.
 */
export function decodeBody(body: Uint8Array, contentType: string | null): DecodedBody {
  const bom = bomEncoding(body);
  if (bom !== null) {
    // A matching decoder strips the BOM itself.
    const decoder = decoderFor(bom)!;
    return { text: decoder.decode(body), charset: bom, source: 'bom' };
  }
  const label = contentType === null ? null : charsetParameter(contentType);
  if (label !== null) {
    const decoder = decoderFor(label);
    if (decoder !== null) return { text: decoder.decode(body), charset: decoder.encoding, source: 'header' };
  }
  const meta = prescanCharset(body);
  if (meta !== null) {
    const decoder = decoderFor(meta)!;
    return { text: decoder.decode(body), charset: decoder.encoding, source: 'meta' };
  }
  const text = UTF8.decode(body);
  // U+FFFD in the output is the only sign of invalid input; check the bytes only then.
  if (text.includes('\uFFFD') && !isUtf8(body.subarray(0, completeUtf8Length(body)))) {
    return { text: WINDOWS_1252.decode(body), charset: 'windows-1252', source: 'default' };
  }
  return { text, charset: 'utf-8', source: 'default' };
}

function bomEncoding(b: Uint8Array): string | null {
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return 'utf-8';
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  return null;
}

// Length of `b` without a UTF-8 sequence cut off at the end (at most 3 bytes are dropped).
function completeUtf8Length(b: Uint8Array): number {
  const n = b.length;
  for (let back = 1; back <= 4 && back <= n; back++) {
    const byte = b[n - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? n - back : n;
  }
  return n;
}

/** The `charset` parameter of a Content-Type value (quotes removed), or null. */
export function charsetParameter(contentType: string): string | null {
  const n = contentType.length;
  let p = contentType.indexOf(';');
  if (p === -1) return null;
  while (p < n) {
    p++; // past ';'
    while (p < n && isHttpSpace(contentType.charCodeAt(p))) p++;
    let nameEnd = p;
    while (nameEnd < n && contentType[nameEnd] !== '=' && contentType[nameEnd] !== ';') nameEnd++;
    const name = contentType.slice(p, nameEnd).trim().toLowerCase();
    p = nameEnd;
    if (p >= n || contentType[p] === ';') continue;
    p++; // past '='
    let value: string;
    if (contentType[p] === '"') {
      value = '';
      for (p++; p < n && contentType[p] !== '"'; p++) {
        if (contentType[p] === '\\' && p + 1 < n) p++;
        value += contentType[p];
      }
      while (p < n && contentType[p] !== ';') p++;
    } else {
      const end = contentType.indexOf(';', p);
      value = contentType.slice(p, end === -1 ? n : end).trim();
      p = end === -1 ? n : end;
      // Not in the MIME grammar, but servers send it: charset='utf-8'.
      if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) value = value.slice(1, -1);
    }
    if (name === 'charset' && value !== '') return value;
  }
  return null;
}

function isHttpSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** Media type (lowercase, no parameters) of a Content-Type header value, or null when absent or not `type/subtype`. */
export function mediaType(contentType: string | null): string | null {
  if (contentType === null) return null;
  const semi = contentType.indexOf(';');
  const essence = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return /^[^\s/]+\/[^\s/]+$/.test(essence) ? essence : null;
}

// MIME Sniffing's HTML patterns, each followed by a tag-terminating byte (here: space or '>',
// plus the other ASCII whitespace, which real pages use after "<html").
const HTML_START =
  /^[\t\n\f\r ]*<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)[\t\n\f\r >]/i;

/**
 * True for `text/html` and `application/xhtml+xml`. When the header is missing (or not a media
 * type), sniffs the first 512 bytes, after a BOM and whitespace, for an HTML start: `<!doctype html`,
 * `<html`, `<head`, `<body` and the other HTML patterns of the MIME Sniffing standard.
 */
export function isHtml(contentType: string | null, body: Uint8Array): boolean {
  const type = mediaType(contentType);
  if (type !== null) return type === 'text/html' || type === 'application/xhtml+xml';
  const bom = bomEncoding(body);
  let head: string;
  if (bom === 'utf-16le' || bom === 'utf-16be') {
    head = decoderFor(bom)!.decode(body.subarray(0, 512));
  } else {
    const start = bom === null ? 0 : 3;
    head = WINDOWS_1252.decode(body.subarray(start, 512));
  }
  return HTML_START.test(head);
}
