/**
 * A streaming XML scanner just large enough for sitemaps: start and end tags (attributes parsed
 * only on tags that declare namespaces), text with XML's five entities and character references,
 * CDATA sections; comments, processing instructions and doctypes skipped. Text is decoded only
 * while the caller asks for it (`captureText`), so the bulk of a sitemap (`<image:caption>`s,
 * `<xhtml:link>`s) is skipped with `indexOf`: a whole read takes about half the time htmlparser2
 * needs only to tokenize the same sitemap (docs/sitemaps.md).
 *
 * Linear in its input whatever the shape, chunking included (docs/sitemaps.md, "Linear time"):
 * no regular expression that can backtrack, and a construct cut by chunk ends is searched from
 * where the last chunk stopped, then joined once. Memory: one construct, at most `maxMarkup`.
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
/** Characters after a `<` that tell which construct it opens (`<![CDATA[` is the longest opener). */
const OPENER = CDATA.length;
const REFERENCE = /&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * A construct (tag, comment, CDATA section, ...) and how far the search for its end has gone, so
 * that a construct cut by chunk ends is searched once, each chunk where the last one stopped: a
 * construct of n characters costs O(n), however many chunks carry it.
 */
interface Construct {
  /** Where its text starts (in the buffer it was found in). */
  from: number;
  /** What ends it: for a start tag (`undefined`) a `>` outside quoted values, else this string. */
  terminator: string | undefined;
  /** A start tag: the quote (`"` or `'`, as a char code) it is inside, 0 when none. */
  quote: number;
  /** Any other: its last characters read (after the opener), in which the terminator may begin. */
  tail: string;
}

/** Scans XML text given in chunks; see the module comment. */
export class XmlScanner {
  /** Decode and report text from now on (the handler turns it on inside the elements it reads). */
  captureText = false;
  /** Why scanning stopped early (a markup construct longer than the cap, complete or not). */
  error: string | undefined;
  readonly #handler: XmlHandler;
  readonly #maxMarkup: number;
  /** Text the last chunk ended with and left for the next: a cut reference, or a `<` too short to tell. Short. */
  #carry = '';
  /** The construct being read (one object, reused: a tag costs no allocation of its own). */
  readonly #construct: Construct = { from: 0, terminator: undefined, quote: 0, tail: '' };
  /** The text so far of the construct the last chunk ended inside, if any. */
  #pending: string[] | undefined;
  #pendingLength = 0;

  /** @param maxMarkup longest tag, comment or CDATA section waited for across chunks (default 1 MiB) */
  constructor(handler: XmlHandler, maxMarkup = 1024 * 1024) {
    this.#handler = handler;
    this.#maxMarkup = maxMarkup;
  }

  write(chunk: string): void {
    if (this.error !== undefined) return;
    let text = this.#carry === '' ? chunk : this.#carry + chunk;
    this.#carry = '';
    const pending = this.#pending;
    if (pending !== undefined) {
      const end = constructEnd(this.#construct, text, 0);
      this.#pendingLength += end < 0 ? text.length : end;
      if (this.#pendingLength > this.#maxMarkup) {
        this.#tooLong();
        return;
      }
      if (end < 0) {
        pending.push(text);
        return;
      }
      this.#pending = undefined;
      // complete now: read again whole, once
      pending.push(text.slice(0, end));
      this.#markup(pending.join(''), 0, true);
      text = text.slice(end);
    }
    this.#scan(text, false);
  }

  /** Reads what is left; an unfinished construct at the end is dropped. */
  end(): void {
    if (this.error === undefined && this.#pending === undefined) this.#scan(this.#carry, true);
    this.#carry = '';
    this.#pending = undefined;
  }

  #scan(buffer: string, final: boolean): void {
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
        pos = lt;
        break;
      }
      pos = next;
      if (this.error !== undefined) return;
    }
    if (!final && pos < n && this.#pending === undefined && this.error === undefined)
      this.#carry = buffer.slice(pos);
  }

  #tooLong(): void {
    this.error = `markup longer than ${this.#maxMarkup} characters`;
    this.#pending = undefined;
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

