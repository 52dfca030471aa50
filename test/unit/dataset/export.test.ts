/**
 * `crawlstack export` writes crawled text under the one policy (core/text/safe-text.ts): no raw
 * ESC, C1, DEL or bidi control in JSON Lines or CSV, formulas guarded in CSV unless asked, and a
 * --fields name that no record has is an error naming it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { exportCrawl } from '../../../functions/cli/cli-export.ts';
import { UsageError } from '../../../functions/cli/cli-options.ts';
import { tempDir } from '../../e2e/helpers.ts';
import { parseCsv } from '../../fixtures/csv-reader.ts';

const HOSTILE_TITLE = 'a\u001b]0;pwned\u0007b\u009b2Jc\u007fd\u202egnp.exe\u2066';
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function dataset(): string {
  const path = join(tempDir(), 'dataset.jsonl');
  const rows = [
    { url: 'http://a.test/', title: HOSTILE_TITLE, formula: "=cmd|' /C calc'!A0" },
    { url: 'http://b.test/', title: 'plain', formula: '@SUM(1)', tags: ['\u009b'] },
  ];
  // As a crawl writes it: JSON.stringify, which leaves C1, DEL and bidi raw.
  writeFileSync(path, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return path;
}

async function run(options: Omit<Parameters<typeof exportCrawl>[1], 'path'>, path = dataset()) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const result = await exportCrawl(out, { path, ...options });
  return { text, result };
}

describe('export: crawled text is terminal-safe and file-safe', () => {
  it('JSON Lines, whole lines and --fields: no raw control or bidi character, the same values parse back', async () => {
    for (const fields of [undefined, ['title', 'url']]) {
      const { text } = await run({ format: 'jsonl', fields });
      assert.doesNotMatch(text, RAW_CONTROL, `fields ${fields}`);
      const rows = text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.equal(rows[0].title, HOSTILE_TITLE);
    }
  });

  it("CSV: controls shown as escapes, formulas prefixed with '; --csv-raw-formulas keeps them", async () => {
    const { text } = await run({ format: 'csv' });
    assert.doesNotMatch(text.replaceAll('\r\n', ''), RAW_CONTROL, 'CRLF ends records, nothing else');
    const [header, a, b] = parseCsv(text);
    assert.deepEqual(header, ['url', 'title', 'formula', 'tags']);
    assert.equal(a![1], 'a\\x1b]0;pwned\\x07b\\x9b2Jc\\x7fd\\u202egnp.exe\\u2066');
    assert.equal(a![2], "'=cmd|' /C calc'!A0");
    assert.equal(b![2], "'@SUM(1)");
    assert.deepEqual(JSON.parse(b![3]!), ['\u009b']);
    const raw = parseCsv((await run({ format: 'csv', rawFormulas: true })).text);
    assert.equal(raw[1]![2], "=cmd|' /C calc'!A0");
    assert.equal(raw[2]![2], '@SUM(1)');
  });

  it('--fields with a name no record has: an error naming it and the fields there are', async () => {
    for (const format of ['jsonl', 'csv'] as const) {
      await assert.rejects(
        run({ format, fields: ['url', 'nosuch'] }),
        (error: unknown) =>
          error instanceof UsageError &&
          /--fields: no record of dataset\.jsonl has "nosuch" \(its fields: url, title, formula, tags\)/.test(
            error.message,
          ),
      );
    }
    // A field some records lack is fine: empty where missing.
    const { text } = await run({ format: 'csv', fields: ['url', 'tags'] });
    assert.deepEqual(parseCsv(text)[1], ['http://a.test/', '']);
  });
});
