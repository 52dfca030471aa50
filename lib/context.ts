import type { Node } from 'constructs';
import { CONTEXT_KEYS, ContextValueError } from './context-keys.ts';
import type { CrawlstackStackProps } from './crawlstack-stack.ts';
import type { ArchiveClass } from './storage.ts';

export { CONTEXT_KEYS, ContextValueError };

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
    | 'archiveStorageClass'
    | 'archiveTransitionDays'
    | 'allowPrivateAddresses'
    | 'recrawlMinIntervalMinutes'
    | 'tracing'
    | 'throttleAlarm'
    | 'alarmTopicArn'
  > {
  /** The stack's name. @default 'CrawlstackStack' */
  readonly stackName: string;
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

function archiveClass(node: Node, key: string): ArchiveClass | undefined {
  const value = str(node, key);
  if (value === undefined || value === 'STANDARD' || value === 'STANDARD_IA' || value === 'GLACIER_IR')
    return value;
  throw new ContextValueError(key, value, 'STANDARD, STANDARD_IA or GLACIER_IR');
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
    archiveStorageClass: archiveClass(node, CONTEXT_KEYS.archiveStorageClass),
    archiveTransitionDays: int(node, CONTEXT_KEYS.archiveTransitionDays),
    allowPrivateAddresses: bool(node, CONTEXT_KEYS.allowPrivateAddresses),
    recrawlMinIntervalMinutes: int(node, CONTEXT_KEYS.recrawlMinIntervalMinutes),
    tracing: bool(node, CONTEXT_KEYS.tracing),
    throttleAlarm: bool(node, CONTEXT_KEYS.throttleAlarm),
    alarmTopicArn: str(node, CONTEXT_KEYS.alarmTopicArn),
  };
}
