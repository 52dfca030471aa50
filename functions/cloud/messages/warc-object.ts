/**
 * WARC objects of the cloud crawl: a warcinfo record, then request/response records that the
 * worker already compressed (each its own gzip member), concatenated. Keys and the warcinfo record
 * are derived from a content hash, so writing the same captures again writes the same bytes under
 * the same key (a redelivered batch overwrites instead of duplicating).
 */
import { createHash } from 'node:crypto';
import { DEFAULT_WARC_GZIP_LEVEL, gzipMember } from '../../core/warc/gzip-member.ts';
import { warcDate } from '../../core/warc/warc-date.ts';
import { warcinfoRecord } from '../../core/warc/warcinfo-record.ts';
import type { InlineRecords } from './capture-message.ts';

/** `yyyymmddhhmmssSSS` of epoch ms: sorts as time does. */
export function stampOf(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/[-:TZ.]/g, '');
}

/** 16 hex digits of SHA-256 over the sorted ids: the same set of ids, the same name. */
export function idsHash(ids: Iterable<string>): string {
  return createHash('sha256')
    .update([...ids].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/** `warc/<crawlId>/<yyyy>/<mm>/<dd>/<stamp>-<hash>.warc.gz` */
export function warcKey(crawlId: string, epochMs: number, hash: string): string {
  const iso = new Date(epochMs).toISOString();
  return `warc/${crawlId}/${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}/${stampOf(epochMs)}-${hash}.warc.gz`;
}

/** Prefix of a crawl's index objects (the API lists it in key order). */
export function indexPrefix(crawlId: string): string {
  return `index/${crawlId}/`;
}

/** `index/<crawlId>/<stamp>-<hash>.jsonl`: one page record per line. */
export function indexKey(crawlId: string, epochMs: number, hash: string): string {
  return `${indexPrefix(crawlId)}${stampOf(epochMs)}-${hash}.jsonl`;
}

/** What opens a WARC object. */
export interface WarcObjectInput {
  /** The object key (its last segment becomes WARC-Filename). */
  key: string;
  /** Seeds the warcinfo record's id (a hash of the content, for determinism). */
  hash: string;
  /** warcinfo WARC-Date, epoch ms. */
  date: number;
  software: string;
  fields: Record<string, string>;
  parts: readonly InlineRecords[];
  gzipLevel?: number;
}

/** The object's bytes and, per part, where its response record is. */
export interface WarcObject {
  body: Buffer;
  responses: { offset: number; length: number }[];
}

function uuidFrom(hash: string): string {
  const h = createHash('sha256').update(`warcinfo ${hash}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Concatenates a warcinfo member and the parts' members into one WARC object. */
export function buildWarcObject(input: WarcObjectInput): WarcObject {
  const { record } = warcinfoRecord({
    uuid: uuidFrom(input.hash),
    date: warcDate(new Date(input.date).toISOString()),
    filename: input.key.slice(input.key.lastIndexOf('/') + 1),
    software: input.software,
    fields: input.fields,
  });
  const info = gzipMember(record, input.gzipLevel ?? DEFAULT_WARC_GZIP_LEVEL);
  const chunks: Uint8Array[] = [info];
  const responses: WarcObject['responses'] = [];
  let size = info.length;
  for (const part of input.parts) {
    responses.push({ offset: size + part.requestLength, length: part.members.length - part.requestLength });
    chunks.push(part.members);
    size += part.members.length;
  }
  return { body: Buffer.concat(chunks, size), responses };
}
