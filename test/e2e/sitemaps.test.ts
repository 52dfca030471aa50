/**
 * Sitemaps in real crawls (docs/sitemaps.md): a robots.txt `Sitemap:` line naming an index of an
 * XML urlset, a gzipped one served as `application/gzip`, a text one, a nested index past the
 * depth limit and a file under a Disallow; a site with only `/sitemap.xml`; a text sitemap named
 * by a relative line; sections linked from nowhere but a sitemap; entries out of the sitemap's or
 * the crawl's scope; a sitemap over the byte cap; `--no-sitemaps`; and `kill -9` in the middle of
 * a sitemap.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { PageRecord } from '../../functions/core/types.ts';
import { eventually, type Route } from '../fixtures/site-server.ts';
import { closeAll, pageHtml, prose, startSites } from '../fixtures/sites.ts';
import {
  assertUnique,
  assertWarcMatchesPages,
  buildCli,
  crawl,
  pathCounts,
  readJsonl,
  runCli,
  spawnCli,
  tempDir,
} from './helpers.ts';

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const urlset = (entries: string[], root = `<urlset xmlns="${NS}">`, close = '</urlset>') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n${root}\n${entries.join('\n')}\n${close}\n`;
const url = (loc: string, extra = '') => `<url><loc>${loc}</loc>${extra}</url>`;
const sitemapIndex = (locs: string[]) =>
  urlset(
    locs.map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`),
    `<sitemapindex xmlns="${NS}">`,
    '</sitemapindex>',
  );

/** A page whose text is its own; `links` as `<a href>`. */
const page = (title: string, links: string[] = []) =>
  pageHtml({
    title,
    links,
    body: `<p>${prose(title.length * 31 + title.charCodeAt(title.length - 1), 40)}</p>`,
  });

type Body = { type: string; body: string | Buffer; delayMs?: number };

/** Serves exact paths; pages not in the table are 404. */
function table(files: Record<string, Body>): Route {
  return (req, res) => {
    const file = files[req.url ?? '/'];
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
      return;
    }
    const send = () => res.writeHead(200, { 'content-type': file.type }).end(file.body);
    if (file.delayMs === undefined) send();
    else setTimeout(send, file.delayMs);
  };
}

const html = (body: string): Body => ({ type: 'text/html; charset=utf-8', body });
const xml = (body: string): Body => ({ type: 'application/xml; charset=utf-8', body });

