import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { captureToWarcRecords } from '../../../functions/core/warc/capture-records.ts';
import { cdxjLine } from '../../../functions/core/warc/cdxj.ts';
import { gzipMember } from '../../../functions/core/warc/gzip-member.ts';
import {
  httpRequestHead,
  httpResponseHead,
  storedResponseHeaders,
} from '../../../functions/core/warc/http-head.ts';
import { base32, sha1Base32 } from '../../../functions/core/warc/sha1-base32.ts';
import { surt } from '../../../functions/core/warc/surt.ts';
import { cdxTimestamp, warcDate } from '../../../functions/core/warc/warc-date.ts';
import { WarcFormatError } from '../../../functions/core/warc/warc-format-error.ts';
import { warcinfoRecord } from '../../../functions/core/warc/warcinfo-record.ts';
import { makeCapture, parseWarc, sha1b32, splitRecord } from './warc-test-kit.ts';

const ids = {
  requestUuid: '11111111-1111-4111-8111-111111111111',
  responseUuid: '22222222-2222-4222-8222-222222222222',
  warcinfoId: '<urn:uuid:33333333-3333-4333-8333-333333333333>',
};

describe('base32 and digests', () => {
  test('base32 follows RFC 4648 test vectors (without padding)', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [input, expected] of vectors) assert.equal(base32(Buffer.from(input)), expected, input);
  });

  test('sha1Base32 matches the well-known digest of the empty string and an independent implementation', () => {
    assert.equal(sha1Base32(new Uint8Array()), 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ');
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    assert.equal(sha1Base32(all.subarray(0, 100), all.subarray(100)), sha1b32(all));
  });
});

describe('dates and SURT', () => {
  test('warcDate keeps seconds precision in UTC', () => {
    assert.equal(warcDate('2026-11-22T10:00:00.123Z'), '2026-11-22T10:00:00Z');
    assert.equal(warcDate('2026-11-22T10:00:00Z'), '2026-11-22T10:00:00Z');
    assert.equal(warcDate('2026-11-22T11:30:05+01:30'), '2026-11-22T10:00:05Z');
    assert.equal(cdxTimestamp('2026-11-22T10:00:05Z'), '20261122100005');
    assert.throws(
      () => warcDate('yesterday'),
      (error: unknown) => error instanceof WarcFormatError && error.code === 'INVALID_DATE',
    );
  });

  test('surt reverses the host, drops www and the scheme, sorts query arguments', () => {
    assert.equal(surt('https://www.Example.com/Path/To?b=2&a=1#frag'), 'com,example)/path/to?a=1&b=2');
    assert.equal(surt('http://example.com'), 'com,example)/');
    assert.equal(surt('http://sub.example.co.uk:8080/x'), 'uk,co,example,sub:8080)/x');
    assert.equal(surt('https://example.com:443/'), 'com,example)/');
    assert.equal(surt('http://127.0.0.1:8080/a'), '1,0,0,127:8080)/a');
    assert.equal(surt('http://bücher.example/straße'), 'example,xn--bcher-kva)/stra%c3%9fe');
    assert.equal(surt('mailto:someone@example.com'), 'mailto:someone@example.com');
  });
});

