/**
 * What a run on the stand-in would cost on AWS: the endpoint's counted requests and capacity units
 * and the local Lambda runtime's billed milliseconds, priced at us-east-1 list prices. Used by the
 * cost benchmark (bench/cloud-cost-bench.ts) and the pipeline tests' diagnostics.
 */
import type { CloudLocalMetrics } from './cloud-local.ts';

/**
 * us-east-1 list prices in USD, as published in 2025 (assumed unchanged since; free tiers
 * ignored, data transfer excluded).
 */
export const LIST_PRICES = {
  /** As of: the date these prices were read. */
  asOf: '2025-06',
  /** DynamoDB on-demand, per write request unit (1 KB) and read request unit (4 KB strong). */
  dynamoWriteUnit: 0.625e-6,
  dynamoReadUnit: 0.125e-6,
  /** SQS per request (each started 64 KiB of payload is one request). */
  sqsStandardRequest: 0.4e-6,
  sqsFifoRequest: 0.5e-6,
  /** S3 Standard: PUT, COPY, POST, LIST per request; GET and the rest. */
  s3PutOrList: 5e-6,
  s3Get: 0.4e-6,
  /** Lambda: per request, and per GB-second on arm64. */
  lambdaRequest: 0.2e-6,
  lambdaArmGbSecond: 0.0000133334,
} as const;

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

/** One function's compute. */
export interface LambdaLine {
  function: string;
  memoryMb: number;
  invocations: number;
  billedMs: number;
  gbSeconds: number;
}

/** A run's totals, counted and priced. */
export interface CostBreakdown {
  dynamo: {
    writeUnits: number;
    readUnits: number;
    byTable: Record<string, { writeRequestUnits: number; readRequestUnits: number }>;
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

/** Prices everything the stand-in counted. Needs the stand-in's endpoint metrics. */
export function costBreakdown(metrics: CloudLocalMetrics): CostBreakdown {
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
    invocations: f.invocations,
    billedMs: f.billedMs,
    gbSeconds: f.gbSeconds,
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
