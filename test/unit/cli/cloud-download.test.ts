/**
 * `crawlstack cloud download` against a hostile API on loopback: one server plays the API's
 * routes and the presigned S3 URLs it hands out, and each test makes it misbehave one way (a key
 * that climbs out of --out, a body longer than listed, silence, a looping cursor or next link, an
 * answer too large). Each ends with a clear error of a documented code, and nothing is written
 * outside --out.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { UsageError } from '../../../functions/cli/cli-options.ts';
import { cloudCommand } from '../../../functions/cli/cloud/cli-cloud.ts';
import { CloudApi } from '../../../functions/cli/cloud/cloud-api.ts';
import { CloudCliError } from '../../../functions/cli/cloud/cloud-cli-error.ts';
import { type DownloadLimits, downloadCrawl } from '../../../functions/cli/cloud/cloud-download.ts';
import type { CrawlProgressView } from '../../../functions/cloud/use-cases/crawl-progress.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { tempDir } from '../../e2e/helpers.ts';

const ID = '00000000-0000-4000-8000-00000000000c';
type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

/** How the API misbehaves in the current test. */
interface Scenario {
  extract?: boolean;
  /** A page of GET /crawls/{id}/objects?kind=...: its JSON, or a handler. */
  objects?: (kind: string, cursor: string | null) => unknown | Handler;
  s3?: Record<string, Handler>;
  dataset?: Handler;
  pages?: Handler;
}

let server: Server;
let base: string;
let scenario: Scenario = {};
const requests: string[] = [];

function view(extract: boolean): CrawlProgressView {
  const parsed = parseCrawlConfig({
    seeds: ['https://example.org/'],
    ...(extract ? { extract: { title: 'title' } } : {}),
  });
  assert.ok(parsed.ok);
  return {
    id: ID,
    status: 'done',
    createdAt: '2026-11-26T10:00:00.000Z',
    finishedAt: '2026-11-26T10:01:30.000Z',
    config: parsed.config,
    counters: {
      discovered: 1,
      queued: 0,
      parked: 0,
      finished: 1,
      fetched: 1,
      byStatus: { '200': 1 },
      failed: 0,
      byReason: {},
      linksSkipped: {},
      bytes: 10,
      hosts: 1,
      retries: 0,
      duplicates: 0,
      requests: 1,
      dlq: 0,
    },
    urlSeen: { lookups: 1, cacheHits: 0, hitRate: 0 },
  };
}

