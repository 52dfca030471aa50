import type { PageRecord } from '../types.ts';
import type { ExtractedValue } from './extract-fields.ts';

/** One line of dataset.jsonl: the page's URL, then each `extract` field by name. */
export type DatasetRow = { url: string } & Record<string, ExtractedValue>;

/**
 * The dataset row of a page, or undefined when nothing was extracted from it (not HTML, not a
 * 2xx answer, or a crawl without `extract` fields). `url` comes first and is always the page's
 * (the configuration schema refuses a field named `url`).
 */
export function datasetRow(record: Pick<PageRecord, 'url' | 'extracted'>): DatasetRow | undefined {
  if (record.extracted === undefined) return undefined;
  const row: DatasetRow = { url: record.url, ...record.extracted };
  row.url = record.url;
  return row;
}
