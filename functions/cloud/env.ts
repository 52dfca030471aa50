/**
 * The one owner of the environment variable names shared by the CDK app (lib/), which sets them,
 * and the Lambda entries (functions/cloud/lambdas/<name>/entry.ts), which read them. Renaming a variable here renames it
 * on both sides. This file is bundled into every Lambda, so it must not import aws-cdk-lib (or
 * anything else heavy: lambda-settings.ts imports nothing).
 */

import {
  DEFAULT_HOSTS_PER_INVOCATION,
  FRONTIER_GROUP_LIMIT,
  LAMBDA_MAX_MEMORY_MB,
  MAX_HOSTS_PER_INVOCATION,
} from './lambda-settings.ts';

/** Environment variable names, keyed by the property name `readEnv` returns. */
export const ENV = {
  /** Name of the DynamoDB URL table (URL-seen claims, URL state, AOPIC cash). */
  urlTable: 'URL_TABLE',
  /** Name of the DynamoDB crawl table (crawl config and status, per-host state and ledgers). */
  crawlTable: 'CRAWL_TABLE',
  /** URL of the SQS FIFO frontier queue. */
  frontierQueueUrl: 'FRONTIER_QUEUE_URL',
  /** URL of the frontier's FIFO dead-letter queue. */
  frontierDlqUrl: 'FRONTIER_DLQ_URL',
  /** Name of the S3 bucket holding WARC segments and the page index. */
  pageBucket: 'PAGE_BUCKET',
  /** URL of the SQS standard queue of finished pages (captures), which the archiver drains. */
  captureQueueUrl: 'CAPTURE_QUEUE_URL',
  /** URL of the capture queue's dead-letter queue. */
  captureDlqUrl: 'CAPTURE_DLQ_URL',
  /**
   * The frontier's redrive `maxReceiveCount`: the worker finishes a message itself before SQS
   * would move it to the DLQ unrecorded (re-sends one that only waited, records one that kept failing).
   */
  frontierMaxReceives: 'FRONTIER_MAX_RECEIVES',
  /**
   * Days the crawl's items are kept after their last write (`expiresAt`, the tables' TTL); `0`
   * keeps them. The page bucket's lifecycle expires objects after the same number of days.
   */
  retentionDays: 'RETENTION_DAYS',
  /**
   * `forbidden` (the stack's default): no crawl may set `allowPrivate` (the API refuses it, the
   * worker never lifts the SSRF guard); `allowed`: crawls may (the local stand-in crawls loopback).
   */
  privateAddresses: 'PRIVATE_ADDRESSES',
  /** Name of the stack's EventBridge Scheduler group: every crawl's recrawl schedule is in it. */
  recrawlScheduleGroup: 'RECRAWL_SCHEDULE_GROUP',
  /** ARN of the role Scheduler invokes a recrawl schedule's target with (the API passes it). */
  recrawlScheduleRoleArn: 'RECRAWL_SCHEDULE_ROLE_ARN',
  /** ARN of the function a recrawl schedule invokes (the scheduler: it starts the round). */
  recrawlTargetArn: 'RECRAWL_TARGET_ARN',
} as const;

/**
 * Tunables: variables with a default. CDK sets them from its context; a function that finds one
 * unset uses the default, and refuses a malformed one at cold start.
 */
export const TUNING_ENV = {
  /**
   * Hosts one frontier worker invocation holds at once (frontier-runner.ts); CDK sizes the
   * worker's memory for them (lambda-settings.ts). Default {@link DEFAULT_HOSTS_PER_INVOCATION}.
   */
  hostsPerInvocation: 'WORKER_HOSTS_PER_INVOCATION',
  /**
   * URLs of one host in its FIFO group at most, as the worker refills it (back-queues.ts). Not set
   * by CDK: the default {@link FRONTIER_GROUP_LIMIT} is what bounds a URL's wait in SQS far below
   * its retention; the stand-in's tests raise it to show that (docs/cloud-local.md).
   */
  groupLimit: 'FRONTIER_GROUP_LIMIT',
  /**
   * The shortest interval between two rounds of a recurring recrawl, in minutes (the API refuses a
   * shorter schedule). Default {@link DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES}; CDK sets it from
   * `crawlstack:recrawlMinIntervalMinutes` when given.
   */
  recrawlMinIntervalMinutes: 'RECRAWL_MIN_INTERVAL_MINUTES',
} as const;

/** The shortest interval of a recurring recrawl when the stack sets none (recrawl-every.ts). */
export const DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES = 60;

/** Thrown at cold start when a tunable variable is set to something the code cannot use. */
export class InvalidEnvError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'INVALID_ENV' as const;

  constructor(name: string, value: string, expected: string) {
    super(`environment variable ${name}=${JSON.stringify(value)}: expected ${expected}`);
    this.name = 'InvalidEnvError';
  }
}

type RawEnv = Readonly<Record<string, string | undefined>>;

/** A tuning variable as an integer from 1 to `max`; `fallback` when unset or empty. */
function readTuning(env: RawEnv, name: string, fallback: number, max: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (n >= 1 && n <= max) return n;
  throw new InvalidEnvError(name, value, `an integer from 1 to ${max}`);
}

/** Hosts per invocation from `env` (usually `process.env`); the default when unset or empty. */
export function readHostsPerInvocation(env: RawEnv): number {
  return readTuning(
    env,
    TUNING_ENV.hostsPerInvocation,
    DEFAULT_HOSTS_PER_INVOCATION,
    MAX_HOSTS_PER_INVOCATION,
  );
}

/** Set by Lambda in every execution environment (and by the stand-in): the function's memory, MB. */
export const LAMBDA_MEMORY_ENV = 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE';

