/**
 * Random markup never makes the parsing functions throw, and on messy but real-world markup the
 * streaming extractor finds the same <a href> values as a DOM built by linkedom (attribute names
 * in lower case: linkedom keeps their case, so its a[href] misses HREF=).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseHTML } from 'linkedom';
import { decodeBody, isHtml } from '../../../functions/core/html/charset.ts';
import { extractPage } from '../../../functions/core/html/extract.ts';
import { prescanCharset } from '../../../functions/core/html/meta-prescan.ts';
import { selectFields } from '../../../functions/core/html/select.ts';

// Deterministic pseudo-random numbers (mulberry32), so a failure reproduces.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  '<',
  '>',
  '</',
  '/>',
  '<!--',
  '-->',
  '<!',
  '<?',
  '"',
  "'",
  '=',
  ' ',
  '\n',
  '&',
  '&amp;',
  '&#',
  '&#x',
  ';',
  'a',
  'href',
  'src',
  'srcset',
  'rel',
  'nofollow',
  'meta',
  'charset',
  'http-equiv',
  'refresh',
  'content',
  'url=',
  'base',
  'title',
  'script',
  'style',
  'pre',
  'svg',
  'picture',
  'source',
  'img',
  'link',
  'canonical',
  'robots',
  'noindex',
  ',',
  '1x',
  'x.html',
  'javascript:',
  '\u0000',
  '日本',
  '😀',
  '\uD800',
];

function randomMarkup(rnd: () => number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += PIECES[Math.floor(rnd() * PIECES.length)];
  return out;
}

describe('robustness', () => {
  it('random markup never throws', () => {
    const rnd = random(20240601);
    const encoder = new TextEncoder();
    for (let i = 0; i < 1500; i++) {
      const html = randomMarkup(rnd, 1 + Math.floor(rnd() * 200));
      const facts = extractPage(html, 'https://example.test/a/b', { text: true, agent: 'crawlstack' });
      for (const link of facts.links) {
        assert.equal(link.href, link.href.trim(), 'hrefs are trimmed');
        assert.notEqual(link.href, '');
        assert.ok(!/^\s*javascript:/i.test(link.href), link.href);
      }
      const body = encoder.encode(html);
      assert.doesNotThrow(() => decodeBody(body, null));
      assert.doesNotThrow(() => prescanCharset(body));
      assert.doesNotThrow(() => isHtml(null, body));
      // Random bytes, not only UTF-8 text.
      const bytes = Uint8Array.from({ length: 64 }, () => Math.floor(rnd() * 256));
      assert.doesNotThrow(() => decodeBody(bytes, rnd() < 0.5 ? null : 'text/html; charset=shift_jis'));
    }
  });

  it('selectFields on random markup never throws', () => {
    const rnd = random(7);
    for (let i = 0; i < 100; i++) {
      const html = randomMarkup(rnd, 100);
      assert.doesNotThrow(() => selectFields(html, { a: 'a@href', t: 'title', p: 'pre' }));
    }
  });

  it('finds the same <a href> values as linkedom on messy markup', () => {
    const html = `<!DOCTYPE html>
<HTML><HEAD><TITLE>Messy</TITLE>
<script>if (a < b && c > d) { document.write("<a href='no.html'>") }</script>
</HEAD><BODY>
<table><tr><td><a href=one.html>1</td><td><A href='two.html'>2</A></tr></table>
<p>unclosed <a href="three.html?a=1&amp;b=2">3<p>next <a href = four.html >4</a>
<ul><li><a href="&#x2F;five.html">5<li><a href="six.html" href="ignored.html">6</ul>
<div><span><a href="  seven.html  ">7</a></span></div></div></div>
<!-- <a href="comment.html"> -->
<form><a href="eight.html">8</a></form>
<svg><a href="nine.html"><text>9</text></a></svg>
<noscript><a href="ten.html">10</a></noscript>
<textarea><a href="no-textarea.html"></textarea>
<a href="eleven.html"/>11
</BODY></HTML>`;
    const { document } = parseHTML(html);
    const fromDom: string[] = [];
    for (const a of document.querySelectorAll('a[href]')) {
      const href = (a.getAttribute('href') as string).trim();
      if (href !== '') fromDom.push(href);
    }
    const fromStream = extractPage(html, 'https://example.test/')
      .links.filter((l) => l.tag === 'a')
      .map((l) => l.href);
    assert.deepEqual(fromStream, fromDom);
    assert.equal(fromStream.length, 11);
  });
});
