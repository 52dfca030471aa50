import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeJsonText, safeJson, visibleText } from '../../../functions/core/text/safe-text.ts';

/** Every character the policy names, and some it leaves alone. */
const UNSAFE = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).filter((c) => c !== '\t' && c !== '\n'),
  '\u007f',
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(0x80 + i)),
  '\u061c',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];
const RAW_UNSAFE = new RegExp(
  `[${UNSAFE.map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`,
);

describe('the crawled-text policy', () => {
  it('JSON: no unsafe character raw, and the same value parses back', () => {
    const value = { title: UNSAFE.join(''), tags: ['\u009b31m', 'ok ü 漢字 👩‍👩‍👧'], n: 3 };
    const raw = JSON.stringify(value);
    assert.match(raw, RAW_UNSAFE, 'JSON.stringify leaves C1, DEL and bidi raw');
    const text = safeJson(value);
    assert.doesNotMatch(text, RAW_UNSAFE);
    assert.deepEqual(JSON.parse(text), value);
    assert.deepEqual(JSON.parse(safeJson(value, 2)), value);
    assert.equal(escapeJsonText(raw), text, 'a JSON line as written is escaped the same way');
    assert.equal(safeJson('\u202e'), '"\\u202e"');
  });

  it('text: every unsafe character shown as \\xNN or \\uNNNN; tab kept, line feeds kept unless one line', () => {
    for (const char of UNSAFE)
      assert.doesNotMatch(visibleText(`a${char}b`), RAW_UNSAFE, char.charCodeAt(0).toString(16));
    assert.equal(visibleText('\u001b]0;title\u0007'), '\\x1b]0;title\\x07');
    assert.equal(visibleText('\u009b2J \u007f \u202eabc \u2028'), '\\x9b2J \\x7f \\u202eabc \\u2028');
    assert.equal(visibleText('a\tb\nc'), 'a\tb\nc');
    assert.equal(visibleText('a\nb', { lines: false }), 'a\\x0ab');
    assert.equal(visibleText('ü 漢字 👩‍👩‍👧'), 'ü 漢字 👩‍👩‍👧');
  });
});