describe('HTTP heads', () => {
  test('stored response headers describe the decoded body', () => {
    const stored = storedResponseHeaders(
      [
        ['content-type', 'text/html'],
        ['content-encoding', 'gzip'],
        ['content-length', '1234'],
        ['transfer-encoding', 'chunked'],
        ['vary', 'accept-encoding'],
      ],
      5000,
    );
    assert.deepEqual(stored, [
      ['content-type', 'text/html'],
      ['X-Crawlstack-Original-Content-Encoding', 'gzip'],
      ['X-Crawlstack-Original-Content-Length', '1234'],
      ['content-length', '5000'],
      ['X-Crawlstack-Original-Transfer-Encoding', 'chunked'],
      ['vary', 'accept-encoding'],
    ]);
    assert.deepEqual(storedResponseHeaders([['content-length', '7']], 7), [['content-length', '7']]);
    assert.deepEqual(storedResponseHeaders([], 0), [['Content-Length', '0']]);
  });

  test('the request head adds Host when the sent headers lack it, and keeps Latin-1 bytes exact', () => {
    const capture = makeCapture(1);
    capture.request.headers = [
      ['user-agent', 'x'],
      ['x-latin', 'caf\u00e9'],
    ];
    const head = httpRequestHead(capture);
    assert.equal(
      head.toString('latin1'),
      'GET /page/1?b=2&a=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nuser-agent: x\r\nx-latin: caf\u00e9\r\n\r\n',
    );
    assert.equal(head.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d])), true);
  });
});

