/**
 * The dashboard's data and server without a browser: the folder reader (pages.jsonl read as it
 * grows, summary/traps/status merged in their order), the HTTP server (page, uPlot, JSON,
 * server-sent events, loopback-only Host), `--ui [port]` parsing and status.json publishing.
 */
import assert from 'node:assert/strict';
import {
  appendFileSync,
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { takeUiFlag, uiCommand } from '../../../functions/cli/cli-ui.ts';
import type { DashboardView } from '../../../functions/core/dashboard-snapshot.ts';
import type { PageRecord } from '../../../functions/core/types.ts';
import { CrawlFolderReader } from '../../../functions/dashboard/crawl-folder-reader.ts';
import { startDashboard } from '../../../functions/dashboard/dashboard-server.ts';
import { TAIL_CHUNK_BYTES, TAIL_MAX_LINE_BYTES } from '../../../functions/dashboard/jsonl-tail.ts';
import { publishStatus } from '../../../functions/dashboard/status-publisher.ts';
import { eventually } from '../../fixtures/site-server.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-dashboard-'));
  dirs.push(dir);
  return dir;
}

function page(url: string, extra: Partial<PageRecord> = {}): string {
  const record: PageRecord = {
    url,
    finalUrl: url,
    status: 200,
    contentType: 'text/html',
    kind: 'page',
    depth: 0,
    bytes: 1000,
    fetchedAt: '2026-11-26T10:00:00.000Z',
    durationMs: 12,
    title: null,
    contentHash: null,
    outLinks: 0,
    ...extra,
  };
  return `${JSON.stringify(record)}\n`;
}

