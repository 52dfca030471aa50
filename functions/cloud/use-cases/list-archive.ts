/**
 * `GET /crawls/{id}/objects?kind=`: the objects of a crawl's archive, one kind at a time, in key
 * order, each with its size and a presigned GET URL (short-lived), so `crawlstack cloud download`
 * needs only the API (lambda:InvokeFunctionUrl), no S3 credentials:
 *
 *   warc    warc/<crawl>/<yyyy>/<mm>/<dd>/<stamp>-<hash>.warc.gz   the archiver's and the worker's
 *   index   index/<crawl>/<stamp>-<hash>-<n>.jsonl                  page records (n of them)
 *   links   links/<crawl>/<stamp>-<hash>.jsonl                      the link graph
 *   trace   trace/<crawl>/...                                       the URL-seen trace (when recorded)
 *
 * The cursor is the last key handed out.
 */
import type { ObjectLinks, StoredObject } from '../ports/cloud-ports.ts';

/** The kinds of archive objects, in the order a download takes them. */
export const ARCHIVE_KINDS = ['warc', 'index', 'links', 'trace'] as const;
export type ArchiveKind = (typeof ARCHIVE_KINDS)[number];

/**
 * How long a download URL works. Short, so a leaked URL is worth little; a client whose URL
 * expired before it got there lists the same page again.
 */
export const DOWNLOAD_URL_SECONDS = 900;

/** Prefix of a crawl's objects of one kind. */
export function archivePrefix(kind: ArchiveKind, crawlId: string): string {
  return `${kind}/${crawlId}/`;
}

/** One listed object. */
export interface ArchiveEntry extends StoredObject {
  url: string;
}

/** One page of a listing. */
export interface ArchiveListing {
  objects: ArchiveEntry[];
  /** The last key handed out, when there may be more. */
  next?: string;
}

/** Reads a cursor this API returned for the crawl and kind: the key it names, or undefined. */
export function decodeArchiveCursor(text: string, kind: ArchiveKind, crawlId: string): string | undefined {
  const key = Buffer.from(text, 'base64url').toString('utf8');
  return key.startsWith(archivePrefix(kind, crawlId)) && key.length <= 1024 ? key : undefined;
}

/** The opaque cursor of a key. */
export function encodeArchiveCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

/** Up to `limit` objects of `kind` after `after`, with download URLs. */
export async function listArchive(
  links: ObjectLinks,
  crawlId: string,
  kind: ArchiveKind,
  limit: number,
  after?: string,
): Promise<ArchiveListing> {
  const found = await links.list(archivePrefix(kind, crawlId), after, limit);
  const objects = await Promise.all(
    found.map(async (o) => ({ ...o, url: await links.presignGet(o.key, DOWNLOAD_URL_SECONDS) })),
  );
  const last = found.at(-1);
  return found.length === limit && last !== undefined ? { objects, next: last.key } : { objects };
}
