import { PermanentError } from '../permanent-error.ts';

/** Stable codes for input that cannot be written as a WARC record. */
export type WarcFormatErrorCode = 'INVALID_DATE';

/**
 * A capture (or warcinfo input) that cannot be serialized. Permanent: retrying the same input
 * fails the same way, so the caller records the reason instead of retrying.
 */
export class WarcFormatError extends PermanentError<WarcFormatErrorCode> {
  override readonly name = 'WarcFormatError';
}
