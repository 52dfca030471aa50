/**
 * What a run on the stand-in would cost on AWS: the endpoint's counted requests and capacity units
 * and the local Lambda runtime's billed milliseconds, priced at us-east-1 list prices. Used by the
 * cost benchmark (bench/cloud-cost-bench.ts) and the pipeline tests' diagnostics.
 */
import type { CloudLocalMetrics } from './cloud-local.ts';

/**
 * us-east-1 list prices in USD (free tiers ignored, data transfer excluded), from the AWS pricing
 * pages as the author knows them (read 2025; this machine has no internet, so not re-checked on
 * the day of the run):
 * - DynamoDB on-demand, Standard table class (aws.amazon.com/dynamodb/pricing/on-demand): $0.625
 *   per million write request units and $0.125 per million read request units since the price cut
 *   of 1 November 2024; storage $0.25 per GB-month; continuous backups (PITR) $0.20 per GB-month.
 * - SQS (aws.amazon.com/sqs/pricing): $0.40 per million standard requests, $0.50 per million FIFO
 *   requests (each started 64 KiB of payload is a request).
 * - S3 Standard (aws.amazon.com/s3/pricing): PUT/COPY/POST/LIST $0.005 per 1,000, GET $0.0004
 *   per 1,000, storage $0.023 per GB-month (first 50 TB).
 * - Lambda (aws.amazon.com/lambda/pricing): $0.20 per million requests; arm64 $0.0000133334 per
 *   GB-second (first 7.5 billion GB-s a month); the INIT phase is billed like the handler's time
 *   since 1 August 2025. CPU: 1 vCPU at 1,769 MB, proportional below.
 * - CloudWatch (aws.amazon.com/cloudwatch/pricing): Logs ingestion $0.50 per GB (Standard log
 *   class), log storage $0.03 per GB-month; a standard-resolution metric alarm $0.10 per month.
 * - EventBridge: events of scheduled rules are free.
 */
export const LIST_PRICES = {
  /** As of: when these prices were read. */
  asOf: '2025 (DynamoDB since 2024-11-01, Lambda INIT billing since 2025-08-01)',
  /** DynamoDB on-demand, per write request unit (1 KB) and read request unit (4 KB strong). */
  dynamoWriteUnit: 0.625e-6,
  dynamoReadUnit: 0.125e-6,
  /** DynamoDB Standard table class storage, and PITR (continuous backups), per GB-month. */
  dynamoStorageGbMonth: 0.25,
  dynamoPitrGbMonth: 0.2,
  /** SQS per request (each started 64 KiB of payload is one request). */
  sqsStandardRequest: 0.4e-6,
  sqsFifoRequest: 0.5e-6,
  /** S3 Standard: PUT, COPY, POST, LIST per request; GET and the rest; storage per GB-month. */
  s3PutOrList: 5e-6,
  s3Get: 0.4e-6,
  s3StandardGbMonth: 0.023,
  /** The archive classes WARC objects may move to (crawlstack:archiveStorageClass): storage per GB-month, and each lifecycle transition (a request). */
  s3StandardIaGbMonth: 0.0125,
  s3GlacierIrGbMonth: 0.004,
  s3TransitionToIa: 0.01e-3,
  s3TransitionToGlacierIr: 0.02e-3,
  /** Lambda: per request, and per GB-second on arm64. */
  lambdaRequest: 0.2e-6,
  lambdaArmGbSecond: 0.0000133334,
  /** CloudWatch Logs: per GB ingested, per GB-month stored. */
  logsIngestGb: 0.5,
  logsStorageGbMonth: 0.03,
  /** One standard-resolution CloudWatch metric alarm, per month. */
  alarmMonth: 0.1,
} as const;

/** Lambda's CPU: one vCPU at 1,769 MB, a proportional share below (AWS Lambda docs). */
export const LAMBDA_FULL_VCPU_MB = 1769;

/**
 * How the cost model turns the stand-in's measured invocations into Lambda's billed duration.
 * Each invocation is billed `max(wall, cpu x speed / share)` ms, rounded up to 1 ms: `share` is
 * the function's vCPU share (memory / 1,769 MB, at most 1); `speed` is how much slower Lambda's
 * arm64 (Graviton2) core is than the local one for this code (1: assumed equal). `max` because
 * an invocation is at least as long as it was here, and at least as long as its CPU work at the
 * throttled share; it is a floor (work that overlapped I/O here may not overlap there), and
 * `additive` (wall + cpu x (speed / share - 1)) is the ceiling, reported beside it.
 */
