import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseHTML } from 'linkedom';
import { boundNesting, MAX_DOM_DEPTH } from '../../../functions/core/html/bound-nesting.ts';

interface TreeNode {
  childNodes: Iterable<TreeNode>;
  nodeType: number;
}

/** The deepest element nesting of linkedom's DOM for `html` (html = 1, body = 2, ...). */
function domDepth(html: string): number {
  const { document } = parseHTML(html);
  let deepest = 0;
  const stack: [TreeNode, number][] = [[document.documentElement as TreeNode, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    for (const child of node.childNodes) if (child.nodeType === 1) stack.push([child, depth + 1]);
  }
  return deepest;
}

describe('boundNesting', () => {
  it('returns ordinary markup unchanged, as the same string', () => {
    const html = '<!doctype html><html><head><title>t</title></head><body><div><p>a<p>b</div></body></html>';
    const bounded = boundNesting(html);
    assert.equal(bounded.html, html);
    assert.equal(bounded.droppedTags, 0);
  });

  it('implied end tags do not count as nesting: 10,000 unclosed <p>, <li>, <option>, <td>', () => {
    for (const tag of ['p', 'li', 'option', 'dd']) {
      const html = `<body>${`<${tag}>x`.repeat(10_000)}</body>`;
      assert.equal(boundNesting(html).droppedTags, 0, tag);
    }
    const table = `<table>${'<tr><td>a<td>b'.repeat(5000)}</table>`;
    assert.equal(boundNesting(table).droppedTags, 0);
  });

  it('takes out the start and end tags past the bound, keeping their content', () => {
    const html = `<html><body>${'<div>'.repeat(10)}<span>deep</span>${'</div>'.repeat(10)}<p>after</p></body></html>`;
    const bounded = boundNesting(html, 8);
    // html, body and six divs fit in 8 levels; four divs and the span do not
    assert.equal(bounded.droppedTags, 5);
    assert.equal(
      bounded.html,
      `<html><body>${'<div>'.repeat(6)}deep${'</div>'.repeat(6)}<p>after</p></body></html>`,
    );
    assert.equal(domDepth(bounded.html), 8);
  });

  it('a hostile page of 280,000 nested divs builds a DOM at most 512 deep, with its text', () => {
    const depth = 280_000;
    const html = `<!doctype html><html><head><title>deep</title></head><body>${'<div class=x>'.repeat(depth)}bottom${'</div>'.repeat(depth)}</body></html>`;
    const bounded = boundNesting(html);
    assert.equal(bounded.droppedTags, depth - (MAX_DOM_DEPTH - 2));
    assert.equal(domDepth(bounded.html), MAX_DOM_DEPTH);
    assert.ok(bounded.html.includes('>bottom</div>'));
    assert.ok(bounded.html.length < 512 * 20 + 200);
  });

  it('self-closing tags in svg do not nest; in HTML they open an element, as the parser does', () => {
    const svg = `<body><svg>${'<g>'.repeat(5)}${'<path/>'.repeat(100)}${'</g>'.repeat(5)}</svg></body>`;
    assert.equal(boundNesting(svg, 10).droppedTags, 0);
    const html = `<body>${'<div/>'.repeat(20)}</body>`;
    assert.equal(boundNesting(html, 10).droppedTags, 11); // body and nine divs fit
    assert.equal(domDepth(boundNesting(html, 10).html), 10);
  });

  it('raw text elements are not read as markup', () => {
    const html = `<body><script>${'<div>'.repeat(1000)}</script><textarea>${'<b>'.repeat(1000)}</textarea></body>`;
    assert.equal(boundNesting(html, 5).droppedTags, 0);
  });
});
