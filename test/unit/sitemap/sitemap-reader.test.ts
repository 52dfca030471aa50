/**
 * The sitemap reader: the XML urlset and index forms (namespaced or not, any prefix, CDATA,
 * character references, extension elements ignored), the text form, gzip left to the caller,
 * the protocol's scope and limits, and chunked input read exactly like a whole body.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  isGzip,
  readSitemap,
  SITEMAP_MAX_ENTRIES,
  SitemapReader,
} from '../../../functions/core/sitemap/sitemap-reader.ts';
import { decodeText, XmlScanner } from '../../../functions/core/sitemap/xml-scanner.ts';

const SITE = { url: 'http://h.example/sitemap.xml', scope: 'http://h.example/' };
const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

function urlset(body: string, attributes = `xmlns="${NS}"`): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${attributes}>\n${body}\n</urlset>\n`;
}

describe('readSitemap: XML', () => {
  test('a urlset: loc, lastmod, changefreq and priority; malformed optional fields left out', () => {
    const read = readSitemap(
      urlset(`
  <url><loc>http://h.example/</loc><lastmod>2024-05-17</lastmod><changefreq>Daily</changefreq><priority>1.0</priority></url>
  <url>
    <loc>
      http://h.example/a.html
    </loc>
    <lastmod>2024-05-17T10:30:00+02:00</lastmod><priority>0.3</priority>
  </url>
  <url><loc>http://h.example/b.html</loc><lastmod>yesterday</lastmod><changefreq>often</changefreq><priority>2</priority></url>`),
      SITE,
    );
    assert.equal(read.kind, 'urlset');
    assert.ok(read.kind === 'urlset');
    assert.equal(read.format, 'xml');
    assert.deepEqual(read.entries, [
      { url: 'http://h.example/', lastmod: '2024-05-17', changefreq: 'daily', priority: 1 },
      { url: 'http://h.example/a.html', lastmod: '2024-05-17T10:30:00+02:00', priority: 0.3 },
      { url: 'http://h.example/b.html' },
    ]);
    assert.deepEqual(read.stats, { bytes: read.stats.bytes, outOfScope: 0, invalid: 0, tooDeep: 0 });
  });

  test('any prefix for the sitemap namespace, or none; CDATA and character references', () => {
    const prefixed = readSitemap(
      `<sm:urlset xmlns:sm="${NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
         <sm:url><sm:loc><![CDATA[http://h.example/p?a=1&b=2]]></sm:loc>
           <image:image><image:loc>http://h.example/photo.jpg</image:loc></image:image></sm:url>
         <sm:url><sm:loc>http://h.example/q?a=1&amp;b=&#50;&#x33;</sm:loc></sm:url>
       </sm:urlset>`,
      SITE,
    );
    assert.ok(prefixed.kind === 'urlset');
    assert.deepEqual(
      prefixed.entries.map((e) => e.url),
      ['http://h.example/p?a=1&b=2', 'http://h.example/q?a=1&b=23'],
    );
    const bare = readSitemap('<urlset><url><loc>http://h.example/x</loc></url></urlset>', SITE);
    assert.ok(bare.kind === 'urlset');
    assert.deepEqual(bare.entries, [{ url: 'http://h.example/x' }]);
  });

  test('extension elements are not pages: xhtml:link, video:content_loc, a loc in another namespace', () => {
    const read = readSitemap(
      urlset(
        `<url><loc>http://h.example/en</loc>
           <xhtml:link rel="alternate" hreflang="de" href="http://h.example/de"/>
           <video:video><video:content_loc>http://h.example/v.mp4</video:content_loc></video:video>
           <other:loc>http://h.example/not-this</other:loc></url>`,
        `xmlns="${NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" xmlns:other="urn:x"`,
      ),
      SITE,
    );
    assert.ok(read.kind === 'urlset');
    assert.deepEqual(read.entries, [{ url: 'http://h.example/en' }]);
  });

  test('a sitemap index lists sitemaps with their lastmod', () => {
    const read = readSitemap(
      `<sitemapindex xmlns="${NS}">
         <sitemap><loc>http://h.example/s1.xml</loc><lastmod>2024-01-02</lastmod></sitemap>
         <sitemap><loc>http://h.example/s2.xml.gz</loc></sitemap>
         <url><loc>http://h.example/not-a-sitemap.html</loc></url>
       </sitemapindex>`,
      SITE,
    );
    assert.deepEqual(read, {
      kind: 'index',
      entries: [
        { url: 'http://h.example/s1.xml', lastmod: '2024-01-02' },
        { url: 'http://h.example/s2.xml.gz' },
      ],
      stats: { bytes: read.kind === 'index' ? read.stats.bytes : 0, outOfScope: 0, invalid: 0, tooDeep: 0 },
    });
  });

  test('scope: other hosts, schemes and directories are dropped and counted; so are unusable locs', () => {
    const catalog = { url: 'http://h.example/catalog/sitemap.xml', scope: 'http://h.example/catalog/' };
    const read = readSitemap(
      urlset(`
        <url><loc>http://h.example/catalog/a</loc></url>
        <url><loc>http://H.EXAMPLE:80/catalog/b#frag</loc></url>
        <url><loc>http://h.example/images/c</loc></url>
        <url><loc>https://h.example/catalog/d</loc></url>
        <url><loc>http://other.example/catalog/e</loc></url>
        <url><loc>/catalog/relative</loc></url>
        <url><loc>ftp://h.example/catalog/f</loc></url>
        <url><loc>http://h.example/catalog/${'x'.repeat(2100)}</loc></url>
        <url><lastmod>2024-01-01</lastmod></url>`),
      catalog,
    );
    assert.ok(read.kind === 'urlset');
    assert.deepEqual(
      read.entries.map((e) => e.url),
      ['http://h.example/catalog/a', 'http://h.example/catalog/b'],
    );
    assert.equal(read.stats.outOfScope, 3);
    assert.equal(read.stats.invalid, 4);
  });

  test('not sitemaps: an HTML page, a feed, another namespace, an empty body', () => {
    const html = readSitemap('<!doctype html>\n<html><body><a href="/x">x</a></body></html>', SITE);
    assert.deepEqual(html, {
      kind: 'not-a-sitemap',
      reason: 'the root element is <html>, not <urlset> or <sitemapindex>',
    });
    assert.equal(readSitemap('<rss version="2.0"><channel/></rss>', SITE).kind, 'not-a-sitemap');
    assert.equal(
      readSitemap('<urlset xmlns="urn:something-else"><url/></urlset>', SITE).kind,
      'not-a-sitemap',
    );
    assert.deepEqual(readSitemap('  \n ', SITE), { kind: 'not-a-sitemap', reason: 'empty body' });
  });
});

describe('readSitemap: text', () => {
  test('one URL per line: CRLF, blank lines, a BOM, lines that are not URLs', () => {
    const read = readSitemap(
      '\uFEFFhttp://h.example/a\r\n\r\nhttp://h.example/b\nnot a url\n  http://other.example/c  \nhttp://h.example/d',
      SITE,
    );
    assert.ok(read.kind === 'urlset');
    assert.equal(read.format, 'text');
    assert.deepEqual(
      read.entries.map((e) => e.url),
      ['http://h.example/a', 'http://h.example/b', 'http://h.example/d'],
    );
    assert.equal(read.stats.invalid, 1);
    assert.equal(read.stats.outOfScope, 1);
  });

  test('a plain-text error page is not a sitemap', () => {
    assert.deepEqual(readSitemap('Not Found\n', SITE), { kind: 'not-a-sitemap', reason: 'no line is a URL' });
  });
});

describe('readSitemap: gzip and limits', () => {
  test('gzip bytes are handed back to the caller, whose inflated bytes then read normally', () => {
    const xml = urlset('<url><loc>http://h.example/z</loc></url>');
    const gz = gzipSync(xml);
    assert.ok(isGzip(gz));
    assert.deepEqual(readSitemap(gz, SITE), { kind: 'gzip' });
    const again = readSitemap(gunzipSync(gz), SITE);
    assert.ok(again.kind === 'urlset');
    assert.equal(again.entries[0]?.url, 'http://h.example/z');
  });

  test('50,000 entries per file at most, fewer when asked', () => {
    const lines = Array.from({ length: SITEMAP_MAX_ENTRIES + 10 }, (_, i) => `http://h.example/p${i}`).join(
      '\n',
    );
    const read = readSitemap(lines, SITE);
    assert.ok(read.kind === 'urlset');
    assert.equal(read.entries.length, SITEMAP_MAX_ENTRIES);
    assert.equal(read.stats.truncated, 'entries');
    const few = readSitemap(urlset('<url><loc>http://h.example/1</loc></url>'.repeat(5)), SITE, {
      maxEntries: 3,
    });
    assert.ok(few.kind === 'urlset');
    assert.equal(few.entries.length, 3);
    assert.equal(few.stats.truncated, 'entries');
  });

  test('the byte cap stops the read; entries before it count, the cut one does not', () => {
    const entry = (i: number) => `<url><loc>http://h.example/p${i}</loc></url>\n`;
    const body = urlset(Array.from({ length: 2000 }, (_, i) => entry(i)).join(''));
    const read = readSitemap(body, SITE, { maxBytes: 65_536 });
    assert.ok(read.kind === 'urlset');
    assert.equal(read.stats.truncated, 'bytes');
    assert.equal(read.stats.bytes, 65_536);
    // entries whose closing tag lies inside the first 64 KiB
    let whole = 0;
    for (let end = body.indexOf('</url>') + 6; end <= 65_536; end = body.indexOf('</url>', end) + 6) whole++;
    assert.equal(read.entries.length, whole);
    assert.deepEqual(read.entries.at(-1), { url: `http://h.example/p${read.entries.length - 1}` });
  });

  test('fed one byte at a time, the reader gives what the whole body gives (UTF-8 split included)', () => {
    const body = urlset(
      '<url><loc>http://h.example/caf\u00e9/\u2603?q=\u00fc&amp;x=1</loc><priority>0.8</priority></url>' +
        '<url><loc><![CDATA[http://h.example/b]]></loc></url>',
      `xmlns="${NS}"`,
    );
    const bytes = new TextEncoder().encode(body);
    const reader = new SitemapReader(SITE);
    for (let i = 0; i < bytes.length; i++) reader.write(bytes.subarray(i, i + 1));
    const chunked = reader.end();
    assert.deepEqual(chunked, readSitemap(bytes, SITE));
    assert.ok(chunked.kind === 'urlset');
    assert.equal(chunked.entries[0]?.url, 'http://h.example/caf%C3%A9/%E2%98%83?q=%C3%BC&x=1');
    assert.throws(() => reader.write(bytes), /after end/);
  });
});

describe('the XML scanner under the reader', () => {
  const events = (xml: string, step: number) => {
    const out: string[] = [];
    let inText = false;
    const push = (event: string, text = false) => {
      // text may come in pieces: one event per run
      if (text && inText) out[out.length - 1] += event;
      else out.push(event);
      inText = text;
    };
    const scanner = new XmlScanner({
      open: (name, attributes) =>
        push(`<${name}${attributes === undefined ? '' : JSON.stringify(attributes)}>`),
      close: (name) => push(`</${name}>`),
      text: (text) => push(text, true),
    });
    scanner.captureText = true;
    for (let i = 0; i < xml.length; i += step) scanner.write(xml.slice(i, i + step));
    scanner.end();
    return out.join('|');
  };

  test('comments, processing instructions, doctypes, quoted > and namespace attributes; in any chunking', () => {
    const xml =
      '<?xml version="1.0"?><!DOCTYPE urlset><!-- <url><loc>http://no/</loc></url> -->' +
      '<a xmlns:x="u&amp;v" title="1 > 0" x:y=\'q\'>t &lt;&#65;&#x42;&nope;<![CDATA[<raw>&amp;]]></a><b/>';
    const expected = events(xml, xml.length);
    assert.equal(
      expected,
      '<a{"xmlns:x":"u&v","title":"1 > 0","x:y":"q"}>|t <AB&nope;<raw>&amp;|</a>|<b>|</b>',
    );
    for (const step of [1, 2, 3, 5, 7, 11]) assert.equal(events(xml, step), expected, `chunks of ${step}`);
  });

  test('constructs cut anywhere by chunk ends, long ones over many chunks, read as a whole body is', () => {
    const long = 'y'.repeat(40);
    const xml =
      `<!--${long}-- - ->--><![CDATA[a]]b]]]>${long}]]><?pi ${long} ? >?>` +
      `<a x="${long}>'" y='"${long}>'>t</a ><!DOCTYPE x ${long}><b xmlns:p="${long}&amp;"/>`;
    const expected = events(xml, xml.length);
    assert.equal(expected, `a]]b]${long}]]>|<a>|t|</a>|<b{"xmlns:p":"${long}&"}>|</b>`);
    for (let step = 1; step <= 24; step++) assert.equal(events(xml, step), expected, `chunks of ${step}`);
  });

  test('a construct longer than the cap stops the scan with a reason', () => {
    const scanner = new XmlScanner({ open: () => {}, close: () => {}, text: () => {} }, 100);
    scanner.write(`<a title="${'x'.repeat(200)}`);
    assert.match(scanner.error ?? '', /markup longer than 100/);
    assert.equal(decodeText('&#0;&#xD800;&amp;'), '&#0;&#xD800;&');
  });
});