describe('sitemaps in a crawl', () => {
  test('every form is read; sitemap-only pages are found; scope, robots.txt, depth and budget hold', async () => {
    const sites = await startSites(['127.0.0.2', '127.0.0.3', '127.0.0.4'], ([a, b, c]) => [
      // A: robots.txt names an index; its pages are linked from nowhere but the sitemaps
      table({
        '/robots.txt': {
          type: 'text/plain',
          body: `User-agent: *\nDisallow: /private/\nSitemap: ${a}/sitemap_index.xml\n`,
        },
        '/': html(page('Home A', ['/a/1.html'])),
        '/sitemap_index.xml': xml(
          sitemapIndex([
            `${a}/sitemaps/pages.xml`,
            `${a}/sitemaps/more.xml.gz`,
            `${a}/sitemaps/nested.xml`,
            `${a}/private/sitemap.xml`,
            `${b}/sitemaps/other-host.xml`,
          ]),
        ),
        '/sitemaps/pages.xml': xml(
          urlset([
            url(`${a}/a/1.html`, '<lastmod>2026-01-02</lastmod><priority>0.9</priority>'),
            url(`${a}/only/1.html`, '<lastmod>2026-03-04T05:06:07+00:00</lastmod>'),
            url(`${a}/only/2.html`),
            url(`${a}/excluded/1.html`),
            url(`${b}/not-this-site.html`),
          ]),
        ),
        // gzipped as a file (no Content-Encoding), under a prefix, the location in CDATA
        '/sitemaps/more.xml.gz': {
          type: 'application/gzip',
          body: gzipSync(
            `<?xml version="1.0"?>\n<sm:urlset xmlns:sm="${NS}"><sm:url><sm:loc><![CDATA[${a}/only/gz.html]]></sm:loc></sm:url></sm:urlset>\n`,
          ),
        },
        '/sitemaps/nested.xml': xml(sitemapIndex([`${a}/sitemaps/deep.xml`])),
        '/sitemaps/deep.xml': xml(sitemapIndex([`${a}/sitemaps/too-deep.xml`])),
        '/sitemaps/too-deep.xml': xml(urlset([url(`${a}/only/too-deep.html`)])),
        '/private/sitemap.xml': xml(urlset([url(`${a}/only/private.html`)])),
        '/a/1.html': html(page('A1')),
        '/only/1.html': html(page('Only 1', ['/only/linked.html'])),
        '/only/2.html': html(page('Only 2')),
        '/only/gz.html': html(page('Only gz')),
        '/only/linked.html': html(page('Only linked')),
        '/only/too-deep.html': html(page('Too deep')),
        '/excluded/1.html': html(page('Excluded')),
      }),
      // B: no Sitemap line: /sitemap.xml is read
      table({
        '/': html(page('Home B')),
        '/sitemap.xml': xml(urlset([url(`${b}/only-b/1.html`)])),
        '/only-b/1.html': html(page('Only B')),
        '/sitemaps/other-host.xml': xml(urlset([url(`${b}/only-b/from-a.html`)])),
        '/only-b/from-a.html': html(page('From A')),
      }),
      // C: a text sitemap named by a relative Sitemap: line
      table({
        '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nAllow: /\n\nSitemap: /sitemap.txt\n' },
        '/': html(page('Home C')),
        '/sitemap.txt': {
          type: 'text/plain',
          body: `${c}/only-c/1.html\r\n\r\nnot a url\n${c}/only-c/2.html\n`,
        },
        '/only-c/1.html': html(page('Only C1')),
        '/only-c/2.html': html(page('Only C2')),
      }),
    ]);
    const [a, b, c] = sites.map((s) => s.origin) as [string, string, string];
    try {
      const run = await crawl(
        { seeds: [`${a}/`, `${b}/`, `${c}/`], scope: 'any', exclude: ['/excluded/'], sitemaps: true },
        { warc: true },
      );
      const [askedA, askedB, askedC] = sites.map(pathCounts) as [
        Map<string, number>,
        Map<string, number>,
        Map<string, number>,
      ];
      // sitemap-only sections of every form are found, each page once
      for (const path of ['/only/1.html', '/only/2.html', '/only/gz.html', '/only/linked.html'])
        assert.equal(askedA.get(path), 1, `${a}${path}`);
      assert.equal(askedB.get('/only-b/1.html'), 1);
      assert.equal(askedC.get('/only-c/1.html'), 1);
      assert.equal(askedC.get('/only-c/2.html'), 1);
      // lastmod recorded on the page a sitemap made known
      assert.equal(run.page(`${a}/only/1.html`).lastmod, '2026-03-04T05:06:07+00:00');
      assert.equal(run.page(`${a}/only/2.html`).lastmod, undefined);
      assert.equal(run.page(`${a}/only/linked.html`).lastmod, undefined, 'linked from a page, not listed');
      // the sitemap files, recorded like any URL with what they gave
      const index = run.page(`${a}/sitemap_index.xml`);
      assert.equal(index.kind, 'other');
      // the child on another host is out of the index's scope
      assert.deepEqual(index.sitemap, {
        kind: 'index',
        entries: 4,
        queued: 4,
        outOfScope: 1,
        invalid: 0,
        dropped: 0,
      });
      const pages = run.page(`${a}/sitemaps/pages.xml`).sitemap;
      // the other host's URL is out of the sitemap's scope; /excluded/ out of the crawl's; /a/1.html
      // is new or already linked from the home page, which may be fetched while the index is read
      assert.deepEqual(
        { ...pages, queued: 0 },
        {
          kind: 'urlset',
          entries: 4,
          queued: 0,
          outOfScope: 2,
          invalid: 0,
          dropped: 0,
        },
      );
      assert.ok(pages?.queued === 2 || pages?.queued === 3, `${pages?.queued} queued`);
      assert.deepEqual(run.page(`${a}/sitemaps/more.xml.gz`).sitemap, {
        kind: 'urlset',
        gzip: true,
        entries: 1,
        queued: 1,
        outOfScope: 0,
        invalid: 0,
        dropped: 0,
      });
      assert.equal(run.page(`${c}/sitemap.txt`).sitemap?.invalid, 1);
      assert.equal(askedA.get('/excluded/1.html'), undefined);
      assert.equal(askedB.get('/not-this-site.html'), undefined);
      // an index's child on another host is out of its scope; indexes deeper than 2 levels are not followed
      assert.equal(askedB.get('/sitemaps/other-host.xml'), undefined);
      assert.equal(askedA.get('/sitemaps/deep.xml'), 1);
      assert.equal(run.page(`${a}/sitemaps/deep.xml`).sitemap?.dropped, 1);
      assert.equal(askedA.get('/sitemaps/too-deep.xml'), undefined);
      // robots.txt holds for sitemaps: the one under Disallow is recorded, not fetched
      assert.equal(askedA.get('/private/sitemap.xml'), undefined);
      assert.equal(run.page(`${a}/private/sitemap.xml`).reason, 'robots');
      // named sitemaps are read right after robots.txt; the guess /sitemap.xml only on B (no line)
      assert.deepEqual(sites[0]!.paths().slice(0, 2), ['/robots.txt', '/sitemap_index.xml']);
      assert.equal(askedA.get('/sitemap.xml'), undefined);
      assert.equal(askedC.get('/sitemap.xml'), undefined);
      assert.equal(askedB.get('/sitemap.xml'), 1);
      // politeness: one request at a time per site; every file fetched once, archived in the WARC
      for (const site of sites) assert.equal(site.maxInFlight(), 1);
      for (const site of sites)
        for (const [path, n] of pathCounts(site))
          assert.equal(n, 1, `${site.origin}${path} fetched ${n} times`);
      assertUnique(
        run.pages.map((p) => p.url),
        'pages.jsonl URLs',
      );
      const warc = await assertWarcMatchesPages(run.outDir, run.pages);
      assert.ok(warc.some((e) => e.type === 'response' && e.uri === `${a}/sitemaps/more.xml.gz`));
      // links.jsonl: a sitemap's entries as its out-links
      assert.equal(run.linksOf(`${a}/sitemaps/pages.xml`).get(`${a}/excluded/1.html`)?.skipped, 'exclude');
    } finally {
      await closeAll(sites);
    }
  });

  test('a sitemap on a host left out by --exclude or the scope: not one request to that host, unless named (sitemapHosts)', async () => {
    const everything: Route = (req, res) => {
      // anything asked would be answered, and counted
      if (req.url === '/robots.txt')
        res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\n');
      else
        res
          .writeHead(200, { 'content-type': 'application/xml' })
          .end(urlset([url('http://127.0.0.3/x.html')]));
    };
    const sites = await startSites(['127.0.0.2', '127.0.0.3', '127.0.0.4'], ([a, b, c]) => [
      table({
        '/robots.txt': {
          type: 'text/plain',
          body: `User-agent: *\nSitemap: ${b}/sitemap.xml\nSitemap: ${c}/sitemap.xml\nSitemap: ${a}/index.xml\n`,
        },
        '/': html(page('Home A')),
        '/index.xml': xml(sitemapIndex([`${a}/s/kept.xml`, `${a}/left-out/child.xml`])),
        '/s/kept.xml': xml(urlset([url(`${a}/only.html`)])),
        '/left-out/child.xml': xml(urlset([url(`${a}/never.html`)])),
        '/only.html': html(page('Only')),
        '/never.html': html(page('Never')),
      }),
      everything,
      everything,
    ]);
    const [a, b, c] = sites.map((s) => s.origin) as [string, string, string];
    try {
      // B is excluded by a pattern, C is outside the scope (the seed's host), /left-out/ excluded
      const run = await crawl({
        seeds: [`${a}/`],
        scope: 'host',
        exclude: ['^http://127\\.0\\.0\\.3[:/]', '/left-out/'],
        sitemaps: true,
        soft404Probe: true,
      });
      assert.deepEqual(sites[1]!.paths(), [], `${b} was asked`);
      assert.deepEqual(sites[2]!.paths(), [], `${c} was asked`);
      const askedA = pathCounts(sites[0]!);
      assert.equal(askedA.get('/left-out/child.xml'), undefined);
      assert.equal(askedA.get('/never.html'), undefined);
      // the site's own sitemaps still lead to its pages
      assert.equal(askedA.get('/s/kept.xml'), 1);
      assert.equal(askedA.get('/only.html'), 1);
      assert.equal(run.page(`${a}/index.xml`).sitemap?.outOfScope, 1);
      assert.equal(run.linksOf(`${a}/index.xml`).get(`${a}/left-out/child.xml`)?.skipped, 'exclude');
      assert.ok(!run.pages.some((p) => p.url.startsWith(b) || p.url.startsWith(c)));

      // opt-in: C named as a sitemap host is read, though the scope leaves it out; B stays excluded
      const again = await crawl({
        seeds: [`${a}/`],
        scope: 'host',
        exclude: ['^http://127\\.0\\.0\\.3[:/]', '/left-out/'],
        sitemaps: true,
        sitemapHosts: ['127.0.0.4'],
      });
      assert.deepEqual(sites[1]!.paths(), [], `${b} was asked`);
      assert.deepEqual(
        sites[2]!.paths().filter((p) => p === '/robots.txt' || p === '/sitemap.xml'),
        ['/robots.txt', '/sitemap.xml'],
      );
      assert.equal(again.page(`${c}/sitemap.xml`).sitemap?.kind, 'urlset');
    } finally {
      await closeAll(sites);
    }
  });

  test('a sitemap over the byte cap: the entries in the first maxSitemapBytes are taken', async () => {
    const padding = `<image:image><image:loc>http://img.test/${'x'.repeat(900)}.jpg</image:loc></image:image>`;
    let origin = '';
    const [site] = await startSites(['127.0.0.2'], ([o]) => {
      origin = o!;
      const entries = Array.from({ length: 200 }, (_, i) => url(`${o}/p/${i}.html`, padding));
      const body = urlset(
        entries,
        `<urlset xmlns="${NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">`,
      );
      const files: Record<string, Body> = { '/': html(page('Home')), '/sitemap.xml': xml(body) };
      for (let i = 0; i < 200; i++) files[`/p/${i}.html`] = html(page(`P${i}`));
      return [table(files)];
    });
    try {
      const run = await crawl({ seeds: [`${origin}/`], sitemaps: true, maxSitemapBytes: 65_536 });
      const record = run.page(`${origin}/sitemap.xml`);
      assert.equal(record.sitemap?.truncated, 'bytes');
      const entries = record.sitemap?.entries ?? 0;
      // each entry is about a kilobyte: some 60 fit in 64 KiB, and nothing past them is asked for
      assert.ok(entries > 50 && entries < 70, `${entries} entries read`);
      const pages = site!.paths().filter((p) => p.startsWith('/p/'));
      assert.equal(pages.length, entries);
      assert.deepEqual(new Set(pages), new Set(Array.from({ length: entries }, (_, i) => `/p/${i}.html`)));
      assert.ok(record.bytes <= 65_536);
    } finally {
      await closeAll([site!]);
    }
  });

  test('--no-sitemaps: no sitemap is asked for', async () => {
    const [site] = await startSites(['127.0.0.2'], ([o]) => [
      table({
        '/robots.txt': { type: 'text/plain', body: `Sitemap: ${o}/s.xml\n` },
        '/': html(page('Home')),
        '/s.xml': xml(urlset([url(`${o}/only.html`)])),
      }),
    ]);
    try {
      await crawl({ seeds: [`${site!.origin}/`], sitemaps: false });
      assert.deepEqual(site!.paths(), ['/robots.txt', '/']);
    } finally {
      await closeAll([site!]);
    }
  });
});

