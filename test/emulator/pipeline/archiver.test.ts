/**
 * The archiver over a real bucket and DLQ: capture messages (built as the worker builds them) in,
 * one WARC object and one index object per crawl and batch out, readable with warcio and by
 * ranged GETs at the indexed offsets. Plus the worker's side of an oversize capture.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { faultHookFromSpec, InjectedCrashError } from '../../../functions/cloud/fault-hook.ts';
import {
  CAPTURE_MESSAGE_LIMIT,
  encodeCaptureMessage,
} from '../../../functions/cloud/messages/capture-message.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import { isTraceBody } from '../../../functions/cloud/messages/trace-message.ts';
import { CaptureBuffer } from '../../../functions/cloud/worker/capture-buffer.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { seedTasks } from '../../../functions/core/step/crawl-page.ts';
import type { LinkRecord, OutLink } from '../../../functions/core/types.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import { type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { makeCapture, parseWarc } from '../../unit/warc/warc-test-kit.ts';
import { openWorkerHarness, type WorkerHarness } from './worker-harness.ts';

let sent = Date.UTC(2026, 10, 22, 10, 0, 0);

/** The out-links page `i` carries in these tests (links.jsonl's `links`). */
function linksOf(i: number): OutLink[] {
  return [
    { url: `http://127.0.0.1:8080/page/${i + 1}`, kind: 'page' },
    { url: 'https://elsewhere.example/', kind: 'page', skipped: 'scope' },
  ];
}

/** A capture message for page `i` of `crawlId`, as the worker would send it. */
async function captureRecord(
  crawlId: string,
  i: number,
  withWarc = true,
  withLinks = false,
): Promise<SQSRecord> {
  const buffer = new CaptureBuffer({ newId: randomUUID });
  const ref = withWarc ? await buffer.put(makeCapture(i)) : undefined;
  const page: PageItem = {
    fp: i.toString(16).padStart(16, '0'),
    url: `http://127.0.0.1:8080/page/${i}?b=2&a=1`,
    host: '127.0.0.1',
    status: withWarc ? 200 : null,
    kind: 'page',
    depth: 1,
    bytes: withWarc ? 100 : 0,
    outLinks: 0,
    messageId: `frontier-${i}`,
    enqueued: 0,
    ...(withWarc ? {} : { reason: 'robots' }),
  };
  const records = ref === undefined ? undefined : buffer.take(ref);
  const body = encodeCaptureMessage({
    crawlId,
    page,
    ...(records === undefined ? {} : { records }),
    ...(withLinks ? { links: linksOf(i) } : {}),
  });
  sent += 1;
  return {
    messageId: randomUUID(),
    receiptHandle: 'r',
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(sent),
      SenderId: '000000000000',
      ApproximateFirstReceiveTimestamp: String(sent),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:captures',
    awsRegion: 'us-east-1',
  };
}

