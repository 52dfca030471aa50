/**
 * The one rule both runtimes use to decide whether an error raised while crawling a URL is worth
 * another try. Errors say so themselves (`retryable`, set by the class that knows: a batch
 * DynamoDB did not finish is transient, a WARC file that cannot be parsed is not); AWS SDK errors
 * say it through their fault (`$fault: 'client'` is a request that will fail again the same way,
 * unless it is a throttle); anything else (a bug, an unknown failure) is tried again a few times,
 * because a transient cause cannot be ruled out.
 */

/** A typed error of this project: a stable code, and whether a retry can help. */
export interface ClassifiedError {
  readonly code: string;
  readonly retryable: boolean;
}

/** What the policy says about an error. */
export interface ErrorVerdict {
  retryable: boolean;
  /** A stable code for records and logs: the error's own, or its name. */
  code: string;
  message: string;
}

/** SDK error names that are client faults but transient (throttling). */
const THROTTLES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'SlowDown',
]);

/** Reads whether `error` is worth another try, and its code. */
export function judgeError(error: unknown): ErrorVerdict {
  if (!(error instanceof Error)) return { retryable: true, code: 'unknown', message: String(error) };
  const fields = error as Error & {
    code?: unknown;
    retryable?: unknown;
    $fault?: unknown;
    $retryable?: unknown;
  };
  const code = typeof fields.code === 'string' ? fields.code : error.name;
  const message = `${error.name}: ${error.message}`;
  if (typeof fields.retryable === 'boolean') return { retryable: fields.retryable, code, message };
  if (fields.$retryable !== undefined || THROTTLES.has(error.name)) return { retryable: true, code, message };
  if (fields.$fault === 'client') return { retryable: false, code, message };
  return { retryable: true, code, message };
}
