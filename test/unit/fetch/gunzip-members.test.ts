import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ByteBlocks } from '../../../functions/adapters/http/byte-blocks.ts';
import {
  GunzipMembers,
  GzipFormatError,
  gunzipMembersSync,
  gzipHeaderLength,
} from '../../../functions/adapters/http/gunzip-members.ts';

const TEXT = Buffer.from('<html><body>hello gzip</body></html>'.repeat(50));
const OTHER = Buffer.from('<p>second member</p>');
const gz = (b: Buffer) => gzipSync(b);

/** A gzip member with every optional header field (extra, name, comment, header CRC). */
function memberWithAllFields(body: Buffer): Buffer {
  const plain = gzipSync(body);
  const header = Buffer.from([0x1f, 0x8b, 8, 2 | 4 | 8 | 16, 0, 0, 0, 0, 0, 3]);
  const extra = Buffer.from([3, 0, 1, 2, 3]);
  const name = Buffer.from('index.html\0', 'latin1');
  const comment = Buffer.from('a comment\0', 'latin1');
  const hcrc = Buffer.from([0, 0]); // zlib does not check it for gunzip; our framing skips it
  return Buffer.concat([header, extra, name, comment, hcrc, plain.subarray(10)]);
}

/** Runs `wire` through the streaming decoder in pieces of `size` bytes. */
async function stream(wire: Buffer, size: number): Promise<{ out: Buffer; ignored: number }> {
  const decoder = new GunzipMembers();
  const out = new ByteBlocks();
  const done = new Promise<void>((resolve, reject) => {
    decoder.on('data', (chunk: Buffer) => out.append(chunk));
    decoder.on('end', resolve);
    decoder.on('error', reject);
  });
  for (let i = 0; i < wire.length; i += size) decoder.write(wire.subarray(i, i + size));
  decoder.end();
  await done;
  return { out: out.toBuffer(), ignored: decoder.ignoredBytes };
}

/** Expected output, or 'prefix': some of TEXT's first bytes (a member cut short). */
const CASES: [string, Buffer, Buffer | 'prefix'][] = [
  ['one member', gz(TEXT), TEXT],
  ['one member and CRLF', Buffer.concat([gz(TEXT), Buffer.from('\r\n')]), TEXT],
  ['one member and text', Buffer.concat([gz(TEXT), Buffer.from('<!-- served by x -->')]), TEXT],
  ['one member and a lone 0x1f', Buffer.concat([gz(TEXT), Buffer.from([0x1f, 0x41])]), TEXT],
  ['two members', Buffer.concat([gz(TEXT), gz(OTHER)]), Buffer.concat([TEXT, OTHER])],
  [
    'two members and CRLF',
    Buffer.concat([gz(TEXT), gz(OTHER), Buffer.from('\r\n')]),
    Buffer.concat([TEXT, OTHER]),
  ],
  ['one member and zero padding', Buffer.concat([gz(TEXT), Buffer.alloc(100)]), TEXT],
  ['every optional header field', memberWithAllFields(TEXT), TEXT],
  ['an empty member', gz(Buffer.alloc(0)), Buffer.alloc(0)],
  ['cut inside the deflate data', gz(TEXT).subarray(0, 40), 'prefix'],
];

describe('gzip members', () => {
  it('gzipHeaderLength reads the header and its optional fields, or says it needs more or is not gzip', () => {
    assert.equal(gzipHeaderLength(gz(TEXT)), 10);
    const full = memberWithAllFields(TEXT);
    assert.equal(gzipHeaderLength(full), 10 + 5 + 11 + 10 + 2);
    assert.equal(gzipHeaderLength(full.subarray(0, 20)), 0);
    assert.equal(gzipHeaderLength(Buffer.from([0x1f])), 0);
    assert.equal(gzipHeaderLength(Buffer.from('\r\n')), -1);
    assert.equal(gzipHeaderLength(Buffer.from([0x1f, 0x8b, 7])), -1, 'method other than deflate');
    assert.equal(gzipHeaderLength(Buffer.from([0x1f, 0x8b, 8, 0x80])), -1, 'reserved flag');
  });

  for (const [name, wire, expected] of CASES) {
    it(`${name}: the same bytes whole and streamed in pieces of 1, 7 and 4096 bytes`, async () => {
      const check = (out: Buffer, what: string) => {
        if (expected !== 'prefix') assert.deepEqual(out, expected, what);
        else assert.ok(out.length > 0 && TEXT.subarray(0, out.length).equals(out), `${what}: a prefix`);
      };
      check(gunzipMembersSync(wire, 1 << 20).decoded, 'whole');
      for (const size of [1, 7, 4096]) check((await stream(wire, size)).out, `pieces of ${size}`);
    });
  }

  it('counts the bytes it ignored after the last member', async () => {
    const wire = Buffer.concat([gz(TEXT), Buffer.from('garbage after the member')]);
    assert.equal(gunzipMembersSync(wire, 1 << 20).ignoredBytes, 24);
    assert.equal((await stream(wire, 5)).ignored, 24);
  });

  it('a body that is not gzip, corrupt deflate data and a wrong checksum still fail', async () => {
    const notGzip = Buffer.from('<html>plain</html>');
    const corrupt = gz(TEXT);
    corrupt.fill(0xff, 12, 30);
    const badCrc = gz(TEXT);
    badCrc.writeUInt32LE((badCrc.readUInt32LE(badCrc.length - 8) ^ 1) >>> 0, badCrc.length - 8);
    assert.throws(() => gunzipMembersSync(notGzip, 1 << 20), GzipFormatError);
    assert.throws(() => gunzipMembersSync(corrupt, 1 << 20), /invalid|incorrect|unknown/);
    assert.throws(() => gunzipMembersSync(badCrc, 1 << 20), GzipFormatError);
    for (const size of [1, 4096]) {
      await assert.rejects(stream(notGzip, size), GzipFormatError);
      await assert.rejects(stream(corrupt, size), /invalid|incorrect|unknown/);
      await assert.rejects(stream(badCrc, size), GzipFormatError);
    }
  });

  it("whole decoding stops at maxOutputLength with zlib's own error", () => {
    assert.throws(() => gunzipMembersSync(gz(Buffer.alloc(1 << 20)), 1000), { code: 'ERR_BUFFER_TOO_LARGE' });
  });
});

describe('ByteBlocks', () => {
  it('keeps bytes appended one at a time, or in large pieces, as one buffer', () => {
    const blocks = new ByteBlocks();
    const expected = Buffer.alloc(3 << 20);
    for (let i = 0; i < expected.length; i++) expected[i] = (i * 31) & 0xff;
    for (let i = 0; i < 100_000; i++) blocks.append(expected.subarray(i, i + 1));
    blocks.append(expected.subarray(100_000, 2 << 20));
    blocks.append(expected.subarray(2 << 20));
    assert.equal(blocks.length, expected.length);
    assert.deepEqual(blocks.toBuffer(), expected);
    assert.deepEqual(new ByteBlocks().toBuffer(), Buffer.alloc(0));
  });

  it('copies: the appended buffer may be reused', () => {
    const blocks = new ByteBlocks();
    const scratch = Buffer.from('abc');
    blocks.append(scratch);
    scratch.fill(0x7a);
    assert.equal(blocks.toBuffer().toString(), 'abc');
  });
});