describe('CrawlFolderReader', () => {
  test('reads pages.jsonl as it grows: statuses, reasons, errors, hosts, rate, top pages', () => {
    const dir = folder();
    const pages = join(dir, 'pages.jsonl');
    writeFileSync(pages, page('http://a.test/', { importance: 0.5, cash: 1 }));
    const reader = new CrawlFolderReader(dir, () => 1_000);
    assert.equal(reader.read().snapshot.pages, 1);
    appendFileSync(
      pages,
      page('http://a.test/x', {
        status: 503,
        fetchedAt: '2026-11-26T10:00:02.000Z',
        durationMs: 40,
        importance: 0.1,
      }) +
        page('http://b.test/', {
          status: null,
          fetchedAt: null,
          durationMs: null,
          bytes: 0,
          reason: 'robots',
        }) +
        page('http://b.test/y', {
          status: null,
          fetchedAt: null,
          durationMs: null,
          bytes: 0,
          reason: 'timeout-idle',
        }) +
        page('http://a.test/z', { fetchedAt: '2026-11-26T10:00:02.500Z', importance: 0.3 }) +
        '{"url":"http://a.test/half", "sta', // still being written
    );
    const { snapshot, source } = reader.read();
    assert.equal(source, 'files');
    assert.equal(snapshot.state, 'running');
    assert.equal(snapshot.pages, 3);
    assert.equal(snapshot.skipped, 2);
    assert.equal(snapshot.errors, 2, 'the 503 and the timeout; a robots.txt refusal is no error');
    assert.equal(snapshot.bytes, 3000);
    assert.deepEqual(snapshot.byStatus, { '200': 2, '503': 1, none: 2 });
    assert.deepEqual(snapshot.byReason, { robots: 1, 'timeout-idle': 1 });
    assert.deepEqual(
      snapshot.topPages.map((p) => p.url),
      ['http://a.test/', 'http://a.test/z'],
      'fetched 2xx pages only: not the 503',
    );
    assert.deepEqual(
      snapshot.rate.map((p) => [p.elapsedMs, p.pages]),
      [
        [1000, 1],
        [2000, 1],
        [3000, 3],
      ],
    );
    const a = snapshot.hostTable.find((h) => h.host === 'a.test')!;
    assert.deepEqual([a.fetched, a.errors, a.lastError, a.lastResponseMs], [3, 1, 'http-503', 12]);
    const b = snapshot.hostTable.find((h) => h.host === 'b.test')!;
    assert.deepEqual([b.fetched, b.errors, b.robotsDisallowed, b.lastError], [0, 1, 1, 'timeout-idle']);

    // the rest of the half line arrives
    appendFileSync(pages, 'tus":404,"reason":"x"}\n');
    assert.equal(reader.read().snapshot.byStatus['404'], 1);
    // a 404 and a redirect rich in cash are no pages worth opening
    appendFileSync(
      pages,
      page('http://a.test/gone', { status: 404, importance: 0.9 }) +
        page('http://a.test/moved', { status: 301, importance: 0.8 }) +
        page('http://a.test/ok', { status: 204, importance: 0.7 }),
    );
    assert.deepEqual(
      reader.read().snapshot.topPages.map((p) => p.url),
      ['http://a.test/ok', 'http://a.test/', 'http://a.test/z'],
    );
    // a resume cut the file back: read again from the start
    truncateSync(pages, Buffer.byteLength(page('http://a.test/', { importance: 0.5, cash: 1 })));
    assert.equal(reader.read().snapshot.pages, 1);
  });

  test('status.json while running, summary.json and traps.json at the end, the live crawler above all', () => {
    const dir = folder();
    writeFileSync(join(dir, 'pages.jsonl'), page('http://a.test/'));
    let now = 10_000;
    const reader = new CrawlFolderReader(dir, () => now);
    writeFileSync(
      join(dir, 'status.json'),
      JSON.stringify({ at: 9_000, seeds: ['http://a.test/'], state: 'running', queued: 7, running: 2 }),
    );
    let view = reader.read();
    assert.equal(view.source, 'status');
    assert.deepEqual(view.seeds, ['http://a.test/']);
    assert.deepEqual(
      [view.snapshot.state, view.snapshot.queued, view.snapshot.running, view.snapshot.pages],
      ['running', 7, 2, 1],
    );
    now = 9_000 + 16_000;
    assert.equal(reader.read().snapshot.state, 'not running', 'no update for 16 s and no summary');

    writeFileSync(
      join(dir, 'summary.json'),
      JSON.stringify({
        state: 'done',
        seeds: ['http://a.test/'],
        finishedAt: new Date(9_500).toISOString(),
        totalDurationMs: 4_000,
        queued: 0,
        hosts: 1,
        requests: 2,
        retries: 0,
        discovered: 1,
        pagesPerSecond: 0.25,
        linksSkipped: { scope: 3 },
        urlSeen: { lookups: 10, cacheHits: 9, claimed: 1, storeLookups: 1, hitRate: 0.9 },
        peakRssBytes: 50e6,
      }),
    );
    writeFileSync(
      join(dir, 'traps.json'),
      JSON.stringify([
        {
          reason: 'calendar',
          pattern: 'a.test/cal/{date}',
          count: 4,
          examples: ['http://a.test/cal/2099-01-01'],
        },
      ]),
    );
    view = reader.read();
    assert.equal(view.source, 'files');
    assert.deepEqual(
      [view.snapshot.state, view.snapshot.queued, view.snapshot.urlSeen?.hitRate, view.snapshot.memory],
      ['done', 0, 0.9, { rssBytes: 50e6, peak: true }],
    );
    assert.equal(view.snapshot.traps[0]!.pattern, 'a.test/cal/{date}');
    assert.deepEqual(view.snapshot.linksSkipped, { scope: 3 });

    const live = reader.read({ state: 'running', queued: 42 });
    assert.equal(live.source, 'live');
    assert.deepEqual([live.snapshot.state, live.snapshot.queued], ['running', 42]);
  });
});

