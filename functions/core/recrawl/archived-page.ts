/**
 * What an archive keeps per URL so that it can be recrawled, in both runtimes: the last
 * response's validators, the last full copy (its hash, WARC reference, date and payload digest),
 * the links of the last fetch, and the change history the revisit interval is estimated from.
 * `foldVisit` is the one rule that turns a fetch's record into the next state.
 */
import type { OutLink, PageRecord, StoredRef } from '../types.ts';
import type { ChangeHistory } from './change-rate.ts';
import { isChange, type PreviousFetch } from './revisit-verdict.ts';
import type { Validators } from './validators.ts';

/** The archive's state of one URL. */
export interface ArchivedPage {
  url: string;
  depth: number;
  /** Status of the last response (a 304 keeps the status of the copy it confirmed). */
  status: number;
  validators: Validators;
  contentHash: string | null;
  contentType: string | null;
  title: string | null;
  /** The last full copy: where it is, its WARC-Date and payload digest. */
  copy?: { date: string; payloadDigest?: string; ref?: StoredRef };
  links?: OutLink[];
  history: ChangeHistory;
  /** 404 or 410 at the last visit: recorded as gone, not revisited. */
  gone?: boolean;
}

/** What a fetch adds besides its record: its links and where its capture went, as the archive names them. */
export interface VisitExtras {
  links?: OutLink[];
  /** The capture's WARC reference with `file` relative to the archive, and its payload digest. */
  ref?: StoredRef;
  payloadDigest?: string;
}

/** What `foldVisit` reads of a fetch's page record (the cloud folds its index lines). */
export type VisitedRecord = Pick<
  PageRecord,
  | 'url'
  | 'depth'
  | 'status'
  | 'fetchedAt'
  | 'contentHash'
  | 'contentType'
  | 'title'
  | 'etag'
  | 'lastModified'
  | 'change'
  | 'lastmod'
>;

const GONE = new Set([404, 410]);

/**
 * The URL's state after the fetch `record` (undefined when the fetch got no response and there
 * is no earlier state). A 304 or an identical payload keeps the last copy and its links; every
 * other response becomes the copy. A revisit counts in the history; a change only when the
 * verdict says so (never a 304).
 */
export function foldVisit(
  before: ArchivedPage | undefined,
  record: VisitedRecord,
  extras: VisitExtras = {},
): ArchivedPage | undefined {
  if (record.status === null || record.fetchedAt === null) return before;
  const at = Date.parse(record.fetchedAt);
  const history: ChangeHistory =
    before === undefined
      ? { visits: 0, changes: 0, firstVisitAt: at, lastVisitAt: at }
      : {
          ...before.history,
          visits: before.history.visits + 1,
          changes: before.history.changes + (record.change !== undefined && isChange(record.change) ? 1 : 0),
          lastVisitAt: at,
        };
  const lastmod = record.lastmod === undefined ? Number.NaN : Date.parse(record.lastmod);
  if (!Number.isNaN(lastmod)) history.lastmod = lastmod;
  const validators: Validators = {};
  if (record.etag !== undefined) validators.etag = record.etag;
  if (record.lastModified !== undefined) validators.lastModified = record.lastModified;
  const kept = before !== undefined && (record.change === 'not-modified' || record.change === 'unchanged');
  const page: ArchivedPage = {
    url: record.url,
    depth: before === undefined ? record.depth : Math.min(before.depth, record.depth),
    status: kept ? before.status : record.status,
    validators,
    contentHash: kept ? before.contentHash : record.contentHash,
    contentType: kept ? before.contentType : record.contentType,
    title: kept ? before.title : record.title,
    history,
  };
  if (kept) {
    if (before.copy !== undefined) page.copy = before.copy;
    const links = extras.links ?? before.links;
    if (links !== undefined) page.links = links;
  } else {
    // No capture stored (--no-warc): no copy a revisit record could refer to.
    if (extras.ref !== undefined) {
      page.copy = { date: record.fetchedAt, ref: extras.ref };
      if (extras.payloadDigest !== undefined) page.copy.payloadDigest = extras.payloadDigest;
    }
    if (extras.links !== undefined) page.links = extras.links;
  }
  if (GONE.has(record.status)) page.gone = true;
  return page;
}

/**
 * The page's state with a sitemap `<lastmod>` read for it (a hint for the next plan), or the
 * state unchanged when the date is not later than the one it holds or is not a date.
 */
export function withLastmod(page: ArchivedPage, lastmod: string): ArchivedPage {
  const time = Date.parse(lastmod);
  if (Number.isNaN(time) || (page.history.lastmod !== undefined && page.history.lastmod >= time)) return page;
  return { ...page, history: { ...page.history, lastmod: time } };
}

/** What a revisit of the page needs from its state. */
export function previousFetch(page: ArchivedPage): PreviousFetch {
  const previous: PreviousFetch = {
    url: page.url,
    status: page.status,
    validators: page.validators,
    contentHash: page.contentHash,
    contentType: page.contentType,
    title: page.title,
  };
  if (page.copy !== undefined) {
    previous.copy = { date: page.copy.date };
    if (page.copy.payloadDigest !== undefined) previous.copy.payloadDigest = page.copy.payloadDigest;
  }
  if (page.links !== undefined) previous.links = page.links;
  return previous;
}
