/**
 * `GET /crawls/{id}/dataset`: the crawl's dataset, the rows of the embedded mode's dataset.jsonl
 * (`datasetRow`: `{ url, <field>: value, ... }` for each page with `extract` fields), read from
 * the archive's index objects in the order of `GET /crawls/{id}/pages`, with the same cursor.
 * One answer is bounded three ways, so it fits a Lambda response (6 MB) and its time: `limit`
 * rows, about 4 MB of rows (a row is at most ~120 KB: functions/cloud/extract-budget.ts), and a
 * number of page records read (most pages of a crawl may have no row: not HTML, not 2xx). The
 * cursor says where the next answer starts.
 */
import { datasetRow } from '../../core/dataset/dataset-row.ts';
import type { ObjectReader } from '../ports/cloud-ports.ts';
import { listPages, type PageCursor } from './list-pages.ts';

/** Bytes of rows after which an answer stops (Lambda's buffered response is at most 6 MB). */
export const DATASET_ANSWER_BYTES = 4_000_000;
/** Page records read per answer at most, rows or not. */
export const DATASET_SCAN_RECORDS = 20_000;

/** One answer: rows as JSON Lines text, and where the next answer starts. */
export interface DatasetListing {
  /** The rows, one JSON object per line, each line ending in `\n`. */
  lines: string;
  rows: number;
  cursor?: PageCursor;
}

/**
 * Up to `limit` dataset rows after `cursor`. A URL the index holds twice (a capture archived
 * twice after a crash) gives one row per answer, as `/pages` lists it once.
 */
export async function listDataset(
  reader: ObjectReader,
  crawlId: string,
  limit: number,
  cursor?: PageCursor,
  bounds: { answerBytes?: number; scanRecords?: number } = {},
): Promise<DatasetListing> {
  const answerBytes = bounds.answerBytes ?? DATASET_ANSWER_BYTES;
  const lines: string[] = [];
  let bytes = 0;
  const listing = await listPages(
    reader,
    crawlId,
    bounds.scanRecords ?? DATASET_SCAN_RECORDS,
    cursor,
    (page) => {
      const row = datasetRow(page);
      if (row === undefined) return false;
      const line = `${JSON.stringify(row)}\n`;
      lines.push(line);
      bytes += Buffer.byteLength(line, 'utf8');
      return lines.length >= limit || bytes >= answerBytes;
    },
  );
  return {
    lines: lines.join(''),
    rows: lines.length,
    ...(listing.cursor === undefined ? {} : { cursor: listing.cursor }),
  };
}
