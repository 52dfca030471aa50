import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NameTable } from '../../../functions/core/html/name-table.ts';

const NAMES = ['a', 'link', 'http-equiv', 'xlink:href', 'h1', 'blockquote'];
const table = new NameTable(NAMES.map((name, i) => [name, i] as const));

function lookup(source: string, start = 0, end = source.length): string | undefined {
  const slot = table.slotOf(source, start, end);
  return slot < 0 ? undefined : `${table.name(slot)}=${table.value(slot)}`;
}

describe('NameTable', () => {
  it('finds names in place, ASCII case-insensitively', () => {
    assert.equal(lookup('<LINK rel=x>', 1, 5), 'link=1');
    assert.equal(lookup('Http-Equiv'), 'http-equiv=2');
    assert.equal(lookup('XLINK:HREF'), 'xlink:href=3');
    assert.equal(lookup('H1'), 'h1=4');
    assert.equal(lookup('a'), 'a=0');
    assert.equal(table.get('BlockQuote', 0, 10, -1), 5);
  });

  it('answers as names.get(name.toLowerCase()) would, non-ASCII included', () => {
    for (const name of [
      '',
      'b',
      'lin',
      'links',
      'h2',
      'blockquotes',
      'l\u0130nk',
      '\u212A',
      'lin\u212A',
      'a\u0301',
    ]) {
      const slot = table.slotOf(name, 0, name.length);
      const expected = NAMES.indexOf(name.toLowerCase());
      assert.equal(slot < 0 ? -1 : table.value(slot), expected, JSON.stringify(name));
    }
    // The Kelvin sign lowercases to an ASCII k.
    assert.equal(lookup('LIN\u212A'), 'link=1');
  });

  it('refuses names that are not lowercase ASCII', () => {
    assert.throws(() => new NameTable([['Link', 1]]));
    assert.throws(() => new NameTable([['l\u00efnk', 1]]));
  });
});
