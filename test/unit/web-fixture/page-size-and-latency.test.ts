/**
 * The fixture web's realistic options (issue 10): pages padded to 30-100 KB of markup that
 * compresses like real HTML and adds no links, and servers that answer after a seeded delay.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { extractPage } from '../../../functions/core/html/extract.ts';
import { generateWeb } from '../../fixtures/web/generate-web.ts';
import { respond } from '../../fixtures/web/resolve-url.ts';
import { serveWeb } from '../../fixtures/web/serve-web.ts';

const origins = ['http://127.0.1.1:80', 'http://127.0.1.2:80', 'http://127.0.1.3:80'];

describe('pageBytes', () => {
  const plain = generateWeb({ seed: 5, hosts: 3, goodPages: 60 });
  const padded = generateWeb({ seed: 5, hosts: 3, goodPages: 60, pageBytes: { min: 30_000, max: 100_000 } });
  const pages = Array.from({ length: plain.pageCount }, (_, page) => {
    const host = plain.pageHost[page]!;
    const body = (web: typeof plain) => respond(web, origins, host, web.paths[page]!).body as string;
    return { url: `${origins[host]}${plain.paths[page]}`, plain: body(plain), padded: body(padded) };
  });

  test('every good page is padded into the range, and the same page always to the same size', () => {
    for (const p of pages) {
      const size = Buffer.byteLength(p.padded);
      assert.ok(size >= 30_000 && size <= 100_000 + 4_000, `${p.url}: ${size} bytes`);
      assert.ok(p.padded.startsWith('<!doctype html>') && p.padded.endsWith('</body></html>\n'));
    }
    const sizes = pages.map((p) => Buffer.byteLength(p.padded));
    assert.ok(Math.max(...sizes) - Math.min(...sizes) > 30_000, 'sizes spread over the range');
    const again = respond(padded, origins, padded.pageHost[7]!, padded.paths[7]!).body;
    assert.equal(again, pages[7]!.padded);
  });

  test('the padding adds no link and keeps the title', () => {
    for (const p of pages) {
      const before = extractPage(p.plain, p.url);
      const after = extractPage(p.padded, p.url);
      assert.deepEqual(
        after.links.map((l) => l.href),
        before.links.map((l) => l.href),
      );
      assert.ok(before.links.length > 0);
      assert.equal(after.title, before.title);
    }
  });

  test('padded pages compress like real HTML (3:1 to 8:1), not like filler', () => {
    const raw = pages.reduce((n, p) => n + Buffer.byteLength(p.padded), 0);
    const gzipped = pages.reduce((n, p) => n + gzipSync(p.padded).length, 0);
    const ratio = raw / gzipped;
    assert.ok(ratio >= 3 && ratio <= 8, `gzip ratio ${ratio.toFixed(2)}`);
  });

  test('without the option pages are as before, and a bad range is refused', () => {
    const again = generateWeb({ seed: 5, hosts: 3, goodPages: 60 });
    assert.equal(again.options.pageBytes, null);
    assert.equal(respond(again, origins, 0, again.paths[0]!).body, pages[0]!.plain);
    assert.throws(() => generateWeb({ seed: 5, pageBytes: { min: 100, max: 10 } }), /pageBytes/);
  });
});

describe('serveWeb latencyMs', () => {
  test('each response waits within the range', async () => {
    const web = generateWeb({ seed: 5, hosts: 2, goodPages: 20 });
    const served = await serveWeb(web, { latencyMs: { min: 100, max: 150 }, seed: 3 });
    try {
      for (let i = 0; i < 4; i++) {
        const started = performance.now();
        const response = await fetch(served.urlOf(i));
        await response.text();
        const ms = performance.now() - started;
        assert.equal(response.status, 200);
        assert.ok(ms >= 99, `answered after ${ms.toFixed(0)} ms`);
      }
    } finally {
      await served.close();
    }
    await assert.rejects(serveWeb(web, { latencyMs: { min: 5, max: 1 } }), /latencyMs/);
  });
});
