/** Stable codes for input that cannot be written as a WARC record. */
export type WarcFormatErrorCode = 'INVALID_DATE';

/**
 * A capture (or warcinfo input) that cannot be serialized. Permanent: retrying the same input
 * fails the same way, so the caller records the reason instead of retrying.
 */
export class WarcFormatError extends Error {
  readonly code: WarcFormatErrorCode;
  readonly retryable = false;

  constructor(code: WarcFormatErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WarcFormatError';
    this.code = code;
  }
}
