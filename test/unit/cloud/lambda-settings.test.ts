/**
 * The Lambda settings code and CDK share (functions/cloud/lambda-settings.ts): the bounds between them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BODY_THRESHOLD_BYTES, STEP_COST_PER_BYTE } from '../../../functions/adapters/http/body-budget.ts';
import { readFunctionMemoryMb } from '../../../functions/cloud/env.ts';
import {
  BODY_COST_PER_BYTE,
  CLOUD_FETCH_BUDGET_MS,
  DEFAULT_HOSTS_PER_INVOCATION,
  FIFO_DEDUPLICATION_WINDOW_SECONDS,
  FRONTIER_GROUP_MAX,
  FRONTIER_RETENTION_DAYS,
  FRONTIER_VISIBILITY_SECONDS,
  LAMBDA_MAX_MEMORY_MB,
  LAMBDA_SETTINGS,
  MAX_HOSTS_PER_INVOCATION,
  SEEN_LOG_FINGERPRINTS,
  WORKER_MEMORY_MODEL,
  WRITE_RESERVE_MS,
  workerBodyBudgetMb,
  workerMemoryMb,
} from '../../../functions/cloud/lambda-settings.ts';
import { workerBodyBudget } from '../../../functions/cloud/lambdas/aws-wiring.ts';
import { CONTEXT_MEMORY_BYTES } from '../../../functions/cloud/worker/container-state.ts';
import { CONFIG_LIMITS, parseCrawlConfig } from '../../../functions/core/config.ts';

describe('Lambda settings', () => {
  it('the last URL of a full FIFO group is fetched before SQS deletes it, at the largest gap a crawl may set', () => {
    // It waits behind the group's other messages, one host gap each; a day of margin for deferrals.
    const dayMs = 86_400_000;
    const waitMs = (FRONTIER_GROUP_MAX - 1) * CONFIG_LIMITS.waitMs;
    assert.ok(
      waitMs <= (FRONTIER_RETENTION_DAYS - 1) * dayMs,
      `${waitMs / dayMs} days of waiting against ${FRONTIER_RETENTION_DAYS} of retention`,
    );
  });

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

  it("the worker's memory holds the runtime, the crawl contexts, its hosts' pages and the body budget's large bodies", () => {
    const MiB = 1024 * 1024;
    const parsed = parseCrawlConfig({ seeds: ['https://example.com/'] });
    assert.ok(parsed.ok);
    // A large body costs BODY_COST_PER_BYTE x its cap until its step ends (bench:worker-memory).
    assert.ok(
      WORKER_MEMORY_MODEL.largeBodyMb * MiB >= BODY_COST_PER_BYTE * parsed.config.maxBodyBytes,
      'a large body at the default cap fits its share',
    );
    // A host's page below the threshold costs at most BODY_COST_PER_BYTE x the threshold.
    assert.ok(WORKER_MEMORY_MODEL.hostMb * MiB >= BODY_COST_PER_BYTE * BODY_THRESHOLD_BYTES);
    assert.equal(
      CONTEXT_MEMORY_BYTES,
      WORKER_MEMORY_MODEL.contextsMb * MiB,
      'the contexts get what the model gives them',
    );
    const { runtimeMb, contextsMb, seenLogsMb, workingSetMb, hostMb, largeBodyMb, largeBodies } =
      WORKER_MEMORY_MODEL;
    // The URL-seen logs a container keeps fit their part, at the 72.5 bytes a fingerprint measured.
    assert.ok(SEEN_LOG_FINGERPRINTS * 72.5 <= seenLogsMb * MiB);
    for (const hosts of [1, DEFAULT_HOSTS_PER_INVOCATION, 40, MAX_HOSTS_PER_INVOCATION]) {
      const memory = workerMemoryMb(hosts);
      const needed =
        runtimeMb + contextsMb + seenLogsMb + workingSetMb + hosts * hostMb + largeBodies * largeBodyMb;
      assert.ok(memory >= needed, `${hosts} hosts fit ${memory} MB`);
      assert.ok(memory - 64 < needed, `${hosts} hosts: no more than a step spare`);
      assert.equal(memory % 64, 0);
      // The budget the worker gives its fetcher is what the model set aside, or more.
      assert.ok(workerBodyBudgetMb(memory, hosts) >= largeBodies * largeBodyMb);
    }
    assert.equal(LAMBDA_SETTINGS.frontierWorker.memoryMb, workerMemoryMb(DEFAULT_HOSTS_PER_INVOCATION));
    assert.equal(DEFAULT_HOSTS_PER_INVOCATION, 20, 'twice the hosts of the 11-MiB-per-host model');
    assert.equal(workerMemoryMb(DEFAULT_HOSTS_PER_INVOCATION), 320, 'in the same memory');
    assert.equal(workerMemoryMb(40), 384);
    assert.equal(workerBodyBudgetMb(320, 20), 58);
    assert.equal(workerBodyBudgetMb(256, 20), largeBodyMb, 'at least one large body, whatever the memory');
    assert.ok(
      workerMemoryMb(MAX_HOSTS_PER_INVOCATION) <= LAMBDA_MAX_MEMORY_MB,
      "the most hosts fit Lambda's largest size",
    );
  });

  it("sizes the worker's body budget from the memory Lambda gives it: more memory, more large bodies at once", () => {
    const MiB = 1024 * 1024;
    const memory = readFunctionMemoryMb({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '320' });
    assert.equal(memory, 320);
    assert.equal(readFunctionMemoryMb({}), undefined, 'outside Lambda');
    assert.throws(
      () => readFunctionMemoryMb({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: 'lots' }),
      /AWS_LAMBDA_FUNCTION_MEMORY_SIZE="lots": expected an integer from 1 to 10240/,
    );
    const budget = workerBodyBudget(320, DEFAULT_HOSTS_PER_INVOCATION);
    assert.equal(budget.budgetBytes, 58 * MiB);
    assert.equal(budget.slotsFor(10 * MiB), 1, 'one 10 MiB page at a time in the default 320 MB');
    assert.equal(workerBodyBudget(448, DEFAULT_HOSTS_PER_INVOCATION).slotsFor(10 * MiB), 3);
    assert.equal(BODY_COST_PER_BYTE, STEP_COST_PER_BYTE, "the model charges what the fetcher's budget does");
  });
});
