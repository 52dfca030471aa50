import type { TokenizerCallbacks } from 'htmlparser2';
import type { LinkKind } from '../types.ts';
import { classifyLink } from './classify.ts';
import { parseMetaRefresh } from './meta-refresh.ts';
import { NameTable } from './name-table.ts';
import { addRobotsDirectives, type RobotsDirectives } from './robots-directives.ts';
import { parseSrcset } from './srcset.ts';
import { TextBuffer } from './text-buffer.ts';
import { tokenize } from './tokenize.ts';

/** One link found in a page, before resolution, canonicalization and dedupe. */
export interface ExtractedLink {
  /** Raw attribute value, entities decoded, surrounding whitespace removed. Not resolved: resolve against `PageFacts.base`. */
  href: string;
  kind: LinkKind;
  /** Element it came from: a, area, link, iframe, frame, img, source, script, embed, object, video, audio, track, meta-refresh. */
  tag: string;
  /** The element's `rel` token list contains `nofollow`. */
  nofollow: boolean;
}

/** What the crawler needs from an HTML page. */
export interface PageFacts {
  /** Whitespace-collapsed text of the first `<title>` outside SVG/MathML; null when absent or blank. */
  title: string | null;
  /**
   * The first `<base href>` resolved against the page URL, else the page URL (also when the base
   * resolves to a URL longer than `maxUrlLength`: see `baseIgnored`).
   */
  base: string;
  /** The `<base href>` was ignored because it resolved to a URL longer than `maxUrlLength`. */
  baseIgnored: boolean;
  /**
   * Each distinct href once, where it first occurs, in document order (a later link to the same
   * href adds nothing: the crawler records a page's distinct out-links), at most `maxLinks` of them.
   * Only relative and http(s) URLs: nothing from `javascript:`, `mailto:`, `data:`, `tel:`,
   * `about:`, `blob:`, `vbscript:` or any other scheme, nothing from comments or script/style
   * bodies, nothing empty.
   */
  links: ExtractedLink[];
  /** Links found, every occurrence counted (duplicates, and those beyond `maxLinks`, too). */
  linkCount: number;
  /** Links found once `links` held `maxLinks` hrefs, whose href is not among them (each occurrence). */
  linksDropped: number;
  /** Raw href of the first `<link rel=canonical>`. */
  canonical: string | null;
  /** From `<meta name=robots>` and `<meta name={agent}>`. */
  robots: RobotsDirectives;
  /** Target of the first `<meta http-equiv=refresh>` with a URL (also in `links` as tag `meta-refresh`). */
  refresh: string | null;
  /**
   * Visible text, only when asked for: one line per block boundary (p, div, li, h1-h6, tr, br,
   * ...), whitespace collapsed within a line, blank lines dropped, table cells separated by a
   * space, line breaks inside `<pre>` kept. Excludes the title and the content of script, style,
   * noscript, template, textarea, iframe, noembed and noframes.
   */
  text?: string;
}

/** Options of `extractPage`. */
export interface ExtractOptions {
  /** Also collect the visible text (measured: 12-32% more time, docs/parsing.md). */
  text?: boolean;
  /** Product token whose `<meta name=...>` robots directives apply too, e.g. `crawlstack`. */
  agent?: string;
  /** Distinct hrefs kept in `links` (default: all); the rest are only counted (`linksDropped`). */
  maxLinks?: number;
  /** A `<base href>` that resolves to a longer URL is ignored (default: no limit). */
  maxUrlLength?: number;
}

// Tag roles as bit flags, so that one Map lookup per tag answers every question.
const LINK = 1; // carries link attributes: collect them until the tag ends
const BLOCK = 2; // text: line boundary
const CELL = 4; // text: word boundary
const SKIP = 8; // text: not shown
const FOREIGN = 16; // svg, math: their <title> is not the page title
const PICTURE = 32;
const MEDIA = 64; // video, audio: their <source> is not an image
const PRE = 128;
const TITLE = 256;
const VOID = 512; // never has content or an end tag
const RAW = 1024; // the tokenizer reads the content as text, unless the tag is written self-closing

