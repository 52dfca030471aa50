/**
 * Issue 11's hosts in the fixture web: servers that answer duplicate URL forms with the same bytes
 * (and templates that link them at the configured rate), hosts with sitemaps in every form the
 * protocol allows (read here with the crawler's own sitemap core), pages linked from nowhere but a
 * sitemap, and the classic web still byte for byte what it was before.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parseRobots } from '../../../functions/core/robots/parse.ts';
import {
  followSitemap,
  type SitemapFetch,
  sitemapPlan,
} from '../../../functions/core/sitemap/sitemap-plan.ts';
import { isGzip, readSitemap } from '../../../functions/core/sitemap/sitemap-reader.ts';
import { type FixtureWeb, generateWeb, type WebHost } from '../../fixtures/web/generate-web.ts';
import { classify, linkPath, respond } from '../../fixtures/web/resolve-url.ts';

const web = generateWeb({ seed: 1, goodPages: 3700 });
const origins = web.hosts.map((h) => `http://${h.address}:8080`);
const text = (body: string | Uint8Array) =>
  typeof body === 'string' ? body : new TextDecoder().decode(body);

/** Every duplicate spelling a host's quirks allow for one of its pages, with the variant it is labelled. */
function spellings(host: WebHost, path: string): [string, string][] {
  const out: [string, string][] = [];
  if (host.quirks.includes('index-file')) out.push([`${path}index.html`, 'index-file']);
  if (host.quirks.includes('no-slash') && path !== '/') out.push([path.slice(0, -1), 'no-slash']);
  if (host.quirks.includes('case-insensitive')) out.push([path.toUpperCase(), 'case']);
  if (host.quirks.includes('neutral-param')) out.push([`${path}?ref=anything`, 'param']);
  if (host.quirks.includes('alias-prefix')) out.push([`/en${path}`, 'prefix']);
  return out;
}

describe('duplicate-form hosts', () => {
  test('five quirky hosts and three sitemap hosts, none of them the soft-404 host', () => {
    const quirky = web.hosts.filter((h) => h.quirks.length > 0);
    assert.deepEqual(quirky.map((h) => h.quirks.join('+')).sort(), [
      'alias-prefix',
      'case-insensitive',
      'index-file+no-slash',
      'index-file+no-slash',
      'neutral-param',
    ]);
    const sitemaps = web.hosts.filter((h) => h.sitemap !== null);
    assert.deepEqual(sitemaps.map((h) => h.sitemap).sort(), ['default', 'index', 'text']);
    for (const host of [...quirky, ...sitemaps]) assert.equal(host.soft404, false);
    assert.equal(new Set([...quirky, ...sitemaps]).size, 8, 'one role per host');
    const quirkyPages = quirky.reduce((sum, h) => sum + h.pageCount, 0);
    assert.ok(
      quirkyPages > 0.15 * web.pageCount,
      `quirky hosts hold ${quirkyPages} of ${web.pageCount} pages`,
    );
  });

  test('every duplicate form is the same bytes, labelled with its form; other hosts do not answer it', () => {
    const ordinary = web.hosts.find((h) => h.quirks.length === 0 && !h.soft404 && h.sitemap === null)!;
    for (const host of web.hosts.filter((h) => h.quirks.length > 0)) {
      for (const local of [0, 1, 9, host.pageCount - 1]) {
        const page = host.firstPage + local;
        const path = web.paths[page]!;
        if (host.quirks.includes('index-file')) assert.ok(path.endsWith('/'), `${path} is a directory`);
        const body = respond(web, origins, host.index, path).body;
        for (const [spelling, variant] of spellings(host, path)) {
          if (spelling === path) continue;
          assert.deepEqual(
            classify(web, host.index, spelling),
            { kind: 'duplicate', of: page, variant },
            spelling,
          );
          const response = respond(web, origins, host.index, spelling);
          assert.equal(response.status, 200, spelling);
          assert.equal(response.body, body, spelling);
          const elsewhere = web.paths[ordinary.firstPage + Math.min(local, ordinary.pageCount - 1)]!;
          const [otherSpelling] = spellings(host, elsewhere).find(([, v]) => v === variant)!;
          if (otherSpelling !== elsewhere && !(variant === 'index-file' && elsewhere === '/'))
            assert.equal(respond(web, origins, ordinary.index, otherSpelling).status, 404, otherSpelling);
        }
      }
    }
  });

  test("quirky hosts' templates link a duplicate form at the configured rate; others never", () => {
    let links = 0;
    let forms = 0;
    for (let page = 0; page < web.pageCount; page++) {
      const host = web.hosts[web.pageHost[page]!]!;
      for (let k = web.linkStart[page]!; k < web.linkStart[page + 1]!; k++) {
        const target = web.linkTargets[k]!;
        if (web.pageHost[target] !== host.index) continue;
        const path = linkPath(web, page, target, 1000 + k);
        if (host.quirks.length === 0) {
          assert.equal(path, web.paths[target]);
          continue;
        }
        links++;
        if (path !== web.paths[target]) forms++;
      }
    }
    const rate = forms / links;
    assert.ok(Math.abs(rate - web.options.duplicateLinkRate) < 0.015, `${forms} of ${links} links (${rate})`);
  });
});

