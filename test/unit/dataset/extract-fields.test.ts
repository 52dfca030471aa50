import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { datasetRow } from '../../../functions/core/dataset/dataset-row.ts';
import { extractSelectors, shapeExtracted } from '../../../functions/core/dataset/extract-fields.ts';
import { selectFields } from '../../../functions/core/html/select.ts';
import type { PageRecord } from '../../../functions/core/types.ts';

function configWith(extract: unknown) {
  return parseCrawlConfig({ seeds: ['https://example.com/'], extract });
}

describe('extract fields', () => {
  const extract = {
    title: { selector: 'h1' },
    tags: { selector: '.tag', all: true },
    links: { selector: 'a', attr: 'href', all: true },
    image: { selector: 'img', attr: 'src' },
    missing: { selector: '.nothing' },
    shorthand: 'li@data-id',
  };
  const html = `<h1>First</h1><h1>Second</h1><span class="tag">a, b</span><span class="tag">"c"</span>
    <a href="/x">x</a><a href="/y">y</a><img src="/i.png"><ul><li data-id="1">one</li><li data-id="2">two</li></ul>`;

  it('are accepted by the config schema in both forms', () => {
    const result = configWith(extract);
    assert.ok(result.ok, result.ok ? '' : result.problems.join('\n'));
    assert.deepEqual(result.config.extract.title, { selector: 'h1', all: false });
  });

  it('become selector strings for selectFields, and values shaped per field', () => {
    const result = configWith(extract);
    assert.ok(result.ok);
    const selectors = extractSelectors(result.config.extract);
    assert.deepEqual(selectors, {
      title: 'h1',
      tags: '.tag',
      links: 'a@href',
      image: 'img@src',
      missing: '.nothing',
      shorthand: 'li@data-id',
    });
    const shaped = shapeExtracted(result.config.extract, selectFields(html, selectors).fields);
    assert.deepEqual(shaped, {
      title: 'First',
      tags: ['a, b', '"c"'],
      links: ['/x', '/y'],
      image: '/i.png',
      missing: null,
      shorthand: ['1', '2'],
    });
  });

  it('a dataset row is the page URL first, then the fields; none for a page without fields', () => {
    const record = {
      url: 'https://example.com/p',
      extracted: { title: 'T', tags: ['a'] },
    } as unknown as PageRecord;
    const row = datasetRow(record)!;
    assert.deepEqual(Object.keys(row), ['url', 'title', 'tags']);
    assert.deepEqual(row, { url: 'https://example.com/p', title: 'T', tags: ['a'] });
    assert.equal(datasetRow({ url: 'https://example.com/q' } as PageRecord), undefined);
  });

  it('bad fields are refused with the field and the problem named', () => {
    const problems = (extractValue: unknown) => {
      const result = configWith(extractValue);
      assert.equal(result.ok, false);
      return result.ok ? '' : result.problems.join('\n');
    };
    assert.match(problems({ url: 'h1' }), /^extract\.url: "url" is the page's URL in dataset\.jsonl/);
    assert.match(
      problems({ t: { selector: 'a', attr: 'no spaces' } }),
      /^extract\.t\.attr: expected an attribute name/,
    );
    assert.match(problems({ t: { css: 'h1' } }), /extract\.t\.selector: .*expected string/);
    assert.match(problems({ t: { css: 'h1' } }), /extract\.t: unknown key "css"/);
    assert.match(problems({ t: { selector: 'h1', all: 'yes' } }), /^extract\.t\.all: .*expected boolean/);
    assert.match(problems({ t: 5 }), /^extract\.t: expected string or object \(got 5\)$/);
    assert.match(problems({ t: '' }), /^extract\.t: /);
    assert.match(problems({ '': 'h1' }), /^extract\.: a field name cannot be empty/);
  });
});