function json(res: ServerResponse, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A listed object whose URL is the server's /s3/<name>. */
function listed(key: string, size: number, name: string) {
  return { key, size, url: `${base}/s3/${name}` };
}

before(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    const path = url.pathname;
    if (path.startsWith('/s3/')) {
      const handler = scenario.s3?.[path.slice(4)];
      if (handler === undefined) {
        res.writeHead(404).end();
        return;
      }
      handler(req, res, url);
      return;
    }
    if (path === `/crawls/${ID}`) return json(res, view(scenario.extract === true));
    if (path === `/crawls/${ID}/objects`) {
      const answer = scenario.objects?.(url.searchParams.get('kind')!, url.searchParams.get('cursor')) ?? {
        objects: [],
      };
      if (typeof answer === 'function') return (answer as Handler)(req, res, url);
      return json(res, answer);
    }
    if (path === `/crawls/${ID}/rules`) return json(res, { rules: [] });
    if (path === `/crawls/${ID}/dataset` && scenario.dataset) return scenario.dataset(req, res, url);
    if (path === `/crawls/${ID}/pages` && scenario.pages) return scenario.pages(req, res, url);
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'no route' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

beforeEach(() => {
  scenario = {};
  requests.length = 0;
});

const FAST: Partial<DownloadLimits> = { headersTimeoutMs: 150, idleTimeoutMs: 150 };

function api(options: { maxAnswerBytes?: number } = {}): CloudApi {
  return new CloudApi({ api: base, from: '--api', auth: { kind: 'bearer', token: 't' } }, options);
}

/** Downloads into a fresh `<parent>/out`; resolves the parent and the outcome. */
async function download(options: { api?: CloudApi; outDir?: string } = {}) {
  const parent = tempDir('crawlstack-download-');
  const outDir = options.outDir ?? join(parent, 'out');
  const lines: string[] = [];
  const outcome = await downloadCrawl({
    api: options.api ?? api(),
    crawlId: ID,
    outDir,
    log: (line) => lines.push(line),
    limits: FAST,
  }).then(
    (report) => ({ report, error: undefined }),
    (error: unknown) => ({ report: undefined, error }),
  );
  return { parent, outDir, lines, ...outcome };
}

function assertCloudError(error: unknown, code: string, message: RegExp): void {
  assert.ok(error instanceof CloudCliError, `a CloudCliError, got ${error}`);
  assert.equal(error.code, code, error.message);
  assert.equal(error.exitCode, 2);
  assert.match(error.message, message);
}

describe('cloud download: every file stays inside --out', () => {
  for (const key of [
    `warc/${ID}/2026/11/28/..`,
    `warc/${ID}/..`,
    `warc/${ID}/2026/`,
    `index/${ID}/../../escape.jsonl`,
    `index/${ID}/..`,
    `links/someone-else/x.jsonl`,
    `trace/${ID}/.hidden`,
  ]) {
    it(`refuses the listed key ${key}, writing nothing for it`, { timeout: 10_000 }, async () => {
      const kind = key.split('/')[0]!;
      scenario = {
        objects: (k) => (k === kind ? { objects: [listed(key, 5, 'body')] } : { objects: [] }),
        s3: { body: (_req, res) => res.end('HELLO') },
      };
      const { parent, error } = await download();
      assertCloudError(error, 'BAD_ANSWER', /would not be a plain file in .*nothing was written for it/);
      assert.deepEqual(readdirSync(parent), ['out'], 'nothing beside --out');
      assert.equal(
        requests.some((r) => r.startsWith('GET /s3/')),
        false,
        'the body was not even fetched',
      );
    });
  }

  it('writes through no symbolic link: a planted folder or .part file is refused', {
    timeout: 10_000,
  }, async () => {
    const elsewhere = tempDir('crawlstack-elsewhere-');
    const parent = tempDir('crawlstack-download-');
    const outDir = join(parent, 'out');
    mkdirSync(outDir);
    symlinkSync(elsewhere, join(outDir, 'warc'));
    const folder = await download({ outDir });
    assert.ok(folder.error instanceof UsageError, String(folder.error));
    assert.match((folder.error as Error).message, /warc leads outside the folder/);

    const victim = join(elsewhere, 'victim');
    writeFileSync(victim, 'keep me');
    const outDir2 = join(tempDir('crawlstack-download-'), 'out');
    mkdirSync(join(outDir2, 'warc'), { recursive: true });
    symlinkSync(victim, join(outDir2, 'warc', 'a.warc.gz.part'));
    scenario = {
      objects: (k) =>
        k === 'warc' ? { objects: [listed(`warc/${ID}/2026/11/28/a.warc.gz`, 5, 'a')] } : { objects: [] },
      s3: { a: (_req, res) => res.end('EVIL!') },
    };
    const planted = await download({ outDir: outDir2 });
    assert.ok(planted.error instanceof UsageError, String(planted.error));
    assert.match((planted.error as Error).message, /is a symbolic link/);
    assert.equal(readFileSync(victim, 'utf8'), 'keep me');
  });
});

describe('cloud download: bounded bodies, time and listings', () => {
  it('cuts a body at its listed size: 10 bytes listed, 8 MB sent', { timeout: 10_000 }, async () => {
    const key = `warc/${ID}/2026/11/28/a.warc.gz`;
    scenario = {
      objects: (k) => (k === 'warc' ? { objects: [listed(key, 10, 'big')] } : { objects: [] }),
      s3: { big: (_req, res) => res.end(Buffer.alloc(8 * 1024 * 1024, 0x41)) },
    };
    const { outDir, error } = await download();
    assertCloudError(error, 'BAD_ANSWER', /sent more than the 10 bytes listed for .*a\.warc\.gz/);
    assert.deepEqual(readdirSync(join(outDir, 'warc')), [], 'neither the file nor its .part');
  });

  it('silence ends a fetch: no headers, or a body that stops', { timeout: 10_000 }, async () => {
    const key = `warc/${ID}/2026/11/28/a.warc.gz`;
    for (const [name, handler, message] of [
      ['hang', () => undefined, /no answer for 0\.15 s/],
      [
        'trickle',
        (_req: IncomingMessage, res: ServerResponse) => {
          res.writeHead(200, { 'content-length': '10' });
          res.write('abc');
        },
        /nothing more after 3 bytes for 0\.15 s/,
      ],
    ] as const) {
      scenario = {
        objects: (k) => (k === 'warc' ? { objects: [listed(key, 10, name)] } : { objects: [] }),
        s3: { [name]: handler },
      };
      const started = performance.now();
      const { error } = await download();
      assertCloudError(error, 'TIMEOUT', message);
      assert.ok(performance.now() - started < 5000, 'three tries of 0.15 s, not a hang');
    }
  });

  it('a listing that hands out its cursor again is a loop, stopped', { timeout: 10_000 }, async () => {
    scenario = { objects: (k) => (k === 'index' ? { objects: [], cursor: 'c2FtZQ' } : { objects: [] }) };
    const { error } = await download();
    assertCloudError(error, 'BAD_ANSWER', /handed out the cursor "c2FtZQ" twice/);
    assert.equal(requests.filter((r) => r.includes('kind=index')).length, 2);
  });

  it('a dataset whose next link points at itself is a loop, stopped', { timeout: 10_000 }, async () => {
    scenario = {
      extract: true,
      dataset: (_req, res, url) => {
        res.writeHead(200, {
          'content-type': 'application/x-ndjson',
          link: `<${url.pathname}${url.search}>; rel="next"`,
        });
        res.end('{"url":"https://example.org/","title":"x"}\n');
      },
    };
    const { error } = await download();
    assertCloudError(error, 'BAD_ANSWER', /the dataset of crawl .*twice/);
    assert.ok(requests.filter((r) => r.includes('/dataset')).length <= 3);
  });

  it('a JSON answer over the bound is refused as it streams, or at once by its Content-Length', {
    timeout: 10_000,
  }, async () => {
    scenario = {
      objects: (k) =>
        k === 'index'
          ? (_req: IncomingMessage, res: ServerResponse) => {
              res.writeHead(200, { 'content-type': 'application/json' });
              res.end(`{"objects":[],"pad":"${'x'.repeat(3 * 1024 * 1024)}"}`);
            }
          : { objects: [] },
    };
    const streamed = await download({ api: api({ maxAnswerBytes: 1024 * 1024 }) });
    assertCloudError(streamed.error, 'BAD_ANSWER', /answer to GET \/crawls\/.*over 1 MiB \(more arrived\)/);

    scenario = {
      objects: () => (_req: IncomingMessage, res: ServerResponse) => {
        // 300 MB announced; a few bytes sent, then nothing: the client must not wait for it.
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(300 * 1024 * 1024),
        });
        res.write('{"objects":[');
      },
    };
    const announced = await download();
    assertCloudError(announced.error, 'BAD_ANSWER', /over 32 MiB \(314572800 bytes announced\)/);
  });
});

