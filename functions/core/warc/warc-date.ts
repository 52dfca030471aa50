import { WarcFormatError } from './warc-format-error.ts';

const ISO_SECONDS = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?Z$/;

/**
 * WARC-Date for an ISO 8601 time: UTC, seconds precision (`2026-11-22T10:00:00Z`). WARC 1.1 also
 * allows fractions, but seconds are what every reader (and the 14-digit CDX timestamp) expects.
 * Throws `WarcFormatError('INVALID_DATE')` for a string that is not a date.
 */
export function warcDate(iso: string): string {
  const match = ISO_SECONDS.exec(iso);
  if (match) return `${match[1]}Z`;
  const time = Date.parse(iso);
  if (Number.isNaN(time)) throw new WarcFormatError('INVALID_DATE', `not a date: ${JSON.stringify(iso)}`);
  return `${new Date(time).toISOString().slice(0, 19)}Z`;
}

/** The 14-digit `YYYYMMDDhhmmss` timestamp of CDX(J) indexes and WARC file names, from a WARC-Date. */
export function cdxTimestamp(date: string): string {
  return date.replace(/[-:TZ]/g, '').slice(0, 14);
}
