/**
 * Datasets through the real CLI: a crawl with --extract-config and --extract writes dataset.jsonl
 * (one row per HTML page: url + fields), and `crawlstack export` writes it, or pages.jsonl, as
 * JSON Lines or RFC 4180 CSV, with nasty values kept intact.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseCsv } from '../fixtures/csv-reader.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { buildCli, readJsonl, runCli, tempDir } from './helpers.ts';

const NASTY_TITLE = 'Tools, "quoted" & <escaped> — ünïcödé 漢字 👩‍👩‍👧';

describe('datasets and export', () => {
  let site: SiteServer;
  const out = tempDir();
  let origin: string;

  before(async () => {
    [site] = (await startSites(['127.0.0.2'], () => [
      siteRoutes({
        '/': { title: 'Home', links: ['/a', '/b', '/c', '/file.txt'] },
        '/a': {
          title: NASTY_TITLE.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;'),
          body: '<span class="tag">one, two</span><span class="tag">"three"</span><img src="/a.png">',
        },
        '/b': { title: 'B', body: '<span class="tag">solo</span>' },
        // no <h1>, no tags, no image: null and empty lists
        '/c': { body: '<p>nothing to see</p>' },
        '/file.txt': { type: 'text/plain', body: 'not html' },
      }),
    ])) as [SiteServer];
    origin = site.origin;
    await buildCli();
  });
  after(() => closeAll([site]));

  test('the crawl writes one dataset row per HTML page: url first, fields as configured', async () => {
    const fields = join(tempDir(), 'fields.json');
    writeFileSync(
      fields,
      JSON.stringify({
        fields: {
          heading: { selector: 'h1' },
          tags: { selector: '.tag', all: true },
          image: { selector: 'img', attr: 'src' },
        },
      }),
    );
    const crawl = await runCli([
      'crawl',
      `${origin}/`,
      '--out',
      out,
      '--allow-private',
      '--delay',
      '0',
      '--delay-factor',
      '0',
      '--follow',
      'page,document,other',
      '--extract-config',
      fields,
      '--extract',
      'links=a@href',
      '--quiet',
    ]);
    assert.equal(crawl.code, 0, crawl.stderr);
    const rows = readJsonl<Record<string, unknown>>(join(out, 'dataset.jsonl'));
    const byUrl = new Map(rows.map((r) => [r.url as string, r]));
    assert.equal(byUrl.size, rows.length, 'one row per page');
    assert.deepEqual([...byUrl.keys()].sort(), [`${origin}/`, `${origin}/a`, `${origin}/b`, `${origin}/c`]);
    assert.deepEqual(Object.keys(rows[0]!), ['url', 'heading', 'tags', 'image', 'links']);
    assert.deepEqual(byUrl.get(`${origin}/a`), {
      url: `${origin}/a`,
      heading: NASTY_TITLE,
      tags: ['one, two', '"three"'],
      image: '/a.png',
      links: [],
    });
    assert.deepEqual(byUrl.get(`${origin}/c`), {
      url: `${origin}/c`,
      heading: null,
      tags: [],
      image: null,
      links: [],
    });
    assert.deepEqual(byUrl.get(`${origin}/`)!.links, ['/a', '/b', '/c', '/file.txt']);
    // pages.jsonl keeps the same values under `extracted`
    const pages = readJsonl<{ url: string; extracted?: unknown }>(join(out, 'pages.jsonl'));
    assert.deepEqual(pages.find((p) => p.url === `${origin}/b`)!.extracted, {
      heading: 'B',
      tags: ['solo'],
      image: null,
      links: [],
    });
    assert.equal(pages.find((p) => p.url === `${origin}/file.txt`)!.extracted, undefined);
  });

  test('export --format csv: RFC 4180, a header of the columns met, lists as JSON cells, BOM on request', async () => {
    const file = join(out, 'dataset.csv');
    const result = await runCli(['export', '--out', out, '--format', 'csv', '--bom', '--output', file]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /exported 4 rows from dataset\.jsonl/);
    const bytes = readFileSync(file);
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 byte order mark');
    const text = bytes.toString('utf8').slice(1);
    assert.ok(text.endsWith('\r\n'));
    const [header, ...records] = parseCsv(text);
    assert.deepEqual(header, ['url', 'heading', 'tags', 'image', 'links']);
    const a = records.find((r) => r[0] === `${origin}/a`)!;
    assert.deepEqual(a, [`${origin}/a`, NASTY_TITLE, '["one, two","\\"three\\""]', '/a.png', '[]']);
    const c = records.find((r) => r[0] === `${origin}/c`)!;
    assert.deepEqual(c, [`${origin}/c`, '', '[]', '', '[]']);
    assert.deepEqual(JSON.parse(a[2]!), ['one, two', '"three"']);
  });

  test('export --fields picks and orders columns; --source pages exports pages.jsonl', async () => {
    const typo = await runCli(['export', '--out', out, '--fields', 'image,url,nope']);
    assert.equal(typo.code, 1, typo.stderr);
    assert.match(
      typo.stderr,
      /no record of dataset\.jsonl has "nope" \(its fields: url, heading, tags, image, links\)/,
    );
    const jsonl = await runCli(['export', '--out', out, '--fields', 'image,url']);
    assert.equal(jsonl.code, 0, jsonl.stderr);
    const rows = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(rows.length, 4);
    for (const row of rows) assert.deepEqual(Object.keys(row), ['image', 'url']);
    assert.deepEqual(
      rows.find((r) => r.url === `${origin}/a`),
      { image: '/a.png', url: `${origin}/a` },
    );

    const pages = await runCli([
      'export',
      '--out',
      out,
      '--source',
      'pages',
      '--format',
      'csv',
      '--fields',
      'url,status,kind',
    ]);
    assert.equal(pages.code, 0, pages.stderr);
    const [header, ...records] = parseCsv(pages.stdout);
    assert.deepEqual(header, ['url', 'status', 'kind']);
    assert.deepEqual(
      records.find((r) => r[0] === `${origin}/file.txt`),
      [`${origin}/file.txt`, '200', 'document'],
    );
    assert.equal(records.length, readJsonl(join(out, 'pages.jsonl')).length);
  });

  test('a line still being written is left out, and bad arguments exit 1 naming the problem', async () => {
    const copy = tempDir();
    copyFileSync(join(out, 'dataset.jsonl'), join(copy, 'dataset.jsonl'));
    const tail = '{"url":"http://half.test/","head';
    appendFileSync(join(copy, 'dataset.jsonl'), tail);
    const partial = await runCli(['export', '--out', copy]);
    assert.equal(partial.code, 0, partial.stderr);
    assert.equal(partial.stdout.trimEnd().split('\n').length, 4);
    assert.match(
      partial.stderr,
      new RegExp(
        `exported 4 rows from dataset\\.jsonl \\(an unfinished last line of ${tail.length} bytes left out\\)`,
      ),
    );

    const broken = tempDir();
    writeFileSync(join(broken, 'pages.jsonl'), '{"url":"x"}\nnot json\n');
    const cases: [string[], RegExp][] = [
      [['export', '--out', out, '--format', 'xml'], /--format is jsonl or csv, got "xml"/],
      [['export', '--out', out, '--source', 'links'], /--source is pages or dataset, got "links"/],
      [['export', '--out', out, '--bom'], /--bom is for --format csv only/],
      [['export', '--out', out, '--csv-raw-formulas'], /--csv-raw-formulas is for --format csv only/],
      [['export', '--out', out, '--fields', 'a,,b'], /--fields has an empty name/],
      [['export'], /--out is required/],
      [['export', '--out', broken, '--source', 'dataset'], /has no dataset\.jsonl \(crawl with --extract/],
      [['export', '--out', join(broken, 'none')], /has no pages\.jsonl/],
      [['export', '--out', broken], /pages\.jsonl line 2 is not JSON: not json/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
    const nowhere = join(broken, 'nothing.csv');
    assert.equal((await runCli(['export', '--out', join(broken, 'none'), '--output', nowhere])).code, 1);
    assert.equal(existsSync(nowhere), false, 'no output file for a failed export');
    const help = await runCli(['export', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: crawlstack export --out DIR/);
  });

  test('a reader that stops early (| head) ends the export quietly: exit 0, nothing on stderr', async () => {
    // Far more than a pipe's buffer, so the export is still writing when head goes away.
    const big = tempDir();
    const line = `${JSON.stringify({ url: 'http://big.test/', status: 200, title: 'x'.repeat(200) })}\n`;
    writeFileSync(join(big, 'pages.jsonl'), line.repeat(20_000));
    const bin = await buildCli();
    for (const format of ['jsonl', 'csv']) {
      const errors = join(big, `stderr-${format}`);
      const script = `"$0" "$1" export --out "$2" --source pages --format "$3" 2>"$4" | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`;
      const status = execFileSync('bash', ['-c', script, process.execPath, bin, big, format, errors], {
        encoding: 'utf8',
      });
      assert.equal(status.trim(), '0', `export --format ${format} | head: exit status`);
      assert.equal(readFileSync(errors, 'utf8'), '', `export --format ${format} | head: stderr`);
    }
  });
});
