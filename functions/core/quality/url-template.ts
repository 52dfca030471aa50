/**
 * URL templates: a URL with its variable parts replaced, so that the pages one pattern generates
 * (`/cal/2024/05/17`, `/cal/2024/05/18`, ...) can be counted together. Also finds the date a URL
 * names, for the calendar trap rule.
 */

/** A date named by a URL, as precise as the URL gives it. */
export interface UrlDate {
  year: number;
  /** 1-12 */
  month?: number;
  /** 1-31 */
  day?: number;
}

/** What the trap detectors need to know about a URL. */
export interface UrlShape {
  /** Lowercase host (with its port, if any); empty for a bare path. */
  host: string;
  /** Path and query template, see {@link urlTemplate}. */
  template: string;
  /** The first date found in the path, else in the query. */
  date?: UrlDate;
}

/** A bare 4-digit path segment is a year only after one of these (`/calendar/2024`, `/archive/1999`). */
const YEAR_CONTEXT = new Set([
  'archive',
  'archives',
  'cal',
  'calendar',
  'date',
  'dates',
  'day',
  'days',
  'event',
  'events',
  'month',
  'months',
  'year',
  'years',
]);
const YEAR_KEYS = new Set(['year', 'yr', 'yyyy']);
const MONTH_KEYS = new Set(['month', 'mon', 'mm']);
const DAY_KEYS = new Set(['day', 'dd']);

/**
 * Inside a segment or query value, in this order: a percent escape (left alone), a UUID, a date
 * with separators (YYYY-MM, YYYY-MM-DD, also with `_`, `.` or `/`), a compact date (YYYYMMDD,
 * years 1900-2199 only: other 8-digit numbers are ids), or a run of letters and digits.
 */
const SEGMENT_PARTS =
  /%[0-9A-Fa-f]{2}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|(?<![0-9])(\d{4})([-_./])(\d{1,2})(?:\2(\d{1,2}))?(?![0-9])|(?<![0-9])((?:19|20|21)\d{2})(\d{2})(\d{2})(?![0-9])|[A-Za-z0-9]+/g;
const FOUR_DIGITS = /^\d{4}$/;
const ONE_OR_TWO_DIGITS = /^\d{1,2}$/;
const DIGITS = /\d+/g;
const HEX = /^[0-9a-fA-F]+$/;
const HAS_DIGIT = /\d/;
const HAS_LETTER = /[A-Za-z]/;
const FOUR_DIGIT_RUN = /\d{4}/;

/**
 * The URL's path and query with their variable parts replaced:
 * - a date → `{date}`: `2024-05-17`, `2024_05`, `20240517` within a segment, the segments
 *   `2024/05/17` or `2024/05`, or a lone `2024` after a segment such as `calendar` or `archive`;
 * - a UUID, a hex run of 8+ characters with digits and letters, or a run of 16+ letters and
 *   digits with both → `{id}`;
 * - every other run of digits → `{n}`;
 * - query values dropped; keys kept, deduplicated and sorted: `?view=&year=`.
 *
 * `urlTemplate('https://example.com/cal/2024/05/17?view=day')` is `/cal/{date}?view=`. Takes a
 * canonical absolute URL or a bare path; the fragment is ignored.
 */
export function urlTemplate(url: string): string {
  return urlShape(url).template;
}

/** Host, template and date of a URL (see {@link urlTemplate}). */
export function urlShape(url: string): UrlShape {
  let host = '';
  let rest = url;
  const scheme = url.indexOf('://');
  if (scheme > 0) {
    const start = scheme + 3;
    let end = start;
    while (end < url.length) {
      const c = url.charCodeAt(end);
      if (c === 0x2f || c === 0x3f || c === 0x23) break; // / ? #
      end++;
    }
    host = url.slice(start, end).toLowerCase();
    rest = url.slice(end);
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? '' : rest.slice(q + 1);

  const found: { date?: UrlDate } = {};
  const template = pathTemplate(path === '' ? '/' : path, found) + queryTemplate(query, found);
  return found.date === undefined ? { host, template } : { host, template, date: found.date };
}

/** The lowercase host of a canonical URL, cheaply (no URL parsing); empty for a bare path. */
export function hostOf(url: string): string {
  const scheme = url.indexOf('://');
  if (scheme < 0) return '';
  const start = scheme + 3;
  let end = start;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 0x2f || c === 0x3f || c === 0x23) break;
    end++;
  }
  return url.slice(start, end).toLowerCase();
}

