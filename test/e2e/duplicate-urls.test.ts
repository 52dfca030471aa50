/**
 * Duplicate-URL rules in real crawls (docs/duplicate-urls.md): a site for each rule kind that
 * answers a second form of every page with the same bytes, crawled breadth-first one request at
 * a time, so the server's log shows the second forms fetched until the rule has its support and
 * never after; a counter-example that blocks a rule; the rule surviving `kill -9`; and
 * `crawlstack canonicalize --rules`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { parseCrawlConfig } from '../../functions/core/config.ts';
import type { RuleRecord } from '../../functions/core/quality/duplicate-url-rules.ts';
import type { PageRecord } from '../../functions/core/types.ts';
import { eventually, type Route } from '../fixtures/site-server.ts';
import { closeAll, pageHtml, prose, startSites } from '../fixtures/sites.ts';
import { buildCli, crawl, pathCounts, readJsonl, runCli, spawnCli, tempDir } from './helpers.ts';

/** A server quirk: each page's own path and the second form the server also answers. */
interface Quirk {
  rule: string;
  own: (i: number) => string;
  form: (i: number) => string;
}

const QUIRKS: Quirk[] = [
  { rule: 'drop-suffix index.html', own: (i) => `/p-${i}/`, form: (i) => `/p-${i}/index.html` },
  { rule: 'trailing-slash', own: (i) => `/p-${i}/`, form: (i) => `/p-${i}` },
  { rule: 'case-insensitive', own: (i) => `/docs/page-${i}.html`, form: (i) => `/Docs/Page-${i}.html` },
  { rule: 'ignore-param ref at /*', own: (i) => `/page-${i}.html`, form: (i) => `/page-${i}.html?ref=nav` },
  {
    rule: 'alias-prefix /en/ -> /',
    own: (i) => `/guide/page-${i}.html`,
    form: (i) => `/en/guide/page-${i}.html`,
  },
];

/** Pages 1..N linked from the home page under both forms; page i links page N+i under its second form. */
const N = 8;

/** Pairs a rule needs by default (duplicateUrlRuleSupport). */
const SUPPORT = (() => {
  const parsed = parseCrawlConfig({ seeds: ['http://127.0.0.2/'] });
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.config.duplicateUrlRuleSupport;
})();
const LEARNING = Array.from({ length: SUPPORT }, (_, k) => k + 1);

/**
 * The site of a quirk: `/` links every page 1..N under its own path and then its second form;
 * page i (either form, same bytes) links page N+i under its second form only. `differs` pages
 * answer their second form with other bytes (a counter-example).
 */
function quirkSite(quirk: Quirk, differs: ReadonlySet<number> = new Set(), declares = false): Route {
  const byPath = new Map<string, { page: number; second: boolean }>();
  for (let i = 1; i <= 2 * N; i++) {
    byPath.set(quirk.own(i), { page: i, second: false });
    byPath.set(quirk.form(i), { page: i, second: true });
  }
  const home = pageHtml({
    title: 'Home',
    links: Array.from({ length: N }, (_, k) => [quirk.own(k + 1), quirk.form(k + 1)]).flat(),
  });
  return (req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') {
      res.writeHead(404).end();
      return;
    }
    const found = byPath.get(path);
    if (path !== '/' && found === undefined) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
      return;
    }
    let body = home;
    if (found !== undefined) {
      const { page, second } = found;
      const text = second && differs.has(page) ? prose(1000 + page, 60) : prose(page, 60);
      body = pageHtml({
        title: `Page ${page}`,
        links: page <= N ? [quirk.form(N + page)] : [],
        body: `<p>${text}</p>`,
        ...(declares ? { head: `<link rel="canonical" href="${quirk.own(page)}">` } : {}),
      });
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  };
}

function readRules(outDir: string): RuleRecord[] {
  return JSON.parse(readFileSync(join(outDir, 'rules.json'), 'utf8')) as RuleRecord[];
}

/** Deterministic: one request at a time, in discovery order, no audit sample (it depends on the port). */
const ONE_AT_A_TIME = { order: 'bfs', concurrency: 1, duplicateUrlRuleAudit: 0 } as const;