describe('archiver', () => {
  let h: WorkerHarness;
  before(async () => {
    h = await openWorkerHarness();
  });
  after(() => h?.close());

  const list = async (prefix: string) =>
    (
      (await h.aws.clients.s3.send(new ListObjectsV2Command({ Bucket: h.env.pageBucket, Prefix: prefix })))
        .Contents ?? []
    ).map((o) => o.Key as string);
  const get = async (key: string, range?: string) =>
    (
      await h.aws.clients.s3.send(
        new GetObjectCommand({ Bucket: h.env.pageBucket, Key: key, ...(range ? { Range: range } : {}) }),
      )
    ).Body!.transformToByteArray();

  it('writes one WARC object (warcinfo first) and one index object per crawl per batch; offsets point at the responses', async () => {
    const crawl = `crawl-${randomUUID()}`;
    const other = `crawl-${randomUUID()}`;
    const records = [
      ...(await Promise.all([1, 2, 3, 4, 5].map((i) => captureRecord(crawl, i)))),
      await captureRecord(crawl, 6, false),
      await captureRecord(other, 7),
    ];
    const response = await h.archiver()({ Records: records });
    assert.deepEqual(response.batchItemFailures, []);

    const warcs = await list(`warc/${crawl}/`);
    const indexes = await list(`index/${crawl}/`);
    assert.equal(warcs.length, 1, 'one WARC object for five captures');
    assert.equal(indexes.length, 1, 'one index object');
    assert.match(
      warcs[0]!,
      new RegExp(`^warc/${crawl}/2026/11/22/20261122100000\\d{3}-[0-9a-f]{16}\\.warc\\.gz$`),
    );
    // ...named with its six page records (the scheduler counts them from a listing).
    assert.match(indexes[0]!, new RegExp(`^index/${crawl}/20261122100000\\d{3}-[0-9a-f]{16}-6\\.jsonl$`));
    assert.equal((await list(`warc/${other}/`)).length, 1, 'the other crawl has its own object');

    const parsed = await parseWarc(await get(warcs[0]!));
    assert.deepEqual(
      parsed.map((r) => r.record.warcType),
      ['warcinfo', ...Array(5).fill(['request', 'response']).flat()],
    );
    assert.match(new TextDecoder().decode(parsed[0]!.payload), new RegExp(`crawl-id: ${crawl}`));

    const pages = await h.pages(crawl);
    assert.deepEqual(
      pages.map((p) => p.url),
      [1, 2, 3, 4, 5, 6].map((i) => `http://127.0.0.1:8080/page/${i}?b=2&a=1`),
    );
    const responses = parsed.filter((r) => r.record.warcType === 'response');
    for (const [n, page] of pages.slice(0, 5).entries()) {
      const warc = page.warc!;
      assert.equal(warc.bucket, h.env.pageBucket);
      assert.equal(warc.key, warcs[0]);
      assert.equal(warc.offset, responses[n]!.offset, `${page.url}: offset of its response record`);
      assert.equal(warc.length, responses[n]!.length);
      const slice = await get(warc.key, `bytes=${warc.offset}-${warc.offset + warc.length - 1}`);
      const record = gunzipSync(slice).toString('latin1');
      assert.match(record, /^WARC\/1\.1\r\nWARC-Type: response\r\n/);
      assert.ok(record.includes(`WARC-Target-URI: ${page.url}\r\n`), page.url);
    }
    assert.equal(pages[5]?.warc, undefined, 'a page without a response has no location');
    assert.equal(pages[5]?.reason, 'robots');
  });

  it('names objects after the batch: the same batch again overwrites the same keys with the same bytes', async () => {
    const crawl = `crawl-${randomUUID()}`;
    const records = await Promise.all([1, 2, 3].map((i) => captureRecord(crawl, i)));
    await h.archiver()({ Records: records });
    const first = [...(await list(`warc/${crawl}/`)), ...(await list(`index/${crawl}/`))];
    const bytes = await Promise.all(first.map((k) => get(k)));
    // A fresh container (nothing remembered), the same messages in another order.
    await h.archiver()({ Records: [...records].reverse() });
    const second = [...(await list(`warc/${crawl}/`)), ...(await list(`index/${crawl}/`))];
    assert.deepEqual(second, first);
    for (const [i, key] of second.entries()) assert.deepEqual(await get(key), bytes[i], key);
    // Another set of messages gets another name.
    await h.archiver()({ Records: [records[0]!, records[1]!] });
    assert.equal((await list(`index/${crawl}/`)).length, 2);
  });

  it('indexes a URL once when its capture comes twice, in one batch or in a later one', async () => {
    const crawl = `crawl-${randomUUID()}`;
    const a = await captureRecord(crawl, 1);
    const again = { ...(await captureRecord(crawl, 1)), messageId: randomUUID() };
    const archiver = h.archiver();
    await archiver({ Records: [a, again, await captureRecord(crawl, 2)] });
    await archiver({ Records: [{ ...again, messageId: randomUUID() }, await captureRecord(crawl, 3)] });
    const urls = (await h.pages(crawl)).map((p) => p.url);
    assert.deepEqual(
      urls,
      [1, 2, 3].map((i) => `http://127.0.0.1:8080/page/${i}?b=2&a=1`),
    );
  });

  it("writes the batch's link graph as one links object beside the index, once per URL, the same bytes on redelivery", async () => {
    const crawl = `crawl-${randomUUID()}`;
    const records = [
      await captureRecord(crawl, 1, true, true),
      await captureRecord(crawl, 2, true, true),
      await captureRecord(crawl, 3, true, false), // not HTML: no links line
      await captureRecord(crawl, 4, false, false),
    ];
    const again = { ...records[0]!, messageId: randomUUID() }; // page 1's capture a second time
    await h.archiver()({ Records: [...records, again] });
    const keys = await list(`links/${crawl}/`);
    assert.equal(keys.length, 1, 'one links object for the batch');
    const index = await list(`index/${crawl}/`);
    assert.equal(
      keys[0]!.slice(`links/${crawl}/`.length).replace(/\.jsonl$/, ''),
      index[0]!.slice(`index/${crawl}/`.length).replace(/-\d+\.jsonl$/, ''),
      'named as the index',
    );
    const bytes = await get(keys[0]!);
    const lines = new TextDecoder()
      .decode(bytes)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as LinkRecord);
    assert.deepEqual(lines, [
      { from: 'http://127.0.0.1:8080/page/1?b=2&a=1', links: linksOf(1) },
      { from: 'http://127.0.0.1:8080/page/2?b=2&a=1', links: linksOf(2) },
    ]);
    // Redelivered to a fresh container: the same key, the same bytes.
    await h.archiver()({ Records: [again, ...records].reverse() });
    assert.deepEqual(await list(`links/${crawl}/`), keys);
    assert.deepEqual(await get(keys[0]!), bytes);
    // A batch without any links line writes no links object.
    const plain = `crawl-${randomUUID()}`;
    await h.archiver()({ Records: [await captureRecord(plain, 1)] });
    assert.deepEqual(await list(`links/${plain}/`), []);
  });

  it('sends a message that is not a capture to the DLQ and archives the rest', async () => {
    const crawl = `crawl-${randomUUID()}`;
    const good = await captureRecord(crawl, 1);
    const poison = { ...good, messageId: 'poison-1', body: '{"v":1,"crawlId":"x","page":{"fp":"nope"}}' };
    const garbage = { ...good, messageId: 'poison-2', body: 'not json' };
    const response = await h.archiver()({ Records: [poison, good, garbage] });
    assert.deepEqual(response.batchItemFailures, [], 'poison is acknowledged, not retried');
    assert.equal((await h.pages(crawl)).length, 1);
    const letters = await h.aws.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: h.env.captureDlqUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
      }),
    );
    const byId = new Map(
      (letters.Messages ?? []).map((m) => [m.MessageAttributes?.sourceMessageId?.StringValue, m]),
    );
    assert.equal(byId.get('poison-1')?.MessageAttributes?.reason?.StringValue, 'invalid-capture');
    assert.match(byId.get('poison-1')?.MessageAttributes?.detail?.StringValue ?? '', /page\.fp/);
    assert.equal(byId.get('poison-2')?.Body, 'not json');
  });

  it('a crash after the WARC object leaves no index line; the redelivered batch is archived whole', async () => {
    const crawl = `crawl-${randomUUID()}`;
    const records = await Promise.all([1, 2].map((i) => captureRecord(crawl, i)));
    const crashing = h.archiver({ fault: faultHookFromSpec('archive-after-warc:1') });
    await assert.rejects(crashing({ Records: records } as SQSEvent), InjectedCrashError);
    assert.equal((await list(`warc/${crawl}/`)).length, 1);
    assert.equal((await h.pages(crawl)).length, 0, 'nothing listed: the index comes after the WARC');
    await h.archiver()({ Records: records });
    assert.equal((await h.pages(crawl)).length, 2);
    assert.equal((await list(`warc/${crawl}/`)).length, 1, 'the same batch, the same object');
  });
});

