/**
 * The rule both runtimes apply to a crawl step that threw (judgeStepFailure), with each mode's
 * numbers: the embedded crawler's retryBackoffMs and maxRetries, the cloud worker's 1 s doubling
 * to 60 s and errorAttempts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { doublingBackoffMs } from '../../../functions/core/scheduling/politeness.ts';
import { judgeStepFailure, type StepRetryPolicy } from '../../../functions/core/step/error-policy.ts';

const cloud: StepRetryPolicy = { limit: 2, waitMs: (n) => doublingBackoffMs(1000, 60_000, n) };

class PermanentError extends Error {
  readonly retryable = false;
}

describe('judgeStepFailure', () => {
  it('retries a transient failure with the policy wait until the limit, then gives up', () => {
    const error = new Error('socket hang up');
    assert.deepEqual(
      [0, 1, 2].map((made) => {
        const verdict = judgeStepFailure(error, made, cloud);
        return verdict.kind === 'retry' ? [verdict.retry, verdict.waitMs] : verdict.kind;
      }),
      [[1, 1000], [2, 2000], 'give-up'],
    );
  });

  it('gives up at once on a failure that says no retry can help, keeping its message', () => {
    const verdict = judgeStepFailure(new PermanentError('bad WARC'), 0, cloud);
    assert.equal(verdict.kind, 'give-up');
    assert.equal(verdict.error.message, 'Error: bad WARC');
  });

  it('doublingBackoffMs doubles from the base and stops at the cap', () => {
    assert.deepEqual(
      [1, 2, 3, 7, 8].map((n) => doublingBackoffMs(1000, 60_000, n)),
      [1000, 2000, 4000, 60_000, 60_000],
    );
  });
});