describe('duplicate-URL rules in a crawl', () => {
  for (const quirk of QUIRKS) {
    test(`${quirk.rule}: learned from its first pairs, then no second form is fetched`, async () => {
      const [site] = await startSites(['127.0.0.2'], () => [quirkSite(quirk)]);
      try {
        const o = site!.origin;
        const run = await crawl({ seeds: [`${o}/`], ...ONE_AT_A_TIME });
        const asked = pathCounts(site!);
        const seconds = [...asked].filter(([path]) =>
          [...Array(2 * N)].some((_, k) => quirk.form(k + 1) === path),
        );
        // the first pairs teach the rule (its support); every later second form is merged, never fetched
        assert.deepEqual(
          seconds.map(([path]) => path),
          LEARNING.map(quirk.form),
          'second forms fetched',
        );
        for (let i = 1; i <= 2 * N; i++)
          assert.equal(asked.get(quirk.own(i)), 1, `${quirk.own(i)} fetched once`);
        // queued before the rule was active: skipped at dispatch, passed on to the page's own URL
        for (let i = SUPPORT + 1; i <= N; i++) {
          const skipped = run.page(`${o}${quirk.form(i)}`);
          assert.equal(skipped.reason, 'duplicate-url-rule');
          assert.equal(skipped.detail, `merged into ${o}${quirk.own(i)} by ${quirk.rule}`);
        }
        for (let i = N + 1; i <= N + SUPPORT; i++)
          assert.equal(run.page(`${o}${quirk.form(i)}`).reason, 'duplicate-url-rule');
        assert.equal(run.summary.byReason['duplicate-url-rule'], N);
        // linked after it: rewritten before the URL-seen test (links.jsonl keeps the linked form)
        const link = run.linksOf(`${o}${quirk.own(5)}`).get(`${o}${quirk.own(N + 5)}`);
        assert.deepEqual(link, {
          url: `${o}${quirk.own(N + 5)}`,
          kind: 'page',
          linkedAs: `${o}${quirk.form(N + 5)}`,
        });
        assert.equal(run.pages.filter((p) => p.url === `${o}${quirk.form(N + 5)}`).length, 0);
        const [rule] = readRules(run.outDir).filter((r) => r.name === quirk.rule);
        assert.ok(rule, `rules.json holds ${quirk.rule}: ${JSON.stringify(readRules(run.outDir))}`);
        assert.equal(rule.origin, o);
        assert.equal(rule.status, 'active');
        assert.ok(rule.support >= SUPPORT);
        assert.ok(rule.examples.length >= SUPPORT);
      } finally {
        await closeAll([site!]);
      }
    });
  }

  test('a counter-example blocks the rule: every second form is fetched', async () => {
    const quirk = QUIRKS[0]!;
    // page 2's second form has other bytes: it refutes the rule before it has its support
    const [site] = await startSites(['127.0.0.2'], () => [quirkSite(quirk, new Set([2]))]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], ...ONE_AT_A_TIME });
      const asked = pathCounts(site!);
      for (let i = 1; i <= 2 * N; i++) assert.equal(asked.get(quirk.form(i)), 1, `${quirk.form(i)} fetched`);
      assert.equal(run.summary.byReason['duplicate-url-rule'], undefined);
      const rule = readRules(run.outDir).find((r) => r.name === quirk.rule);
      assert.equal(rule?.status, 'blocked');
      assert.deepEqual(new Set(rule?.counterExample), new Set([`${o}/p-2/`, `${o}/p-2/index.html`]));
    } finally {
      await closeAll([site!]);
    }
  });

  test('a site that declares its canonical URLs: one pair is proof, the second form is fetched once', async () => {
    const quirk = QUIRKS[0]!;
    const [site] = await startSites(['127.0.0.2'], () => [quirkSite(quirk, new Set(), true)]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], ...ONE_AT_A_TIME });
      const asked = pathCounts(site!);
      const seconds = [...asked].filter(([path]) => path.endsWith('/index.html')).map(([path]) => path);
      assert.deepEqual(seconds, [quirk.form(1)]);
      const rule = readRules(run.outDir).find((r) => r.name === quirk.rule);
      assert.equal(rule?.status, 'active');
      assert.equal(rule?.confirmed, 1);
    } finally {
      await closeAll([site!]);
    }
  });

  test('an alias namespace (/node/<n>) learned from one alias that declares its page canonical', async () => {
    // Pages /p-<i>.html; /node/<i> answers the same bytes and declares /p-<i>.html canonical. The
    // home page links pages 1..N, then their aliases; page i links page N+i and its alias; pages
    // N+1..2N, fetched after the rule, link an alias each (not served).
    const byPath = new Map<string, number>();
    for (let i = 1; i <= 2 * N; i++) {
      byPath.set(`/p-${i}.html`, i);
      byPath.set(`/node/${i}`, i);
    }
    const route: Route = (req, res) => {
      const path = req.url ?? '/';
      const page = byPath.get(path);
      let body: string;
      if (path === '/') {
        const links = Array.from({ length: N }, (_, k) => `/p-${k + 1}.html`);
        body = pageHtml({ title: 'Home', links: [...links, ...links.map((_, k) => `/node/${k + 1}`)] });
      } else if (page !== undefined) {
        body = pageHtml({
          title: `Page ${page}`,
          head: `<link rel="canonical" href="/p-${page}.html">`,
          links: page <= N ? [`/p-${N + page}.html`, `/node/${N + page}`] : [`/node/${2 * N + page}`],
          body: `<p>${prose(page, 60)}</p>`,
        });
      } else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    };
    const [site] = await startSites(['127.0.0.2'], () => [route]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], ...ONE_AT_A_TIME });
      const asked = pathCounts(site!);
      const aliases = [...asked].filter(([path]) => path.startsWith('/node/')).map(([path]) => path);
      assert.deepEqual(aliases, ['/node/1'], 'the first alias teaches the namespace; no other is fetched');
      for (let i = 1; i <= 2 * N; i++) assert.equal(asked.get(`/p-${i}.html`), 1, `page ${i} fetched once`);
      // queued before the rule: skipped at dispatch; linked after it: not followed
      const skipped = run.page(`${o}/node/2`);
      assert.equal(skipped.reason, 'duplicate-url-rule');
      assert.equal(skipped.detail, 'an alias of a page the site names otherwise (alias-namespace /node/<n>)');
      assert.deepEqual(run.linksOf(`${o}/p-${N + 1}.html`).get(`${o}/node/${3 * N + 1}`), {
        url: `${o}/node/${3 * N + 1}`,
        kind: 'page',
        skipped: 'duplicate-url-rule',
      });
      const rule = readRules(run.outDir).find((r) => r.name === 'alias-namespace /node/<n>');
      assert.equal(rule?.status, 'active');
      assert.deepEqual(rule?.examples[0], [`${o}/node/1`, `${o}/p-1.html`]);
    } finally {
      await closeAll([site!]);
    }
  });

  test('--no-duplicate-url-rules: nothing learned, every form fetched, no rules.json', async () => {
    const quirk = QUIRKS[0]!;
    const [site] = await startSites(['127.0.0.2'], () => [quirkSite(quirk)]);
    try {
      const o = site!.origin;
      const run = await crawl({ seeds: [`${o}/`], ...ONE_AT_A_TIME, duplicateUrlRules: false });
      const asked = pathCounts(site!);
      for (let i = 1; i <= 2 * N; i++) assert.equal(asked.get(quirk.form(i)), 1);
      assert.equal(existsSync(join(run.outDir, 'rules.json')), false);
    } finally {
      await closeAll([site!]);
    }
  });
});