const TAGS = new Map<string, number>([
  ['a', LINK],
  ['area', LINK | VOID],
  ['link', LINK | VOID],
  ['iframe', LINK | SKIP],
  ['frame', LINK | VOID],
  ['img', LINK | VOID],
  ['source', LINK | VOID],
  ['script', LINK | SKIP | RAW],
  ['meta', LINK | VOID],
  ['base', LINK | VOID],
  ['embed', LINK | VOID],
  ['object', LINK],
  ['video', LINK | MEDIA],
  ['audio', LINK | MEDIA],
  ['track', LINK | VOID],
  ['picture', PICTURE],
  ['svg', FOREIGN],
  ['math', FOREIGN],
  ['title', TITLE | SKIP | RAW],
  ['style', SKIP | RAW],
  ['textarea', SKIP | RAW],
  ['xmp', BLOCK | PRE | RAW],
  ['noscript', SKIP],
  ['template', SKIP],
  ['noembed', SKIP],
  ['noframes', SKIP],
  ['td', CELL],
  ['th', CELL],
  ['pre', BLOCK | PRE],
  ['listing', BLOCK | PRE],
  ['br', BLOCK | VOID],
  ['hr', BLOCK | VOID],
]);
for (const tag of [
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'dialog',
  'dir',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'html',
  'legend',
  'li',
  'main',
  'menu',
  'nav',
  'ol',
  'option',
  'p',
  'section',
  'summary',
  'table',
  'tbody',
  'tfoot',
  'thead',
  'tr',
  'ul',
]) {
  TAGS.set(tag, BLOCK);
}
const TAG_TABLE = new NameTable(TAGS);

// Slots of the attributes a link-bearing tag can need.
const HREF = 0;
const SRC = 1;
const SRCSET = 2;
const REL = 3;
const NAME = 4;
const CONTENT = 5;
const HTTP_EQUIV = 6;
const DATA = 7;

const ATTRIBUTES = new NameTable<number>([
  ['href', HREF],
  ['xlink:href', HREF], // SVG 1.1 links
  ['src', SRC],
  ['srcset', SRCSET],
  ['rel', REL],
  ['name', NAME],
  ['content', CONTENT],
  ['http-equiv', HTTP_EQUIV],
  ['data', DATA],
]);

const NOFOLLOW = /(?:^|[\t\n\f\r ])nofollow(?:[\t\n\f\r ]|$)/i;
const CANONICAL = /(?:^|[\t\n\f\r ])canonical(?:[\t\n\f\r ]|$)/i;

/**
 * Extracts links and page facts from HTML in one streaming pass over htmlparser2's tokenizer,
 * building no DOM: links from a/area href, link href (every rel), iframe/frame src, img
 * src+srcset, source src+srcset, script src, embed src, object data, video/audio/track src and
 * meta refresh; base href, title, canonical, meta robots and, on request, the visible text.
 * Entities are decoded; every quoting style works; malformed or truncated HTML does not throw (a
 * tag cut off before its `>` is dropped, as a browser drops it).
 */
export function extractPage(html: string, pageUrl: string, options?: ExtractOptions): PageFacts {
  const collector = new FactsCollector(html, pageUrl, options ?? {});
  tokenize(html, collector, true);
  return collector.facts();
}

// Works on the tokenizer's events directly rather than through htmlparser2's Parser: the Parser
// slices every attribute and text node, lowercases every attribute name and keeps an element
// stack with implied end tags, none of which link extraction needs; skipping it takes a third off
// the time on large pages, two fifths with text (docs/parsing.md). The only element state kept here is a handful of counters
// (inside script/style/..., svg, picture, video/audio, pre, title). Positions are offsets into
// `html`, which is written to the tokenizer in one piece.
class FactsCollector implements TokenizerCallbacks {
  readonly #html: string;
  readonly #pageUrl: string;
  readonly #agent: string | null;
  readonly #maxLinks: number;
  readonly #maxUrlLength: number;

