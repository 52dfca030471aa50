/**
 * Reads a sitemap (https://www.sitemaps.org/protocol.html): the XML `<urlset>` and
 * `<sitemapindex>` forms (with or without the sitemap namespace, under any prefix; CDATA and
 * character references as XML defines them) and the text form (one URL per line).
 *
 * Streaming: bytes go through a streaming UTF-8 decoder and a small XML scanner (xml-scanner.ts)
 * 64 KiB at a time, and only the entries kept are held, so the memory a read takes is the entries (at most
 * 50,000) plus one chunk, whatever the file's size. A gzipped file is not inflated here: the reader
 * answers `{ kind: 'gzip' }` and the caller inflates it with its own byte cap and reads again (the
 * core does no decompression; `Content-Encoding: gzip` is already undone by the fetcher).
 *
 * The protocol's limits hold: at most 50,000 entries and 50 MiB uncompressed per file (less when
 * the caller says so), a `<loc>` under 2,048 characters, http(s) only, and only URLs inside the
 * sitemap's scope (its directory, or the whole site for a sitemap named in robots.txt: see
 * sitemap-plan.ts). Entries past a limit are not read; the answer says which limit cut it.
 */
import { XmlScanner } from './xml-scanner.ts';

/** Entries per sitemap file, at most (the protocol's limit). */
export const SITEMAP_MAX_ENTRIES = 50_000;
/** Uncompressed bytes per sitemap file, at most (the protocol's 50 MB, read as MiB as Google does). */
export const SITEMAP_MAX_BYTES = 52_428_800;
/** A `<loc>` must be shorter than this (the protocol says less than 2,048 characters). */
export const SITEMAP_MAX_LOC = 2048;
/**
 * Elements open at once, at most (a sitemap's fields are at depth 3, extensions' at 4 or 5):
 * deeper elements are skipped with all they hold and counted (`stats.tooDeep`), so memory does
 * not grow with nesting (48 MiB of nested elements took 1.2 GB before the cap).
 */
export const SITEMAP_MAX_DEPTH = 32;
/** Longest tag, comment or CDATA section read (an attribute is at most this long): past it the read stops (`truncated: 'markup'`). */
export const SITEMAP_MAX_MARKUP = 1024 * 1024;

/**
 * Namespaces of the sitemap elements: sitemaps.org's (also written with https or a trailing
 * slash) and Google's older ones still served. Extensions (image, video, news, xhtml) have their
 * own, so their `<image:loc>` is never taken for a page.
 */
export const SITEMAP_NAMESPACE =
  /^https?:\/\/(www\.)?(sitemaps\.org|google\.com)\/schemas\/sitemap\/[0-9.]+\/?$/;

/** `<changefreq>` values. */
export type Changefreq = 'always' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'yearly' | 'never';
const CHANGEFREQS = new Set(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never']);

/** One `<url>` of a urlset, one `<sitemap>` of an index, or one line of a text sitemap. */
export interface SitemapEntry {
  /** Absolute http(s) URL as the WHATWG parser writes it (the caller canonicalizes). */
  url: string;
  /** W3C Datetime as written (`2024-05-17`, `2024-05-17T10:00:00+00:00`); absent when missing or malformed. */
  lastmod?: string;
  changefreq?: Changefreq;
  /** 0.0 to 1.0; absent when missing or malformed (the protocol's default is 0.5). */
  priority?: number;
}

/** The file being read: its URL and the prefix its entries must start with. */
export interface SitemapScope {
  url: string;
  /** URL prefix (`http://example.com/` or `http://example.com/catalog/`); see sitemap-plan.ts. */
  scope: string;
}

/** Caps below the protocol's own. */
export interface SitemapLimits {
  /** Entries kept (default and maximum 50,000). */
  maxEntries?: number;
  /** Uncompressed bytes read (default and maximum 50 MiB). */
  maxBytes?: number;
}

/** What a read counted besides the entries kept. */
export interface SitemapStats {
  /** Bytes read (up to the cap). */
  bytes: number;
  /** Entries dropped for lying outside the scope (another host, scheme or directory). */
  outOfScope: number;
  /** Entries without a usable `<loc>` (missing, not http(s), not absolute, too long). */
  invalid: number;
  /** Elements nested deeper than SITEMAP_MAX_DEPTH, skipped with what they hold. */
  tooDeep: number;
  /**
   * Set when a limit cut the file short: what is past it was not read (`markup`: a tag, comment
   * or CDATA section longer than SITEMAP_MAX_MARKUP).
   */
  truncated?: 'bytes' | 'entries' | 'markup';
}

/** The outcome of reading one sitemap file. */
export type SitemapRead =
  | { kind: 'urlset'; format: 'xml' | 'text'; entries: SitemapEntry[]; stats: SitemapStats }
  /** A sitemap index: its entries are sitemaps (`lastmod` only). */
  | { kind: 'index'; entries: SitemapEntry[]; stats: SitemapStats }
  /** The bytes are gzip: inflate them (with a byte cap) and read again. */
  | { kind: 'gzip' }
  /** Not a sitemap (an HTML page, a feed, another XML document, an empty body); `reason` says which. */
  | { kind: 'not-a-sitemap'; reason: string };

/** True when the bytes start with the gzip magic number. */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

const CHUNK = 64 * 1024;
/** Longest text kept for lastmod, changefreq or priority (longer values are malformed anyway). */
const MAX_FIELD = 64;
const W3C_DATETIME =
  /^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01])(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))?)?)?$/;

