/**
 * What is worth another try, in both runtimes, in one place:
 *
 * - an error raised while crawling a URL ({@link judgeError}, decided by {@link judgeStepFailure}): errors say so themselves
 *   (`retryable`, set by the class that knows: a batch DynamoDB did not finish is transient, a
 *   WARC file that cannot be parsed is not); AWS SDK errors say it through their fault
 *   (`$fault: 'client'` is a request that will fail again the same way, unless it is a throttle);
 *   anything else (a bug, an unknown failure) is tried again a few times, because a transient
 *   cause cannot be ruled out. The cloud worker fails the message (SQS delivers it again), the
 *   embedded crawler re-queues the task, both up to a limit, then record the URL as failed;
 * - a fetch that got no response ({@link RETRIED_FETCH_ERRORS}): tried again within the crawl,
 *   up to `maxRetries` (crawlPage);
 * - a URL that finished failed ({@link TRANSIENT_REASONS}): a network or server failure that a
 *   later run may not meet, so running a crawl folder again queues it again (embedded).
 */
import type { FetchErrorCode } from '../ports.ts';
import type { FinishReason } from './page-record.ts';

/** Fetch failures another request soon after may not meet: crawlPage retries them, up to maxRetries. */
export const RETRIED_FETCH_ERRORS: ReadonlySet<FetchErrorCode> = new Set<FetchErrorCode>([
  'connect',
  'dns',
  'timeout-connect',
  'timeout-headers',
  'timeout-idle',
  'timeout-total',
]);

/**
 * Reasons a URL finished with that a later run may not meet: the retried fetch failures once
 * their retries ran out, a TLS or protocol failure (a server fixed since), and an unreachable
 * robots.txt.
 */
export const TRANSIENT_REASONS: readonly FinishReason[] = [
  ...RETRIED_FETCH_ERRORS,
  'tls',
  'protocol',
  'robots-unreachable',
];

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

/**
 * How a runtime retries a crawl step that threw (an adapter error, a bug): how many retries, and
 * the wait before each. The decision is {@link judgeStepFailure}'s; the numbers are each mode's:
 *
 * | mode | retries counted | limit | wait before retry n | at the limit |
 * | embedded | the task's `attempt` | `maxRetries` | `retryBackoffMs` (retryBaseDelayMs × 2^(n-1), ±25%) | record `internal-error` |
 * | cloud | this container's errors of the message | `errorAttempts` − 1 (and a receive left) | 1 s × 2^(n-1), at most 60 s | DLQ, record `dlq` |
 *
 * The embedded task goes back to its host's queue like a failed fetch, so it waits as one. The
 * cloud's message stays in flight and holds its host's FIFO group while it waits, and its wait is
 * a visibility timeout in whole seconds: short, and the DLQ shows the operator what failed.
 */
export interface StepRetryPolicy {
  /** Retries allowed; a failure after this many is final. */
  limit: number;
  /** Wait before retry `n` (1 = the first), ms. */
  waitMs(n: number): number;
}

/** What to do with a step that threw. */
export type StepFailureVerdict =
  /** Try again (retry number `retry`) after `waitMs`. */
  | { kind: 'retry'; retry: number; waitMs: number; error: ErrorVerdict }
  /** Final: the runtime records the URL as failed, with `error.message`. */
  | { kind: 'give-up'; error: ErrorVerdict };

/**
 * The one rule for a crawl step that threw, in both runtimes: another try, after the policy's
 * wait, while {@link judgeError} says one may help and fewer than `limit` retries were made;
 * else give up.
 */
export function judgeStepFailure(
  error: unknown,
  retriesMade: number,
  policy: StepRetryPolicy,
): StepFailureVerdict {
  const judged = judgeError(error);
  if (!judged.retryable || retriesMade >= policy.limit) return { kind: 'give-up', error: judged };
  const retry = retriesMade + 1;
  return { kind: 'retry', retry, waitMs: policy.waitMs(retry), error: judged };
}