  #links: ExtractedLink[] = [];
  /** The hrefs in #links, to keep each once (a page of a million copies of one link holds one). */
  readonly #hrefs = new Set<string>();
  #linkCount = 0;
  #linksDropped = 0;
  #base: string;
  #baseSeen = false;
  #baseIgnored = false;
  #title: string | null = null;
  #titleSeen = false;
  #inTitle = false;
  #titleText = '';
  #canonical: string | null = null;
  #robots: RobotsDirectives = { noindex: false, nofollow: false };
  #refresh: string | null = null;
  // Null unless the caller asked for the text.
  readonly #text: TextBuffer | null;

  #skip = 0;
  #foreign = 0;
  #picture = 0;
  #media = 0;
  #pre = 0;

  // The open tag being read: its name, role, and for link-bearing tags the attributes in slots.
  #tag = '';
  #role = 0;
  #attrs: (string | undefined)[] = new Array<string | undefined>(8).fill(undefined);
  #slot = -1;
  #value = '';

  constructor(html: string, pageUrl: string, options: ExtractOptions) {
    this.#html = html;
    this.#pageUrl = pageUrl;
    this.#base = pageUrl;
    // Visible text is rarely more than half of the markup; the buffer grows if it is.
    this.#text = options.text === true ? new TextBuffer(html.length >> 1) : null;
    this.#agent = options.agent === undefined ? null : options.agent.trim().toLowerCase();
    this.#maxLinks = options.maxLinks ?? Number.POSITIVE_INFINITY;
    this.#maxUrlLength = options.maxUrlLength ?? Number.POSITIVE_INFINITY;
  }

