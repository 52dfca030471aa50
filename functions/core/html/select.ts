import { parseHTML } from 'linkedom';

// The part of linkedom's DOM used here (its typings resolve to `any` without the DOM lib).
interface SelectedElement {
  readonly textContent: string | null;
  readonly namespaceURI: string | null;
  readonly attributes: Iterable<{ readonly name: string; readonly value: string }>;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
}
interface SelectableDocument {
  querySelectorAll(selector: string): Iterable<SelectedElement>;
}

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
 */
export function selectFields(html: string, selectors: Record<string, string>): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  const names = Object.keys(selectors);
  if (names.length === 0) return result;
  const document = parseHTML(html).document as SelectableDocument;
  if (UPPER_CASE_ATTRIBUTE.test(html)) lowerCaseAttributeNames(document);
  for (const name of names) {
    const values: string[] = [];
    result[name] = values;
    const { css, attribute } = parseFieldSelector(selectors[name]!);
    let elements: Iterable<SelectedElement>;
    try {
      elements = document.querySelectorAll(css);
    } catch {
      continue;
    }
    for (const element of elements) {
      const raw = attribute === null ? element.textContent : readAttribute(element, attribute);
      if (raw === null) continue;
      const value = raw.replace(/\s+/g, ' ').trim();
      if (value !== '') values.push(value);
    }
  }
  return result;
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
