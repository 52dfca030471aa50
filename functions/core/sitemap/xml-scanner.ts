/**
 * A streaming XML scanner just large enough for sitemaps: start and end tags (attributes parsed
 * only on tags that declare namespaces), text with XML's five entities and character references,
 * CDATA sections; comments, processing instructions and doctypes skipped. Text is decoded only
 * while the caller asks for it (`captureText`), so the bulk of a sitemap (`<image:caption>`s,
 * `<xhtml:link>`s) is skipped with `indexOf`: a whole read takes about half the time htmlparser2
 * needs only to tokenize the same sitemap (docs/sitemaps.md).
 *
 * Not a validating parser: mismatched tags are reported to the handler as they come, unknown
 * entities stay as written.
 */

/** What the scanner reports. */
export interface XmlHandler {
  /**
   * A start tag (`selfClosing`: `<x/>`, then `close` follows). `attributes` holds the tag's
   * attributes only when one of them is a namespace declaration (`xmlns`, `xmlns:p`).
   */
  open(name: string, attributes: Record<string, string> | undefined): void;
  close(name: string): void;
  /** Decoded text (or CDATA content) while `captureText` is on; one run may come in pieces. */
  text(text: string): void;
}

const CDATA = '<![CDATA[';
/** Longest reference kept back when a chunk ends inside text (`&#x10FFFF;`). */
const MAX_REFERENCE = 12;
const ATTRIBUTE = /([^\s=/]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
const REFERENCE = /&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Scans XML text given in chunks; see the module comment. */
export class XmlScanner {
  /** Decode and report text from now on (the handler turns it on inside the elements it reads). */
  captureText = false;
  /** Why scanning stopped early (a markup construct longer than the cap). */
  error: string | undefined;
  readonly #handler: XmlHandler;
  readonly #maxMarkup: number;
  #buffer = '';

  /** @param maxMarkup longest tag, comment or CDATA section waited for across chunks (default 1 MiB) */
  constructor(handler: XmlHandler, maxMarkup = 1024 * 1024) {
    this.#handler = handler;
    this.#maxMarkup = maxMarkup;
  }

  write(chunk: string): void {
    if (this.error !== undefined) return;
    this.#buffer = this.#buffer === '' ? chunk : this.#buffer + chunk;
    this.#scan(false);
  }

  /** Reads what is left; an unfinished construct at the end is dropped. */
  end(): void {
    if (this.error === undefined) this.#scan(true);
    this.#buffer = '';
  }

  #scan(final: boolean): void {
    const buffer = this.#buffer;
    const n = buffer.length;
    let pos = 0;
    while (pos < n) {
      const lt = buffer.indexOf('<', pos);
      if (lt < 0) {
        pos = this.#trailingText(buffer, pos, final);
        break;
      }
      if (lt > pos && this.captureText) this.#handler.text(decodeText(buffer.slice(pos, lt)));
      const next = this.#markup(buffer, lt, final);
      if (next < 0) {
        // the construct goes on in the next chunk
        if (n - lt > this.#maxMarkup) this.error = `markup longer than ${this.#maxMarkup} characters`;
        pos = lt;
        break;
      }
      pos = next;
      if (this.error !== undefined) break;
    }
    this.#buffer = final || this.error !== undefined ? '' : buffer.slice(pos);
  }

  /** Text after the last `<` of the chunk: reported up to any reference it may cut; returns where to resume. */
  #trailingText(buffer: string, pos: number, final: boolean): number {
    if (!this.captureText) return buffer.length;
    let end = buffer.length;
    if (!final) {
      const amp = buffer.lastIndexOf('&');
      if (amp >= pos && amp > end - MAX_REFERENCE && buffer.indexOf(';', amp) < 0) end = amp;
    }
    if (end > pos) this.#handler.text(decodeText(buffer.slice(pos, end)));
    return end;
  }

  /** Handles the markup starting at `lt`; returns the position after it, or -1 when it is not complete yet. */
  #markup(buffer: string, lt: number, final: boolean): number {
    // A construct cut by the chunk's end has no terminator after it, whichever it turns out to be
    // (`<!-` read as `<!DOCTYPE` finds no `>` either), so it waits for the next chunk.
    const n = buffer.length;
    const second = buffer.charCodeAt(lt + 1);
    if (second === 33 /* ! */) {
      if (buffer.startsWith('<!--', lt)) return after(buffer, '-->', lt + 4, final);
      if (buffer.startsWith(CDATA, lt)) {
        const close = buffer.indexOf(']]>', lt + CDATA.length);
        if (close < 0) return final ? n : -1;
        if (this.captureText) this.#handler.text(buffer.slice(lt + CDATA.length, close));
        return close + 3;
      }
      return after(buffer, '>', lt + 2, final);
    }
    if (second === 63 /* ? */) return after(buffer, '?>', lt + 2, final);
    if (second === 47 /* / */) {
      const gt = buffer.indexOf('>', lt + 2);
      if (gt < 0) return final ? n : -1;
      this.#handler.close(buffer.slice(lt + 2, gt).trim());
      return gt + 1;
    }
    if (Number.isNaN(second)) return final ? n : -1;
    const gt = tagEnd(buffer, lt + 1);
    if (gt < 0) return final ? n : -1;
    const selfClosing = buffer.charCodeAt(gt - 1) === 47;
    const body = buffer.slice(lt + 1, selfClosing ? gt - 1 : gt);
    let nameEnd = 0;
    while (nameEnd < body.length && body.charCodeAt(nameEnd) > 32) nameEnd++;
    const name = body.slice(0, nameEnd);
    let attributes: Record<string, string> | undefined;
    if (body.includes('xmlns', nameEnd)) {
      attributes = {};
      for (const match of body.slice(nameEnd).matchAll(ATTRIBUTE)) {
        attributes[match[1]!] = decodeText(match[2] ?? match[3] ?? '');
      }
    }
    this.#handler.open(name, attributes);
    if (selfClosing) this.#handler.close(name);
    return gt + 1;
  }
}

/** The position after `terminator` found from `from`, or -1 (n when `final`: the rest is dropped). */
function after(buffer: string, terminator: string, from: number, final: boolean): number {
  const at = buffer.indexOf(terminator, from);
  if (at >= 0) return at + terminator.length;
  return final ? buffer.length : -1;
}

/** The `>` ending a start tag that begins at `from`, skipping quoted attribute values; -1 if not in the buffer. */
function tagEnd(buffer: string, from: number): number {
  let gt = buffer.indexOf('>', from);
  let quote = firstQuote(buffer, from, gt < 0 ? buffer.length : gt);
  while (quote >= 0) {
    const close = buffer.indexOf(buffer[quote]!, quote + 1);
    if (close < 0) return -1;
    if (gt < close) gt = buffer.indexOf('>', close + 1);
    if (gt < 0) return -1;
    quote = firstQuote(buffer, close + 1, gt);
  }
  return gt;
}

/** The first `"` or `'` in [from, to), or -1 (a loop, not indexOf: a tag is short, the buffer is not). */
function firstQuote(buffer: string, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const c = buffer.charCodeAt(i);
    if (c === 34 || c === 39) return i;
  }
  return -1;
}

/** Resolves XML's five entities and character references; anything else stays as written. */
export function decodeText(text: string): string {
  if (text.indexOf('&') < 0) return text;
  return text.replace(REFERENCE, (whole, ref: string) => {
    if (ref.charCodeAt(0) !== 35) return NAMED[ref] ?? whole;
    const code =
      ref.charCodeAt(1) === 120 ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
      ? String.fromCodePoint(code)
      : whole;
  });
}
