/**
 * The cloud archive's per-URL state, kept as the archiver indexes pages (archive-captures.ts):
 * each page record is folded into its URL's {@link ArchivedPage} with the core's `foldVisit`,
 * with its links, where its capture went and its payload digest. A recrawl round's worker looks
 * its pages up here (`archiveRevisits`) for the conditional GET and the revisit record.
 */
import type { RevisitLookup } from '../../core/ports.ts';
import { foldVisit, previousFetch, type VisitedRecord } from '../../core/recrawl/archived-page.ts';
import type { OutLink, PreviousFetch } from '../../core/types.ts';
import { type ArchiveEntry, stateBefore } from '../messages/archive-records.ts';
import type { PageItem } from '../messages/crawl-records.ts';
import type { ArchiveStore } from '../ports/cloud-ports.ts';

/** One indexed page as the archiver hands it over. */
export interface ArchivedVisit {
  page: PageItem;
  links?: OutLink[];
  /** WARC-Payload-Digest of its response record (absent for a revisit record or no capture). */
  payloadDigest?: string;
}

/**
 * Folds the crawl's visits into the archive: each URL's state before the crawl's own visit (so
 * that a page indexed twice is folded once) becomes the state after it. `firstCrawl`: the crawl
 * is the archive's round 0, whose URLs hold nothing yet (nothing is read). Sitemap files and
 * URLs that got no response are not pages of the archive.
 */
export async function foldVisits(
  store: ArchiveStore,
  archive: string,
  crawlId: string,
  visits: readonly ArchivedVisit[],
  firstCrawl: boolean,
): Promise<number> {
  const pages = visits.filter((v) => v.page.status !== null && v.page.sitemap === undefined);
  if (pages.length === 0) return 0;
  const held = firstCrawl
    ? new Map<string, ArchiveEntry>()
    : await store.entries(
        archive,
        pages.map((v) => v.page.url),
      );
  const entries: ArchiveEntry[] = [];
  for (const visit of pages) {
    const before = stateBefore(held.get(visit.page.url), crawlId);
    const extras: Parameters<typeof foldVisit>[2] = {};
    if (visit.links !== undefined) extras.links = visit.links;
    const warc = visit.page.warc;
    if (warc !== undefined) extras.ref = { file: warc.key, offset: warc.offset, length: warc.length };
    if (visit.payloadDigest !== undefined) extras.payloadDigest = visit.payloadDigest;
    const page = foldVisit(before, visitedRecord(visit.page), extras);
    if (page === undefined) continue;
    entries.push(before === undefined ? { page, round: crawlId } : { page, round: crawlId, before });
  }
  await store.put(archive, entries);
  return entries.length;
}

/** The revisit look-up of a round: each URL as the archive held it before the round visited it. */
export function archiveRevisits(store: ArchiveStore, archive: string, crawlId: string): RevisitLookup {
  return {
    async previous(url: string): Promise<PreviousFetch | undefined> {
      const entry = (await store.entries(archive, [url])).get(url);
      const before = stateBefore(entry, crawlId);
      return before === undefined ? undefined : previousFetch(before);
    },
  };
}

function visitedRecord(item: PageItem): VisitedRecord {
  const record: VisitedRecord = {
    url: item.url,
    depth: item.depth,
    status: item.status,
    fetchedAt: item.fetchedAt ?? null,
    contentHash: item.contentHash ?? null,
    contentType: item.contentType ?? null,
    title: item.title ?? null,
  };
  if (item.etag !== undefined) record.etag = item.etag;
  if (item.lastModified !== undefined) record.lastModified = item.lastModified;
  if (item.change !== undefined) record.change = item.change;
  if (item.lastmod !== undefined) record.lastmod = item.lastmod;
  return record;
}
