/**
 * A capture-queue message: one finished URL as the worker hands it to the archiver. It carries the
 * page record (what the API lists) and, for a page that got an HTTP response, its WARC request and
 * response records, each already its own gzip member, base64 in the JSON. A capture too big for a
 * message is stored by the worker as its own small WARC object, and the message says where.
 *
 *   { "v": 1, "crawlId": "...", "page": { ...PageItem },
 *     "warc": { "gz": "<base64 request member + response member>", "requestLength": 412 } }
 *   { ..., "warc": { "stored": { "bucket", "key", "offset", "length" } } }
 *   { ... }                                         (no "warc": skipped, failed, redirected early)
 *
 * An HTML page also carries its out-links, the `links` of its links.jsonl line (from = page.url),
 * which the archiver writes beside the index; when they would make the message too big, the
 * worker stores them as their own links object and the message names its key:
 *
 *   { ..., "links": [{ "url", "kind", "skipped"? }, ...] }      { ..., "links": { "stored": "<key>" } }
 *
 * A full response record's payload digest travels as `"digest": "sha1:<BASE32>"` (the archive's
 * state keeps it: a recrawl's revisit records name it).
 */
import type { OutLink } from '../../core/types.ts';
import type { PageItem, WarcLocation } from './crawl-records.ts';
import { parseJsonObject } from './task-message.ts';

/** The capture's WARC records (request member then response member), inline. */
export interface InlineRecords {
  /** Request gzip member followed by response gzip member. */
  members: Uint8Array;
  /** Bytes of the request member: the response member starts there. */
  requestLength: number;
  /** WARC-Payload-Digest of a response record (not of a revisit record); sent as the message's `digest`. */
  payloadDigest?: string;
}

/** One finished URL on its way to the archiver. */
export interface CaptureMessage {
  crawlId: string;
  /** The page record; its `warc` is filled in by the archiver. */
  page: PageItem;
  records?: InlineRecords;
  /** Where the worker stored a capture too big for a message (the response record's location). */
  stored?: WarcLocation;
  /** The page's distinct out-links (links.jsonl's `links`, capped by maxLinksPerPage). */
  links?: OutLink[];
  /** Key of the links object the worker stored itself (links too big for a message). */
  linksStored?: string;
  /** WARC-Payload-Digest of the response record (`sha1:<BASE32>`): what the archive's state keeps of a full copy. */
  payloadDigest?: string;
}

/**
 * Largest message body the worker sends; a capture that would make a bigger one is stored in S3
 * by the worker instead. SQS accepts 256 KiB per message (and per batch call); the margin leaves
 * room for the batch's other entries' attributes.
 */
export const CAPTURE_MESSAGE_LIMIT = 200_000;

const FINGERPRINT = /^[0-9a-f]{16}$/;

/** The message body. */
export function encodeCaptureMessage(message: CaptureMessage): string {
  const { warc: _w, ...page } = message.page;
  const out: Record<string, unknown> = { v: 1, crawlId: message.crawlId, page };
  if (message.records !== undefined) {
    out.warc = {
      gz: Buffer.from(
        message.records.members.buffer,
        message.records.members.byteOffset,
        message.records.members.byteLength,
      ).toString('base64'),
      requestLength: message.records.requestLength,
    };
  } else if (message.stored !== undefined) {
    out.warc = { stored: message.stored };
  }
  if (message.links !== undefined) out.links = message.links;
  else if (message.linksStored !== undefined) out.links = { stored: message.linksStored };
  if (message.payloadDigest !== undefined) out.digest = message.payloadDigest;
  return JSON.stringify(out);
}

/** A body that is a capture message, or why it is not. */
export type DecodedCapture = { ok: true; message: CaptureMessage } | { ok: false; problem: string };

function isInt(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0;
}

