import { Buffer } from 'node:buffer';

const SPACE = 0x20;
const NEWLINE = 0x0a;

// JavaScript's \s: ASCII whitespace plus the Unicode space separators, NBSP and BOM.
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c >= 0xa0 &&
    (c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff)
  );
}

/**
 * Builds a page's visible text from ranges of the HTML source, collapsing whitespace as it
 * goes: runs of whitespace become one space, line breaks (block boundaries) win over spaces, and
 * nothing leads or trails a line or the text. Characters go into one UTF-16 array, turned into a
 * string once at the end: a page has thousands of text nodes, and concatenating them as strings
 * costs several times more (ropes to flatten, a regex pass, a split and a join).
 */
export class TextBuffer {
  #units: Uint16Array;
  #length = 0;
  // Separator owed before the next character: 0, SPACE or NEWLINE.
  #pending = 0;

  constructor(capacity: number) {
    this.#units = new Uint16Array(Math.max(64, capacity));
  }

  /** Appends `source[start, end)`; inside `<pre>` (`keepLines`) its line feeds are line breaks. */
  appendRange(source: string, start: number, end: number, keepLines: boolean): void {
    this.#reserve(end - start + 1);
    const units = this.#units;
    let length = this.#length;
    let pending = this.#pending;
    for (let i = start; i < end; i++) {
      const c = source.charCodeAt(i);
      if (isSpace(c)) {
        if (length > 0) {
          if (keepLines && c === NEWLINE) pending = NEWLINE;
          else if (pending === 0) pending = SPACE;
        }
        continue;
      }
      if (pending !== 0) {
        units[length++] = pending;
        pending = 0;
      }
      units[length++] = c;
    }
    this.#length = length;
    this.#pending = pending;
  }

  /** Appends one character (a decoded entity). */
  appendCodePoint(codepoint: number): void {
    const text = codepoint <= 0x10ffff ? String.fromCodePoint(codepoint) : '\uFFFD';
    this.appendRange(text, 0, text.length, false);
  }

  /** A block boundary: what follows starts a new line. */
  lineBreak(): void {
    if (this.#length > 0) this.#pending = NEWLINE;
  }

  /** A word boundary (between table cells). */
  space(): void {
    if (this.#length > 0 && this.#pending === 0) this.#pending = SPACE;
  }

  toString(): string {
    return Buffer.from(this.#units.buffer, 0, this.#length * 2).toString('utf16le');
  }

  #reserve(extra: number): void {
    // +1: a pending separator may be written before the characters.
    const needed = this.#length + extra + 1;
    if (needed <= this.#units.length) return;
    const grown = new Uint16Array(Math.max(needed, this.#units.length * 2));
    grown.set(this.#units.subarray(0, this.#length));
    this.#units = grown;
  }
}
