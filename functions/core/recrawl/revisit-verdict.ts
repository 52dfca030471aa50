/**
 * What a revisit found, from the response and what the archive holds of the page's last fetch.
 * A 304 is never a change: the server said so. A server that ignores the validators (or has none)
 * answers 200 again, and the content hash tells whether the page changed.
 */
import type { OutLink } from '../types.ts';
import type { Validators } from './validators.ts';

/** The verdict of one revisit, recorded as `change` on the page record. */
export type RevisitVerdict =
  /** 304 Not Modified: the archive's copy is current; a `server-not-modified` revisit record. */
  | 'not-modified'
  /** 2xx with the same payload as the archive's copy: an `identical-payload-digest` revisit record. */
  | 'unchanged'
  /** Another payload, status or redirect: stored in full. */
  | 'changed'
  /** 404 or 410 now: the page was removed. */
  | 'gone';

/** What the archive holds of a page's last fetch: all a revisit of it needs (both runtimes). */
export interface PreviousFetch {
  url: string;
  status: number;
  /** Validators of the last response that carried the page (a 304 keeps the earlier ones unless it sends new). */
  validators: Validators;
  /** SHA-256 (hex) of the last full copy's body; null when it had none. */
  contentHash: string | null;
  contentType: string | null;
  title: string | null;
  /** The last full copy in the archive: its WARC-Date and payload digest, which a revisit record refers to. */
  copy?: { date: string; payloadDigest?: string };
  /** Out-links of the last full fetch: a 304 follows them again (an unchanged page links what it linked). */
  links?: OutLink[];
}

const GONE = new Set([404, 410]);

/** The verdict of a revisit answered with `status` and a body hashing to `contentHash`. */
export function judgeRevisit(
  previous: Pick<PreviousFetch, 'status' | 'contentHash'>,
  status: number,
  contentHash: string | null,
): RevisitVerdict {
  if (status === 304) return 'not-modified';
  if (GONE.has(status)) return 'gone';
  if (status === previous.status && contentHash !== null && contentHash === previous.contentHash) {
    return 'unchanged';
  }
  return 'changed';
}

/** Whether a verdict means the page's content changed since the last visit (what the estimator counts). */
export function isChange(verdict: RevisitVerdict): boolean {
  return verdict === 'changed' || verdict === 'gone';
}