/** Parses and checks a capture-queue message body (shape only). */
export function decodeCaptureMessage(body: string): DecodedCapture {
  const parsed = parseJsonObject(body);
  if (!parsed.ok) return parsed;
  const m = parsed.value;
  if (m.v !== 1) return { ok: false, problem: `unknown version ${JSON.stringify(m.v)}` };
  if (typeof m.crawlId !== 'string' || m.crawlId === '' || m.crawlId.includes('/')) {
    return { ok: false, problem: 'crawlId must be a non-empty string without "/"' };
  }
  const p = m.page as Record<string, unknown> | null | undefined;
  if (p === null || typeof p !== 'object' || Array.isArray(p)) return { ok: false, problem: 'page missing' };
  const problems: string[] = [];
  if (typeof p.fp !== 'string' || !FINGERPRINT.test(p.fp)) problems.push('page.fp must be 16 hex digits');
  for (const key of ['url', 'host', 'kind', 'messageId'] as const) {
    if (typeof p[key] !== 'string' || p[key] === '') problems.push(`page.${key} must be a non-empty string`);
  }
  if (p.status !== null && !isInt(p.status)) problems.push('page.status must be an integer or null');
  for (const key of ['depth', 'bytes', 'outLinks', 'enqueued'] as const) {
    if (!isInt(p[key])) problems.push(`page.${key} must be an integer >= 0`);
  }
  const message: CaptureMessage = { crawlId: m.crawlId, page: p as unknown as PageItem };
  const warc = m.warc as Record<string, unknown> | undefined;
  if (warc !== undefined) {
    if (warc === null || typeof warc !== 'object') {
      problems.push('warc must be an object');
    } else if (typeof warc.gz === 'string') {
      const members = Buffer.from(warc.gz, 'base64');
      if (!isInt(warc.requestLength) || warc.requestLength >= members.length || members.length < 20) {
        problems.push('warc.requestLength must fall inside the records');
      } else if (members[0] !== 0x1f || members[1] !== 0x8b || members[warc.requestLength] !== 0x1f) {
        problems.push('warc.gz must be two gzip members');
      } else {
        message.records = { members, requestLength: warc.requestLength };
      }
    } else {
      const s = warc.stored as Record<string, unknown> | undefined;
      if (
        s === undefined ||
        typeof s.bucket !== 'string' ||
        typeof s.key !== 'string' ||
        !isInt(s.offset) ||
        !isInt(s.length)
      ) {
        problems.push('warc must have gz and requestLength, or stored {bucket, key, offset, length}');
      } else {
        message.stored = { bucket: s.bucket, key: s.key, offset: s.offset, length: s.length };
      }
    }
  }
  const links = decodeLinks(m.links, problems);
  if (Array.isArray(links)) message.links = links;
  else if (links !== undefined) message.linksStored = links.stored;
  if (m.digest !== undefined) {
    if (typeof m.digest === 'string' && /^sha1:[A-Z2-7]{32}$/.test(m.digest))
      message.payloadDigest = m.digest;
    else problems.push('digest must be sha1:<32 base32 characters>');
  }
  if (problems.length > 0) return { ok: false, problem: problems.join('; ') };
  return { ok: true, message };
}

/** `links`: absent, a list of out-links, or `{ stored: key }`; problems are added to `problems`. */
function decodeLinks(value: unknown, problems: string[]): OutLink[] | { stored: string } | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) {
    const bad = value.findIndex(
      (l: unknown) =>
        l === null ||
        typeof l !== 'object' ||
        typeof (l as OutLink).url !== 'string' ||
        typeof (l as OutLink).kind !== 'string' ||
        ((l as OutLink).skipped !== undefined && typeof (l as OutLink).skipped !== 'string'),
    );
    if (bad >= 0) problems.push(`links[${bad}] must be { url, kind, skipped? } with strings`);
    return value as OutLink[];
  }
  const stored = (value as { stored?: unknown } | null)?.stored;
  if (typeof stored === 'string' && stored !== '') return { stored };
  problems.push('links must be a list of out-links or { stored: key }');
  return undefined;
}
