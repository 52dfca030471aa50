/**
 * The Gunzip port over node:zlib: a `.xml.gz` sitemap inflated with a cap on the output, so a
 * gzip bomb costs the cap; corrupt input is an outcome, not an exception.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { gunzipFile } from '../../../functions/adapters/http/gunzip-file.ts';

describe('gunzipFile', () => {
  const text = Buffer.from(`<urlset>${'<url><loc>http://a.test/</loc></url>'.repeat(5000)}</urlset>`);

  test('inflates a whole file', async () => {
    const result = await gunzipFile(gzipSync(text), 10_000_000);
    assert.ok(result.ok);
    assert.equal(result.truncated, false);
    assert.deepEqual(Buffer.from(result.bytes), text);
  });

  test('stops at the cap and keeps what came before it (a bomb costs the cap)', async () => {
    const capped = await gunzipFile(gzipSync(text), 1000);
    assert.ok(capped.ok);
    assert.equal(capped.truncated, true);
    assert.deepEqual(Buffer.from(capped.bytes), text.subarray(0, 1000));
    // 20 MB of zeros in 20 KB: only the first megabyte is kept
    const bomb = gzipSync(Buffer.alloc(20_000_000));
    const out = await gunzipFile(bomb, 1_000_000);
    assert.ok(out.ok && out.truncated);
    assert.equal(out.bytes.length, 1_000_000);
  });

  test('a file cut short yields what it holds; bytes that are not gzip are an outcome', async () => {
    const gz = gzipSync(text);
    const cut = await gunzipFile(gz.subarray(0, gz.length - 20), 10_000_000);
    assert.ok(cut.ok);
    assert.ok(cut.bytes.length > 0 && text.subarray(0, cut.bytes.length).equals(Buffer.from(cut.bytes)));
    const garbage = await gunzipFile(Buffer.from('<urlset></urlset>'), 1000);
    assert.equal(garbage.ok, false);
    assert.match(garbage.ok ? '' : garbage.message, /not a gzip file/);
  });
});
