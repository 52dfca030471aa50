/**
 * CSV per RFC 4180: records end in CRLF; a field holding a comma, a double quote, CR or LF is
 * enclosed in double quotes, with each double quote inside doubled; other fields are written as
 * they are. Values that are not text are written as JSON (`true`, `3.5`, `["a","b"]`), so a
 * list of extracted values stays one cell and can be parsed back; null and undefined are empty.
 * Every cell follows the crawled-text policy of core/text/safe-text.ts: control and bidi
 * characters escaped visibly (JSON cells: as \uXXXX, so they still parse), and a cell that begins
 * like a formula prefixed with ' unless `rawFormulas`.
 */
import { type CsvCellPolicy, safeCsvText, safeJson } from '../text/safe-text.ts';

const NEEDS_QUOTES = /[",\r\n]/;

/** One field, made safe under `policy` and quoted when RFC 4180 requires it. */
export function csvField(value: unknown, policy: CsvCellPolicy = {}): string {
  const text =
    value === null || value === undefined
      ? ''
      : typeof value === 'string'
        ? safeCsvText(value, policy)
        : safeJson(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record: the fields joined by commas, ending in CRLF. */
export function csvRecord(values: readonly unknown[], policy: CsvCellPolicy = {}): string {
  return `${values.map((value) => csvField(value, policy)).join(',')}\r\n`;
}
