import { decoderFor } from './encoding.ts';

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const DASH = 0x2d;
const EQUALS = 0x3d;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d;
}

function isAlpha(b: number): boolean {
  const l = b | 0x20;
  return l >= 0x61 && l <= 0x7a;
}

function lower(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
}

interface Attribute {
  name: string;
  value: string;
}

/**
 * The HTML "prescan a byte stream to determine its encoding" over the first `limit` bytes:
 * finds `<meta charset=...>` or `<meta http-equiv="content-type" content="...; charset=...">`
 * while skipping comments and the attributes of other tags. Returns the encoding name
 * (`shift_jis`, `windows-1252`, ...) or null. Unknown labels are skipped and the scan goes on;
 * UTF-16 labels mean UTF-8 (a byte-oriented prescan that found ASCII cannot be UTF-16).
 */
export function prescanCharset(bytes: Uint8Array, limit = 1024): string | null {
  return new Prescanner(bytes, Math.min(bytes.length, limit)).run();
}

class Prescanner {
  readonly #b: Uint8Array;
  readonly #end: number;
  #pos = 0;

  constructor(bytes: Uint8Array, end: number) {
    this.#b = bytes;
    this.#end = end;
  }

  run(): string | null {
    const b = this.#b;
    const end = this.#end;
    while (this.#pos < end) {
      const pos = this.#pos;
      if (b[pos] !== LT) {
        this.#pos++;
        continue;
      }
      const next = this.#at(pos + 1);
      if (next === BANG && this.#at(pos + 2) === DASH && this.#at(pos + 3) === DASH) {
        // The dashes of "<!--" may close it too: "<!-->" is an empty comment.
        const close = this.#find(pos + 2, DASH, DASH, GT);
        if (close === -1) return null;
        this.#pos = close + 3;
        continue;
      }
      if (this.#isMeta(pos)) {
        this.#pos = pos + 6;
        const found = this.#meta();
        if (found !== null) return found;
        if (this.#pos >= end) return null;
        continue;
      }
      if (isAlpha(next) || (next === SLASH && isAlpha(this.#at(pos + 2)))) {
        let p = pos + 2;
        while (p < end && !isSpace(b[p]!) && b[p] !== GT) p++;
        this.#pos = p;
        while (this.#attribute() !== null) {}
        this.#pos++;
        continue;
      }
      if (next === BANG || next === SLASH || next === QUESTION) {
        const close = b.indexOf(GT, pos + 1);
        if (close === -1 || close >= end) return null;
        this.#pos = close + 1;
        continue;
      }
      this.#pos++;
    }
    return null;
  }

  #at(i: number): number {
    return i < this.#end ? this.#b[i]! : -1;
  }

  #find(from: number, a: number, b: number, c: number): number {
    for (let i = from; i + 2 < this.#end; i++) {
      if (this.#b[i] === a && this.#b[i + 1] === b && this.#b[i + 2] === c) return i;
    }
    return -1;
  }

  // "<meta" followed by whitespace or "/", case-insensitive.
  #isMeta(pos: number): boolean {
    return (
      (this.#at(pos + 1) | 0x20) === 0x6d &&
      (this.#at(pos + 2) | 0x20) === 0x65 &&
      (this.#at(pos + 3) | 0x20) === 0x74 &&
      (this.#at(pos + 4) | 0x20) === 0x61 &&
      (isSpace(this.#at(pos + 5)) || this.#at(pos + 5) === SLASH)
    );
  }

  #meta(): string | null {
    const seen = new Set<string>();
    let gotPragma = false;
    let needPragma: boolean | null = null;
    let charset: string | null = null;
    for (let attr = this.#attribute(); attr !== null; attr = this.#attribute()) {
      if (seen.has(attr.name)) continue;
      seen.add(attr.name);
      if (attr.name === 'http-equiv') {
        if (attr.value === 'content-type') gotPragma = true;
      } else if (attr.name === 'content') {
        const label = charsetFromContent(attr.value);
        if (label !== null && charset === null) {
          charset = encodingName(label);
          needPragma = true;
        }
      } else if (attr.name === 'charset') {
        charset = encodingName(attr.value);
        needPragma = false;
      }
    }
    if (needPragma === null || (needPragma && !gotPragma) || charset === null) {
      this.#pos++;
      return null;
    }
    if (charset === 'utf-16le' || charset === 'utf-16be') return 'utf-8';
    return charset;
  }

  // HTML "get an attribute": name and value lowercased; null at '>' or the end of input.
  #attribute(): Attribute | null {
    const b = this.#b;
    const end = this.#end;
    let p = this.#pos;
    while (p < end && (isSpace(b[p]!) || b[p] === SLASH)) p++;
    if (p >= end || b[p] === GT) {
      this.#pos = p;
      return null;
    }
    let name = '';
    let value = '';
    for (;;) {
      if (p >= end) return this.#stop();
      const c = b[p]!;
      if (c === EQUALS && name !== '') {
        p++;
        break;
      }
      if (isSpace(c)) {
        while (p < end && isSpace(b[p]!)) p++;
        if (p >= end) return this.#stop();
        if (b[p] !== EQUALS) {
          this.#pos = p;
          return { name, value };
        }
        p++;
        break;
      }
      if (c === SLASH || c === GT) {
        this.#pos = p;
        return { name, value };
      }
      name += String.fromCharCode(lower(c));
      p++;
    }
    while (p < end && isSpace(b[p]!)) p++;
    if (p >= end) return this.#stop();
    const q = b[p]!;
    if (q === 0x22 || q === 0x27) {
      for (p++; p < end; p++) {
        if (b[p] === q) {
          this.#pos = p + 1;
          return { name, value };
        }
        value += String.fromCharCode(lower(b[p]!));
      }
      return this.#stop();
    }
    if (q === GT) {
      this.#pos = p;
      return { name, value };
    }
    for (; p < end; p++) {
      const c = b[p]!;
      if (isSpace(c) || c === GT) {
        this.#pos = p;
        return { name, value };
      }
      value += String.fromCharCode(lower(c));
    }
    return this.#stop();
  }

  #stop(): null {
    this.#pos = this.#end;
    return null;
  }
}

function encodingName(label: string): string | null {
  return decoderFor(label)?.encoding ?? null;
}

/**
 * HTML "extracting a character encoding from a meta element": the label after `charset=` in a
 * `content` value such as `text/html; charset=Shift_JIS` (quoted or not), or null.
 */
export function charsetFromContent(content: string): string | null {
  const lowered = content.toLowerCase();
  let from = 0;
  for (;;) {
    const at = lowered.indexOf('charset', from);
    if (at === -1) return null;
    let p = at + 7;
    while (p < content.length && isSpace(content.charCodeAt(p))) p++;
    if (content.charCodeAt(p) !== EQUALS) {
      from = p;
      continue;
    }
    p++;
    while (p < content.length && isSpace(content.charCodeAt(p))) p++;
    if (p >= content.length) return null;
    const q = content.charCodeAt(p);
    if (q === 0x22 || q === 0x27) {
      const close = content.indexOf(q === 0x22 ? '"' : "'", p + 1);
      return close === -1 ? null : content.slice(p + 1, close);
    }
    let e = p;
    while (e < content.length && !isSpace(content.charCodeAt(e)) && content.charCodeAt(e) !== 0x3b) e++;
    return content.slice(p, e);
  }
}
