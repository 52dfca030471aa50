import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import {
  decodeCaptureMessage,
  encodeCaptureMessage,
} from '../../../functions/cloud/messages/capture-message.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import { ownerTag, parseOwnerTag } from '../../../functions/cloud/messages/crawl-records.ts';
import {
  buildWarcObject,
  idsHash,
  indexKey,
  warcKey,
} from '../../../functions/cloud/messages/warc-object.ts';
import type { CheckedContentSeenStore } from '../../../functions/cloud/ports/cloud-ports.ts';
import { CaptureBuffer } from '../../../functions/cloud/worker/capture-buffer.ts';
import { StepContentSeen } from '../../../functions/cloud/worker/step-content-seen.ts';
import type { OutLink } from '../../../functions/core/types.ts';
import { makeCapture, parseWarc } from '../warc/warc-test-kit.ts';

const page: PageItem = {
  fp: '0123456789abcdef',
  url: 'https://example.org/a',
  host: 'example.org',
  status: 200,
  kind: 'page',
  depth: 2,
  bytes: 1234,
  outLinks: 7,
  messageId: 'm-1',
  enqueued: 3,
  title: 'A',
};

describe('capture messages', () => {
  it('round-trips a page record and its WARC records (gzip members, base64)', async () => {
    const buffer = new CaptureBuffer({ newId: randomUUID });
    const ref = await buffer.put(makeCapture(1));
    assert.match(ref.file, /^buffered-capture:/);
    const records = buffer.take(ref)!;
    assert.equal(buffer.pending, 0);
    assert.equal(ref.offset, records.requestLength);
    assert.equal(ref.length, records.members.length - records.requestLength);
    const decoded = decodeCaptureMessage(encodeCaptureMessage({ crawlId: 'c1', page, records }));
    assert.ok(decoded.ok, decoded.ok ? '' : decoded.problem);
    assert.deepEqual(decoded.message.page, page);
    assert.deepEqual(Buffer.from(decoded.message.records!.members), Buffer.from(records.members));
    const response = gunzipSync(Buffer.from(records.members).subarray(records.requestLength)).toString(
      'latin1',
    );
    assert.match(response, /^WARC\/1\.1\r\nWARC-Type: response\r\n/);
    assert.doesNotMatch(response, /WARC-Warcinfo-ID/, 'the archiver writes the warcinfo record');
  });

  it('carries a pointer for a stored capture, or nothing for a page without a response', () => {
    const stored = { bucket: 'b', key: 'warc/c1/x.warc.gz', offset: 10, length: 20 };
    const a = decodeCaptureMessage(encodeCaptureMessage({ crawlId: 'c1', page, stored }));
    assert.ok(a.ok);
    assert.deepEqual(a.message.stored, stored);
    const b = decodeCaptureMessage(encodeCaptureMessage({ crawlId: 'c1', page: { ...page, status: null } }));
    assert.ok(b.ok);
    assert.equal(b.message.records, undefined);
    assert.equal(b.message.stored, undefined);
  });

  it("carries the page's out-links, or the key of the links object the worker stored", () => {
    const links: OutLink[] = [
      { url: 'https://example.org/b', kind: 'page' },
      { url: 'https://other.example/', kind: 'page', skipped: 'scope' },
    ];
    const a = decodeCaptureMessage(encodeCaptureMessage({ crawlId: 'c1', page, links }));
    assert.ok(a.ok);
    assert.deepEqual(a.message.links, links);
    assert.equal(a.message.linksStored, undefined);
    const key = 'links/c1/20261122100000000-0123456789abcdef.jsonl';
    const b = decodeCaptureMessage(encodeCaptureMessage({ crawlId: 'c1', page, linksStored: key }));
    assert.ok(b.ok);
    assert.equal(b.message.linksStored, key);
    assert.equal(b.message.links, undefined);
    const c = decodeCaptureMessage(encodeCaptureMessage({ crawlId: 'c1', page }));
    assert.ok(c.ok);
    assert.equal(c.message.links, undefined, 'a page without a links line has none');
  });

  it('says what is wrong with a body that is not a capture', () => {
    const problem = (body: string) => {
      const d = decodeCaptureMessage(body);
      assert.ok(!d.ok, body);
      return d.problem;
    };
    assert.match(problem('nope'), /not JSON/);
    assert.match(problem('[]'), /not a JSON object/);
    assert.match(problem('{"v":2}'), /version/);
    assert.match(problem('{"v":1,"crawlId":"a/b","page":{}}'), /crawlId/);
    const body = JSON.parse(encodeCaptureMessage({ crawlId: 'c1', page })) as Record<string, unknown>;
    assert.match(problem(JSON.stringify({ ...body, page: { ...page, fp: 'xyz' } })), /page\.fp/);
    assert.match(problem(JSON.stringify({ ...body, page: { ...page, depth: -1 } })), /page\.depth/);
    assert.match(
      problem(JSON.stringify({ ...body, warc: { gz: 'AAAA', requestLength: 1 } })),
      /requestLength/,
    );
    assert.match(
      problem(
        JSON.stringify({ ...body, warc: { gz: Buffer.alloc(40).toString('base64'), requestLength: 5 } }),
      ),
      /gzip members/,
    );
    assert.match(problem(JSON.stringify({ ...body, warc: { stored: { bucket: 'b' } } })), /stored/);
    assert.match(problem(JSON.stringify({ ...body, links: [{ url: 1, kind: 'page' }] })), /links\[0\]/);
    assert.match(problem(JSON.stringify({ ...body, links: { stored: 3 } })), /links must be/);
  });
});

