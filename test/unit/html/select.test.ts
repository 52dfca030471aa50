import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseHTML } from 'linkedom';
import {
  invalidSelectors,
  parseFieldSelector,
  selectFields as selectWithCounts,
} from '../../../functions/core/html/select.ts';

/** The fields alone, checking that nothing was dropped (no caps given). */
function selectFields(html: string, selectors: Record<string, string>): Record<string, string[]> {
  const selected = selectWithCounts(html, selectors);
  assert.equal(selected.droppedValues + selected.droppedChars + selected.droppedNesting, 0);
  return selected.fields;
}

const HTML = `<!doctype html>
<html><head><title> Product   page </title><meta name="description" content="A thing"></head>
<body>
  <h1 class="name">Widget <small>v2</small></h1>
  <ul class="features"><li>Fast</li><li>  Small
  and light </li><li></li></ul>
  <a class="download" href="/files/widget.pdf">PDF</a>
  <a class="download" href="/files/widget.zip">ZIP</a>
  <a class="download">no href</a>
  <a href="mailto:x@example.test">mail</a>
</body></html>`;

describe('selectFields', () => {
  it('text of every match, whitespace collapsed, empty ones left out', () => {
    assert.deepEqual(selectFields(HTML, { title: 'title', name: 'h1.name', features: 'ul.features > li' }), {
      title: ['Product page'],
      name: ['Widget v2'],
      features: ['Fast', 'Small and light'],
    });
  });

  it('selector@attr reads an attribute; elements without it are left out', () => {
    assert.deepEqual(
      selectFields(HTML, {
        downloads: 'a.download@href',
        description: 'meta[name=description]@content',
        mail: 'a[href^="mailto:"]@href',
      }),
      {
        downloads: ['/files/widget.pdf', '/files/widget.zip'],
        description: ['A thing'],
        mail: ['mailto:x@example.test'],
      },
    );
  });

  it('no match gives an empty list; an invalid selector gives an empty list, not an exception', () => {
    assert.deepEqual(selectFields(HTML, { none: 'table td', bad: 'a[[' }), { none: [], bad: [] });
  });

  it('no selectors: no DOM, empty result', () => {
    assert.deepEqual(selectFields(HTML, {}), {});
  });

  it('attribute names are case-insensitive, as in HTML', () => {
    const old =
      '<BODY><A HREF="/one.html" CLASS="nav">One</A><a Class="nav" hRef="/two.html">Two</a><a href="/3">3</a></BODY>';
    assert.deepEqual(selectFields(old, { nav: 'a.nav@href', all: 'a[href]@href', text: '.nav' }), {
      nav: ['/one.html', '/two.html'],
      all: ['/one.html', '/two.html', '/3'],
      text: ['One', 'Two'],
    });
  });

  it('works on malformed HTML', () => {
    assert.deepEqual(selectFields('<p class=x>one<p class=x>two<div><span class=x>three', { x: '.x' }), {
      x: ['one', 'two', 'three'],
    });
  });
});

describe('parseFieldSelector and invalidSelectors', () => {
  it('splits the attribute suffix, and only a real one', () => {
    assert.deepEqual(parseFieldSelector('a.download@href'), { css: 'a.download', attribute: 'href' });
    assert.deepEqual(parseFieldSelector('img@data-src'), { css: 'img', attribute: 'data-src' });
    assert.deepEqual(parseFieldSelector('a[href*="@example"]'), {
      css: 'a[href*="@example"]',
      attribute: null,
    });
    assert.deepEqual(parseFieldSelector('h1'), { css: 'h1', attribute: null });
  });

  it('names the selectors that do not compile', () => {
    assert.deepEqual(invalidSelectors({ ok: 'div > p.x', attr: 'a@href', bad: 'a[[', empty: '@href' }), [
      'bad',
      'empty',
    ]);
  });
});

describe('selectFields text from one walk', () => {
  /** What the text of a match was before: linkedom's textContent of each match, collapsed. */
  function naive(html: string, css: string): string[] {
    const { document } = parseHTML(html);
    return [...document.querySelectorAll(css)]
      .map((e) => (e.textContent as string).replace(/\s+/g, ' ').trim())
      .filter((v) => v !== '');
  }

  function randomMarkup(seed: number): string {
    let x = seed;
    const rnd = () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return x / 2 ** 31;
    };
    const tags = ['div', 'p', 'span', 'li', 'ul', 'td', 'tr', 'table', 'b', 'script', 'svg', 'title', 'pre'];
    const texts = [
      ' a ',
      'b',
      '\n\t c  d ',
      '',
      '  ',
      'e\u00a0f',
      '<![CDATA[ g ]]>',
      '<!-- h -->',
      '&amp; i',
    ];
    let html = '';
    for (let i = 0; i < 60; i++) {
      const r = rnd();
      const tag = tags[Math.floor(rnd() * tags.length)]!;
      if (r < 0.4) html += `<${tag}>`;
      else if (r < 0.6) html += `</${tag}>`;
      else html += texts[Math.floor(rnd() * texts.length)]!;
    }
    return html;
  }

  it('equals the collapsed textContent of every match, on random nested markup', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const html = randomMarkup(seed);
      for (const css of ['div', 'p', 'span', 'li', 'td', '*', 'body']) {
        assert.deepEqual(selectFields(html, { x: css }).x, naive(html, css), `seed ${seed}, ${css}: ${html}`);
      }
    }
  });
});
