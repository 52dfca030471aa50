import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WARCParser } from 'warcio';
import type { Capture } from '../../../functions/core/ports.ts';
import { captureToWarcRecords, REVISIT_PROFILES } from '../../../functions/core/warc/capture-records.ts';
import { cdxjLine } from '../../../functions/core/warc/cdxj.ts';
import { sha1Base32 } from '../../../functions/core/warc/sha1-base32.ts';

const body = new TextEncoder().encode(`<html>${'same '.repeat(400)}</html>`);

function capture(status: number, revisit: Capture['revisit']): Capture {
  const c: Capture = {
    url: 'http://example.com/a',
    fetchedAt: '2026-11-28T10:00:00.000Z',
    request: { method: 'GET', target: '/a', httpVersion: '1.1', headers: [['host', 'example.com']] },
    response: {
      status,
      statusText: status === 304 ? 'Not Modified' : 'OK',
      httpVersion: '1.1',
      headers: [['etag', '"v1"']],
      body: status === 304 ? new Uint8Array() : body,
    },
  };
  if (revisit !== undefined) c.revisit = revisit;
  return c;
}

async function parse(record: Buffer) {
  const parsed = await WARCParser.parse([record]);
  assert.ok(parsed);
  const payload = await parsed.readFully(false);
  const field = (name: string) => parsed.warcHeaders.headers.get(name);
  return { parsed, payload, field };
}

describe('WARC revisit records', () => {
  test('server-not-modified: headers only, the refers-to fields, the original digest', async () => {
    const digest = sha1Base32(body);
    const records = captureToWarcRecords(
      capture(304, {
        profile: 'server-not-modified',
        refersToTargetUri: 'http://example.com/a',
        refersToDate: '2026-11-01T09:00:00.123Z',
        payloadDigest: digest,
      }),
      { requestUuid: 'r', responseUuid: 's' },
    );
    const { parsed, payload, field } = await parse(records.response);
    assert.equal(parsed.warcType, 'revisit');
    assert.equal(field('WARC-Profile'), REVISIT_PROFILES['server-not-modified']);
    assert.equal(field('WARC-Refers-To-Target-URI'), 'http://example.com/a');
    assert.equal(field('WARC-Refers-To-Date'), '2026-11-01T09:00:00Z');
    assert.equal(field('WARC-Payload-Digest'), digest);
    assert.equal(parsed.httpHeaders?.statusCode, 304);
    assert.equal(payload.length, 0);
    assert.equal(records.mime, 'warc/revisit');
    const line = cdxjLine({
      url: 'http://example.com/a',
      date: records.date,
      mime: records.mime,
      status: 304,
      payloadDigest: records.payloadDigest,
      offset: 0,
      length: 1,
      filename: 'f',
    });
    assert.match(line, /"mime":"warc\/revisit","status":"304","digest":"[A-Z2-7]{32}"/);
  });

  test('identical-payload-digest: the digest of the body, which is not stored again', async () => {
    const records = captureToWarcRecords(
      capture(200, {
        profile: 'identical-payload-digest',
        refersToTargetUri: 'http://example.com/a',
        refersToDate: '2026-11-01T09:00:00Z',
      }),
      { requestUuid: 'r', responseUuid: 's' },
    );
    const { parsed, payload, field } = await parse(records.response);
    assert.equal(parsed.warcType, 'revisit');
    assert.equal(field('WARC-Profile'), REVISIT_PROFILES['identical-payload-digest']);
    assert.equal(field('WARC-Payload-Digest'), sha1Base32(body));
    assert.equal(payload.length, 0);
    assert.ok(
      records.response.length <
        captureToWarcRecords(capture(200, undefined), { requestUuid: 'r', responseUuid: 's' }).response
          .length,
    );
  });
});