  onopentagname(start: number, end: number): void {
    // Only known tags have a role; the name of any other is never read.
    const slot = TAG_TABLE.slotOf(this.#html, start, end);
    const role = slot < 0 ? 0 : TAG_TABLE.value(slot);
    this.#tag = slot < 0 ? '' : TAG_TABLE.name(slot);
    this.#role = role;
    if ((role & LINK) !== 0) this.#attrs.fill(undefined);
  }

  onattribname(start: number, end: number): void {
    this.#slot = (this.#role & LINK) === 0 ? -1 : ATTRIBUTES.get(this.#html, start, end, -1);
    this.#value = '';
  }

  onattribdata(start: number, end: number): void {
    if (this.#slot !== -1) this.#value += this.#html.slice(start, end);
  }

  onattribentity(codepoint: number): void {
    if (this.#slot !== -1) this.#value += character(codepoint);
  }

  onattribend(): void {
    // The first of duplicate attributes wins, as in a browser.
    if (this.#slot !== -1) this.#attrs[this.#slot] ??= this.#value;
    this.#slot = -1;
  }

  onopentagend(): void {
    this.#openTag(false);
  }

  onselfclosingtag(): void {
    this.#openTag(true);
  }

  onclosetag(start: number, end: number): void {
    const slot = TAG_TABLE.slotOf(this.#html, start, end);
    if (slot < 0) return;
    const role = TAG_TABLE.value(slot);
    if ((role & VOID) !== 0) {
      // "</br>" is a line break too.
      if ((role & BLOCK) !== 0) this.#text?.lineBreak();
      return;
    }
    this.#closeTag(role);
  }

  ontext(start: number, end: number): void {
    if (this.#inTitle) this.#titleText += this.#html.slice(start, end);
    else if (this.#text !== null && this.#skip === 0)
      this.#text.appendRange(this.#html, start, end, this.#pre > 0);
  }

  ontextentity(codepoint: number): void {
    if (this.#inTitle) this.#titleText += character(codepoint);
    else if (this.#text !== null && this.#skip === 0) this.#text.appendCodePoint(codepoint);
  }

  onend(): void {
    // A title left open by a truncated page still counts.
    if (this.#inTitle) this.#endTitle();
  }

  oncdata(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}

  facts(): PageFacts {
    const facts: PageFacts = {
      title: this.#title,
      base: this.#base,
      baseIgnored: this.#baseIgnored,
      links: this.#links,
      linkCount: this.#linkCount,
      linksDropped: this.#linksDropped,
      canonical: this.#canonical,
      robots: this.#robots,
      refresh: this.#refresh,
    };
    if (this.#text !== null) facts.text = this.#text.toString();
    return facts;
  }

  #openTag(selfClosing: boolean): void {
    const role = this.#role;
    if (role === 0) return;
    const tag = this.#tag;
    this.#role = 0;
    if ((role & LINK) !== 0) this.#linkTag(tag);
    if ((role & VOID) !== 0) {
      if ((role & BLOCK) !== 0) this.#text?.lineBreak();
      return;
    }
    if ((role & SKIP) !== 0) this.#skip++;
    if ((role & FOREIGN) !== 0) this.#foreign++;
    if ((role & PICTURE) !== 0) this.#picture++;
    if ((role & MEDIA) !== 0) this.#media++;
    if ((role & PRE) !== 0) this.#pre++;
    if ((role & TITLE) !== 0 && !this.#titleSeen && this.#foreign === 0) {
      this.#titleSeen = true;
      this.#inTitle = true;
    }
    if (this.#text !== null) {
      if ((role & BLOCK) !== 0) this.#text.lineBreak();
      else if ((role & CELL) !== 0) this.#text.space();
    }
    // HTML ignores the slash of "<div/>"; in svg and math it closes the element, and the
    // tokenizer does not enter raw text after "<script/>", so treat that as closed too.
    if (selfClosing && (this.#foreign > 0 || (role & RAW) !== 0)) this.#closeTag(role);
  }

  #closeTag(role: number): void {
    // Counters, not a stack: an end tag without a start tag must not drive them below zero.
    if ((role & SKIP) !== 0 && this.#skip > 0) this.#skip--;
    if ((role & FOREIGN) !== 0 && this.#foreign > 0) this.#foreign--;
    if ((role & PICTURE) !== 0 && this.#picture > 0) this.#picture--;
    if ((role & MEDIA) !== 0 && this.#media > 0) this.#media--;
    if ((role & PRE) !== 0 && this.#pre > 0) this.#pre--;
    if ((role & TITLE) !== 0 && this.#inTitle) this.#endTitle();
    if (this.#text !== null) {
      if ((role & BLOCK) !== 0) this.#text.lineBreak();
      else if ((role & CELL) !== 0) this.#text.space();
    }
  }

  #endTitle(): void {
    this.#inTitle = false;
    const title = collapseWhitespace(this.#titleText);
    this.#title = title === '' ? null : title;
    this.#titleText = '';
  }

  #linkTag(tag: string): void {
    const attrs = this.#attrs;
    switch (tag) {
      case 'a':
      case 'area':
        this.#add(tag, attrs[HREF], attrs[REL]);
        break;
      case 'link': {
        const rel = attrs[REL];
        const href = this.#add(tag, attrs[HREF], rel);
        if (href !== null && this.#canonical === null && rel !== undefined && CANONICAL.test(rel)) {
          this.#canonical = href;
        }
        break;
      }
      case 'img':
        this.#add(tag, attrs[SRC], undefined);
        this.#addSrcset(tag, attrs[SRCSET], 'image');
        break;
      case 'source': {
        const kind: LinkKind | undefined = this.#media > 0 && this.#picture === 0 ? 'other' : undefined;
        this.#add(tag, attrs[SRC], undefined, kind);
        this.#addSrcset(tag, attrs[SRCSET], kind);
        break;
      }
      case 'object':
        this.#add(tag, attrs[DATA], undefined);
        break;
      case 'meta':
        this.#meta();
        break;
      case 'base':
        if (!this.#baseSeen && attrs[HREF] !== undefined) {
          this.#baseSeen = true;
          const base = resolveBase(attrs[HREF], this.#pageUrl);
          // A 100 KB base would make every relative link a 100 KB URL.
          if (base.length > this.#maxUrlLength) this.#baseIgnored = true;
          else this.#base = base;
        }
        break;
      default:
        // iframe, frame, script, embed, video, audio, track
        this.#add(tag, attrs[SRC], undefined);
    }
  }

  #meta(): void {
    const content = this.#attrs[CONTENT];
    if (content === undefined) return;
    const equiv = this.#attrs[HTTP_EQUIV];
    if (equiv !== undefined && equiv.trim().toLowerCase() === 'refresh') {
      const target = parseMetaRefresh(content);
      if (target !== null) {
        const href = this.#add('meta-refresh', target, undefined);
        if (href !== null) this.#refresh ??= href;
      }
    }
    const name = this.#attrs[NAME];
    if (name !== undefined) {
      const lowered = name.trim().toLowerCase();
      if (lowered === 'robots' || lowered === this.#agent) addRobotsDirectives(content, this.#robots);
    }
  }

  #addSrcset(tag: string, srcset: string | undefined, kind: LinkKind | undefined): void {
    if (srcset === undefined) return;
    for (const url of parseSrcset(srcset)) this.#add(tag, url, undefined, kind);
  }

  // Records a link unless it is empty or not fetchable; returns the trimmed href when recorded.
  #add(tag: string, raw: string | undefined, rel: string | undefined, kind?: LinkKind): string | null {
    if (raw === undefined) return null;
    const href = trimUrl(raw);
    if (href === '' || !isFetchable(href)) return null;
    this.#linkCount += 1;
    if (this.#hrefs.has(href)) return href;
    if (this.#hrefs.size >= this.#maxLinks) {
      // Counted, not remembered: the set stays at maxLinks entries whatever the page holds.
      this.#linksDropped += 1;
      return href;
    }
    this.#hrefs.add(href);
    this.#links.push({
      href,
      kind: kind ?? classifyLink(tag, href, rel),
      tag,
      nofollow: rel !== undefined && NOFOLLOW.test(rel),
    });
    return href;
  }
}

function character(codepoint: number): string {
  return codepoint <= 0x10ffff ? String.fromCodePoint(codepoint) : '\uFFFD';
}

// The URL parser strips leading and trailing C0 controls and spaces; so do we, and no more
// (String#trim would also remove U+00A0, which the URL parser percent-encodes instead).
function trimUrl(value: string): string {
  const n = value.length;
  if (n === 0 || (value.charCodeAt(0) > 0x20 && value.charCodeAt(n - 1) > 0x20)) return value;
  let start = 0;
  let end = n;
  while (start < end && value.charCodeAt(start) <= 0x20) start++;
  while (end > start && value.charCodeAt(end - 1) <= 0x20) end--;
  return value.slice(start, end);
}

// Relative URLs and http(s) URLs can be crawled; any other scheme (javascript:, mailto:, data:,
// tel:, about:, blob:, vbscript:, ftp:, intent: ...) cannot. The URL parser drops tabs and newlines
// anywhere, so "java\nscript:" is a scheme too.
function isFetchable(href: string): boolean {
  const n = href.length;
  let i = 0;
  let stripped = false;
  for (; i < n; i++) {
    const c = href.charCodeAt(i);
    if (c === 0x3a /* : */) break;
    if (c === 0x09 || c === 0x0a || c === 0x0d) {
      stripped = true;
      continue;
    }
    const lower = c | 0x20;
    const alpha = lower >= 0x61 && lower <= 0x7a;
    const other = (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e;
    if (!alpha && (i === 0 || !other)) return true; // not a scheme: a relative reference
  }
  if (i === n || i === 0) return true;
  let scheme = href.slice(0, i);
  if (stripped) scheme = scheme.replace(/[\t\n\r]/g, '');
  scheme = scheme.toLowerCase();
  return scheme === 'http' || scheme === 'https';
}

function resolveBase(raw: string, pageUrl: string): string {
  const href = trimUrl(raw);
  // An absolute base does not need the page URL, which may itself be unparsable.
  const url = parseUrl(href, pageUrl) ?? parseUrl(href, undefined);
  // HTML: a data: or javascript: base is not allowed; the document URL stays the base.
  if (url === null || url.protocol === 'data:' || url.protocol === 'javascript:') return pageUrl;
  return url.href;
}

function parseUrl(href: string, base: string | undefined): URL | null {
  try {
    return new URL(href, base);
  } catch {
    return null;
  }
}

function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