/** False when the URL cannot name a date (no run of 4 digits): most URLs, decided in one scan. */
export function mayNameDate(url: string): boolean {
  return FOUR_DIGIT_RUN.test(url);
}

function pathTemplate(path: string, found: { date?: UrlDate }): string {
  // most paths have no digits at all: nothing varies
  if (!HAS_DIGIT.test(path)) return path;
  const segments = path.split('/');
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (FOUR_DIGITS.test(segment)) {
      const year = Number(segment);
      const month = monthOf(segments[i + 1]);
      if (month !== undefined) {
        const day = dayOf(segments[i + 2]);
        const date: UrlDate = day === undefined ? { year, month } : { year, month, day };
        found.date ??= date;
        out.push('{date}');
        i += day === undefined ? 1 : 2;
        continue;
      }
      if (i > 0 && YEAR_CONTEXT.has(segments[i - 1]!.toLowerCase())) {
        found.date ??= { year };
        out.push('{date}');
        continue;
      }
    }
    out.push(segmentTemplate(segment, found));
  }
  return out.join('/');
}

function monthOf(segment: string | undefined): number | undefined {
  if (segment === undefined || !ONE_OR_TWO_DIGITS.test(segment)) return undefined;
  const month = Number(segment);
  return month >= 1 && month <= 12 ? month : undefined;
}

function dayOf(segment: string | undefined): number | undefined {
  if (segment === undefined || !ONE_OR_TWO_DIGITS.test(segment)) return undefined;
  const day = Number(segment);
  return day >= 1 && day <= 31 ? day : undefined;
}

function segmentTemplate(segment: string, found: { date?: UrlDate }): string {
  if (!HAS_DIGIT.test(segment)) return segment;
  return segment.replace(
    SEGMENT_PARTS,
    (
      part: string,
      y1?: string,
      _sep?: string,
      m1?: string,
      d1?: string,
      y2?: string,
      m2?: string,
      d2?: string,
    ) => {
      if (part.charCodeAt(0) === 0x25) return part; // %XX
      if (part.length === 36 && part.charCodeAt(8) === 0x2d) return '{id}';
      const date = y1 !== undefined ? dateOf(y1, m1, d1) : y2 !== undefined ? dateOf(y2, m2, d2) : undefined;
      if (date !== undefined) {
        found.date ??= date;
        return '{date}';
      }
      if (y1 !== undefined || y2 !== undefined) return part.replace(DIGITS, '{n}');
      return runTemplate(part);
    },
  );
}

function dateOf(y: string, m: string | undefined, d: string | undefined): UrlDate | undefined {
  const month = monthOf(m);
  if (month === undefined) return undefined;
  if (d === undefined) return { year: Number(y), month };
  const day = dayOf(d);
  return day === undefined ? undefined : { year: Number(y), month, day };
}

/** A run of letters and digits: an id, or words with numbers in them. */
function runTemplate(run: string): string {
  if (!HAS_DIGIT.test(run)) return run;
  if (HAS_LETTER.test(run) && ((run.length >= 8 && HEX.test(run)) || run.length >= 16)) return '{id}';
  return run.replace(DIGITS, '{n}');
}

function queryTemplate(query: string, found: { date?: UrlDate }): string {
  if (query === '') return '';
  const keys = new Set<string>();
  let year: number | undefined;
  let month: number | undefined;
  let day: number | undefined;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    keys.add(key);
    if (eq < 0 || found.date !== undefined) continue;
    const value = pair.slice(eq + 1);
    if (!HAS_DIGIT.test(value)) continue;
    const name = key.toLowerCase();
    if (YEAR_KEYS.has(name) && FOUR_DIGITS.test(value)) year = Number(value);
    else if (MONTH_KEYS.has(name)) month = monthOf(value) ?? month;
    else if (DAY_KEYS.has(name)) day = dayOf(value) ?? day;
    if (mayNameDate(value)) segmentTemplate(decodeValue(value), found);
  }
  if (found.date === undefined && year !== undefined) {
    found.date = month === undefined ? { year } : day === undefined ? { year, month } : { year, month, day };
  }
  return `?${[...keys].sort().join('=&')}=`;
}

function decodeValue(value: string): string {
  if (!value.includes('%') && !value.includes('+')) return value;
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
}
