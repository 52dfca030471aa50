import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvField, csvRecord } from '../../../functions/core/dataset/csv.ts';
import { parseCsv } from '../../fixtures/csv-reader.ts';

const NASTY = [
  'plain',
  '',
  'a,b',
  'say "hi"',
  '"',
  '""',
  'line\nbreak',
  'carriage\rreturn',
  'crlf\r\nend',
  '  padded  ',
  ',leading comma',
  'trailing quote"',
  '=1+1',
  'üñíçødé ✓ 漢字 𝄞 👩‍👩‍👧',
  'e\u0301',
  'tab\there',
  '\u2028line separator',
  'x'.repeat(10_000),
];

describe('CSV (RFC 4180)', () => {
  it('quotes only fields with a comma, a quote, CR or LF, doubling quotes', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('line\nbreak'), '"line\nbreak"');
    // A lone CR is shown as \x0d (it rewinds a terminal line): see the policy below.
    assert.equal(csvField('cr\r'), 'cr\\x0d');
    assert.equal(csvField('  padded  '), '  padded  ');
    assert.equal(csvField('tab\there'), 'tab\there');
  });

  it('ends each record in CRLF and joins fields with commas', () => {
    assert.equal(csvRecord(['a', 'b,c', '']), 'a,"b,c",\r\n');
    assert.equal(csvRecord([]), '\r\n');
  });

  it('writes null and undefined as empty, other values as JSON in one cell', () => {
    assert.equal(
      csvRecord([null, undefined, 3.5, true, ['a', 'b,"c"'], { k: 'v' }]),
      ',,3.5,true,"[""a"",""b,\\""c\\""""]","{""k"":""v""}"\r\n',
    );
    const [cells] = parseCsv(csvRecord([['x, y', 'z']]));
    assert.deepEqual(JSON.parse(cells![0]!), ['x, y', 'z']);
  });

  it('reads back every nasty value, one record per row: exactly, but CR shown as \\x0d and formulas prefixed', () => {
    const rows = [NASTY, [...NASTY].reverse(), NASTY.map((v) => `${v},${v}`)];
    const text = rows.map((row) => csvRecord(row)).join('');
    const shown = (v: string) => {
      const visible = v.replaceAll('\r', '\\x0d').replaceAll('\u2028', '\\u2028');
      return /^[=+\-@\t]/.test(visible) ? `'${visible}` : visible;
    };
    assert.deepEqual(
      parseCsv(text),
      rows.map((row) => row.map(shown)),
    );
  });
});

describe('CSV cells of crawled text (core/text/safe-text.ts)', () => {
  it("prefixes a ' to cells that begin like a formula (OWASP), not to plain numbers", () => {
    assert.equal(csvField("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
    assert.equal(csvField('+1+cmd'), "'+1+cmd");
    assert.equal(csvField('-2+3'), "'-2+3");
    assert.equal(csvField('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvField('\t=1'), "'\t=1");
    // CR is shown as \x0d, which no spreadsheet runs.
    assert.equal(csvField('\r=1'), '\\x0d=1');
    assert.equal(csvField('=1,2'), `"'=1,2"`);
    assert.equal(csvField('-12.5'), '-12.5');
    assert.equal(csvField('+3e5'), '+3e5');
    assert.equal(csvField(-4), '-4');
    assert.equal(csvField('a=b'), 'a=b');
  });

  it('writes formulas raw when asked (--csv-raw-formulas)', () => {
    assert.equal(csvField('=1+1', { rawFormulas: true }), '=1+1');
    assert.equal(csvRecord(['@x', '-y'], { rawFormulas: true }), '@x,-y\r\n');
  });

  it('shows ESC, C1, DEL and bidi controls visibly; JSON cells escape them as \\uXXXX and still parse', () => {
    assert.equal(
      csvField('a\u001b[2Jb\u009b31m\u007f\u202egnp.exe'),
      'a\\x1b[2Jb\\x9b31m\\x7f\\u202egnp.exe',
    );
    assert.equal(csvField('x\u2066y\u2069'), 'x\\u2066y\\u2069');
    const cell = csvField(['\u009b', '\u202e', '\u001b']);
    assert.equal(cell, '"[""\\u009b"",""\\u202e"",""\\u001b""]"');
    const [cells] = parseCsv(`${cell}\r\n`);
    assert.deepEqual(JSON.parse(cells![0]!), ['\u009b', '\u202e', '\u001b']);
  });
});
