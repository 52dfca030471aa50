/**
 * The Lambda settings code and CDK share (functions/cloud/lambda-settings.ts): the bounds between them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CLOUD_FETCH_BUDGET_MS,
  DEFAULT_HOSTS_PER_INVOCATION,
  FIFO_DEDUPLICATION_WINDOW_SECONDS,
  FRONTIER_VISIBILITY_SECONDS,
  LAMBDA_MAX_MEMORY_MB,
  LAMBDA_SETTINGS,
  MAX_HOSTS_PER_INVOCATION,
  WORKER_MEMORY_MODEL,
  WRITE_RESERVE_MS,
  workerMemoryMb,
} from '../../../functions/cloud/lambda-settings.ts';
import { CONTEXT_MEMORY_BYTES } from '../../../functions/cloud/worker/container-state.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';

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

  it("the worker's memory holds the runtime, the crawl contexts and one body per host in flight", () => {
    const MiB = 1024 * 1024;
    const parsed = parseCrawlConfig({ seeds: ['https://example.com/'] });
    assert.ok(parsed.ok);
    // A body costs its length plus at most one 1 MiB block (byte-blocks.ts, docs/safety.md).
    assert.ok(
      WORKER_MEMORY_MODEL.hostMb * MiB >= parsed.config.maxBodyBytes + MiB,
      'a host holds a body at the default cap',
    );
    assert.equal(
      CONTEXT_MEMORY_BYTES,
      WORKER_MEMORY_MODEL.contextsMb * MiB,
      'the contexts get what the model gives them',
    );
    const { runtimeMb, contextsMb, hostMb } = WORKER_MEMORY_MODEL;
    for (const hosts of [1, DEFAULT_HOSTS_PER_INVOCATION, 40, MAX_HOSTS_PER_INVOCATION]) {
      const memory = workerMemoryMb(hosts);
      assert.ok(memory >= runtimeMb + contextsMb + hosts * hostMb, `${hosts} hosts fit ${memory} MB`);
      assert.ok(
        memory - 64 < runtimeMb + contextsMb + hosts * hostMb,
        `${hosts} hosts: no more than a step spare`,
      );
      assert.equal(memory % 64, 0);
    }
    assert.equal(LAMBDA_SETTINGS.frontierWorker.memoryMb, workerMemoryMb(DEFAULT_HOSTS_PER_INVOCATION));
    assert.equal(workerMemoryMb(DEFAULT_HOSTS_PER_INVOCATION), 320);
    assert.equal(workerMemoryMb(40), 704);
    assert.ok(
      workerMemoryMb(MAX_HOSTS_PER_INVOCATION) <= LAMBDA_MAX_MEMORY_MB,
      "the most hosts fit Lambda's largest size",
    );
  });
});