describe('sitemaps through the CLI', () => {
  before(async () => {
    await buildCli();
  });

  test('kill -9 in the middle of a sitemap: no sitemap URL lost or fetched twice', async () => {
    const CHILDREN = 4;
    const PER = 10;
    const [site] = await startSites(['127.0.0.2'], ([o]) => {
      const files: Record<string, Body> = {
        '/robots.txt': { type: 'text/plain', body: `Sitemap: ${o}/index.xml\n` },
        '/': html(page('Home')),
        '/index.xml': xml(sitemapIndex(Array.from({ length: CHILDREN }, (_, k) => `${o}/s/${k}.xml`))),
      };
      for (let k = 0; k < CHILDREN; k++) {
        const locs = Array.from({ length: PER }, (_, i) => url(`${o}/p/${k}-${i}.html`));
        // the crawl is killed while it waits for the second child
        files[`/s/${k}.xml`] = { ...xml(urlset(locs)), ...(k === 1 ? { delayMs: 1500 } : {}) };
        for (let i = 0; i < PER; i++) files[`/p/${k}-${i}.html`] = html(page(`P${k}-${i}`));
      }
      return [table(files)];
    });
    const o = site!.origin;
    const out = tempDir();
    const args = [
      'crawl',
      `${o}/`,
      '--out',
      out,
      '--allow-private',
      '--concurrency',
      '1',
      '--delay',
      '0',
      '--delay-factor',
      '0',
      '--no-soft404-probe',
      '--no-trap-detectors',
      '--quiet',
    ];
    try {
      const proc = await spawnCli(args);
      await eventually(
        () => (site!.paths().includes('/s/1.xml') ? true : undefined),
        15_000,
        'the second sitemap asked for',
      );
      proc.child.kill('SIGKILL');
      await proc.exited;
      const resumed = await runCli(args);
      assert.equal(resumed.code, 0, resumed.stderr);
      const asked = pathCounts(site!);
      assert.equal(asked.get('/s/1.xml'), 2, 'the sitemap in flight at the kill is read again');
      for (let k = 0; k < CHILDREN; k++)
        for (let i = 0; i < PER; i++) assert.equal(asked.get(`/p/${k}-${i}.html`), 1, `/p/${k}-${i}.html`);
      const pages = readJsonl<PageRecord>(join(out, 'pages.jsonl'));
      assertUnique(
        pages.map((p) => p.url),
        'pages.jsonl URLs',
      );
      assert.equal(pages.filter((p) => p.url.includes('/p/')).length, CHILDREN * PER);
    } finally {
      await closeAll([site!]);
    }
  });
});
