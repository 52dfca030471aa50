/**
 * Shared helpers for the WARC tests: capture builders, an independent digest implementation, and
 * readers that go through warcio (the reference reader) or through plain zlib.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { WARCParser, type WARCRecord } from 'warcio';
import type { Capture } from '../../../functions/core/ports.ts';

/** sha1 + RFC 4648 base32, written here independently of functions/core/warc. */
export function sha1b32(bytes: Uint8Array): string {
  const digest = createHash('sha1').update(bytes).digest();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const byte of digest) bits += byte.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < bits.length; i += 5)
    out += alphabet[Number.parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return `sha1:${out}`;
}

/** A capture of `http://127.0.0.1:8080/page/<i>` with an HTML body, gzip-encoded on the wire. */
export function makeCapture(i: number, overrides: Partial<Capture['response']> = {}): Capture {
  const body = Buffer.from(`<!doctype html><title>Page ${i}</title><p>${'lorem ipsum '.repeat(50 + i)}</p>`);
  return {
    url: `http://127.0.0.1:8080/page/${i}?b=2&a=1`,
    fetchedAt: `2026-11-22T10:00:${String(i % 60).padStart(2, '0')}.250Z`,
    remoteAddress: '127.0.0.1',
    request: {
      method: 'GET',
      target: `/page/${i}?b=2&a=1`,
      httpVersion: '1.1',
      headers: [
        ['host', '127.0.0.1:8080'],
        ['user-agent', 'crawlstack-test/1.0'],
        ['accept-encoding', 'gzip, br'],
      ],
    },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: '1.1',
      headers: [
        ['content-type', 'text/html; charset=utf-8'],
        ['content-encoding', 'gzip'],
        ['transfer-encoding', 'chunked'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
      body,
      ...overrides,
    },
  };
}

/** One record as warcio parsed it, with its raw offset/length in the file and its payload. */
export interface ParsedRecord {
  record: WARCRecord;
  offset: number;
  length: number;
  payload: Uint8Array;
}

async function* chunks(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  // Several chunks, so record boundaries fall inside chunks as they do when streaming a file.
  for (let i = 0; i < bytes.length; i += 4096) yield bytes.subarray(i, i + 4096);
}

/** Parses every record of a (gzipped) WARC buffer with warcio. */
export async function parseWarc(bytes: Uint8Array): Promise<ParsedRecord[]> {
  const parser = new WARCParser(chunks(bytes));
  const out: ParsedRecord[] = [];
  for await (const record of parser) {
    const payload = await record.readFully(false);
    out.push({ record, offset: parser.offset, length: parser.recordLength, payload });
  }
  return out;
}

/** Parses a WARC file with warcio. */
export function parseWarcFile(path: string): Promise<ParsedRecord[]> {
  return parseWarc(readFileSync(path));
}

/** An uncompressed record split by hand: WARC header lines, block, and what follows the block. */
export interface RawRecord {
  version: string;
  headers: Map<string, string>;
  block: Buffer;
  trailer: Buffer;
}

/** Splits an uncompressed WARC record without warcio, to check digests and lengths byte for byte. */
export function splitRecord(bytes: Buffer): RawRecord {
  const headEnd = bytes.indexOf('\r\n\r\n');
  const lines = bytes.subarray(0, headEnd).toString('utf8').split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  const length = Number(headers.get('content-length'));
  const block = bytes.subarray(headEnd + 4, headEnd + 4 + length);
  return { version: lines[0]!, headers, block, trailer: bytes.subarray(headEnd + 4 + length) };
}

/** Inflates one gzip member slice of a file (what a reader does with a StoredRef). */
export function inflateSlice(file: Buffer, offset: number, length: number): Buffer {
  return gunzipSync(file.subarray(offset, offset + length));
}

/** A fresh temporary folder and its cleanup. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-warc-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Deterministic UUIDs for record ids. */
export function sequentialIds(): () => string {
  let n = 0;
  return () => {
    n += 1;
    return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  };
}
