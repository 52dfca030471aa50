/**
 * What a revisit found, from the response and what the archive holds of the page's last fetch.
 * A 304 is never a change: the server said so. A server that ignores the validators (or has none)
 * answers 200 again, and the content hash tells whether the page changed.
 */
import type { PreviousFetch, RevisitVerdict } from '../types.ts';

export type { PreviousFetch, RevisitVerdict };

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
