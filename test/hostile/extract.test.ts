/**
 * `extract` (CSS selectors, a linkedom DOM) on hostile pages: deep nesting is bounded when the DOM
 * is built (as browsers do), so parsing stays linear; broad selectors over nested content are
 * capped per page (`maxExtractValues`, `maxExtractChars`), with what was dropped counted.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { MAX_DOM_DEPTH } from '../../functions/core/html/bound-nesting.ts';
import { selectFields } from '../../functions/core/html/select.ts';
import { crawl } from '../e2e/helpers.ts';
import { deeplyNested, nestedText } from '../fixtures/hostile-routes.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';

const DEPTH = 280_000;

describe('extract on hostile pages', () => {
  test('280,000 nested divs (1.4 MB): the DOM is built at most 512 deep, the deeper tags counted', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes({ '/deep': deeplyNested(DEPTH) })]);
    try {
      const o = site!.origin;
      const run = await crawl({
        seeds: [`${o}/deep`],
        maxPages: 1,
        extract: { title: 'title', divs: 'div' },
      });
      const page = run.page(`${o}/deep`);
      assert.equal(page.status, 200);
      assert.ok(page.bytes > 1_400_000);
      // html, body and 510 divs make 512 levels; every deeper <div> and its </div> were left out
      assert.equal(page.dropped?.extractNesting, DEPTH - (MAX_DOM_DEPTH - 2));
      assert.deepEqual(page.extracted?.title, ['deep']);
      assert.equal(page.extracted?.divs?.length, MAX_DOM_DEPTH - 2);
      assert.ok((page.extracted!.divs as string[]).every((text) => text === 'bottom'));
    } finally {
      await closeAll([site!]);
    }
  });

  test('a broad selector over nested text: values and characters capped per page, the rest counted', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [siteRoutes({ '/nested': nestedText(500, 20) })]);
    try {
      const o = site!.origin;
      const run = await crawl({
        seeds: [`${o}/nested`],
        maxPages: 1,
        extract: { divs: 'div' },
        maxExtractChars: 100_000,
        maxExtractValues: 1000,
      });
      const page = run.page(`${o}/nested`);
      const values = page.extracted!.divs as string[];
      const chars = values.reduce((n, v) => n + v.length, 0);
      assert.equal(chars, 100_000, 'the character cap is filled, and not passed');
      // Each div's text holds the text of the divs inside it: 500 values of 100 to 50,000 characters.
      assert.ok(values.length < 10, `${values.length} values`);
      assert.equal(values.length + (page.dropped?.extractValues ?? 0), 500, 'each value recorded or counted');
      assert.ok((page.dropped?.extractChars ?? 0) > 8_000_000, JSON.stringify(page.dropped));
      const line = statSync(join(run.outDir, 'pages.jsonl')).size;
      assert.ok(line < 120_000, `pages.jsonl is ${line} bytes for a ${page.bytes}-byte page`);
    } finally {
      await closeAll([site!]);
    }
  });

  test('maxExtractValues stops recording values, counted', () => {
    const html = `<ul>${'<li>item</li>'.repeat(50)}</ul><p>para</p>`;
    const selected = selectFields(html, { items: 'li', para: 'p' }, { maxValues: 10, maxChars: 1_000_000 });
    assert.equal(selected.fields.items!.length, 10);
    assert.deepEqual(selected.fields.para, []);
    assert.equal(selected.droppedValues, 41);
    assert.equal(selected.droppedChars, 41 * 4);
  });

  test('maxExtractChars cuts the value that reaches it, and attribute values count too', () => {
    const html = `<a href="${'x'.repeat(300)}">a</a><a href="/b">b</a>`;
    const selected = selectFields(html, { hrefs: 'a@href' }, { maxValues: 100, maxChars: 250 });
    assert.deepEqual(selected.fields.hrefs, ['x'.repeat(250)]);
    assert.equal(selected.droppedValues, 1);
    assert.equal(selected.droppedChars, 50 + 2);
  });
});
