import { hash } from 'node:crypto';

/** Exact content fingerprint for the content-seen test: SHA-256 of the decoded body, lowercase hex. */
export function contentHash(body: Uint8Array): string {
  // one-shot: no Hash object per page (see fingerprint.ts)
  return hash('sha256', body, 'hex');
}
