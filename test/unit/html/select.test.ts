import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { invalidSelectors, parseFieldSelector, selectFields } from '../../../functions/core/html/select.ts';

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