describe('WARC objects', () => {
  it('opens with a warcinfo record and locates each response record; same input, same bytes', async () => {
    const buffer = new CaptureBuffer({ newId: randomUUID });
    const parts = [];
    for (const i of [1, 2, 3]) parts.push(buffer.take(await buffer.put(makeCapture(i)))!);
    const hash = idsHash(['b', 'a']);
    assert.equal(hash, idsHash(['a', 'b']), 'order does not matter');
    const key = warcKey('c1', Date.UTC(2026, 10, 22, 10, 0, 1, 250), hash);
    assert.equal(key, `warc/c1/2026/11/22/20261122100001250-${hash}.warc.gz`);
    assert.equal(indexKey('c1', Date.UTC(2026, 10, 22), hash), `index/c1/20261122000000000-${hash}.jsonl`);
    const input = { key, hash, date: 0, software: 'test', fields: { 'crawl-id': 'c1' }, parts };
    const object = buildWarcObject(input);
    assert.deepEqual(buildWarcObject(input).body, object.body, 'deterministic');
    const parsed = await parseWarc(object.body);
    assert.deepEqual(
      parsed.map((r) => r.record.warcType),
      ['warcinfo', 'request', 'response', 'request', 'response', 'request', 'response'],
    );
    const responses = parsed.filter((r) => r.record.warcType === 'response');
    assert.deepEqual(
      object.responses,
      responses.map((r) => ({ offset: r.offset, length: r.length })),
    );
  });
});

describe('claim owners', () => {
  it('tags a claim with the page, its message sequence number and host', () => {
    const tag = ownerTag('0123456789abcdef', '18888888888888888888', '[::1]');
    assert.deepEqual(parseOwnerTag(tag), {
      fp: '0123456789abcdef',
      seq: '18888888888888888888',
      host: '[::1]',
    });
    assert.equal(parseOwnerTag('0000000000000000'), undefined, 'the seed owner');
    assert.equal(
      parseOwnerTag(ownerTag('0123456789abcdef', 'message-id', 'h')),
      undefined,
      'no FIFO sequence',
    );
  });
});

describe('StepContentSeen (content-seen without a write per page)', () => {
  function store() {
    const hashes = new Map<string, string>();
    const calls: string[] = [];
    const s: CheckedContentSeenStore = {
      async find(hash) {
        return hashes.get(hash);
      },
      async claim(hash, url) {
        calls.push(url);
        const first = hashes.get(hash);
        if (first !== undefined && first !== url) return first;
        hashes.set(hash, url);
        return undefined;
      },
    };
    return { s, calls, hashes };
  }

  it('registers a hash only when the page is about to claim new URLs', async () => {
    const { s, calls } = store();
    const warm = new LRUCache<string, string>({ max: 10 });
    const noNewLinks = new StepContentSeen(warm, s);
    assert.equal(await noNewLinks.claim('h1', 'https://a/1'), undefined);
    assert.equal(await noNewLinks.gate([]), true);
    noNewLinks.finish('https://a/1');
    assert.deepEqual(calls, [], 'no write for a page with nothing new to queue');
    assert.equal(warm.get('h1'), 'https://a/1', 'remembered in this container');

    const withLinks = new StepContentSeen(new LRUCache({ max: 10 }), s);
    await withLinks.claim('h2', 'https://a/2');
    assert.equal(await withLinks.gate(['0000000000000001']), true);
    assert.equal(withLinks.registered, true);
    assert.deepEqual(calls, ['https://a/2']);
    assert.equal(await withLinks.gate(['0000000000000002']), true, 'registered once per step');
    assert.deepEqual(calls, ['https://a/2']);
  });

  it("vetoes the claims of an exact duplicate's new links, in another container too", async () => {
    const { s } = store();
    const first = new StepContentSeen(new LRUCache({ max: 10 }), s);
    await first.claim('h', 'https://a/original');
    assert.equal(await first.gate(['0000000000000001']), true);
    // Another container: its warm map does not know the hash; the store does.
    const twin = new StepContentSeen(new LRUCache({ max: 10 }), s);
    assert.equal(await twin.claim('h', 'https://b/copy'), undefined);
    assert.equal(await twin.gate(['0000000000000009']), false, 'none of its links is claimed');
    assert.equal(twin.duplicateOf, 'https://a/original');
    // Same container as the original: the warm map answers before any link work.
    const warm = new LRUCache<string, string>({ max: 10 });
    warm.set('h', 'https://a/original');
    const local = new StepContentSeen(warm, s);
    assert.equal(await local.claim('h', 'https://c/copy'), 'https://a/original');
    assert.equal(await local.claim('h', 'https://a/original'), undefined, 'a page is not its own duplicate');
  });

  it("a page that registered nothing reads the store once: a duplicate of another container's original", async () => {
    const { s, calls } = store();
    const first = new StepContentSeen(new LRUCache({ max: 10 }), s);
    await first.claim('h', 'https://a/original');
    assert.equal(await first.gate(['0000000000000001']), true);
    // another container; the twin's links are all known, so no gate, no write
    const warm = new LRUCache<string, string>({ max: 10 });
    const twin = new StepContentSeen(warm, s);
    assert.equal(await twin.claim('h', 'https://b/copy'), undefined);
    await twin.check('https://b/copy');
    assert.equal(twin.duplicateOf, 'https://a/original');
    assert.equal(warm.get('h'), 'https://a/original');
    assert.deepEqual(calls, ['https://a/original'], 'read, not written');
    // unknown bytes: not a duplicate, and nothing written either
    const alone = new StepContentSeen(new LRUCache({ max: 10 }), s);
    await alone.claim('other', 'https://c/alone');
    await alone.check('https://c/alone');
    assert.equal(alone.duplicateOf, undefined);
    assert.deepEqual(calls, ['https://a/original']);
  });
});