describe('CrawlFolderReader on a big pages.jsonl', () => {
  /** A record of ~600 bytes, with characters of 2-4 bytes that chunk edges cut through. */
  const bigRecord = (i: number) =>
    page(`http://h${i % 97}.test/p${i}/${'é'.repeat(i % 7)}`, {
      status: i % 50 === 0 ? 404 : 200,
      fetchedAt: new Date(Date.UTC(2026, 10, 26) + i * 10).toISOString(),
      title: `Seite ${i} — ${'日本語🙂'.repeat(40)} ${'x'.repeat(i % 300)}`,
      importance: i / 1e6,
    });

  test('tens of MB through a 64 KiB chunk: the same totals, memory bounded by the chunk and a line', () => {
    const dir = folder();
    const path = join(dir, 'pages.jsonl');
    const records = 40_000;
    let longest = 0;
    let written = 0;
    const write = (from: number, to: number) => {
      const lines: string[] = [];
      for (let i = from; i < to; i++) {
        const line = bigRecord(i);
        longest = Math.max(longest, Buffer.byteLength(line));
        lines.push(line);
      }
      appendFileSync(path, lines.join(''));
      written += Buffer.byteLength(lines.join(''));
    };
    write(0, records / 2);
    const chunk = 64 * 1024;
    const reader = new CrawlFolderReader(dir, () => 1_000, { chunkBytes: chunk });
    assert.equal(reader.read().snapshot.pages, records / 2);
    write(records / 2, records); // the crawl goes on: only what it appended is read
    const { snapshot } = reader.read();
    assert.ok(written > 20e6, `${written} bytes`);
    assert.equal(snapshot.pages, records);
    assert.deepEqual(snapshot.byStatus, { '200': records - records / 50, '404': records / 50 });
    assert.equal(snapshot.hosts, 97);
    assert.equal(snapshot.topPages.length, 20);
    assert.equal(snapshot.topPages[0]!.url, `http://h${39_999 % 97}.test/p39999/${'é'.repeat(39_999 % 7)}`);
    assert.equal(snapshot.rate.at(-1)!.pages, records, 'the rate adds up to every page');
    assert.ok(snapshot.rate.length <= 300);
    assert.ok(
      reader.peakHeldBytes <= chunk + longest,
      `held ${reader.peakHeldBytes} bytes at most, for ${written} read`,
    );
  });

  test('a crawl of days keeps at most 3,600 rate buckets, and its points still add up', () => {
    const dir = folder();
    const day = Date.UTC(2026, 10, 26);
    // Three days, a page every 20 s, arriving a little out of order (parallel requests).
    const lines = Array.from({ length: 13_000 }, (_, i) =>
      page(`http://a.test/${i}`, {
        fetchedAt: new Date(day + (i + (i % 3 === 0 ? 2 : 0)) * 20_000).toISOString(),
      }),
    );
    writeFileSync(join(dir, 'pages.jsonl'), lines.join(''));
    const { snapshot } = new CrawlFolderReader(dir, () => 1_000).read();
    assert.ok(snapshot.rate.length <= 300 && snapshot.rate.length >= 250, `${snapshot.rate.length} points`);
    assert.equal(snapshot.rate.at(-1)!.pages, 13_000);
    const step = snapshot.rate[0]!.elapsedMs / 1000;
    const mean =
      snapshot.rate.slice(1, -1).reduce((sum, p) => sum + p.pagesPerSecond, 0) / (snapshot.rate.length - 2);
    assert.ok(Math.abs(mean - 1 / 20) < 0.005, `mean ${mean} pages/s over points of ${step} s`);
  });

  test('a file past the 512 MiB string limit (holes of damaged bytes) is read; the records count', () => {
    const dir = folder();
    const path = join(dir, 'pages.jsonl');
    // Sparse: 6 holes of 100 MB (no disk written), each closed by a newline and followed by records.
    const fd = openSync(path, 'w');
    let at = 0;
    for (let hole = 0; hole < 6; hole++) {
      at += 100e6;
      const lines = `\n${Array.from({ length: 100 }, (_, i) => bigRecord(hole * 100 + i + 1)).join('')}`;
      at += writeSync(fd, lines, at);
    }
    closeSync(fd);
    assert.ok(statSync(path).size > 0x1fffffe8, 'longer than the longest string');
    const reader = new CrawlFolderReader(dir, () => 1_000);
    const { snapshot } = reader.read();
    assert.equal(snapshot.pages, 600);
    assert.ok(
      reader.peakHeldBytes <= TAIL_CHUNK_BYTES + TAIL_MAX_LINE_BYTES,
      `held ${reader.peakHeldBytes} bytes: one chunk and one line at most`,
    );
  });
});

describe('publishStatus', () => {
  test('rewrites status.json with the live state and the seeds', async () => {
    const dir = folder();
    let pages = 1;
    const stop = publishStatus(dir, ['http://a.test/'], () => ({ pages: pages++ }), 20);
    try {
      const status = await eventually(() => {
        try {
          const value = JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8'));
          return value.pages >= 2 ? value : undefined;
        } catch {
          return undefined;
        }
      }, 5_000);
      assert.deepEqual(status.seeds, ['http://a.test/']);
      assert.ok(status.at > 0);
    } finally {
      stop();
    }
  });
});