type Field = 'loc' | 'lastmod' | 'changefreq' | 'priority';

/**
 * Reads one sitemap file written in chunks (`write`), then `end()`. Feed it the decoded bytes of
 * the response (after Content-Encoding, before any gzip of the file itself).
 */
export class SitemapReader {
  readonly #scope: string;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #decoder = new TextDecoder('utf-8');
  readonly #entries: SitemapEntry[] = [];
  readonly #stats: SitemapStats = { bytes: 0, outOfScope: 0, invalid: 0, tooDeep: 0 };
  #format: 'xml' | 'text' | 'gzip' | undefined;
  #stopped = false;
  #ended = false;
  // XML state
  #parser: XmlScanner | undefined;
  #root: 'urlset' | 'index' | undefined;
  #notSitemap: string | undefined;
  /** Open elements (at most SITEMAP_MAX_DEPTH): the prefixes each declares, to undo at its end. */
  readonly #stack: (string[] | undefined)[] = [];
  /** Elements open below the depth cap, skipped. */
  #skipping = 0;
  /**
   * Namespaces in force: prefix ('' for the default) -> the URIs declared for it by the open
   * elements, innermost last. A look-up reads one entry, whatever the depth.
   */
  readonly #namespaces = new Map<string, string[]>();
  #entry: Partial<Record<Field, string>> | undefined;
  #field: Field | undefined;
  #text = '';
  #overflow = false;
  // text state
  #line = '';
  #lineTooLong = false;
  #lines = 0;

