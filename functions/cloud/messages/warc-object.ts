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

/**
 * `index/<crawlId>/<stamp>-<hash>-<pages>.jsonl`: one page record per line, `pages` of them. The
 * count in the key lets the scheduler know how many page records a crawl's archive holds from a
 * listing alone (no GET, no HEAD: a listing carries no metadata); a batch delivered again writes
 * the same lines under the same key, so it is not counted twice. Without `pages`, the key of the
 * archivers before the count (`<stamp>-<hash>.jsonl`).
 */
export function indexKey(crawlId: string, epochMs: number, hash: string, pages?: number): string {
  return `${indexPrefix(crawlId)}${stampOf(epochMs)}-${hash}${pages === undefined ? '' : `-${pages}`}.jsonl`;
}

const INDEX_PAGES = /^index\/[^/]+\/[0-9]{17}-[0-9a-z]{1,64}-([0-9]{1,9})\.jsonl$/;

/** The page records an index object holds, as its key says (undefined: a key without the count). */
export function indexPages(key: string): number | undefined {
  const match = INDEX_PAGES.exec(key);
  return match === null ? undefined : Number(match[1]);
}

/** Prefix of a crawl's links objects (the link graph: links.jsonl lines). */
export function linksPrefix(crawlId: string): string {
  return `links/${crawlId}/`;
}

/** `links/<crawlId>/<stamp>-<hash>.jsonl`: one `{ from, links }` line per HTML page. */
export function linksKey(crawlId: string, epochMs: number, hash: string): string {
  return `${linksPrefix(crawlId)}${stampOf(epochMs)}-${hash}.jsonl`;
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
