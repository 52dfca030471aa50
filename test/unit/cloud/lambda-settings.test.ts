/**
 * The Lambda settings code and CDK share (functions/cloud/lambda-settings.ts): the bounds between them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CLOUD_FETCH_BUDGET_MS,
  FIFO_DEDUPLICATION_WINDOW_SECONDS,
  FRONTIER_VISIBILITY_SECONDS,
  LAMBDA_SETTINGS,
  WRITE_RESERVE_MS,
} from '../../../functions/cloud/lambda-settings.ts';

describe('Lambda settings', () => {
  it('a crashed batch is redelivered and re-sends its links inside the FIFO deduplication window', () => {
    // First send: at most one timeout after the receive; the redelivered batch's send: at most
    // visibility + timeout after it. Both in one window, or the second copy is a new message.
    const worker = LAMBDA_SETTINGS.frontierWorker.timeoutSeconds;
    assert.ok(
      FRONTIER_VISIBILITY_SECONDS + worker < FIFO_DEDUPLICATION_WINDOW_SECONDS,
      `${FRONTIER_VISIBILITY_SECONDS} + ${worker} s must stay under ${FIFO_DEDUPLICATION_WINDOW_SECONDS} s`,
    );
    assert.ok(
      FRONTIER_VISIBILITY_SECONDS >= 5 * worker,
      'a retried invocation never sees its batch reappear',
    );
  });

  it('a fetch and the batch writes after it fit in one worker invocation', () => {
    assert.ok(
      CLOUD_FETCH_BUDGET_MS + WRITE_RESERVE_MS < LAMBDA_SETTINGS.frontierWorker.timeoutSeconds * 1000,
    );
  });
});
