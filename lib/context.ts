import type { Node } from 'constructs';
import type { CrawlstackStackProps } from './crawlstack-stack.ts';

/**
 * The `crawlstack:*` context keys lib/app.ts reads (set in cdk.json, cdk.context.json or with
 * `-c key=value` on the command line, where every value arrives as a string).
 */
export const CONTEXT_KEYS = {
  stackName: 'crawlstack:stackName',
  dev: 'crawlstack:dev',
  maxReceiveCount: 'crawlstack:maxReceiveCount',
  workerMaxConcurrency: 'crawlstack:workerMaxConcurrency',
  workerHostsPerInvocation: 'crawlstack:workerHostsPerInvocation',
  reservableConcurrency: 'crawlstack:reservableConcurrency',
  reserveWorkerConcurrency: 'crawlstack:reserveWorkerConcurrency',
  retentionDays: 'crawlstack:retentionDays',
  allowPrivateAddresses: 'crawlstack:allowPrivateAddresses',
  tracing: 'crawlstack:tracing',
  throttleAlarm: 'crawlstack:throttleAlarm',
  alarmTopicArn: 'crawlstack:alarmTopicArn',
} as const;

/** Stack settings read from context, before CDK objects (the alarm topic) are made from them. */
export interface StackContext
  extends Pick<
    CrawlstackStackProps,
    | 'dev'
    | 'maxReceiveCount'
    | 'workerMaxConcurrency'
    | 'workerHostsPerInvocation'
    | 'reservableConcurrency'
    | 'reserveWorkerConcurrency'
    | 'retentionDays'
    | 'allowPrivateAddresses'
    | 'tracing'
    | 'throttleAlarm'
    | 'alarmTopicArn'
  > {
  /** The stack's name. @default 'CrawlstackStack' */
  readonly stackName: string;
}

/** Thrown when a context value has the wrong shape; names the key and the value. */
export class ContextValueError extends Error {
  /** Stable code for tests. */
  readonly code = 'BAD_CONTEXT_VALUE' as const;

  constructor(key: string, value: unknown, expected: string) {
    super(`context ${key}=${JSON.stringify(value)}: expected ${expected}`);
    this.name = 'ContextValueError';
  }
}

function bool(node: Node, key: string): boolean | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === true || value === false) return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ContextValueError(key, value, 'true or false');
}

function int(node: Node, key: string): number | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
  throw new ContextValueError(key, value, 'an integer');
}

function str(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return value;
  throw new ContextValueError(key, value, 'a non-empty string');
}

/**
 * Reads the stack settings from the app's context. Ranges (e.g. maxReceiveCount 1-1000) are
 * checked by the constructs that use them (the worker's scale: worker-scale.ts).
 */
export function readStackContext(node: Node): StackContext {
  return {
    stackName: str(node, CONTEXT_KEYS.stackName) ?? 'CrawlstackStack',
    dev: bool(node, CONTEXT_KEYS.dev),
    maxReceiveCount: int(node, CONTEXT_KEYS.maxReceiveCount),
    workerMaxConcurrency: int(node, CONTEXT_KEYS.workerMaxConcurrency),
    workerHostsPerInvocation: int(node, CONTEXT_KEYS.workerHostsPerInvocation),
    reservableConcurrency: int(node, CONTEXT_KEYS.reservableConcurrency),
    reserveWorkerConcurrency: bool(node, CONTEXT_KEYS.reserveWorkerConcurrency),
    retentionDays: int(node, CONTEXT_KEYS.retentionDays),
    allowPrivateAddresses: bool(node, CONTEXT_KEYS.allowPrivateAddresses),
    tracing: bool(node, CONTEXT_KEYS.tracing),
    throttleAlarm: bool(node, CONTEXT_KEYS.throttleAlarm),
    alarmTopicArn: str(node, CONTEXT_KEYS.alarmTopicArn),
  };
}
