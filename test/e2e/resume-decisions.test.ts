/**
 * The state that decides a crawl survives `kill -9`: a crawl killed several times and resumed
 * records the same decision for every URL (status, reason, duplicate, near-duplicate, soft 404,
 * calendar and link-generator refusals) as the same crawl run without a kill, and asks each site
 * for its soft-404 probe once. Concurrency 1 and breadth-first order, so that the uninterrupted
 * crawl's order is fixed.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LinkRecord, PageRecord } from '../../functions/core/types.ts';
import { eventually, type SiteServer } from '../fixtures/site-server.ts';
import { closeAll, pageHtml, startSites } from '../fixtures/sites.ts';
import { buildCli, isProbe, readJsonl, runCli, spawnCli, tempDir } from './helpers.ts';

const WORDS =
  'river stone maple copper lantern orchard violet harbor meadow pepper quartz saddle timber velvet willow amber basil cedar falcon garnet'.split(
    ' ',
  );

/** A text of `n` words that differs from page to page (a fixed pseudo-random sequence per seed). */
function prose(seed: number, n = 120): string {
  let x = seed * 2654435761;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(WORDS[x % WORDS.length]!);
  }
  return out.join(' ');
}

const ARTICLES = 40;

/** One site with every kind of decision the detectors make. */
function route(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://x');
  const path = url.pathname;
  const send = (status: number, html: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  };
  if (path === '/robots.txt') return send(404, 'none');
  if (path === '/') {
    const links = Array.from({ length: ARTICLES }, (_, i) => `/n/${i}`);
    return send(
      200,
      pageHtml({
        title: 'home',
        links: [...links, '/cal/2026/01', '/shop?color=red'],
        body: `<p>${prose(0)}</p>`,
      }),
    );
  }
  let m = /^\/n\/(\d+)(\/print)?$/.exec(path);
  if (m !== null) {
    const i = Number(m[1]);
    // the print view: the article's text with two more words (a near-duplicate)
    const text = m[2] === undefined ? prose(i + 1) : `${prose(i + 1)} print view`;
    const links = m[2] === undefined ? [`/n/${i}/print`, `/gone/${i}`, `/n/${(i * 7) % ARTICLES}/copy`] : [];
    return send(200, pageHtml({ title: `article ${i}`, links, body: `<p>${text}</p>` }));
  }
  m = /^\/n\/(\d+)\/copy$/.exec(path);
  if (m !== null) {
    // the same bytes as the article itself: an exact duplicate
    const i = Number(m[1]);
    const links = [`/n/${i}/print`, `/gone/${i}`, `/n/${(i * 7) % ARTICLES}/copy`];
    return send(200, pageHtml({ title: `article ${i}`, links, body: `<p>${prose(i + 1)}</p>` }));
  }
  m = /^\/cal\/(\d{4})\/(\d{2})$/.exec(path);
  if (m !== null) {
    // an endless calendar: every month links to the next and the previous one
    const year = Number(m[1]);
    const month = Number(m[2]);
    const next = month === 12 ? `/cal/${year + 1}/01` : `/cal/${year}/${String(month + 1).padStart(2, '0')}`;
    const prev = month === 1 ? `/cal/${year - 1}/12` : `/cal/${year}/${String(month - 1).padStart(2, '0')}`;
    return send(
      200,
      pageHtml({
        title: `events ${year}-${month}`,
        links: [next, prev],
        body: '<p>No events this month.</p>',
      }),
    );
  }
  if (path === '/shop') {
    // faceted search: every combination links to more, and they all read alike
    const color = url.searchParams.get('color') ?? 'red';
    const size = Number(url.searchParams.get('size') ?? '1');
    const links = ['red', 'blue', 'green'].map((c) => `/shop?color=${c}&size=${size + 1}`);
    return send(
      200,
      pageHtml({
        title: 'shop',
        links,
        body: `<p>Products in ${color}: none found. Try another filter.</p>`,
      }),
    );
  }
  // every unknown path: a soft 404 (200 with the path quoted)
  send(
    200,
    pageHtml({ title: 'oops', body: `<p>Sorry, the page ${path} could not be found on this site.</p>` }),
  );
}

function lineCount(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, 'utf8').split('\n').length - 1;
}

/** The decision recorded for each URL (the last line of a URL is its outcome). */
function decisions(out: string): Map<string, string> {
  const byUrl = new Map<string, string>();
  for (const p of readJsonl<PageRecord>(join(out, 'pages.jsonl'))) {
    byUrl.set(
      p.url,
      JSON.stringify([
        p.status,
        p.reason ?? null,
        p.duplicateOf ?? null,
        p.nearDuplicateOf ?? null,
        p.redirectTo ?? null,
      ]),
    );
  }
  for (const l of readJsonl<LinkRecord>(join(out, 'links.jsonl'))) {
    for (const link of l.links)
      if (link.skipped !== undefined) byUrl.set(`${l.from} -> ${link.url}`, link.skipped);
  }
  return byUrl;
}

describe('a crawl killed and resumed decides as an uninterrupted one', () => {
  let site: SiteServer;
  before(async () => {
    [site] = (await startSites(['127.0.0.95'], () => [route])) as [SiteServer];
    await buildCli();
  });
  after(() => closeAll([site]));

  const args = (out: string) => [
    'crawl',
    `${site.origin}/`,
    '--out',
    out,
    '--allow-private',
    '--delay',
    '0',
    '--delay-factor',
    '0',
    '--concurrency',
    '1',
    '--order',
    'bfs',
    '--max-pages',
    '180',
    '--quiet',
  ];

  test('the same decision for every URL with and without kill -9, and one soft-404 probe', async () => {
    const whole = tempDir();
    const first = await runCli(args(whole), { timeoutMs: 120_000 });
    assert.equal(first.code, 0, first.stderr);
    const expected = decisions(whole);
    const reasons = new Set([...expected.values()].map((d) => (d.startsWith('[') ? JSON.parse(d)[1] : d)));
    for (const reason of ['soft-404', 'calendar', 'link-generator']) {
      assert.ok(reasons.has(reason), `the site makes the detectors decide ${reason}: ${[...reasons]}`);
    }
    const expectedNear = [...expected.values()].filter((d) => d.startsWith('[') && JSON.parse(d)[3] !== null);
    assert.ok(expectedNear.length >= 5, 'near-duplicates found');

    const killed = tempDir();
    const probesBefore = site.paths().filter(isProbe).length;
    for (const at of [12, 45, 80, 130]) {
      const proc = await spawnCli(args(killed));
      try {
        await eventually(
          () => (lineCount(join(killed, 'pages.jsonl')) >= at ? true : undefined),
          60_000,
          `${at} lines`,
        );
      } finally {
        proc.child.kill('SIGKILL');
      }
      const exit = await proc.exited;
      assert.equal(exit.signal, 'SIGKILL', `killed at ${at}: ${proc.stderr()}`);
    }
    const last = await runCli(args(killed), { timeoutMs: 120_000 });
    assert.equal(last.code, 0, last.stderr);
    const got = decisions(killed);
    const differ = [...new Set([...expected.keys(), ...got.keys()])].filter(
      (k) => expected.get(k) !== got.get(k),
    );
    assert.deepEqual(
      differ.map((k) => `${k}: ${expected.get(k)} vs ${got.get(k)}`),
      [],
      'every decision is the same',
    );
    assert.equal(
      site.paths().filter(isProbe).length - probesBefore,
      1,
      'the site was probed once over five runs',
    );
  });
});
