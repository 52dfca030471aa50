/**
 * What a crawl makes of page content: exact duplicates (recorded, their links not followed),
 * URL spellings that collapse to one fetch (tracking parameters, session ids, fragments, query
 * order), and titles of pages in legacy encodings labelled in the header or in a meta tag.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { closeAll, pageHtml, siteRoutes, startSites } from '../fixtures/sites.ts';
import { crawl, pagePaths } from './helpers.ts';

/** Bytes of `text` in windows-1252 (Latin-1 plus the few punctuation marks the tests use). */
function cp1252(text: string): Buffer {
  const extra: Record<string, number> = { '€': 0x80, '–': 0x96, '“': 0x93, '”': 0x94, '’': 0x92 };
  return Buffer.from(
    [...text].map((ch) => {
      const code = extra[ch] ?? ch.charCodeAt(0);
      if (code > 0xff) throw new Error(`no windows-1252 byte for ${ch}`);
      return code;
    }),
  );
}

/** '日本語のページ' in Shift_JIS. */
const SJIS_TITLE = Buffer.from([
  0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x79, 0x81, 0x5b, 0x83, 0x57,
]);

function sendBytes(res: ServerResponse, type: string, ...parts: (string | Buffer)[]) {
  res.writeHead(200, { 'content-type': type });
  res.end(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p))));
}

describe('content', () => {
  test('an exact duplicate under another URL is recorded with duplicateOf and its links are not followed', async () => {
    // the same bytes under two folders: the relative link resolves differently in each
    const body = pageHtml({ title: 'same page', links: ['child'] });
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': { links: ['/one/page', '/two/page'] },
        '/one/page': (_req, res) => sendBytes(res, 'text/html', body),
        '/two/page': (_req, res) => sendBytes(res, 'text/html', body),
        '/one/child': { title: 'child of one' },
        '/two/child': { title: 'child of two' },
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`] });
      assert.deepEqual(pagePaths(site!), ['/', '/one/page', '/two/page', '/one/child']);
      const dup = run.page(`${o}/two/page`);
      assert.equal(dup.duplicateOf, `${o}/one/page`);
      assert.equal(dup.contentHash, run.page(`${o}/one/page`).contentHash);
      assert.equal(dup.title, 'same page');
      assert.ok(dup.warc, 'a duplicate is still archived');
      assert.equal(run.page(`${o}/one/page`).duplicateOf, undefined);
      assert.equal(run.summary.duplicates, 1);
    } finally {
      await closeAll([site!]);
    }
  });

  test('tracking parameters, session ids, fragments and query order collapse to one fetch', async () => {
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': {
          links: [
            '/p',
            '/p?utm_source=news&utm_medium=mail',
            '/p?UTM_Campaign=x',
            '/p?gclid=abc',
            '/p?sid=123',
            '/p;jsessionid=0A1B2C',
            '/p#section',
            'p#other',
            '/./p',
            '/q?b=2&a=1',
            '/q?a=1&b=2&fbclid=z',
            '/q?a=1&b=2#top',
          ],
        },
        '/p': { title: 'p' },
        '/q?a=1&b=2': { title: 'q' },
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`] });
      assert.deepEqual(pagePaths(site!), ['/', '/p', '/q?a=1&b=2']);
      assert.deepEqual([...run.linksOf(`${o}/`).keys()], [`${o}/p`, `${o}/q?a=1&b=2`]);
      assert.equal(run.page(`${o}/p`).title, 'p');
      assert.equal(run.pages.length, 3);
    } finally {
      await closeAll([site!]);
    }
  });

  test("the crawl's own files hold crawled text escaped: no raw C1, DEL or bidi controls", async () => {
    const hostile = 'A\u009b31mB\u007fC\u202eD';
    const [site] = await startSites(['127.0.0.4'], () => [siteRoutes({ '/': { title: hostile } })]);
    try {
      const run = await crawl({ seeds: [`${site!.origin}/`] });
      const raw = readFileSync(join(run.outDir, 'pages.jsonl'), 'utf8');
      assert.doesNotMatch(raw, /[\u007f-\u009f\u202a-\u202e]/, 'escaped as \\uXXXX');
      assert.equal(run.page(`${site!.origin}/`).title, hostile, 'the same text once parsed');
    } finally {
      await closeAll([site!]);
    }
  });

  test('windows-1252 and Shift_JIS titles, labelled in the header or in a meta tag', async () => {
    const western = 'Café – “quoted” 5 €';
    const japanese = '日本語のページ';
    assert.equal(new TextDecoder('windows-1252').decode(cp1252(western)), western);
    assert.equal(new TextDecoder('shift_jis').decode(SJIS_TITLE), japanese);
    const [site] = await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': { links: ['/w-header', '/w-meta', '/j-header', '/j-meta', '/j-http-equiv'] },
        '/w-header': (_req, res) =>
          sendBytes(
            res,
            'text/html; charset=windows-1252',
            '<html><head><title>',
            cp1252(western),
            '</title>',
          ),
        '/w-meta': (_req, res) =>
          sendBytes(
            res,
            'text/html',
            '<html><head><meta charset="windows-1252"><title>',
            cp1252(`${western} meta`),
            '</title>',
          ),
        '/j-header': (_req, res) =>
          sendBytes(res, 'text/html; charset=Shift_JIS', '<html><head><title>', SJIS_TITLE, '</title>'),
        '/j-meta': (_req, res) =>
          sendBytes(
            res,
            'text/html',
            '<html><head><meta charset="shift_jis"><title>',
            SJIS_TITLE,
            ' meta</title>',
          ),
        '/j-http-equiv': (_req, res) =>
          sendBytes(
            res,
            'text/html',
            '<html><head><meta http-equiv="Content-Type" content="text/html; charset=x-sjis"><title>',
            SJIS_TITLE,
            ' equiv</title>',
          ),
      }),
    ]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`] });
      assert.equal(run.page(`${o}/w-header`).title, western);
      assert.equal(run.page(`${o}/w-meta`).title, `${western} meta`);
      assert.equal(run.page(`${o}/j-header`).title, japanese);
      assert.equal(run.page(`${o}/j-meta`).title, `${japanese} meta`);
      assert.equal(run.page(`${o}/j-http-equiv`).title, `${japanese} equiv`);
    } finally {
      await closeAll([site!]);
    }
  });
});
