import type { TokenizerCallbacks } from 'htmlparser2';
import { tokenize } from './tokenize.ts';

/**
 * The deepest element nesting a DOM is built with. Browsers bound it too: Blink's HTML parser
 * stops nesting at 512 levels and puts deeper elements beside the 512th (HTMLParser's
 * `kMaximumHTMLParserDOMTreeDepth`). No real page comes near it; a hostile one nests hundreds of
 * thousands of levels, and htmlparser2's Parser (under linkedom) pays for every level on every
 * tag (its open-element stack is an array it `unshift`s and searches): 1.4 MB of `<div>` took
 * 85 s. Bounded at 512, each tag costs at most 512 steps.
 */
export const MAX_DOM_DEPTH = 512;

/** HTML with its nesting bounded, and how many start tags were taken out for it. */
export interface BoundedNesting {
  html: string;
  /** Start tags (and their end tags) removed because they would nest deeper than the bound. */
  droppedTags: number;
}

// htmlparser2's Parser rules that decide how deep an element lands (copied from its Parser.ts,
// version 10): an open tag closes these open elements first; void elements are never open.
const P = ['p'];
const FORM = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'];
const IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>(
  (
    [
      ['tr', ['tr', 'th', 'td']],
      ['th', ['th']],
      ['td', ['thead', 'th', 'td']],
      ['body', ['head', 'link', 'script']],
      ['li', ['li']],
      ['option', ['option']],
      ['optgroup', ['optgroup', 'option']],
      ['dd', ['dd', 'dt']],
      ['dt', ['dd', 'dt']],
      ['rt', ['rt', 'rp']],
      ['rp', ['rt', 'rp']],
      ['tbody', ['thead', 'tbody']],
      ['tfoot', ['thead', 'tbody']],
      ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((t) => [t, FORM]),
      ...[
        'p',
        'h1',
        'h2',
        'h3',
        'h4',
        'h5',
        'h6',
        'address',
        'article',
        'aside',
        'blockquote',
        'details',
        'div',
        'dl',
        'fieldset',
        'figcaption',
        'figure',
        'footer',
        'form',
        'header',
        'hr',
        'main',
        'nav',
        'ol',
        'pre',
        'section',
        'table',
        'ul',
      ].map((t) => [t, P]),
    ] as [string, string[]][]
  ).map(([tag, closes]) => [tag, new Set(closes)]),
);
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const FOREIGN = new Set(['math', 'svg']);
const INTEGRATION = new Set([
  'mi',
  'mo',
  'mn',
  'ms',
  'mtext',
  'annotation-xml',
  'foreignobject',
  'desc',
  'title',
]);

/**
 * Takes out of `html` the start tags that would open an element deeper than `maxDepth`, and their
 * end tags, keeping everything between them: deeper content lands in the deepest element allowed,
 * as in Blink. The depth is the one htmlparser2's Parser (which linkedom builds its DOM from) would
 * give each element, with its implied end tags. Returns `html` itself when nothing is that deep.
 * One streaming pass; each tag costs at most `maxDepth` steps.
 */
export function boundNesting(html: string, maxDepth: number = MAX_DOM_DEPTH): BoundedNesting {
  const bounder = new NestingBounder(html, maxDepth);
  tokenize(html, bounder, false);
  return bounder.result();
}

class NestingBounder implements TokenizerCallbacks {
  readonly #html: string;
  readonly #maxDepth: number;
  /** Open elements, innermost last (never more than maxDepth). */
  readonly #stack: string[] = [];
  /** Whether the innermost svg/math (or HTML integration point) context is foreign. */
  readonly #foreign: boolean[] = [];
  /** Start tags removed, by name, whose end tags are still to come (and to be removed). */
  readonly #unclosed = new Map<string, number>();
  /** [start, end) ranges of `html` to leave out, in order. */
  readonly #cuts: number[] = [];
  #dropped = 0;
  /** The open tag being read: its name and where its `<` is. */
  #tag = '';
  #tagStart = 0;

  constructor(html: string, maxDepth: number) {
    this.#html = html;
    this.#maxDepth = maxDepth;
  }

  result(): BoundedNesting {
    if (this.#cuts.length === 0) return { html: this.#html, droppedTags: 0 };
    const parts: string[] = [];
    let at = 0;
    for (let i = 0; i < this.#cuts.length; i += 2) {
      parts.push(this.#html.slice(at, this.#cuts[i]));
      at = this.#cuts[i + 1]!;
    }
    parts.push(this.#html.slice(at));
    return { html: parts.join(''), droppedTags: this.#dropped };
  }

  onopentagname(start: number, end: number): void {
    this.#tag = this.#html.slice(start, end).toLowerCase();
    this.#tagStart = start - 1;
  }

  onopentagend(endIndex: number): void {
    this.#open(endIndex, false);
  }

  onselfclosingtag(endIndex: number): void {
    this.#open(endIndex, true);
  }

  onclosetag(start: number, end: number): void {
    const name = this.#html.slice(start, end).toLowerCase();
    const unclosed = this.#unclosed.get(name) ?? 0;
    if (unclosed > 0) {
      // The end tag of a removed start tag: the innermost elements were removed, so their end
      // tags come first.
      this.#unclosed.set(name, unclosed - 1);
      const gt = this.#html.indexOf('>', end);
      this.#cuts.push(start - 2, gt < 0 ? this.#html.length : gt + 1);
      return;
    }
    if (FOREIGN.has(name) || INTEGRATION.has(name)) this.#foreign.pop();
    if (VOID.has(name)) return;
    const at = this.#stack.lastIndexOf(name);
    if (at >= 0) this.#stack.length = at;
  }

  #open(endIndex: number, selfClosing: boolean): void {
    const name = this.#tag;
    const closes = IMPLIES_CLOSE.get(name);
    if (closes !== undefined) {
      while (this.#stack.length > 0 && closes.has(this.#stack[this.#stack.length - 1]!)) this.#stack.pop();
    }
    if (VOID.has(name)) return;
    if (selfClosing && this.#foreign[this.#foreign.length - 1] === true) return; // <path/> in svg
    if (this.#stack.length >= this.#maxDepth) {
      this.#dropped += 1;
      this.#unclosed.set(name, (this.#unclosed.get(name) ?? 0) + 1);
      this.#cuts.push(this.#tagStart, endIndex + 1);
      return;
    }
    this.#stack.push(name);
    if (FOREIGN.has(name)) this.#foreign.push(true);
    else if (INTEGRATION.has(name)) this.#foreign.push(false);
  }

  onattribname(): void {}
  onattribdata(): void {}
  onattribentity(): void {}
  onattribend(): void {}
  ontext(): void {}
  ontextentity(): void {}
  oncdata(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
  onend(): void {}
}
