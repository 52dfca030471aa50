/**
 * WARC response records hold the HTTP headers as received (docs/warc.md): names in their original
 * case, obs-text bytes (0x80-0xFF) kept, order and repeats kept. Before, they were stored lowercased
 * with obs-text replaced by U+FFFD (undici's normalized view).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { WARCParser } from 'warcio';
import { UndiciFetcher } from '../../functions/adapters/http/undici-fetcher.ts';
import { crawl } from '../e2e/helpers.ts';
import {
  exceptRobots,
  RAW_HEADER_BLOCK,
  RAW_HEADER_BODY,
  rawHeaderResponse,
  startRawServer,
} from '../fixtures/hostile-routes.ts';

/** RAW_HEADER_BLOCK as [name, value] pairs of Latin-1 strings. */
const SENT = RAW_HEADER_BLOCK.toString('latin1')
  .split('\r\n')
  .filter((line) => line !== '')
  .map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()] as [string, string];
  });

describe('headers as received', () => {
  test('the fetcher hands over the raw headers next to the normalized ones, and the peer address', async () => {
    const server = await startRawServer(rawHeaderResponse, '127.0.0.2');
    const fetcher = new UndiciFetcher({
      userAgent: 'crawlstack-test/1',
      allowPrivate: true,
      connectTimeoutMs: 2000,
      headersTimeoutMs: 2000,
      idleTimeoutMs: 2000,
      totalTimeoutMs: 5000,
    });
    try {
      const result = await fetcher.fetch({ url: `${server.origin}/`, maxBytes: 1 << 20 });
      assert.ok(result.ok);
      assert.deepEqual(result.rawHeaders, [...SENT, ['Content-Length', String(RAW_HEADER_BODY.length)]]);
      assert.deepEqual(result.headers[1], ['x-mixed-case', 'Value'], 'normalized names stay lowercased');
      assert.equal(result.remoteAddress, '127.0.0.2');
    } finally {
      await fetcher.close();
      await server.close();
    }
  });

  test('the WARC response record holds them byte for byte, and warcio reads them back', async () => {
    const server = await startRawServer(exceptRobots(rawHeaderResponse), '127.0.0.2');
    try {
      const url = `${server.origin}/page`;
      const run = await crawl({ seeds: [url], maxPages: 1 });
      assert.equal(run.page(url).status, 200);
      const dir = join(run.outDir, 'warc');
      const file = readdirSync(dir).find((f) => f.endsWith('.warc.gz'))!;
      const raw = gunzipSync(readFileSync(join(dir, file)));
      const start = raw.indexOf('WARC-Type: response');
      const head = raw.subarray(raw.indexOf('HTTP/1.1 200', start));
      assert.ok(head.subarray(0, 400).includes(RAW_HEADER_BLOCK), head.subarray(0, 400).toString('latin1'));

      const parser = new WARCParser([readFileSync(join(dir, file))], { keepHeadersCase: true });
      for await (const record of parser) {
        if (record.warcType !== 'response' || record.warcTargetURI !== url) continue;
        const headers = [...(record.httpHeaders!.headers as Iterable<[string, string]>)];
        const names = headers.map(([name]) => name);
        assert.deepEqual(names.slice(0, 3), ['Content-Type', 'X-Mixed-CASE', 'X-Obs-Text']);
        assert.ok(names.includes('ETag'));
        assert.equal(record.httpHeaders!.statusCode, 200);
        assert.deepEqual(Buffer.from(await record.readFully(false)), RAW_HEADER_BODY);
        return;
      }
      assert.fail('no response record for the page');
    } finally {
      await server.close();
    }
  });
});