describe('sitemap hosts', () => {
  /** Reads a host's sitemaps as a crawler would: robots.txt, the plan, each file, gzip, indexes. */
  function crawlSitemaps(w: FixtureWeb, host: WebHost) {
    const origin = origins[host.index]!;
    const robots = parseRobots(text(respond(w, origins, host.index, '/robots.txt').body), 'crawlstack');
    const settings = { maxSitemapFiles: 100, maxSitemapUrls: 100_000, maxSitemapDepth: 2 };
    const queue: SitemapFetch[] = sitemapPlan(origin, robots.sitemaps, settings);
    const pages = new Set<string>();
    const files: string[] = [];
    const kinds = new Set<string>();
    while (queue.length > 0) {
      const fetch = queue.shift()!;
      const target = fetch.url.slice(origin.length);
      files.push(target);
      assert.deepEqual(classify(w, host.index, target), { kind: 'sitemap', served: true }, target);
      const response = respond(w, origins, host.index, target);
      assert.equal(response.status, 200, target);
      let body = typeof response.body === 'string' ? new TextEncoder().encode(response.body) : response.body;
      let read = readSitemap(body, fetch);
      if (read.kind === 'gzip') {
        kinds.add('gzip');
        body = gunzipSync(body);
        assert.ok(!isGzip(body));
        read = readSitemap(body, fetch);
      }
      kinds.add(read.kind === 'urlset' ? `urlset-${read.format}` : read.kind);
      if (read.kind === 'urlset' || read.kind === 'index') {
        assert.equal(read.stats.invalid + read.stats.outOfScope, 0, target);
      }
      const next = followSitemap(fetch, read, settings);
      for (const entry of next.pages) pages.add(entry.url);
      queue.push(...next.sitemaps);
    }
    return { files, pages, kinds, robots: robots.sitemaps };
  }

  test('index in robots.txt: three sitemaps, one gzipped, one holding the sitemap-only section', () => {
    const host = web.hosts.find((h) => h.sitemap === 'index')!;
    const read = crawlSitemaps(web, host);
    assert.deepEqual(read.robots, [`${origins[host.index]}/sitemap_index.xml`]);
    assert.deepEqual(read.files, [
      '/sitemap_index.xml',
      '/sitemaps/pages.xml',
      '/sitemaps/more.xml.gz',
      '/sitemaps/archive.xml',
    ]);
    assert.deepEqual(read.kinds, new Set(['index', 'urlset-xml', 'gzip']));
    const expected = [
      ...Array.from({ length: host.pageCount }, (_, i) => web.paths[host.firstPage + i]!),
      ...host.sitemapOnly,
    ].map((p) => `${origins[host.index]}${p}`);
    assert.deepEqual(read.pages, new Set(expected));
    assert.equal(host.sitemapOnly.length, 40);
  });

  test('default /sitemap.xml (not named in robots.txt) and a text sitemap', () => {
    const fallback = web.hosts.find((h) => h.sitemap === 'default')!;
    const one = crawlSitemaps(web, fallback);
    assert.deepEqual(one.robots, []);
    assert.deepEqual(one.files, ['/sitemap.xml']);
    assert.equal(one.pages.size, fallback.pageCount + fallback.sitemapOnly.length);
    const plain = web.hosts.find((h) => h.sitemap === 'text')!;
    const two = crawlSitemaps(web, plain);
    assert.deepEqual(two.files, ['/sitemap.txt']);
    assert.deepEqual(two.kinds, new Set(['urlset-text']));
    assert.equal(two.pages.size, plain.pageCount);
    assert.equal(plain.sitemapOnly.length, 0);
  });

  test('sitemap-only pages: linked from no page, their own text, labelled; /sitemap.xml elsewhere is a miss', () => {
    const hosts = web.hosts.filter((h) => h.sitemapOnly.length > 0);
    assert.equal(hosts.length, 2);
    for (let page = 0; page < web.pageCount; page++) {
      const body = text(respond(web, origins, web.pageHost[page]!, web.paths[page]!).body);
      assert.ok(!body.includes('/archive/'), `page ${page} links the archive`);
    }
    const bodies = new Set<string>();
    for (const host of hosts) {
      host.sitemapOnly.forEach((path, index) => {
        assert.deepEqual(classify(web, host.index, path), { kind: 'sitemap-only', host: host.index, index });
        const response = respond(web, origins, host.index, path);
        assert.equal(response.status, 200);
        bodies.add(text(response.body));
      });
    }
    assert.equal(bodies.size, 80);
    const none = web.hosts.find((h) => h.sitemap === null)!;
    assert.deepEqual(classify(web, none.index, '/sitemap.xml'), { kind: 'sitemap', served: false });
    assert.equal(respond(web, origins, none.index, '/sitemap.xml').status, none.soft404 ? 200 : 404);
  });
});

