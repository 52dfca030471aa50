/**
 * `GET /crawls/{id}/pages`: the crawl's page records, read from its index objects in S3
 * (`index/<crawlId>/*.jsonl`, written by the archiver) in key order, i.e. roughly in the order
 * they were archived. The cursor is the object key and the byte offset of the next line, so a page
 * of results costs one ranged GET per index object it touches plus a LIST when it moves on.
 */

import type { PageItem } from '../messages/crawl-records.ts';
import { indexPrefix } from '../messages/warc-object.ts';
import type { ObjectReader } from '../ports/cloud-ports.ts';

/** Where the next page of results starts: inside `key` at byte `offset`, or after `key` (offset -1). */
export interface PageCursor {
  key: string;
  offset: number;
}

/** One page of results. */
export interface PageListing {
  pages: PageItem[];
  cursor?: PageCursor;
}

/** Keys asked for per LIST. */
const LIST_CHUNK = 100;

/** The archiver's index keys: `index/<crawl>/<stamp>-<hash>[-<pages>].jsonl` (see warc-object.ts). */
const INDEX_KEY = /^index\/[^/]{1,64}\/[0-9]{17}-[0-9a-z]{1,64}(-[0-9]{1,9})?\.jsonl$/;

/** A cursor that names no place in the crawl's index (forged, or from another deployment). */
export class InvalidCursorError extends Error {
  readonly code = 'INVALID_CURSOR' as const;
  readonly retryable = false;
  constructor(why: string) {
    super(`cursor: not a cursor this API returned (${why})`);
    this.name = 'InvalidCursorError';
  }
}

/** The opaque cursor text. */
export function encodePageCursor(cursor: PageCursor): string {
  return Buffer.from(JSON.stringify([cursor.key, cursor.offset]), 'utf8').toString('base64url');
}

/** Reads a cursor this API returned for `crawlId`; undefined for anything else. */
export function decodePageCursor(text: string, crawlId: string): PageCursor | undefined {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [key, offset] = value as [unknown, unknown];
    if (typeof key !== 'string' || !key.startsWith(indexPrefix(crawlId)) || !INDEX_KEY.test(key))
      return undefined;
    if (!Number.isSafeInteger(offset) || (offset as number) < -1) return undefined;
    return { key, offset: offset as number };
  } catch {
    return undefined;
  }
}

/**
 * Up to `limit` page records after `cursor`. A URL that appears twice within the records read
 * by one call (a capture archived twice after a crash) is returned once. `until`, called with each
 * record listed, ends the listing right after that record when it answers true (the dataset
 * stops on the size of its answer).
 */
export async function listPages(
  reader: ObjectReader,
  crawlId: string,
  limit: number,
  cursor?: PageCursor,
  until?: (page: PageItem) => boolean,
): Promise<PageListing> {
  const pages: PageItem[] = [];
  const seen = new Set<string>();
  const prefix = indexPrefix(crawlId);

  // Reads `key` from `offset`; resolves the cursor to return when the limit was reached inside it.
  const readObject = async (key: string, offset: number): Promise<PageCursor | undefined> => {
    const bytes = await reader.read(key, offset);
    let position = 0;
    while (position < bytes.length) {
      const end = bytes.indexOf(0x0a, position);
      const stop = end < 0 ? bytes.length : end;
      const line = Buffer.from(bytes.buffer, bytes.byteOffset + position, stop - position).toString('utf8');
      position = stop + 1;
      if (line.trim() === '') continue;
      const page = JSON.parse(line) as PageItem;
      if (seen.has(page.fp)) continue;
      seen.add(page.fp);
      pages.push(page);
      if (pages.length >= limit || until?.(page) === true) {
        return position >= bytes.length ? { key, offset: -1 } : { key, offset: offset + position };
      }
    }
    return undefined;
  };

  let after: string | undefined;
  if (cursor !== undefined) {
    if (cursor.offset >= 0) {
      // A cursor this API made points at the start of a line of an object that exists.
      let bytes: Uint8Array;
      try {
        bytes = await reader.read(cursor.key, Math.max(0, cursor.offset - 1));
      } catch (error) {
        if ((error as { name?: string }).name === 'NoSuchKey') throw new InvalidCursorError('no such object');
        throw error;
      }
      if (cursor.offset > 0 && bytes[0] !== 0x0a) throw new InvalidCursorError('not at a line');
      let next: PageCursor | undefined;
      try {
        next = await readObject(cursor.key, cursor.offset);
      } catch (error) {
        if (error instanceof SyntaxError) throw new InvalidCursorError('not at a record');
        throw error;
      }
      if (next !== undefined) return { pages, cursor: next };
    }
    after = cursor.key;
  }
  for (;;) {
    const keys = await reader.keys(prefix, after, LIST_CHUNK);
    for (const key of keys) {
      const next = await readObject(key, 0);
      if (next !== undefined) return { pages, cursor: next };
    }
    if (keys.length < LIST_CHUNK) return { pages };
    after = keys[keys.length - 1];
  }
}
