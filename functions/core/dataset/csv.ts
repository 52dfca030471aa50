/**
 * CSV per RFC 4180: records end in CRLF; a field holding a comma, a double quote, CR or LF is
 * enclosed in double quotes, with each double quote inside doubled; other fields are written as
 * they are. Values that are not text are written as JSON (`true`, `3.5`, `["a","b"]`), so a
 * list of extracted values stays one cell and can be parsed back; null and undefined are empty.
 */

const NEEDS_QUOTES = /[",\r\n]/;

/** One field, quoted when RFC 4180 requires it. */
export function csvField(value: unknown): string {
  const text =
    value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record: the fields joined by commas, ending in CRLF. */
export function csvRecord(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
