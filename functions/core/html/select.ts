import { parseHTML } from 'linkedom';
import { boundNesting, MAX_DOM_DEPTH } from './bound-nesting.ts';

// The part of linkedom's DOM used here (its typings resolve to `any` without the DOM lib).
interface DomNode {
  readonly nodeType: number;
  readonly firstChild: DomNode | null;
  readonly nextSibling: DomNode | null;
  readonly parentNode: DomNode | null;
  /** Text and CDATA nodes: their text. */
  readonly data?: string;
}
interface SelectedElement extends DomNode {
  readonly namespaceURI: string | null;
  readonly attributes: Iterable<{ readonly name: string; readonly value: string }>;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
}
interface SelectableDocument extends DomNode {
  querySelectorAll(selector: string): Iterable<SelectedElement>;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;

/** Per-page caps on what `selectFields` returns (the `maxExtractValues` and `maxExtractChars` settings). */
export interface ExtractLimits {
  /** Values recorded per page, all fields together. */
  maxValues: number;
  /** Characters recorded per page, all fields together; the value that reaches the cap is cut there. */
  maxChars: number;
}

/** What `selectFields` found, and what its caps left out. */
export interface SelectedFields {
  /** Per field name, the values in document order. */
  fields: Record<string, string[]>;
  /** Non-empty values not recorded: beyond `maxValues`, or after `maxChars` ran out. */
  droppedValues: number;
  /** Characters not recorded: cut from the value that reached `maxChars`, and of the values dropped. */
  droppedChars: number;
  /** Start tags left out of the DOM because they nested deeper than `MAX_DOM_DEPTH` (content kept). */
  droppedNesting: number;
}

const UNLIMITED: ExtractLimits = { maxValues: Number.POSITIVE_INFINITY, maxChars: Number.POSITIVE_INFINITY };

// A start tag with an attribute name starting in upper case (<A HREF=...>, <div Class=x>); SVG's
// camelCase names (viewBox) start in lower case and keep their case.
const UPPER_CASE_ATTRIBUTE = /<[A-Za-z][^<>]*?\s[A-Z][A-Za-z-]*\s*=/;
const XHTML = 'http://www.w3.org/1999/xhtml';

/** A field selector split into its CSS selector and, for `selector@attr`, the attribute to read. */
export interface FieldSelector {
  css: string;
  attribute: string | null;
}

// "@name" at the very end; an '@' inside an attribute selector (a[href*="@x"]) is followed by
// characters a name cannot hold, so it does not match.
const ATTRIBUTE_SUFFIX = /@([A-Za-z_:][-A-Za-z0-9_:.]*)\s*$/;

/** Splits `a.download@href` into `{ css: 'a.download', attribute: 'href' }`. */
export function parseFieldSelector(spec: string): FieldSelector {
  const match = ATTRIBUTE_SUFFIX.exec(spec);
  if (match === null) return { css: spec.trim(), attribute: null };
  return { css: spec.slice(0, match.index).trim(), attribute: match[1]! };
}

/**
 * Runs named CSS selectors on the page and returns, per name, the text of every match in
 * document order (whitespace collapsed and trimmed), or with the `selector@attr` syntax
 * (`a.download@href`) the attribute's value. Empty values and elements without the attribute
 * are left out. A selector that does not compile yields no values (check selectors up front with
 * `invalidSelectors`). Builds a DOM with linkedom, roughly 10 times the cost of `extractPage`:
 * only for crawls whose `extract` setting is non-empty.
 *
 * Bounded whatever the page: the DOM is built at most `MAX_DOM_DEPTH` deep (see `boundNesting`);
 * the text of the matched elements comes from one walk over the outermost ones, so nested matches
 * (`div` on a page of nested divs, each match's text holding all the text inside it) cost linear
 * time, not quadratic; and `limits` caps the values and characters returned, counting the rest.
 */
export function selectFields(
  html: string,
  selectors: Record<string, string>,
  limits: ExtractLimits = UNLIMITED,
): SelectedFields {
  const result: SelectedFields = { fields: {}, droppedValues: 0, droppedChars: 0, droppedNesting: 0 };
  const names = Object.keys(selectors);
  if (names.length === 0) return result;
  const bounded = boundNesting(html, MAX_DOM_DEPTH);
  result.droppedNesting = bounded.droppedTags;
  const document = parseHTML(bounded.html).document as SelectableDocument;
  if (UPPER_CASE_ATTRIBUTE.test(bounded.html)) lowerCaseAttributeNames(document);

  const matches: { name: string; attribute: string | null; elements: SelectedElement[] }[] = [];
  const textWanted = new Set<DomNode>();
  for (const name of names) {
    const { css, attribute } = parseFieldSelector(selectors[name]!);
    let elements: SelectedElement[];
    try {
      elements = [...document.querySelectorAll(css)];
    } catch {
      elements = [];
    }
    matches.push({ name, attribute, elements });
    if (attribute === null) for (const element of elements) textWanted.add(element);
  }
  const texts = collapsedTexts(textWanted);

  let values = 0;
  let chars = 0;
  for (const { name, attribute, elements } of matches) {
    const kept: string[] = [];
    result.fields[name] = kept;
    for (const element of elements) {
      const value =
        attribute === null ? (texts.get(element) ?? '') : collapse(readAttribute(element, attribute));
      if (value === '') continue;
      const room = limits.maxChars - chars;
      if (values >= limits.maxValues || room <= 0) {
        result.droppedValues += 1;
        result.droppedChars += value.length;
        continue;
      }
      const recorded = value.length > room ? value.slice(0, room) : value;
      kept.push(recorded);
      values += 1;
      chars += recorded.length;
      result.droppedChars += value.length - recorded.length;
    }
  }
  return result;
}

function collapse(raw: string | null): string {
  return raw === null ? '' : raw.replace(/\s+/g, ' ').trim();
}

/**
 * The text of each wanted element (its text and CDATA descendants, as `textContent`), whitespace
 * collapsed and trimmed, from one walk over each outermost wanted element: the walk builds the
 * collapsed text of that subtree and notes where each wanted element inside it starts and ends,
 * so each value is a slice and nested matches cost no more than the outermost one. Collapsing runs
 * of whitespace to one space commutes with slicing up to the trim at the slice's ends, so the
 * slices equal collapsing each element's own text.
 */
function collapsedTexts(wanted: ReadonlySet<DomNode>): Map<DomNode, string> {
  const texts = new Map<DomNode, string>();
  if (wanted.size === 0) return texts;
  const pieces: string[] = [];
  let length = 0;
  let endsInSpace = false;
  const spans = new Map<DomNode, [start: number, end: number]>();
  for (const top of wanted) {
    if (hasWantedAncestor(top, wanted)) continue;
    const span: [number, number] = [length, length];
    spans.set(top, span);
    endsInSpace = false;
    let node: DomNode | null = top.firstChild ?? null;
    while (node !== null) {
      if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
        let piece = (node.data ?? '').replace(/\s+/g, ' ');
        if (endsInSpace && piece.startsWith(' ')) piece = piece.slice(1);
        if (piece.length > 0) {
          pieces.push(piece);
          length += piece.length;
          endsInSpace = piece.endsWith(' ');
        }
      } else if (node.nodeType === ELEMENT_NODE) {
        if (wanted.has(node)) spans.set(node, [length, length]);
        const child: DomNode | null = node.firstChild ?? null;
        if (child !== null) {
          node = child;
          continue;
        }
      }
      // Done with this node and its children: leave it, and each ancestor it was the last child of.
      for (;;) {
        if (node.nodeType === ELEMENT_NODE) {
          const inner = spans.get(node);
          if (inner !== undefined) inner[1] = length;
        }
        const next: DomNode | null = node.nextSibling ?? null;
        if (next !== null) {
          node = next;
          break;
        }
        node = node.parentNode;
        if (node === null || node === top) {
          node = null;
          break;
        }
      }
    }
    span[1] = length;
  }
  const all = pieces.join('');
  for (const [element, [start, end]] of spans) texts.set(element, all.slice(start, end).trim());
  return texts;
}