export interface LambdaBillingModel {
  cpuSpeedFactor: number;
}

/** The model with the local core taken as fast as a Graviton2 core. */
export const DEFAULT_LAMBDA_BILLING: LambdaBillingModel = { cpuSpeedFactor: 1 };

/** The share of a vCPU a function of `memoryMb` gets (at most one: Node runs one thread). */
export function cpuShare(memoryMb: number): number {
  return Math.min(1, memoryMb / LAMBDA_FULL_VCPU_MB);
}

/** One invocation as the stand-in measured it. */
export interface MeasuredInvocation {
  durationMs: number;
  cpuMs?: number;
  initMs?: number;
}

/** One function's invocations as Lambda would bill them under the model. */
export interface ModelledLambda {
  invocations: number;
  /** Sum of measured wall times, rounded up per invocation (what the stand-in bills). */
  wallBilledMs: number;
  cpuMs: number;
  /** Billed ms under the model (floor), and the additive ceiling. */
  billedMs: number;
  ceilingMs: number;
  /** Cold starts and their billed INIT ms (wall: INIT gets a full core burst on Lambda). */
  coldStarts: number;
  initMs: number;
  /** (billedMs + initMs) x memory, in GB-s. */
  gbSeconds: number;
}

/**
 * Prices one function's invocation records under `model` (see {@link LambdaBillingModel}); cold
 * starts (`initMs`, including prewarmed containers, which Lambda would start cold too) are billed
 * as measured.
 */
export function modelLambda(
  records: readonly MeasuredInvocation[],
  memoryMb: number,
  init: { coldStarts: number; initMs: number },
  model: LambdaBillingModel = DEFAULT_LAMBDA_BILLING,
): ModelledLambda {
  const slow = model.cpuSpeedFactor / cpuShare(memoryMb);
  let wallBilledMs = 0;
  let cpuMs = 0;
  let billedMs = 0;
  let ceilingMs = 0;
  for (const r of records) {
    const cpu = r.cpuMs ?? 0;
    wallBilledMs += Math.max(1, Math.ceil(r.durationMs));
    cpuMs += cpu;
    billedMs += Math.max(1, Math.ceil(Math.max(r.durationMs, cpu * slow)));
    ceilingMs += Math.max(1, Math.ceil(r.durationMs + Math.max(0, cpu * (slow - 1))));
  }
  const initMs = Math.ceil(init.initMs);
  return {
    invocations: records.length,
    wallBilledMs,
    cpuMs,
    billedMs,
    ceilingMs,
    coldStarts: init.coldStarts,
    initMs,
    gbSeconds: ((billedMs + initMs) / 1000) * (memoryMb / 1024),
  };
}

/**
 * Bytes DynamoDB bills for an item in low-level form (`{ pk: { S: "..." } }`): attribute names
 * plus values (strings and binaries by length, numbers about one byte per two digits plus one,
 * booleans and nulls one byte, lists and maps 3 bytes plus their elements), plus the 100 bytes of
 * overhead DynamoDB adds to every stored item.
 */
export function dynamoItemBytes(item: Record<string, unknown>): number {
  let bytes = 100;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + attributeBytes(value);
  return bytes;
}

function attributeBytes(value: unknown): number {
  const v = value as Record<string, unknown>;
  if (typeof v.S === 'string') return Buffer.byteLength(v.S);
  if (typeof v.N === 'string') return numberBytes(v.N);
  if (v.B instanceof Uint8Array) return v.B.length;
  if (typeof v.BOOL === 'boolean' || v.NULL === true) return 1;
  if (Array.isArray(v.SS)) return v.SS.reduce((n: number, s: string) => n + Buffer.byteLength(s), 0);
  if (Array.isArray(v.NS)) return v.NS.reduce((n: number, s: string) => n + numberBytes(s), 0);
  if (Array.isArray(v.BS)) return v.BS.reduce((n: number, b: Uint8Array) => n + b.length, 0);
  if (Array.isArray(v.L)) return 3 + v.L.reduce((n: number, e: unknown) => n + 1 + attributeBytes(e), 0);
  if (v.M !== undefined && typeof v.M === 'object') {
    let n = 3;
    for (const [k, e] of Object.entries(v.M as Record<string, unknown>))
      n += 1 + Buffer.byteLength(k) + attributeBytes(e);
    return n;
  }
  return 0;
}

