/**
 * Issue 11 through the whole cloud pipeline (the synthesized stack on the stand-in, started and
 * read through the HTTP API): a site whose pages also answer as `<dir>/index.html`, and a page
 * linked from nowhere but the sitemap its robots.txt names. The crawl must learn the rule, store
 * it (GET /crawls/{id}/rules), stop fetching the second forms, and find the sitemap-only page with
 * its lastmod.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RuleRecord } from '../../../functions/core/quality/duplicate-url-rules.ts';
import type { SiteServer } from '../../fixtures/site-server.ts';
import { pageHtml, prose, startSites } from '../../fixtures/sites.ts';
import type { Pipeline } from './helpers.ts';
import { startPipeline } from './helpers.ts';

/** Directories linked from the home page under both forms. */
const DIRS = 8;

describe('pipeline: duplicate-URL rules and sitemaps', () => {
  let pipeline: Pipeline;
  let site: SiteServer;
  before(async () => {
    pipeline = await startPipeline();
    [site] = (await startSites(['127.0.0.61'], ([o]) => [
      (req, res) => {
        const path = req.url ?? '/';
        const dir = /^\/d(\d+)\/(index\.html)?$/.exec(path);
        let body: string | undefined;
        let type = 'text/html; charset=utf-8';
        if (path === '/robots.txt') {
          type = 'text/plain';
          body = 'User-agent: *\nAllow: /\nSitemap: /sitemap_pages.xml\n';
        } else if (path === '/sitemap_pages.xml') {
          type = 'application/xml';
          body = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${o}/only.html</loc><lastmod>2026-04-05</lastmod></url></urlset>`;
        } else if (path === '/') {
          const links: string[] = [];
          for (let i = 1; i <= DIRS; i++) links.push(`/d${i}/`, `/d${i}/index.html`);
          body = pageHtml({ title: 'Home', links });
        } else if (path === '/only.html') {
          body = pageHtml({ title: 'Only in the sitemap', body: `<p>${prose(99, 50)}</p>` });
        } else if (dir !== null) {
          body = pageHtml({ title: `Dir ${dir[1]}`, body: `<p>${prose(Number(dir[1]), 50)}</p>` });
        }
        if (body === undefined) {
          res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
          return;
        }
        res.writeHead(200, { 'content-type': type }).end(body);
      },
    ])) as [SiteServer];
  });
  after(async () => {
    await pipeline?.stop();
    await site?.close();
  });

  it('learns and stores the rule, stops fetching the second forms, finds the sitemap-only page', async () => {
    const id = await pipeline.startCrawl({
      seeds: [`${site.origin}/`],
      allowPrivate: true,
      delayMs: 0,
      delayFactor: 0,
      soft404Probe: false,
      duplicateUrlRuleAudit: 0,
    });
    const end = await pipeline.waitForStatus(id, ['done', 'failed'], 180_000);
    assert.equal(end.status, 'done', JSON.stringify(end.counters));
    const paths = site.paths();
    assert.equal(paths.filter((p) => p === '/only.html').length, 1, 'the sitemap-only page, once');
    assert.equal(paths.filter((p) => p === '/sitemap_pages.xml').length, 1);
    const seconds = paths.filter((p) => p.endsWith('/index.html')).length;
    // two pairs teach the rule; a container that read the host's rules before they were stored
    // may fetch a form or two more before it reads them again
    assert.ok(seconds >= 2 && seconds < DIRS, `${seconds} of ${DIRS} second forms fetched`);
    for (let i = 1; i <= DIRS; i++) assert.equal(paths.filter((p) => p === `/d${i}/`).length, 1);
    const rules = await pipeline.api('GET', `/crawls/${id}/rules`);
    assert.equal(rules.status, 200);
    const rule = (rules.json.rules as RuleRecord[]).find((r) => r.name === 'drop-suffix index.html');
    assert.equal(rule?.status, 'active', JSON.stringify(rules.json));
    assert.equal(rule?.origin, site.origin);
    const pages = await pipeline.pages(id, 100);
    const only = pages.find((p) => p.url === `${site.origin}/only.html`);
    assert.equal(only?.lastmod, '2026-04-05');
    const sitemap = pages.find((p) => p.url === `${site.origin}/sitemap_pages.xml`);
    assert.equal(sitemap?.sitemap?.kind, 'urlset');
    const skipped = pages.filter((p) => p.reason === 'duplicate-url-rule');
    assert.equal(skipped.length + seconds, DIRS, 'every second form fetched or skipped');
  });
});
