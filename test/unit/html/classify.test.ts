import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyLink, linkExtension } from '../../../functions/core/html/classify.ts';
import type { LinkKind } from '../../../functions/core/types.ts';

describe('classifyLink', () => {
  const table: [tag: string, href: string, rel: string | undefined, kind: LinkKind][] = [
    // Elements that decide by themselves.
    ['img', 'photo.jpg', undefined, 'image'],
    ['img', '/render.php?id=1', undefined, 'image'],
    ['img', 'weird.pdf', undefined, 'image'],
    ['script', '/app.js', undefined, 'other'],
    ['script', '/loader', undefined, 'other'],
    // source: an image (picture), unless its extension says audio/video.
    ['source', 'hero.webp', undefined, 'image'],
    ['source', '/img/resize?w=100', undefined, 'image'],
    ['source', 'movie.mp4', undefined, 'other'],
    // Navigation elements: page unless the extension says otherwise.
    ['a', '/docs/intro.html', undefined, 'page'],
    ['a', '/docs/', undefined, 'page'],
    ['a', 'https://example.test', undefined, 'page'],
    ['a', 'https://example.test/', undefined, 'page'],
    ['a', '//cdn.example.test', undefined, 'page'],
    ['a', 'https://files.example.test/a.b.c/download', undefined, 'page'],
    ['a', 'report.pdf', undefined, 'document'],
    ['a', 'REPORT.PDF', undefined, 'document'],
    ['a', '/f/sheet.xlsx?version=2#p1', undefined, 'document'],
    ['a', '/f/data.csv', undefined, 'document'],
    ['a', '/book.epub', undefined, 'document'],
    ['a', '/notes.txt', undefined, 'document'],
    ['a', 'pic.PNG', undefined, 'image'],
    ['a', 'logo.svg', undefined, 'image'],
    ['a', '/favicon.ico', undefined, 'image'],
    ['a', '/release.tar.gz', undefined, 'other'],
    ['a', '/setup.exe', undefined, 'other'],
    ['a', '/song.mp3', undefined, 'other'],
    ['a', '/style.css', undefined, 'other'],
    ['a', '/api/data.json', undefined, 'other'],
    ['a', '/sitemap.xml', undefined, 'other'],
    ['a', '/font.woff2', undefined, 'other'],
    ['a', '/file.pdf;jsessionid=ABC', undefined, 'document'],
    ['a', '/dir.pdf/', undefined, 'page'],
    ['a', '/page?file=x.pdf', undefined, 'page'],
    ['a', '/page#x.pdf', undefined, 'page'],
    ['a', '/archive.unknownext', undefined, 'page'],
    ['area', 'map.png', undefined, 'image'],
    ['iframe', '/widget.html', undefined, 'page'],
    ['iframe', '/doc.pdf', undefined, 'document'],
    ['frame', 'menu.html', undefined, 'page'],
    ['meta-refresh', '/moved.html', undefined, 'page'],
    // link: by rel, extension overriding the navigational rels.
    ['link', '/s.css', 'stylesheet', 'other'],
    ['link', '/theme', 'alternate stylesheet', 'other'],
    ['link', '/favicon.ico', 'icon', 'image'],
    ['link', '/fav', 'shortcut icon', 'image'],
    ['link', '/apple.png', 'apple-touch-icon', 'image'],
    ['link', 'https://example.test/c', 'canonical', 'page'],
    ['link', '/de/', 'alternate', 'page'],
    ['link', '/feed.xml', 'alternate', 'other'],
    ['link', '/print.pdf', 'alternate', 'document'],
    ['link', 'p2.html', 'next', 'page'],
    ['link', 'p0.html', 'PREV', 'page'],
    ['link', '/', 'home', 'page'],
    ['link', '/font.woff2', 'preload', 'other'],
    ['link', '/hero.jpg', 'preload', 'image'],
    ['link', '//cdn.example.test', 'preconnect', 'other'],
    ['link', '/manifest.webmanifest', 'manifest', 'other'],
    ['link', '/x', undefined, 'other'],
    // Embedded media default to other.
    ['embed', '/movie', undefined, 'other'],
    ['object', '/paper.pdf', undefined, 'document'],
    ['video', '/v', undefined, 'other'],
    ['audio', '/a.ogg', undefined, 'other'],
    ['track', '/subs.vtt', undefined, 'other'],
  ];
  for (const [tag, href, rel, kind] of table) {
    it(`${tag} ${href}${rel === undefined ? '' : ` rel=${rel}`} -> ${kind}`, () => {
      assert.equal(classifyLink(tag, href, rel), kind);
    });
  }
});

describe('linkExtension', () => {
  const table: [string, string | null][] = [
    ['a.pdf', 'pdf'],
    ['/x/y/Z.JPEG', 'jpeg'],
    ['https://example.test', null],
    ['https://example.test/', null],
    ['https://example.test/a', null],
    ['https://example.test/a.html?b.pdf', 'html'],
    ['//example.test', null],
    ['//example.test/f.zip', 'zip'],
    ['a//b.gif', 'gif'],
    ['.htaccess', null],
    ['file.', null],
    ['/v1.2/', null],
    ['/f.pdf;jsessionid=1', 'pdf'],
    ['/f.toolongext', null],
  ];
  for (const [href, ext] of table) {
    it(`${href} -> ${ext}`, () => assert.equal(linkExtension(href), ext));
  }
});