describe('takeUiFlag', () => {
  test('--ui takes a port when one follows, the default otherwise, and leaves a seed alone', () => {
    assert.deepEqual(takeUiFlag(['http://a.test/', '--ui', '9000', '--quiet']), {
      argv: ['http://a.test/', '--quiet'],
      uiPort: 9000,
    });
    assert.deepEqual(takeUiFlag(['--ui', 'http://a.test/']), { argv: ['http://a.test/'], uiPort: 8484 });
    assert.deepEqual(takeUiFlag(['--ui=0', 'http://a.test/']), { argv: ['http://a.test/'], uiPort: 0 });
    assert.deepEqual(takeUiFlag(['http://a.test/']), { argv: ['http://a.test/'], uiPort: undefined });
    assert.throws(() => takeUiFlag(['--ui=99999']), /--ui expects a port number 0-65535, got "99999"/);
  });

  test('crawlstack ui refuses a missing --out, a folder without a crawl and a bad port', async () => {
    await assert.rejects(uiCommand([]), { code: 'USAGE', message: /--out is required/ });
    await assert.rejects(uiCommand(['--out', folder()]), { code: 'USAGE', message: /holds no crawl/ });
    const dir = folder();
    writeFileSync(join(dir, 'pages.jsonl'), '');
    await assert.rejects(uiCommand(['--out', dir, '--port', 'http']), {
      code: 'USAGE',
      message: '--port expects a port number 0-65535, got "http"',
    });
  });
});

function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => {
        body += s;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('dashboard server', () => {
  const view: DashboardView = {
    outDir: '/crawl',
    seeds: ['http://a.test/'],
    source: 'live',
    snapshot: {
      at: 1,
      state: 'running',
      elapsedMs: 1,
      pages: 5,
      skipped: 0,
      errors: 0,
      hosts: 1,
      bytes: 5,
      duplicates: 0,
      pagesPerSecond: 1,
      rate: [],
      byStatus: {},
      byReason: {},
      hostTable: [],
      traps: [],
      topPages: [],
    },
  };

  test('serves the page, its script, uPlot, the view as JSON and as events, on 127.0.0.1', async () => {
    let calls = 0;
    const server = await startDashboard({
      view: () => ({ ...view, snapshot: { ...view.snapshot, pages: ++calls } }),
      everyMs: 20,
    });
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      const index = await get(server.url);
      assert.equal(index.status, 200);
      assert.match(index.type, /^text\/html/);
      assert.match(index.body, /<script src="vendor\/uPlot\.iife\.min\.js"><\/script>/);
      const script = await get(`${server.url}app.js`);
      assert.match(script.body, /new EventSource\(`api\/events\$\{window\.location\.search\}`\)/);
      const uplot = await get(`${server.url}vendor/uPlot.iife.min.js`);
      assert.equal(uplot.status, 200);
      assert.match(uplot.body, /uPlot/);
      const json = JSON.parse((await get(`${server.url}api/view`)).body);
      assert.equal(json.outDir, '/crawl');
      assert.equal((await get(`${server.url}nothing`)).status, 404);
      // DNS rebinding: a request addressed to another name is refused
      assert.equal((await get(`${server.url}api/view`, { host: 'attacker.example' })).status, 403);
      assert.equal((await get(`${server.url}api/view`, { host: `localhost:1` })).status, 200);

      // server-sent events: a first view at once, then one per interval
      const events = await new Promise<number[]>((resolve, reject) => {
        const seen: number[] = [];
        const req = request(`${server.url}api/events`, (res) => {
          assert.match(String(res.headers['content-type']), /^text\/event-stream/);
          let buffer = '';
          res.setEncoding('utf8').on('data', (s: string) => {
            buffer += s;
            for (const match of buffer.matchAll(/event: view\ndata: (.*)\n\n/g))
              seen.push(JSON.parse(match[1]!).snapshot.pages);
            buffer = buffer.slice(buffer.lastIndexOf('\n\n') + 2);
            if (seen.length >= 3) {
              req.destroy();
              resolve(seen);
            }
          });
        });
        req.on('error', (error) => (seen.length >= 3 ? undefined : reject(error)));
        req.end();
      });
      assert.equal(events.length >= 3, true);
      assert.ok(events[2]! > events[0]!, 'fresh views');
    } finally {
      await server.close();
    }
  });
});