/**
 * The function's memory from `env` (Lambda's own variable); undefined outside Lambda. The worker
 * sizes its body budget from it (lambda-settings.ts, workerBodyBudgetMb).
 */
export function readFunctionMemoryMb(env: RawEnv): number | undefined {
  const value = env[LAMBDA_MEMORY_ENV];
  if (value === undefined || value === '') return undefined;
  return readTuning(env, LAMBDA_MEMORY_ENV, 0, LAMBDA_MAX_MEMORY_MB);
}

/** The worker's group limit from `env`; the default when unset or empty. */
export function readGroupLimit(env: RawEnv): number {
  return readTuning(env, TUNING_ENV.groupLimit, FRONTIER_GROUP_LIMIT, 100_000);
}

/** The API's minimum interval of a recurring recrawl from `env`; the default when unset or empty. */
export function readRecrawlMinInterval(env: RawEnv): number {
  return readTuning(
    env,
    TUNING_ENV.recrawlMinIntervalMinutes,
    DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES,
    366 * 24 * 60,
  );
}

/** A property name of {@link ENV}. */
export type EnvKey = keyof typeof ENV;

/** An environment variable name owned by {@link ENV}. */
export type EnvName = (typeof ENV)[EnvKey];

/** Every variable, resolved. `readEnv` returns a `Pick` of it. */
export type CloudEnv = { readonly [K in EnvKey]: string };

/**
 * Which variables each function gets (CDK sets exactly these; the entry reads exactly these).
 * The CDK tests check the synthesized template against this table, so a function that reads a
 * variable CDK does not set fails a test instead of a cold start.
 */
export const FUNCTION_ENV = {
  frontierWorker: [
    'urlTable',
    'crawlTable',
    'frontierQueueUrl',
    'frontierDlqUrl',
    'captureQueueUrl',
    'pageBucket',
    'frontierMaxReceives',
    'retentionDays',
    'privateAddresses',
  ],
  api: [
    'crawlTable',
    'frontierQueueUrl',
    'pageBucket',
    'retentionDays',
    'privateAddresses',
    'recrawlScheduleGroup',
    'recrawlScheduleRoleArn',
    'recrawlTargetArn',
  ],
  scheduler: [
    'urlTable',
    'crawlTable',
    'frontierQueueUrl',
    'captureQueueUrl',
    'pageBucket',
    'retentionDays',
    'privateAddresses',
  ],
  archiver: ['crawlTable', 'captureDlqUrl', 'pageBucket'],
} as const satisfies Record<string, readonly EnvKey[]>;

/** A Lambda function of the stack, as named in {@link FUNCTION_ENV}. */
export type FunctionRole = keyof typeof FUNCTION_ENV;

/** The variables of one function, resolved. */
export type FunctionEnv<R extends FunctionRole> = Pick<CloudEnv, (typeof FUNCTION_ENV)[R][number]>;

const ALL_KEYS = Object.keys(ENV) as EnvKey[];

/** Thrown at cold start when the deployment did not set a variable the code needs. */
export class MissingEnvError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'MISSING_ENV' as const;
  /** The variable names that were missing or empty. */
  readonly names: readonly string[];

  constructor(names: readonly string[]) {
    super(
      `missing environment variable${names.length === 1 ? '' : 's'} ${names.join(', ')} ` +
        '(set by the CDK stack; when running outside Lambda, set them yourself)',
    );
    this.name = 'MissingEnvError';
    this.names = names;
  }
}

/**
 * Reads the given variables (all of {@link ENV} by default) from `env`, usually `process.env`.
 * Throws {@link MissingEnvError} naming every missing or empty one at once, so a broken
 * deployment says what to fix in one go.
 */
export function readEnv<K extends EnvKey = EnvKey>(
  env: Readonly<Record<string, string | undefined>>,
  keys: readonly K[] = ALL_KEYS as K[],
): Pick<CloudEnv, K> {
  const out: Partial<Record<EnvKey, string>> = {};
  const missing: string[] = [];
  for (const key of keys) {
    const name = ENV[key];
    const value = env[name];
    if (value === undefined || value === '') missing.push(name);
    else out[key] = value;
  }
  if (missing.length > 0) throw new MissingEnvError(missing);
  return out as Pick<CloudEnv, K>;
}

/** Reads the variables of one function role (see {@link FUNCTION_ENV}). */
export function readFunctionEnv<R extends FunctionRole>(
  env: Readonly<Record<string, string | undefined>>,
  role: R,
): FunctionEnv<R> {
  return readEnv(env, FUNCTION_ENV[role]) as FunctionEnv<R>;
}

/**
 * Key attribute names of the two DynamoDB tables, shared for the same reason as {@link ENV}:
 * lib/ declares the key schema with them and the adapters build items with them.
 */
export const TABLE_KEYS = {
  /** Partition key of both tables (UrlTable: `<crawlId>#<fingerprint>`; CrawlTable: crawlId). */
  partitionKey: 'pk',
  /** Sort key of CrawlTable only: `crawl`, `budget`, `host#<host>`, `robots#<origin>`. */
  sortKey: 'sk',
  /** Epoch seconds after which DynamoDB may delete the item (TTL). */
  expiresAt: 'expiresAt',
  /** UrlTable's sparse index of URLs parked by AOPIC, most cash first within a crawl's shard. */
  parkedIndex: 'ParkedIndex',
  /** Partition key of the parked index: `<crawlId>#<shard>` (set only while a URL is parked). */
  parkedShard: 'parked',
  /** Sort key of the parked index: the URL's cash minus the AOPIC bonus when it was parked. */
  parkedKey: 'cashKey',
} as const;
