/**
 * How many page records a crawl's archive holds, from a listing of its index objects alone: the
 * archiver puts each object's line count in its key (warc-object.ts `indexKey`). One LIST per
 * 1,000 index objects (an archiver batch writes one per crawl, up to 5,000 pages), so the
 * scheduler asks only when a crawl's counters say it has nothing left.
 */
import { indexPages, indexPrefix } from '../messages/warc-object.ts';
import type { ObjectReader } from '../ports/cloud-ports.ts';

/** Keys per LIST (S3's most). */
const LIST_CHUNK = 1000;

/**
 * Sums the page counts in the crawl's index keys. Undefined when a key carries no count (written
 * by an archiver before the count): the total is then unknown, not short.
 */
export async function archivedPages(
  reader: Pick<ObjectReader, 'keys'>,
  crawlId: string,
): Promise<number | undefined> {
  const prefix = indexPrefix(crawlId);
  let total = 0;
  let after: string | undefined;
  for (;;) {
    const keys = await reader.keys(prefix, after, LIST_CHUNK);
    for (const key of keys) {
      const pages = indexPages(key);
      if (pages === undefined) return undefined;
      total += pages;
    }
    if (keys.length < LIST_CHUNK) return total;
    after = keys.at(-1);
  }
}