describe('the classic web', () => {
  test('is, byte for byte, the web the bench measured before issue 11', () => {
    // digest of the web as generated before issue 11's hosts existed (commit ae73a25), seed 1
    const classic = generateWeb({ seed: 1, goodPages: 3700, classic: true });
    assert.ok(classic.hosts.every((h) => h.quirks.length === 0 && h.sitemap === null));
    const hash = createHash('sha256');
    hash.update(
      JSON.stringify(
        classic.hosts.map((h) => [
          h.index,
          h.name,
          h.address,
          h.firstPage,
          h.pageCount,
          h.soft404,
          h.disallow,
          h.traps,
        ]),
      ),
    );
    hash.update(JSON.stringify(classic.paths));
    hash.update(JSON.stringify([...classic.linkTargets]));
    hash.update(JSON.stringify([...classic.extras]));
    for (let page = 0; page < classic.pageCount; page++) {
      const host = classic.pageHost[page]!;
      hash.update(text(respond(classic, origins, host, classic.paths[page]!).body));
      hash.update(text(respond(classic, origins, host, `${classic.paths[page]}?print=1`).body));
    }
    for (const h of classic.hosts) {
      for (const t of [
        '/robots.txt',
        '/sitemap.xml',
        '/index.html',
        '/Articles/',
        '/en/',
        '/node/3',
        '/search',
        '/calendar/2026/11',
        '/files/a/',
        '/story/1/2',
        '/list/page/2',
      ]) {
        const r = respond(classic, origins, h.index, t);
        hash.update(`${r.status} ${JSON.stringify(r.headers)} ${text(r.body)}`);
      }
    }
    assert.equal(hash.digest('hex'), 'f0921576b0342871c7963cc0f4142a744d20ce77a68dbb338e5383b735a4861d');
  });
});