/** About one byte per two significant digits (leading and trailing zeros trimmed), plus one. */
function numberBytes(n: string): number {
  const mantissa = n.replace(/^-/, '').replace(/e.*$/i, '');
  const digits = mantissa.replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
  return Math.ceil(Math.max(1, digits) / 2) + 1;
}

/** One SQS operation on one queue, as billed. */
export interface SqsLine {
  queue: string;
  fifo: boolean;
  operation: string;
  requests: number;
  /** In 64 KiB chunks. */
  billed: number;
  /** Receives that returned nothing (idle long polls). */
  empty: number;
}

/** One function's compute, billed under the {@link LambdaBillingModel} (INIT included). */
export interface LambdaLine extends ModelledLambda {
  function: string;
  memoryMb: number;
}

/** A run's totals, counted and priced. */
export interface CostBreakdown {
  dynamo: {
    writeUnits: number;
    readUnits: number;
    byTable: Record<string, { writeRequestUnits: number; readRequestUnits: number }>;
    /** By table, operation and item family (endpoint-metrics.ts). */
    byFamily: Record<string, { writeRequestUnits: number; readRequestUnits: number; items?: number }>;
    requests: Record<string, number>;
  };
  sqs: SqsLine[];
  s3: { puts: number; gets: number; lists: number; other: number };
  lambda: LambdaLine[];
  /** USD for the whole run, by item. */
  dollars: {
    dynamoWrites: number;
    dynamoReads: number;
    sqs: number;
    /** Of `sqs`: receives that returned nothing (a cost per poller and hour, not per page). */
    sqsIdle: number;
    s3: number;
    lambdaRequests: number;
    lambdaCompute: number;
    total: number;
  };
}

/** SQS operations that manage queues rather than move messages (tests and provisioning). */
const SQS_MANAGEMENT = new Set(['CreateQueue', 'GetQueueUrl', 'SetQueueAttributes', 'ListQueues']);

/** The billed parts of a cost breakdown summed (idle polls are inside `sqs` already). */
export function dollarTotal(d: {
  dynamoWrites: number;
  dynamoReads: number;
  sqs: number;
  s3: number;
  lambdaRequests: number;
  lambdaCompute: number;
}): number {
  return d.dynamoWrites + d.dynamoReads + d.sqs + d.s3 + d.lambdaRequests + d.lambdaCompute;
}

/**
 * Prices everything the stand-in counted, Lambda time under `model`. Needs the stand-in's
 * endpoint metrics.
 */
export function costBreakdown(
  metrics: CloudLocalMetrics,
  model: LambdaBillingModel = DEFAULT_LAMBDA_BILLING,
): CostBreakdown {
  const endpoint = metrics.endpoint;
  if (endpoint === undefined) throw new Error('a cost breakdown needs the stand-in (endpoint metrics)');
  const sqs: SqsLine[] = [];
  for (const [queue, operations] of Object.entries(endpoint.sqs.byQueue)) {
    for (const [operation, count] of Object.entries(operations)) {
      if (SQS_MANAGEMENT.has(operation)) continue;
      sqs.push({ queue, fifo: queue.endsWith('.fifo'), operation, ...count });
    }
  }
  const s3ops = endpoint.requests.s3;
  const s3 = { puts: 0, gets: 0, lists: 0, other: 0 };
  for (const [operation, n] of Object.entries(s3ops)) {
    if (operation === 'PutObject' || operation === 'UploadPart' || operation === 'CopyObject') s3.puts += n;
    else if (operation === 'GetObject' || operation === 'HeadObject') s3.gets += n;
    else if (operation.startsWith('List')) s3.lists += n;
    else s3.other += n;
  }
  const lambda: LambdaLine[] = Object.entries(metrics.functions).map(([name, f]) => ({
    function: name,
    memoryMb: f.memoryMb,
    ...modelLambda(f.perInvocation, f.memoryMb, f, model),
  }));
  const p = LIST_PRICES;
  const sqsPrice = (line: SqsLine) => (line.fifo ? p.sqsFifoRequest : p.sqsStandardRequest);
  const dollars = {
    dynamoWrites: endpoint.dynamodb.writeRequestUnits * p.dynamoWriteUnit,
    dynamoReads: endpoint.dynamodb.readRequestUnits * p.dynamoReadUnit,
    sqs: sqs.reduce((n, line) => n + line.billed * sqsPrice(line), 0),
    sqsIdle: sqs.reduce((n, line) => n + line.empty * sqsPrice(line), 0),
    s3: (s3.puts + s3.lists + s3.other) * p.s3PutOrList + s3.gets * p.s3Get,
    lambdaRequests: lambda.reduce((n, f) => n + f.invocations, 0) * p.lambdaRequest,
    lambdaCompute: lambda.reduce((n, f) => n + f.gbSeconds, 0) * p.lambdaArmGbSecond,
    total: 0,
  };
  dollars.total = dollarTotal(dollars);
  return {
    dynamo: {
      writeUnits: endpoint.dynamodb.writeRequestUnits,
      readUnits: endpoint.dynamodb.readRequestUnits,
      byTable: endpoint.dynamodb.byTable,
      byFamily: endpoint.dynamodb.byFamily ?? {},
      requests: endpoint.requests.dynamodb,
    },
    sqs,
    s3,
    lambda,
    dollars,
  };
}

