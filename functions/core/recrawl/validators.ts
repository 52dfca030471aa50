/**
 * HTTP validators (RFC 9110 §8.8) of a response, and the conditional request that sends them
 * back. Servers compare If-Modified-Since as a string or parse only the IMF-fixdate form, so the
 * Last-Modified value is sent back exactly as received when it is an IMF-fixdate, rewritten into
 * one when it came in an obsolete form (RFC 850, asctime), and not sent when it is not a date.
 */
import type { HeaderList } from '../ports.ts';
import type { Validators } from '../types.ts';

export type { Validators };

const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/;
const OBSOLETE_DATE =
  /^(?:(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d\d-[A-Z][a-z]{2}-\d\d \d\d:\d\d:\d\d GMT|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})$/;

/** An HTTP date as RFC 9110's IMF-fixdate (the only form a sender may generate). */
export function imfFixdate(epochMs: number): string {
  // toUTCString is specified (ECMA-262 21.4.4.43) to produce exactly this form.
  return new Date(epochMs).toUTCString();
}

/**
 * The HTTP date `value` as an IMF-fixdate: unchanged when it is one, rewritten from the obsolete
 * forms a recipient must accept, undefined when it is not an HTTP date.
 */
export function httpDate(value: string): string | undefined {
  const trimmed = value.trim();
  if (IMF_FIXDATE.test(trimmed)) return Number.isNaN(Date.parse(trimmed)) ? undefined : trimmed;
  if (!OBSOLETE_DATE.test(trimmed)) return undefined;
  let time = Date.parse(trimmed.includes('GMT') ? trimmed : `${trimmed} GMT`);
  if (Number.isNaN(time)) return undefined;
  // RFC 850's two-digit year: more than 50 years in the future means the past century (§5.6.7).
  const twoDigit = /-(\d\d) /.exec(trimmed);
  if (twoDigit !== null) {
    const date = new Date(time);
    const year = 1900 + Number(twoDigit[1]);
    date.setUTCFullYear(year < 1970 ? year + 100 : year);
    time = date.getTime();
  }
  return imfFixdate(time);
}

/** The validators of a response (first ETag, first Last-Modified that is an HTTP date). */
export function validatorsOf(headers: HeaderList): Validators {
  const validators: Validators = {};
  for (const [name, value] of headers) {
    const key = name.toLowerCase();
    if (key === 'etag' && validators.etag === undefined && value.trim() !== '')
      validators.etag = value.trim();
    else if (key === 'last-modified' && validators.lastModified === undefined) {
      const date = httpDate(value);
      if (date !== undefined) validators.lastModified = date;
    }
  }
  return validators;
}

/** The conditional request headers for a page last answered with `validators` (none when it had none). */
export function conditionalHeaders(validators: Validators): Record<string, string> {
  const headers: Record<string, string> = {};
  if (validators.etag !== undefined) headers['If-None-Match'] = validators.etag;
  if (validators.lastModified !== undefined) headers['If-Modified-Since'] = validators.lastModified;
  return headers;
}