describe('worker: a capture too big for a message', () => {
  let h: WorkerHarness;
  let big: SiteServer;
  // Random bytes do not compress: a 300 KB body makes a capture message well over the limit.
  const body = randomBytes(300_000).toString('base64');
  // 3,000 distinct links of ~120 characters: ~450 KB of links JSON, in a page that gzips small.
  const LINKS = 3000;
  const manyLinks = `<html><body>${Array.from(
    { length: LINKS },
    (_, i) => `<a href="/l/${String(i).padStart(5, '0')}-${'x'.repeat(90)}">${i}</a>`,
  ).join('\n')}</body></html>`;
  before(async () => {
    h = await openWorkerHarness();
    big = await startSite((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(404);
        res.end();
        return;
      }
      if (req.url === '/links') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(manyLinks);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(req.url === '/big' ? body : 'small');
    }, '127.0.0.8');
  });
  after(async () => {
    await h?.close();
    await big?.close();
  });

  it('is stored by the worker as its own WARC object; the message and the index point at it', async () => {
    // No gap at all (delayFactor 0): on a loaded machine 5 x a slow robots.txt response would
    // defer the second record, which is not what this test is about.
    const config = {
      seeds: [`${big.origin}/small`],
      scope: 'any',
      allowPrivate: true,
      delayMs: 0,
      delayFactor: 0,
      // Captures only in the queue (the URL-seen trace has its own tests: cloud-trace.test.ts).
      seenTrace: false,
    };
    const id = await h.startCrawl(config);
    const parsed = parseCrawlConfig(config);
    assert.ok(parsed.ok);
    const tasks = seedTasks(
      id,
      [`${big.origin}/big`, `${big.origin}/small`],
      new UrlCanonicalizer(parsed.config),
    ).tasks;
    const response = await h.worker()(tasks.map((t, i) => h.record(t, 1000 + i)));
    assert.deepEqual(response.batchItemFailures, []);
    // The URL-seen trace rides in the same sends (trace-message.ts): the captures are the rest.
    const received = await h.receiveCaptures();
    const captures = received.filter((c) => !isTraceBody(c.body));
    assert.equal(captures.length, 2);
    for (const c of captures) assert.ok(c.body.length <= CAPTURE_MESSAGE_LIMIT, 'every message fits');
    const pointer = captures.find((c) => c.body.includes('"stored"'));
    assert.ok(pointer !== undefined, 'the big one travels as a pointer');
    assert.equal((await list(h, `warc/${id}/`)).length, 1, 'stored by the worker');

    await h.archiver()({ Records: received });
    const pages = await h.pages(id);
    const page = pages.find((p) => p.url.endsWith('/big'))!;
    const warc = page.warc!;
    const slice = await (
      await h.aws.clients.s3.send(
        new GetObjectCommand({
          Bucket: warc.bucket,
          Key: warc.key,
          Range: `bytes=${warc.offset}-${warc.offset + warc.length - 1}`,
        }),
      )
    ).Body!.transformToByteArray();
    const record = gunzipSync(slice).toString('latin1');
    assert.match(record, /^WARC\/1\.1\r\nWARC-Type: response\r\n/);
    assert.ok(record.endsWith(`${body}\r\n\r\n`), 'the whole body');
    assert.equal((await list(h, `warc/${id}/`)).length, 2, 'plus the batch object of the small page');
  });

  it('stores out-links too many for a message as their own links object, named in the message', async () => {
    // maxDepth 0: the links are recorded (skipped as max-depth), not claimed and queued.
    const config = {
      seeds: [`${big.origin}/links`],
      scope: 'any',
      allowPrivate: true,
      delayMs: 0,
      delayFactor: 0,
      maxDepth: 0,
      seenTrace: false,
    };
    const id = await h.startCrawl(config);
    const parsed = parseCrawlConfig(config);
    assert.ok(parsed.ok);
    const tasks = seedTasks(id, config.seeds, new UrlCanonicalizer(parsed.config)).tasks;
    const response = await h.worker()(tasks.map((t, i) => h.record(t, 2000 + i)));
    assert.deepEqual(response.batchItemFailures, []);
    // The URL-seen trace rides in the same sends (trace-message.ts): the captures are the rest.
    const received = await h.receiveCaptures();
    const captures = received.filter((c) => !isTraceBody(c.body));
    assert.equal(captures.length, 1);
    const message = captures[0]!.body;
    assert.ok(message.length <= CAPTURE_MESSAGE_LIMIT, `the message fits (${message.length} bytes)`);
    const stored = (JSON.parse(message) as { links?: { stored?: string } }).links?.stored;
    assert.match(stored ?? '', new RegExp(`^links/${id}/\\d{17}-[0-9a-f]{16}\\.jsonl$`));
    assert.ok(message.includes('"gz"'), 'the WARC records (the smaller part) stay in the message');
    assert.deepEqual(await list(h, `links/${id}/`), [stored]);

    await h.archiver()({ Records: received });
    assert.deepEqual(await list(h, `links/${id}/`), [stored], 'the archiver writes no second line for it');
    const object = await h.aws.clients.s3.send(
      new GetObjectCommand({ Bucket: h.env.pageBucket, Key: stored! }),
    );
    const lines = (await object.Body!.transformToString()).trimEnd().split('\n');
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0]!) as LinkRecord;
    assert.equal(record.from, `${big.origin}/links`);
    assert.equal(record.links.length, LINKS);
    assert.ok(record.links.every((l) => l.skipped === 'max-depth'));
    assert.equal((await h.pages(id))[0]?.url, `${big.origin}/links`);
  });
});

async function list(h: WorkerHarness, prefix: string): Promise<string[]> {
  const response = await h.aws.clients.s3.send(
    new ListObjectsV2Command({ Bucket: h.env.pageBucket, Prefix: prefix }),
  );
  return (response.Contents ?? []).map((o) => o.Key as string);
}