/** The difference of two metrics snapshots (what happened between them). */
export function metricsDelta(after: CloudLocalMetrics, before: CloudLocalMetrics): CloudLocalMetrics {
  const out = structuredClone(after);
  const a = out.endpoint;
  const b = before.endpoint;
  if (a !== undefined && b !== undefined) {
    a.totalRequests -= b.totalRequests;
    for (const service of Object.keys(a.requests) as (keyof typeof a.requests)[]) {
      for (const op of Object.keys(a.requests[service])) {
        a.requests[service][op] = (a.requests[service][op] ?? 0) - (b.requests[service][op] ?? 0);
      }
    }
    a.dynamodb.writeRequestUnits -= b.dynamodb.writeRequestUnits;
    a.dynamodb.readRequestUnits -= b.dynamodb.readRequestUnits;
    a.dynamodb.failedConditionalWrites -= b.dynamodb.failedConditionalWrites;
    for (const [table, units] of Object.entries(a.dynamodb.byTable)) {
      units.writeRequestUnits -= b.dynamodb.byTable[table]?.writeRequestUnits ?? 0;
      units.readRequestUnits -= b.dynamodb.byTable[table]?.readRequestUnits ?? 0;
    }
    for (const [family, units] of Object.entries(a.dynamodb.byFamily ?? {})) {
      units.writeRequestUnits -= b.dynamodb.byFamily?.[family]?.writeRequestUnits ?? 0;
      units.readRequestUnits -= b.dynamodb.byFamily?.[family]?.readRequestUnits ?? 0;
      units.items = (units.items ?? 0) - (b.dynamodb.byFamily?.[family]?.items ?? 0);
    }
    a.s3.bytesUploaded -= b.s3.bytesUploaded;
    a.sqs.billedRequests -= b.sqs.billedRequests;
    for (const [queue, ops] of Object.entries(a.sqs.byQueue)) {
      for (const [op, count] of Object.entries(ops)) {
        const was = b.sqs.byQueue[queue]?.[op];
        if (was === undefined) continue;
        count.requests -= was.requests;
        count.billed -= was.billed;
        count.empty -= was.empty;
      }
    }
  }
  for (const [name, f] of Object.entries(out.functions)) {
    const was = before.functions[name];
    if (was === undefined) continue;
    f.invocations -= was.invocations;
    f.errors -= was.errors;
    f.timeouts -= was.timeouts;
    f.throttles -= was.throttles;
    f.billedMs -= was.billedMs;
    f.gbSeconds -= was.gbSeconds;
    f.cpuMs -= was.cpuMs;
    f.coldStarts -= was.coldStarts;
    f.initMs -= was.initMs;
    f.perInvocation = f.perInvocation.slice(was.perInvocation.length);
  }
  for (const [name, s] of Object.entries(out.eventSources)) {
    const was = before.eventSources[name];
    if (was === undefined) continue;
    for (const key of Object.keys(s) as (keyof typeof s)[]) s[key] -= was[key];
  }
  return out;
}