function hasWantedAncestor(node: DomNode, wanted: ReadonlySet<DomNode>): boolean {
  for (let up = node.parentNode; up !== null; up = up.parentNode) if (wanted.has(up)) return true;
  return false;
}

// HTML attribute names are lower case once renamed; SVG's keep their case (viewBox).
function readAttribute(element: SelectedElement, name: string): string | null {
  return element.getAttribute(name) ?? element.getAttribute(name.toLowerCase());
}

// linkedom keeps attribute names as written, so `a[href]`, `.x` and getAttribute('href') miss
// <A HREF=...> and <div Class=x>; HTML attribute names are case-insensitive. Old pages write them in
// upper case, so rename them, only when the markup has any, and only on HTML elements.
function lowerCaseAttributeNames(document: SelectableDocument): void {
  for (const element of document.querySelectorAll('*')) {
    if (element.namespaceURI !== XHTML) continue;
    for (const { name, value } of [...element.attributes]) {
      const lower = name.toLowerCase();
      if (lower === name) continue;
      element.removeAttribute(name);
      if (!element.hasAttribute(lower)) element.setAttribute(lower, value);
    }
  }
}

/** Names of the selectors that do not compile, so a crawl can refuse them before it starts. */
export function invalidSelectors(selectors: Record<string, string>): string[] {
  const document = parseHTML('<!doctype html><html><body></body></html>').document as SelectableDocument;
  const invalid: string[] = [];
  for (const [name, spec] of Object.entries(selectors)) {
    const { css } = parseFieldSelector(spec);
    try {
      if (css === '') throw new Error('empty selector');
      document.querySelectorAll(css);
    } catch {
      invalid.push(name);
    }
  }
  return invalid;
}
