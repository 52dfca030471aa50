/**
 * Bodies that arrive in 1-byte pieces (1-byte chunks of chunked transfer coding, or 1-byte TCP
 * reads): the fetcher must not keep a Buffer per piece. It copies pieces into a few blocks, so
 * memory stays a small multiple of `maxBodyBytes` (before: an 11 MiB body took 1.5 GB of RSS, two
 * at once 2.7 GB).
 */
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { DecodedBody } from '../../functions/adapters/http/decoded-body.ts';
import { UndiciFetcher } from '../../functions/adapters/http/undici-fetcher.ts';
import { ok } from '../fixtures/fetch-results.ts';
import { oneByteChunks, type RawServer, startRawServer } from '../fixtures/hostile-routes.ts';

const MiB = 1024 * 1024;
const CAP = 10 * MiB;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function settled(): NodeJS.MemoryUsage {
  gc();
  gc();
  return process.memoryUsage();
}

describe('bodies in 1-byte pieces', () => {
  let servers: RawServer[];
  before(async () => {
    servers = [
      await startRawServer(oneByteChunks(11 * MiB), '127.0.0.2'),
      await startRawServer(oneByteChunks(11 * MiB), '127.0.0.3'),
    ];
  });
  after(async () => {
    for (const server of servers) await server.close();
  });

  test('two 11 MiB bodies in 1-byte chunks at once: capped, and memory a small multiple of the cap', async () => {
    const fetcher = new UndiciFetcher({
      userAgent: 'crawlstack-test/1',
      allowPrivate: true,
      connectTimeoutMs: 5000,
      headersTimeoutMs: 5000,
      idleTimeoutMs: 5000,
      totalTimeoutMs: 120_000,
    });
    try {
      const start = settled();
      let peakRss = start.rss;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }, 20);
      const results = await Promise.all(
        servers.map((s) => fetcher.fetch({ url: `${s.origin}/`, maxBytes: CAP })),
      );
      clearInterval(sampler);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      for (const result of results) {
        const response = ok(result);
        assert.equal(response.status, 200);
        assert.equal(response.truncated, 'length');
        assert.equal(response.body.length, CAP);
        assert.equal(Buffer.from(response.body).indexOf('y'), -1, 'every byte is the x the server sent');
        // The body is not a view into something much larger.
        assert.ok(
          response.body.buffer.byteLength <= CAP + MiB,
          `${response.body.buffer.byteLength} bytes held`,
        );
      }
      const end = settled();
      const growth = (peakRss - start.rss) / MiB;
      // Two capped bodies are 20 MiB; decoding and copying them costs at most about as much again.
      assert.ok(growth < 120, `peak RSS grew by ${growth.toFixed(0)} MiB (2.7 GB before the fix)`);
      const heapGrowth = (end.heapUsed - start.heapUsed) / MiB;
      assert.ok(heapGrowth < 16, `heap grew by ${heapGrowth.toFixed(1)} MiB while holding both bodies`);
    } finally {
      await fetcher.close();
    }
  });

  test('DecodedBody keeps no Buffer per piece: a million 1-byte pieces hold about a megabyte', () => {
    for (const encoding of [undefined, 'gzip']) {
      const plain = randomBytes(MiB); // incompressible: a million wire bytes either way
      const wire = encoding === undefined ? plain : gzipSync(plain, { level: 1 });
      let done = false;
      const body = new DecodedBody(encoding, CAP, {
        done: () => (done = true),
        failed: assert.fail,
        drain: () => {},
      });
      const start = settled();
      for (let i = 0; i < wire.length; i++) body.write(Buffer.from(wire.subarray(i, i + 1)));
      const held = settled();
      // A Buffer per piece costs about 100 bytes of heap each: 100 MB for a million.
      const heapGrowth = (held.heapUsed - start.heapUsed) / MiB;
      assert.ok(heapGrowth < 8, `${encoding ?? 'identity'}: heap grew by ${heapGrowth.toFixed(1)} MiB`);
      body.end();
      if (encoding === undefined) {
        assert.equal(done, true);
        assert.deepEqual(body.bytes(), plain);
      }
      body.destroy();
    }
  });
});
