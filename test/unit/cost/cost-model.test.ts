/**
 * The cost model of the cloud benchmark (localstack/cost-model.ts, issue 10): Lambda billed
 * duration from wall and CPU time at the memory's vCPU share plus INIT, DynamoDB item sizes for
 * storage, and a run's metrics priced with it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CloudLocalMetrics } from '../../../localstack/cloud-local.ts';
import {
  costBreakdown,
  cpuShare,
  dynamoItemBytes,
  LIST_PRICES,
  modelLambda,
} from '../../../localstack/cost-model.ts';
import type { FunctionStats } from '../../../localstack/local-lambda.ts';

const noInit = { coldStarts: 0, initMs: 0 };

describe('Lambda billing model', () => {
  test('the vCPU share is memory / 1,769 MB, at most one vCPU', () => {
    assert.ok(Math.abs(cpuShare(256) - 0.1447) < 0.0001);
    assert.equal(cpuShare(1769), 1);
    assert.equal(cpuShare(4096), 1);
  });

  test('an invocation is billed the longer of its wall time and its CPU time at the share', () => {
    // 256 MB: 10 ms of CPU take 69.1 ms at 0.145 vCPU, under the 100 ms wall time.
    assert.equal(modelLambda([{ durationMs: 100, cpuMs: 10 }], 256, noInit).billedMs, 100);
    // 30 ms of CPU take 207.3 ms there: billed 208 (rounded up to 1 ms).
    const cpuBound = modelLambda([{ durationMs: 100, cpuMs: 30 }], 256, noInit);
    assert.equal(cpuBound.billedMs, 208);
    assert.equal(cpuBound.wallBilledMs, 100);
    // The additive ceiling: the wall plus the CPU time's stretch (30 x (6.91 - 1) = 177.3).
    assert.equal(cpuBound.ceilingMs, 278);
    // At 1,769 MB the CPU is not scaled; an unmeasured CPU (a killed container) bills its wall.
    assert.equal(modelLambda([{ durationMs: 100, cpuMs: 90 }], 1769, noInit).billedMs, 100);
    assert.equal(modelLambda([{ durationMs: 0.2 }], 256, noInit).billedMs, 1);
  });

  test('a slower core stretches the CPU time by the factor', () => {
    const slower = modelLambda([{ durationMs: 100, cpuMs: 30 }], 1769, noInit, { cpuSpeedFactor: 4 });
    assert.equal(slower.billedMs, 120);
  });

  test('INIT is billed with the invocations, in GB-seconds at the memory size', () => {
    const line = modelLambda(
      [
        { durationMs: 500, cpuMs: 20 },
        { durationMs: 300, cpuMs: 5 },
      ],
      512,
      { coldStarts: 1, initMs: 199.5 },
    );
    assert.equal(line.invocations, 2);
    assert.equal(line.initMs, 200);
    assert.equal(line.billedMs, 800);
    assert.ok(Math.abs(line.gbSeconds - (1000 / 1000) * 0.5) < 1e-12);
  });
});

describe('DynamoDB item size', () => {
  test('names plus values plus 100 bytes per item', () => {
    // pk: 2 + 3; n: 1 + (5 digits -> 3 + 1); b: 1 + 4; t: 1 + 1
    const item = { pk: { S: 'abc' }, n: { N: '12345' }, b: { B: new Uint8Array(4) }, t: { BOOL: true } };
    assert.equal(dynamoItemBytes(item), 100 + 5 + 5 + 5 + 2);
    // m: 1 + (3 + 1 + 1 + 2); l: 1 + (3 + (1 + 1) + (1 + 2))
    const nested = { m: { M: { a: { S: 'xy' } } }, l: { L: [{ S: 'x' }, { N: '10' }] } };
    assert.equal(dynamoItemBytes(nested), 100 + 8 + 9);
    assert.equal(dynamoItemBytes({ s: { S: 'été' } }), 100 + 1 + 5);
    // 1,000,000 has one significant digit; 1764259200 (an expiresAt) has eight.
    assert.equal(dynamoItemBytes({ n: { N: '1000000' } }), 100 + 1 + 2);
    assert.equal(dynamoItemBytes({ n: { N: '1764259200' } }), 100 + 1 + 5);
  });
});

describe('costBreakdown', () => {
  const fn = (records: FunctionStats['perInvocation'], init: number): FunctionStats => ({
    invocations: records.length,
    errors: 0,
    timeouts: 0,
    throttles: 0,
    billedMs: 0,
    gbSeconds: 0,
    memoryMb: 256,
    maxConcurrent: 1,
    cpuMs: 0,
    peakHeapMb: 0,
    coldStarts: 1,
    initMs: init,
    containers: 1,
    peakContainers: 1,
    killedContainers: 0,
    chaosKills: [],
    perInvocation: records,
  });
  const metrics: CloudLocalMetrics = {
    endpoint: {
      totalRequests: 3,
      requests: { sqs: {}, dynamodb: { PutItem: 1 }, s3: { PutObject: 2 }, other: {} },
      dynamodb: {
        writeRequestUnits: 4,
        readRequestUnits: 8,
        failedConditionalWrites: 0,
        byTable: { T: { writeRequestUnits: 4, readRequestUnits: 8 } },
        byFamily: {},
        hotKeys: [],
      },
      s3: { bytesUploaded: 0 },
      sqs: {
        billedRequests: 3,
        byQueue: { 'q.fifo': { ReceiveMessage: { requests: 2, billed: 3, empty: 1 } } },
      },
    },
    functions: {
      FrontierWorker: fn(
        [{ kind: 'ok', durationMs: 100, billedMs: 100, cpuMs: 30, coldStart: true, initMs: 1000 }],
        1000,
      ),
    },
    eventSources: {},
    schedules: {},
  };

  test('prices requests at list prices and Lambda under the model, INIT included', () => {
    const costs = costBreakdown(metrics);
    const p = LIST_PRICES;
    const worker = costs.lambda[0]!;
    assert.equal(worker.billedMs, 208);
    assert.equal(worker.initMs, 1000);
    assert.ok(Math.abs(costs.dollars.lambdaCompute - 1.208 * 0.25 * p.lambdaArmGbSecond) < 1e-15);
    assert.equal(costs.dollars.dynamoWrites, 4 * p.dynamoWriteUnit);
    assert.equal(costs.dollars.s3, 2 * p.s3PutOrList);
    assert.equal(costs.dollars.sqs, 3 * p.sqsFifoRequest);
    assert.equal(costs.dollars.sqsIdle, 1 * p.sqsFifoRequest);
    assert.equal(p.dynamoWriteUnit, 0.625e-6, 'on-demand WRU price since November 2024');
    assert.equal(p.dynamoReadUnit, 0.125e-6);
  });
});