  constructor(source: SitemapScope, limits: SitemapLimits = {}) {
    this.#scope = source.scope;
    this.#maxEntries = Math.min(limits.maxEntries ?? SITEMAP_MAX_ENTRIES, SITEMAP_MAX_ENTRIES);
    this.#maxBytes = Math.min(limits.maxBytes ?? SITEMAP_MAX_BYTES, SITEMAP_MAX_BYTES);
    if (!(this.#maxEntries >= 1) || !(this.#maxBytes >= 1))
      throw new RangeError('sitemap limits must be positive');
  }

  /** Reads the next bytes; bytes past a limit, or after the reader knows it is not a sitemap, are ignored. */
  write(bytes: Uint8Array): void {
    if (this.#ended) throw new Error('SitemapReader: write after end');
    if (this.#stopped || bytes.length === 0) return;
    if (this.#format === undefined && this.#stats.bytes === 0 && isGzip(bytes)) {
      this.#format = 'gzip';
      this.#stopped = true;
      return;
    }
    let room = this.#maxBytes - this.#stats.bytes;
    if (bytes.length > room) {
      bytes = bytes.subarray(0, room);
      this.#stats.truncated = 'bytes';
    }
    for (let at = 0; at < bytes.length && !this.#stopped; at += CHUNK) {
      const piece = bytes.subarray(at, Math.min(at + CHUNK, bytes.length));
      this.#stats.bytes += piece.length;
      this.#decoded(this.#decoder.decode(piece, { stream: true }));
    }
    room = this.#maxBytes - this.#stats.bytes;
    if (room <= 0) this.#stopped = true;
  }

  /** Finishes the read and returns what the file held. */
  end(): SitemapRead {
    if (!this.#ended) {
      this.#ended = true;
      if (!this.#stopped) this.#decoded(this.#decoder.decode());
      if (this.#format === 'xml' && this.#stats.truncated === undefined) this.#parser?.end();
      if (this.#parser?.error !== undefined && this.#notSitemap === undefined) {
        if (this.#root === undefined) this.#notSitemap = this.#parser.error;
        else this.#stats.truncated ??= 'markup';
      }
      if (this.#format === 'text' && this.#stats.truncated === undefined) this.#takeLine(this.#line);
    }
    if (this.#format === 'gzip') return { kind: 'gzip' };
    if (this.#format === undefined) return { kind: 'not-a-sitemap', reason: 'empty body' };
    if (this.#format === 'text') {
      if (this.#entries.length === 0 && this.#stats.outOfScope === 0 && this.#lines > 0)
        return { kind: 'not-a-sitemap', reason: 'no line is a URL' };
      return { kind: 'urlset', format: 'text', entries: this.#entries, stats: this.#stats };
    }
    if (this.#notSitemap !== undefined) return { kind: 'not-a-sitemap', reason: this.#notSitemap };
    if (this.#root === undefined) return { kind: 'not-a-sitemap', reason: 'no root element' };
    return this.#root === 'index'
      ? { kind: 'index', entries: this.#entries, stats: this.#stats }
      : { kind: 'urlset', format: 'xml', entries: this.#entries, stats: this.#stats };
  }

  /** Routes decoded text to the XML or the text reader, deciding which on the first non-blank character. */
  #decoded(text: string): void {
    if (text === '') return;
    if (this.#format === undefined) {
      const first = text.search(/\S/);
      if (first < 0) return;
      text = text.slice(first);
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.#format = text.startsWith('<') ? 'xml' : 'text';
      if (this.#format === 'xml') this.#parser = this.#xmlParser();
    }
    if (this.#format !== 'xml') this.#textLines(text);
    else {
      this.#parser!.write(text);
      if (this.#parser!.error !== undefined) this.#stopped = true;
    }
  }

  // ------------------------------------------------------------------------------------ XML

  #xmlParser(): XmlScanner {
    return new XmlScanner(
      {
        open: (name, attributes) => this.#open(name, attributes),
        text: (text) => {
          if (this.#field === undefined || this.#overflow) return;
          this.#text += text;
          if (this.#text.length > (this.#field === 'loc' ? SITEMAP_MAX_LOC + 256 : MAX_FIELD))
            this.#overflow = true;
        },
        close: () => this.#close(),
      },
      SITEMAP_MAX_MARKUP,
    );
  }

  #open(name: string, attributes: Record<string, string> | undefined): void {
    if (this.#stopped) return;
    const depth = this.#stack.length;
    if (this.#skipping > 0 || depth >= SITEMAP_MAX_DEPTH) {
      this.#skipping++;
      this.#stats.tooDeep++;
      return;
    }
    let declared: string[] | undefined;
    for (const attribute in attributes) {
      if (attribute !== 'xmlns' && !attribute.startsWith('xmlns:')) continue;
      const prefix = attribute === 'xmlns' ? '' : attribute.slice(6);
      const uris = this.#namespaces.get(prefix);
      if (uris === undefined) this.#namespaces.set(prefix, [attributes![attribute]!]);
      else uris.push(attributes![attribute]!);
      if (declared === undefined) declared = [prefix];
      else declared.push(prefix);
    }
    this.#stack.push(declared);
    const colon = name.indexOf(':');
    const prefix = colon < 0 ? '' : name.slice(0, colon);
    const local = colon < 0 ? name : name.slice(colon + 1);
    const uri = this.#namespaces.get(prefix)?.at(-1);
    const sitemap = uri === undefined || uri === '' ? prefix === '' : isSitemapNamespace(uri);
    if (depth === 0) {
      if (sitemap && local === 'urlset') this.#root = 'urlset';
      else if (sitemap && local === 'sitemapindex') this.#root = 'index';
      else this.#giveUp(`the root element is <${name}>, not <urlset> or <sitemapindex>`);
    } else if (depth === 1 && sitemap && local === (this.#root === 'index' ? 'sitemap' : 'url')) {
      this.#entry = {};
    } else if (depth === 2 && this.#entry !== undefined && sitemap && isField(local)) {
      this.#field = local;
      this.#parser!.captureText = true;
      this.#text = '';
      this.#overflow = false;
    }
  }

  #close(): void {
    if (this.#stopped) return;
    if (this.#skipping > 0) {
      this.#skipping--;
      return;
    }
    if (this.#stack.length === 0) return;
    for (const prefix of this.#stack.pop() ?? []) {
      // dropped when empty: siblings declaring ever new prefixes leave nothing behind
      const uris = this.#namespaces.get(prefix)!;
      uris.pop();
      if (uris.length === 0) this.#namespaces.delete(prefix);
    }
    const depth = this.#stack.length;
    if (depth === 2 && this.#field !== undefined && this.#entry !== undefined) {
      // the first of a repeated field counts
      if (this.#entry[this.#field] === undefined)
        this.#entry[this.#field] = this.#overflow ? '\u0000' : this.#text;
      this.#field = undefined;
      this.#parser!.captureText = false;
    } else if (depth === 1 && this.#entry !== undefined) {
      const entry = this.#entry;
      this.#entry = undefined;
      this.#take(entry);
    }
  }

  #giveUp(reason: string): void {
    this.#notSitemap = reason;
    this.#stopped = true;
  }

  /** Keeps one entry if its URL is usable and in scope. */
  #take(fields: Partial<Record<Field, string>>): void {
    const url = this.#usableUrl(fields.loc);
    if (url === undefined) return;
    const entry: SitemapEntry = { url };
    const lastmod = fields.lastmod?.trim();
    if (lastmod !== undefined && W3C_DATETIME.test(lastmod)) entry.lastmod = lastmod;
    if (this.#root !== 'index') {
      const changefreq = fields.changefreq?.trim().toLowerCase();
      if (changefreq !== undefined && CHANGEFREQS.has(changefreq))
        entry.changefreq = changefreq as Changefreq;
      const priority = fields.priority?.trim();
      if (priority !== undefined && /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(priority))
        entry.priority = Number(priority);
    }
    this.#keep(entry);
  }

  #keep(entry: SitemapEntry): void {
    if (this.#entries.length >= this.#maxEntries) {
      // one entry too many: the file says more than we read
      this.#stats.truncated = 'entries';
      this.#stopped = true;
      return;
    }
    this.#entries.push(entry);
  }

  /** The absolute http(s) URL of a `<loc>` or a line, if usable and in scope (counting the others). */
  #usableUrl(loc: string | undefined): string | undefined {
    const text = loc?.trim();
    const parsed =
      text === undefined || text === '' || text.length >= SITEMAP_MAX_LOC ? null : URL.parse(text);
    if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      this.#stats.invalid++;
      return undefined;
    }
    parsed.hash = '';
    const url = parsed.href;
    if (!url.startsWith(this.#scope)) {
      this.#stats.outOfScope++;
      return undefined;
    }
    return url;
  }

  // ----------------------------------------------------------------------------------- text

  #textLines(text: string): void {
    let from = 0;
    for (;;) {
      const newline = text.indexOf('\n', from);
      const piece = newline < 0 ? text.slice(from) : text.slice(from, newline);
      if (!this.#lineTooLong) {
        this.#line += piece;
        if (this.#line.length > SITEMAP_MAX_LOC + 2) {
          this.#lineTooLong = true;
          this.#line = '';
        }
      }
      if (newline < 0) return;
      if (this.#lineTooLong) {
        this.#lines++;
        this.#stats.invalid++;
      } else {
        this.#takeLine(this.#line);
      }
      this.#line = '';
      this.#lineTooLong = false;
      if (this.#stopped) return;
      from = newline + 1;
    }
  }

  #takeLine(line: string): void {
    const trimmed = line.trim();
    if (trimmed === '') return;
    this.#lines++;
    const url = this.#usableUrl(trimmed);
    if (url !== undefined) this.#keep({ url });
  }
}

/** Namespace URIs already judged (a file declares a handful, used on every element). */
const NAMESPACE_VERDICTS = new Map<string, boolean>();

function isSitemapNamespace(uri: string): boolean {
  let verdict = NAMESPACE_VERDICTS.get(uri);
  if (verdict === undefined) {
    verdict = SITEMAP_NAMESPACE.test(uri);
    if (NAMESPACE_VERDICTS.size < 64) NAMESPACE_VERDICTS.set(uri, verdict);
  }
  return verdict;
}

function isField(local: string): local is Field {
  return local === 'loc' || local === 'lastmod' || local === 'changefreq' || local === 'priority';
}

/** Reads a whole sitemap body already in memory (in 64 KiB steps, as the streaming reader does). */
export function readSitemap(
  body: Uint8Array | string,
  source: SitemapScope,
  limits?: SitemapLimits,
): SitemapRead {
  const reader = new SitemapReader(source, limits);
  reader.write(typeof body === 'string' ? new TextEncoder().encode(body) : body);
  return reader.end();
}
