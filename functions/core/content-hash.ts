import { createHash } from 'node:crypto';

/** Exact content fingerprint for the content-seen test: SHA-256 of the decoded body, lowercase hex. */
export function contentHash(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}
