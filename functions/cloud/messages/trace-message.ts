/**
 * A URL-seen trace message: the fingerprints one worker batch looked up in its URL-seen test for
 * one crawl, in the order it looked them up (the cache study's trace, see
 * functions/core/url-seen/url-seen-trace.ts), on its way to the archiver through the capture
 * queue, beside the batch's captures. The archiver writes the traces of its batch as one object
 * per crawl, `trace/<crawl>/<stamp>-<hash>.bin` (8 bytes per look-up, no header: objects
 * concatenate into the embedded mode's url-seen.trace).
 *
 *   {"kind":"url-seen-trace","v":1,"crawlId":"...","lookups":"<base64 of 8-byte records>"}
 *
 * The body starts with `{"kind":"url-seen-trace"`, so the archiver tells it from a capture without
 * parsing it twice.
 */

import type { Fingerprint } from '../../core/types.ts';
import { encodeTrace, TRACE_RECORD_BYTES } from '../../core/url-seen/url-seen-trace.ts';
import { parseJsonObject } from './task-message.ts';
import { stampOf } from './warc-object.ts';

/** What every trace message body starts with. */
export const TRACE_MESSAGE_PREFIX = '{"kind":"url-seen-trace"';

/**
 * Look-ups per message at most: 16,000 × 8 bytes is 170,668 characters of base64, under the
 * worker's 200,000-byte message limit (CAPTURE_MESSAGE_LIMIT). A batch of ordinary pages looks up
 * a few hundred; a batch of ten pages with 6,000 links each (maxLinksPerPage) takes four messages.
 */
export const TRACE_MESSAGE_LOOKUPS = 16_000;

/** A decoded trace message. */
export interface TraceMessage {
  crawlId: string;
  /** The look-ups, 8 bytes each (big-endian fingerprints). */
  lookups: Uint8Array;
}

/** The message bodies of one batch's look-ups for a crawl (none when it looked nothing up). */
export function encodeTraceMessages(crawlId: string, lookups: readonly Fingerprint[]): string[] {
  const bodies: string[] = [];
  for (let start = 0; start < lookups.length; start += TRACE_MESSAGE_LOOKUPS) {
    const bytes = encodeTrace(lookups.slice(start, start + TRACE_MESSAGE_LOOKUPS));
    const base64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
    bodies.push(`${TRACE_MESSAGE_PREFIX},"v":1,"crawlId":${JSON.stringify(crawlId)},"lookups":"${base64}"}`);
  }
  return bodies;
}

/** True for a body that claims to be a trace message (decode it to know whether it is one). */
export function isTraceBody(body: string): boolean {
  return body.startsWith(TRACE_MESSAGE_PREFIX);
}

/** A body that is a trace message, or why it is not. */
export type DecodedTrace = { ok: true; message: TraceMessage } | { ok: false; problem: string };

/** Parses and checks a trace message body. */
export function decodeTraceMessage(body: string): DecodedTrace {
  const parsed = parseJsonObject(body);
  if (!parsed.ok) return parsed;
  const m = parsed.value;
  if (m.kind !== 'url-seen-trace' || m.v !== 1)
    return { ok: false, problem: 'not a version 1 trace message' };
  if (typeof m.crawlId !== 'string' || m.crawlId === '' || m.crawlId.includes('/')) {
    return { ok: false, problem: 'crawlId must be a non-empty string without "/"' };
  }
  if (typeof m.lookups !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(m.lookups)) {
    return { ok: false, problem: 'lookups must be base64' };
  }
  const lookups = Buffer.from(m.lookups, 'base64');
  if (lookups.length === 0 || lookups.length % TRACE_RECORD_BYTES !== 0) {
    return { ok: false, problem: `lookups must be a whole number of ${TRACE_RECORD_BYTES}-byte records` };
  }
  return { ok: true, message: { crawlId: m.crawlId, lookups } };
}

/** Prefix of a crawl's trace objects (concatenated in key order, they are its url-seen.trace). */
export function tracePrefix(crawlId: string): string {
  return `trace/${crawlId}/`;
}

/** `trace/<crawlId>/<stamp>-<hash>.bin`: the look-ups of one archiver batch, 8 bytes each. */
export function traceKey(crawlId: string, epochMs: number, hash: string): string {
  return `${tracePrefix(crawlId)}${stampOf(epochMs)}-${hash}.bin`;
}
