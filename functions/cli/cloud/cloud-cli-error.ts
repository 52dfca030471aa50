/**
 * What went wrong talking to a deployed crawler, said so a user can act on it. Each failure has a
 * stable code and the exit code it ends the command with (as for `crawl`: 1 for what the user
 * must change in how they call it, 2 for what failed on the way).
 */

/** Stable codes of {@link CloudCliError}. */
export type CloudCliErrorCode =
  /** No AWS credentials found by the default chain. */
  | 'NO_CREDENTIALS'
  /** Requests were signed for another region than the function's. */
  | 'WRONG_REGION'
  /** The function URL refused the caller (403), or the local stand-in refused the token (401). */
  | 'ACCESS_DENIED'
  /** The API's own role may not make an AWS call its code needs (a 500 naming the action). */
  | 'API_ACCESS_DENIED'
  /** No such crawl (404). */
  | 'NOT_FOUND'
  /** The API refused the request (400): its problems are listed. */
  | 'INVALID'
  /** Not now (409): e.g. a recrawl while the crawl or its last round still runs. */
  | 'CONFLICT'
  /** Nothing answered at the URL (connection refused, name not found, timeout). */
  | 'UNREACHABLE'
  /** Where the API is could not be found out (no --api, no stack output, ...). */
  | 'NO_API'
  /** The API or S3 answered with an error the user cannot fix from here. */
  | 'SERVER'
  /**
   * The API or S3 answered outside the bounds a download keeps (a name that would write outside
   * --out, a body longer than listed, an answer too large, a listing that loops): nothing is
   * written outside --out, and the run stops.
   */
  | 'BAD_ANSWER'
  /** The API or S3 stopped answering (no headers, or no body byte, for too long). */
  | 'TIMEOUT';

/** Codes that mean the command failed on the way (exit 2); the others are the user's to change (exit 1). */
const FAILED = new Set<CloudCliErrorCode>([
  'SERVER',
  'UNREACHABLE',
  'API_ACCESS_DENIED',
  'BAD_ANSWER',
  'TIMEOUT',
]);

/** A failure of a `crawlstack cloud` command, with the message to print. */
export class CloudCliError extends Error {
  readonly code: CloudCliErrorCode;
  /** The command's exit code: 1 usage, configuration, credentials; 2 failed. */
  readonly exitCode: 1 | 2;

  constructor(code: CloudCliErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CloudCliError';
    this.code = code;
    this.exitCode = FAILED.has(code) ? 2 : 1;
  }
}
