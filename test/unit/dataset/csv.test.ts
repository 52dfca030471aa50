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
    assert.equal(csvField('cr\r'), '"cr\r"');
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

  it('reads back every nasty value exactly, one record per row', () => {
    const rows = [NASTY, [...NASTY].reverse(), NASTY.map((v) => `${v},${v}`)];
    const text = rows.map(csvRecord).join('');
    assert.deepEqual(parseCsv(text), rows);
  });
});