describe('duplicate-URL rules through the CLI', () => {
  before(async () => {
    await buildCli();
  });

  test('kill -9 after the rule is active: the resumed crawl applies it; canonicalize --rules explains it', async () => {
    const quirk = QUIRKS[0]!;
    const [site] = await startSites(['127.0.0.2'], () => [quirkSite(quirk)]);
    const out = tempDir();
    const o = site!.origin;
    const config = join(tempDir(), 'config.json');
    writeFileSync(config, JSON.stringify({ duplicateUrlRuleAudit: 0 }));
    const args = [
      'crawl',
      `${o}/`,
      '--out',
      out,
      '--allow-private',
      '--order',
      'bfs',
      '--concurrency',
      '1',
      '--delay',
      '40',
      '--delay-factor',
      '0',
      '--no-soft404-probe',
      '--no-trap-detectors',
      '--no-sitemaps',
      '--config',
      config,
      '--quiet',
    ];
    try {
      const proc = await spawnCli(args);
      // a committed skip means the steps that made the rule active are committed too
      const pagesFile = join(out, 'pages.jsonl');
      await eventually(
        () =>
          existsSync(pagesFile) && readFileSync(pagesFile, 'utf8').includes('"reason":"duplicate-url-rule"')
            ? true
            : undefined,
        15_000,
        'a duplicate-url-rule skip',
      );
      proc.child.kill('SIGKILL');
      await proc.exited;
      const resumed = await runCli(args);
      assert.equal(resumed.code, 0, resumed.stderr);
      const asked = pathCounts(site!);
      const seconds = [...asked].filter(([path]) => path.endsWith('/index.html'));
      assert.deepEqual(
        seconds.map(([path]) => path),
        LEARNING.map(quirk.form),
        'no second form fetched after the restart',
      );
      for (let i = 1; i <= 2 * N; i++)
        assert.ok((asked.get(quirk.own(i)) ?? 0) >= 1, `${quirk.own(i)} fetched`);
      const pages = readJsonl<PageRecord>(join(out, 'pages.jsonl'));
      assert.equal(pages.filter((p) => p.reason === 'duplicate-url-rule').length, N);
      assert.equal(readRules(out).find((r) => r.name === quirk.rule)?.status, 'active');

      const merged = await runCli(['canonicalize', '--rules', out, `${o}/p-9/index.html`, `${o}/p-9/`]);
      assert.equal(merged.code, 0, merged.stderr);
      const lines = merged.stdout.trim().split('\n');
      assert.equal(lines.length, 3);
      const [first] = lines;
      assert.deepEqual(
        first!
          .split('\t')
          .slice(2)
          .filter((_, k) => k !== 1),
        [`${o}/p-9/`, 'drop-suffix index.html'],
      );
      assert.equal(lines[2], `same page: both become ${o}/p-9/, by drop-suffix index.html`);
      const apart = await runCli(['canonicalize', '--rules', out, `${o}/p-9/other.html`, `${o}/p-9/`]);
      assert.match(
        apart.stdout,
        /different pages: http:\/\/127\.0\.0\.2:\d+'s rules \(drop-suffix index\.html\) do not merge them/,
      );
      // an alias namespace: a URL it holds is not fetched, and no rule says which page it is
      const aliases = tempDir();
      const namespace: RuleRecord = {
        origin: o,
        rule: { kind: 'alias-namespace', dir: '/node/' },
        name: 'alias-namespace /node/<n>',
        status: 'active',
        support: 1,
        confirmed: 1,
        examples: [[`${o}/node/1`, `${o}/p-1.html`]],
      };
      writeFileSync(join(aliases, 'rules.json'), JSON.stringify([namespace]));
      const alias = await runCli(['canonicalize', '--rules', aliases, `${o}/node/5`, `${o}/p-5.html`]);
      assert.equal(alias.code, 0, alias.stderr);
      const [aliasLine, , aliasVerdict] = alias.stdout.trim().split('\n');
      assert.equal(aliasLine!.split('\t')[4], 'alias-namespace /node/<n> (not fetched)');
      assert.equal(
        aliasVerdict,
        `not fetched: ${o}/node/5 is an alias by alias-namespace /node/<n> (its page declares which URL it is)`,
      );
      const missing = await runCli(['canonicalize', '--rules', tempDir(), `${o}/`]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /no rules\.json there/);
    } finally {
      await closeAll([site!]);
    }
  });
});