describe('HTTP heads as received', () => {
  test('the response head is written from the raw headers: case, obs-text bytes, order and repeats', () => {
    const capture = makeCapture(1, {
      statusText: 'OK',
      headers: [
        ['content-type', 'text/html'],
        ['x-obs', 'caf\ufffd'],
        ['content-encoding', 'gzip'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
      // As the fetcher gives them: names as sent, values one Latin-1 character per byte.
      rawHeaders: [
        ['Content-Type', 'text/html'],
        ['X-Obs', 'caf\u00e9 \u00ff'],
        ['Content-Encoding', 'gzip'],
        ['Set-Cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
    });
    const head = httpResponseHead(capture.response);
    const length = capture.response.body.length;
    assert.deepEqual(
      head,
      Buffer.from(
        'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Obs: caf\xe9 \xff\r\n' +
          'X-Crawlstack-Original-Content-Encoding: gzip\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\n' +
          `Content-Length: ${length}\r\n\r\n`,
        'latin1',
      ),
    );
  });

  test('a reason phrase beyond Latin-1 is UTF-8 without touching the header bytes', () => {
    const capture = makeCapture(1, { statusText: 'D\u00fcrfen \u2713', rawHeaders: [['X-Obs', '\u00e9']] });
    const head = httpResponseHead(capture.response);
    assert.ok(head.includes(Buffer.from('HTTP/1.1 200 D\u00fcrfen \u2713\r\n', 'utf8')));
    assert.ok(head.includes(Buffer.from('X-Obs: \xe9\r\n', 'latin1')));
  });

  test('without raw headers, the normalized ones are written (captures from before they existed)', () => {
    const head = httpResponseHead(makeCapture(1).response).toString('latin1');
    assert.match(head, /^HTTP\/1\.1 200 OK\r\ncontent-type: text\/html; charset=utf-8\r\n/);
  });
});

describe('records', () => {
  test('request and response records parse with warcio and carry the expected headers and digests', async () => {
    const capture = makeCapture(3);
    const records = captureToWarcRecords(capture, ids);
    const parsed = await parseWarc(Buffer.concat([records.request, records.response]));
    assert.equal(parsed.length, 2);
    const [request, response] = parsed.map((p) => p.record);
    assert.equal(request!.warcType, 'request');
    assert.equal(request!.warcHeader('WARC-Record-ID'), `<urn:uuid:${ids.requestUuid}>`);
    assert.equal(request!.warcHeader('WARC-Concurrent-To'), `<urn:uuid:${ids.responseUuid}>`);
    assert.equal(request!.warcHeader('WARC-Warcinfo-ID'), ids.warcinfoId);
    assert.equal(request!.warcHeader('WARC-Date'), '2026-11-22T10:00:03Z');
    assert.equal(request!.warcHeader('Content-Type'), 'application/http;msgtype=request');
    assert.equal(request!.httpHeaders?.method, 'GET');
    assert.equal(request!.httpHeaders?.requestPath, '/page/3?b=2&a=1');
    assert.equal(response!.warcType, 'response');
    assert.equal(response!.warcHeader('WARC-IP-Address'), '127.0.0.1');
    assert.equal(response!.warcHeader('Content-Type'), 'application/http;msgtype=response');
    assert.equal(response!.warcHeader('WARC-Truncated'), null);
    assert.equal(response!.httpHeaders?.statusCode, 200);
    assert.deepEqual(Buffer.from(parsed[1]!.payload), Buffer.from(capture.response.body));
    assert.equal(records.payloadDigest, sha1b32(capture.response.body));
    assert.equal(records.mime, 'text/html');

    for (const bytes of [records.request, records.response]) {
      const raw = splitRecord(bytes);
      assert.equal(raw.version, 'WARC/1.1');
      assert.equal(raw.headers.get('warc-block-digest'), sha1b32(raw.block));
      assert.equal(raw.trailer.toString('latin1'), '\r\n\r\n');
    }
    const raw = splitRecord(records.response);
    const payload = raw.block.subarray(raw.block.indexOf('\r\n\r\n') + 4);
    assert.equal(raw.headers.get('warc-payload-digest'), sha1b32(payload));
  });

  test('a truncated capture is marked WARC-Truncated', async () => {
    const records = captureToWarcRecords(makeCapture(1, { truncated: 'time' }), ids);
    const [parsed] = await parseWarc(records.response);
    assert.equal(parsed!.record.warcHeader('WARC-Truncated'), 'time');
  });

  test('each record gzips to a standalone member that warcio reads', async () => {
    const records = captureToWarcRecords(makeCapture(2), ids);
    const gz = Buffer.concat([gzipMember(records.request, 2), gzipMember(records.response, 6)]);
    assert.equal(gz[0], 0x1f);
    const parsed = await parseWarc(gz);
    assert.deepEqual(
      parsed.map((p) => p.record.warcType),
      ['request', 'response'],
    );
  });

  test('warcinfo records name the software, format and caller fields, and stay one record', async () => {
    const { record, id } = warcinfoRecord({
      uuid: ids.requestUuid,
      date: '2026-11-22T10:00:00Z',
      filename: 'crawlstack-20261122100000-00000.warc.gz',
      software: 'crawlstack/9.9.9',
      fields: { seeds: 'https://example.com/', 'bad\r\nname': 'multi\r\nline' },
    });
    assert.equal(id, `<urn:uuid:${ids.requestUuid}>`);
    const [parsed] = await parseWarc(record);
    assert.equal(parsed!.record.warcType, 'warcinfo');
    assert.equal(parsed!.record.warcHeader('WARC-Filename'), 'crawlstack-20261122100000-00000.warc.gz');
    assert.equal(parsed!.record.warcContentType, 'application/warc-fields');
    const text = Buffer.from(parsed!.payload).toString('utf8');
    assert.match(text, /^software: crawlstack\/9\.9\.9\r\n/);
    assert.match(text, /\r\nformat: WARC File Format 1\.1\r\n/);
    assert.match(text, /\r\nconformsTo: https:\/\/iipc\.github\.io\/.*warc-1\.1\/\r\n/);
    assert.match(text, /\r\nseeds: https:\/\/example\.com\/\r\n/);
    assert.match(text, /\r\nbad-name: multi line\r\n$/);
  });

  test('cdxjLine writes the pywb form', () => {
    const line = cdxjLine({
      url: 'https://www.example.com/a?z=1&b=2',
      date: '2026-11-22T10:00:00Z',
      mime: 'text/html',
      status: 200,
      payloadDigest: 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ',
      offset: 1234,
      length: 567,
      filename: 'f.warc.gz',
    });
    assert.equal(
      line,
      'com,example)/a?b=2&z=1 20261122100000 {"url":"https://www.example.com/a?z=1&b=2","mime":"text/html","status":"200","digest":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","length":"567","offset":"1234","filename":"f.warc.gz"}\n',
    );
  });
});
