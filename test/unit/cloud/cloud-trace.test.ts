/**
 * The cloud URL-seen trace with in-memory ports: the worker records what its URL-seen test looked
 * up, in order, per batch (the crawl's `seenTrace`), sends it beside the batch's captures, and the
 * archiver writes `trace/<crawl>/<stamp>-<hash>.bin` objects in the cache study's 8-byte format.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeTraceMessage,
  encodeTraceMessages,
  isTraceBody,
  TRACE_MESSAGE_LOOKUPS,
} from '../../../functions/cloud/messages/trace-message.ts';
import { createCaptureArchiver } from '../../../functions/cloud/use-cases/archive-captures.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import { fingerprint } from '../../../functions/core/url/fingerprint.ts';
import { decodeTrace } from '../../../functions/core/url-seen/url-seen-trace.ts';
import { MemoryCloud } from './memory-cloud.ts';
import { MemoryFetcher, page } from './memory-fetcher.ts';
import { messageFor, runningCrawl, TestClock, workerOver } from './worker-kit.ts';

const SITE = 'http://a.example';
const base = { scope: 'any', soft404Probe: false, delayMs: 0, delayFactor: 0, sitemaps: false };

function fpOf(url: string): string {
  const parsed = parseCrawlConfig({ seeds: [url] });
  assert.ok(parsed.ok);
  const c = new UrlCanonicalizer(parsed.config).canonicalize(url);
  assert.ok(c.ok);
  return fingerprint(c.url);
}

function site(): MemoryFetcher {
  return new MemoryFetcher({
    [`${SITE}/robots.txt`]: { status: 404 },
    [`${SITE}/`]: { status: 200, body: page('home', ['/a', '/b', '/a']) },
    [`${SITE}/a`]: { status: 200, body: page('a', ['/', '/b', '/c']) },
    [`${SITE}/b`]: { status: 200, body: page('b', ['/a', '/c']) },
  });
}

async function archive(cloud: MemoryCloud, t0: number) {
  const archiver = createCaptureArchiver({
    objects: cloud.objects,
    deadLetters: cloud.deadLetters,
    crawlInfo: async () => undefined,
  });
  return archiver(
    cloud.captures.bodies.splice(0).map((body, i) => ({
      messageId: `c${t0}-${String(i).padStart(3, '0')}`,
      body,
      receiveCount: 1,
      sentTimestamp: t0,
    })),
  );
}

function traceObjects(cloud: MemoryCloud, crawlId: string): [string, Uint8Array][] {
  return [...cloud.objects.objects].filter(([key]) => key.startsWith(`trace/${crawlId}/`)).sort();
}

describe('cloud URL-seen trace (seenTrace)', () => {
  it("sends each batch's look-ups in order beside its captures; the archiver writes them as trace objects", async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { id, tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const worker = workerOver(cloud, site(), clock);
    const first = await worker([messageFor(tasks([`${SITE}/`])[0]!)]);
    assert.equal(first.stats.traceMessages, 1);
    // The home page's links, distinct per page, in document order.
    const home = [`${SITE}/a`, `${SITE}/b`].map(fpOf);
    assert.equal(first.stats.traceLookups, home.length);
    const traces = cloud.captures.bodies.filter(isTraceBody);
    assert.equal(traces.length, 1);
    const decoded = decodeTraceMessage(traces[0]!);
    assert.ok(decoded.ok);
    assert.deepEqual(decodeTrace(decoded.message.lookups), home);
    assert.equal(cloud.captures.bodies.length, 2, 'one capture and one trace message');
    const firstArchive = await archive(cloud, 1_000);
    assert.deepEqual(firstArchive.failed, []);
    assert.equal(firstArchive.stats.traceObjects, 1);
    assert.equal(firstArchive.stats.pages, 1, 'the capture is indexed as before');

    // The next batch: /a then /b, one FIFO group, so in that order.
    clock.t += 10_000;
    await worker(tasks([`${SITE}/a`, `${SITE}/b`], 1).map((t) => messageFor(t)));
    const second = await archive(cloud, 2_000);
    assert.equal(second.stats.traceLookups, 5);
    const objects = traceObjects(cloud, id);
    assert.equal(objects.length, 2);
    assert.match(objects[0]![0], new RegExp(`^trace/${id}/\\d{17}-[0-9a-f]{16}\\.bin$`));
    // The objects in key order, concatenated: the crawl's url-seen.trace.
    const all = decodeTrace(Buffer.concat(objects.map(([, bytes]) => bytes)));
    assert.deepEqual(all, [
      ...home,
      ...[`${SITE}/`, `${SITE}/b`, `${SITE}/c`, `${SITE}/a`, `${SITE}/c`].map(fpOf),
    ]);
  });

  it('records nothing with seenTrace off', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const { tasks } = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, seenTrace: false }, clock);
    const outcome = await workerOver(cloud, site(), clock)([messageFor(tasks([`${SITE}/`])[0]!)]);
    assert.equal(outcome.stats.traceMessages, 0);
    assert.equal(cloud.captures.bodies.filter(isTraceBody).length, 0);
    assert.equal(cloud.captures.bodies.length, 1);
  });

  it('a redelivered archiver batch writes the same bytes to the same key; traces alone are archived', async () => {
    const cloud = new MemoryCloud();
    const crawlId = '11111111-2222-4333-8444-555555555555';
    const fps = Array.from({ length: 5 }, (_, i) => i.toString(16).padStart(16, '0'));
    const bodies = [
      ...encodeTraceMessages(crawlId, fps.slice(0, 2)),
      ...encodeTraceMessages(crawlId, fps.slice(2)),
    ];
    const archiver = createCaptureArchiver({
      objects: cloud.objects,
      deadLetters: cloud.deadLetters,
      crawlInfo: async () => undefined,
    });
    // Sent in this order (by time), handed over in another.
    const records = [
      { messageId: 'z', body: bodies[0]!, receiveCount: 1, sentTimestamp: 10 },
      { messageId: 'a', body: bodies[1]!, receiveCount: 1, sentTimestamp: 20 },
    ];
    await archiver([records[1]!, records[0]!]);
    const once = traceObjects(cloud, crawlId);
    await archiver(records);
    assert.deepEqual(traceObjects(cloud, crawlId), once);
    assert.equal(once.length, 1);
    assert.deepEqual(decodeTrace(once[0]![1]), fps);
    assert.equal([...cloud.objects.objects.keys()].filter((k) => !k.startsWith('trace/')).length, 0);
  });

  it('splits a large batch trace into messages under the message limit; a broken one goes to the DLQ', async () => {
    const fps = Array.from({ length: TRACE_MESSAGE_LOOKUPS * 2 + 5 }, (_, i) =>
      i.toString(16).padStart(16, '0'),
    );
    const bodies = encodeTraceMessages('c', fps);
    assert.equal(bodies.length, 3);
    for (const body of bodies) assert.ok(body.length < 200_000, `${body.length} bytes`);
    assert.deepEqual(encodeTraceMessages('c', []), []);
    const cloud = new MemoryCloud();
    const archiver = createCaptureArchiver({
      objects: cloud.objects,
      deadLetters: cloud.deadLetters,
      crawlInfo: async () => undefined,
    });
    const broken = bodies[0]!.replace(/"lookups":"[^"]{4}/, '"lookups":"A');
    const outcome = await archiver([{ messageId: 'x', body: broken, receiveCount: 1, sentTimestamp: 1 }]);
    assert.equal(outcome.stats.deadLettered, 1);
    assert.equal(cloud.deadLetters.letters[0]?.reason, 'invalid-trace');
    assert.match(cloud.deadLetters.letters[0]?.detail ?? '', /8-byte records/);
  });
});