  /**
   * Handles the construct starting at `lt`; returns the position after it, or -1 when the buffer
   * ends first (n when `final`: the rest is dropped). A cut construct long enough to tell what it
   * is becomes the pending one; a shorter one is carried to the next chunk as text.
   */
  #markup(buffer: string, lt: number, final: boolean): number {
    const n = buffer.length;
    const construct = constructAt(buffer, lt, this.#construct);
    const end = constructEnd(construct, buffer, construct.from);
    // the cap holds however the construct came, whole or in chunks
    if ((end < 0 ? n : end) - lt > this.#maxMarkup) {
      this.#tooLong();
      return final ? n : -1;
    }
    if (end < 0) {
      if (final) return n;
      if (n - lt >= OPENER) {
        this.#pending = [buffer.slice(lt)];
        this.#pendingLength = n - lt;
      }
      return -1;
    }
    const second = buffer.charCodeAt(lt + 1);
    if (construct.terminator === ']]>') {
      if (this.captureText) this.#handler.text(buffer.slice(lt + CDATA.length, end - 3));
    } else if (second === 47 /* / */) {
      this.#handler.close(buffer.slice(lt + 2, end - 1).trim());
    } else if (construct.terminator === undefined) {
      const gt = end - 1;
      const selfClosing = buffer.charCodeAt(gt - 1) === 47;
      const body = buffer.slice(lt + 1, selfClosing ? gt - 1 : gt);
      let nameEnd = 0;
      while (nameEnd < body.length && body.charCodeAt(nameEnd) > 32) nameEnd++;
      const name = body.slice(0, nameEnd);
      const attributes = body.includes('xmlns', nameEnd) ? attributesOf(body, nameEnd) : undefined;
      this.#handler.open(name, attributes);
      if (selfClosing) this.#handler.close(name);
    }
    return end;
  }
}

/** Sets `into` to the construct a `<` at `lt` opens, as far as the buffer tells (a cut opener reads as a start tag or `<!...>`). */
function constructAt(buffer: string, lt: number, into: Construct): Construct {
  const second = buffer.charCodeAt(lt + 1);
  into.terminator = undefined;
  into.from = lt + 1;
  if (second === 33 /* ! */) {
    const comment = buffer.startsWith('<!--', lt);
    const cdata = !comment && buffer.startsWith(CDATA, lt);
    into.terminator = comment ? '-->' : cdata ? ']]>' : '>';
    into.from = lt + (comment ? 4 : cdata ? CDATA.length : 2);
  } else if (second === 63 /* ? */ || second === 47 /* / */) {
    into.terminator = second === 63 ? '?>' : '>';
    into.from = lt + 2;
  }
  into.quote = 0;
  into.tail = '';
  return into;
}

/**
 * Where `construct` ends in `text` (searched from `from`): the position after its terminator, or
 * -1 when `text` ends first, leaving in `construct` where the search stands for the next chunk.
 * Each character is looked at a bounded number of times: no backtracking.
 */
function constructEnd(construct: Construct, text: string, from: number): number {
  const terminator = construct.terminator;
  if (terminator === undefined) {
    let quote = construct.quote;
    for (let i = from; i < text.length; i++) {
      if (quote !== 0) {
        const close = text.indexOf(quote === 34 ? '"' : "'", i);
        if (close < 0) break;
        quote = 0;
        i = close;
        continue;
      }
      const c = text.charCodeAt(i);
      if (c === 62 /* > */) return i + 1;
      if (c === 34 || c === 39) quote = c;
    }
    construct.quote = quote;
    return -1;
  }
  const keep = terminator.length - 1;
  if (construct.tail !== '') {
    // a terminator begun at the end of the last chunk
    const probe = construct.tail + text.slice(from, from + keep);
    const at = probe.indexOf(terminator);
    if (at >= 0) return from + at + terminator.length - construct.tail.length;
  }
  const at = text.indexOf(terminator, from);
  if (at >= 0) return at + terminator.length;
  if (keep > 0)
    construct.tail =
      text.length - from >= keep
        ? text.slice(text.length - keep)
        : (construct.tail + text.slice(from)).slice(-keep);
  return -1;
}

/**
 * The attributes of a start tag's `body` from `from` (after its name), in one pass without
 * backtracking (a regular expression here took 17.5 s on one tag with an 80 KB attribute): a name
 * runs to a space, `=` or `/`; one without `= "value"` is skipped.
 */
function attributesOf(body: string, from: number): Record<string, string> {
  const attributes: Record<string, string> = Object.create(null);
  const n = body.length;
  let i = from;
  while (i < n) {
    if (!isNameChar(body.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && isNameChar(body.charCodeAt(i))) i++;
    const name = body.slice(start, i);
    while (i < n && body.charCodeAt(i) <= 32) i++;
    if (body.charCodeAt(i) !== 61) continue;
    i++;
    while (i < n && body.charCodeAt(i) <= 32) i++;
    const quote = body.charCodeAt(i);
    if (quote !== 34 && quote !== 39) continue;
    const close = body.indexOf(quote === 34 ? '"' : "'", i + 1);
    if (close < 0) break;
    attributes[name] = decodeText(body.slice(i + 1, close));
    i = close + 1;
  }
  return attributes;
}

/** Not a space, `=` or `/`. */
function isNameChar(c: number): boolean {
  return c > 32 && c !== 61 && c !== 47;
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