describe('cloud download: a whole crawl, quietly', () => {
  it('12 trace objects and 12 dataset answers: written whole, no MaxListenersExceededWarning', {
    timeout: 20_000,
  }, async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const traces = Array.from({ length: 12 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    scenario = {
      extract: true,
      objects: (k) =>
        k === 'trace'
          ? { objects: traces.map((t) => listed(`trace/${ID}/${t}.bin`, 8, t)) }
          : { objects: [] },
      s3: Object.fromEntries(traces.map((t) => [t, (_req, res) => res.end(t.padEnd(8, '.'))])),
      dataset: (_req, res, url) => {
        const page = Number(url.searchParams.get('page') ?? '0');
        res.writeHead(200, {
          'content-type': 'application/x-ndjson',
          ...(page < 11 ? { link: `</crawls/${ID}/dataset?limit=10000&page=${page + 1}>; rel="next"` } : {}),
        });
        res.end(`{"url":"https://example.org/${page}","title":"\u009b"}\n`);
      },
    };
    try {
      const { outDir, error, report } = await download();
      assert.equal(error, undefined, String(error));
      assert.equal(report!.objects.trace.fetched, 12);
      assert.equal(
        readFileSync(join(outDir, 'url-seen.trace'), 'utf8'),
        traces.map((t) => t.padEnd(8, '.')).join(''),
      );
      assert.equal(readFileSync(join(outDir, 'dataset.jsonl'), 'utf8').trimEnd().split('\n').length, 12);
      // Let a warning emitted on the last write reach its listeners.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('cloud pages: crawled text reaches the terminal escaped', () => {
  it('prints JSON Lines with C1, DEL and bidi controls as \\uXXXX; a repeated cursor stops it', {
    timeout: 10_000,
  }, async () => {
    const title = 'a\u001b[2Jb\u009b31mc\u007fd\u202eexe';
    scenario = {
      pages: (_req, res) =>
        json(res, {
          pages: [{ url: 'https://example.org/', title }],
          cursor: 'once',
        }),
    };
    let out = '';
    let err = '';
    const write = process.stdout.write.bind(process.stdout);
    const writeErr = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((chunk: string, callback?: () => void) => {
      out += chunk;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string) => {
      err += chunk;
      return true;
    }) as typeof process.stderr.write;
    let code: number;
    try {
      code = await cloudCommand(['pages', ID, '--api', base, '--token', 't']);
    } finally {
      process.stdout.write = write;
      process.stderr.write = writeErr;
    }
    assert.equal(code, 2, err);
    assert.match(err, /handed out the cursor "once" twice/);
    // (The test runner's own report may go through stdout meanwhile.)
    const lines = out.match(/\{"url"[^\n]*/g) ?? [];
    assert.equal(lines.length, 2);
    assert.doesNotMatch(lines.join('\n'), /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    assert.equal(JSON.parse(lines[0]!).title, title);
  });
});
