import {
  DEFAULT_HOSTS_PER_INVOCATION,
  MAX_HOSTS_PER_INVOCATION,
  workerMemoryMb,
} from '../functions/cloud/lambda-settings.ts';
import { CONTEXT_KEYS, ContextValueError } from './context-keys.ts';

/** Event source pollers (worker invocations at once) unless the stack says otherwise: a laptop's stand-in. */
export const DEFAULT_WORKER_POLLERS = 3;

/**
 * Account concurrency the stack may reserve unless told otherwise: AWS's default quota of 1,000
 * concurrent executions per Region, less the 100 Lambda always keeps unreserved.
 */
export const DEFAULT_RESERVABLE_CONCURRENCY = 1000 - 100;

/** Lambda's bounds on an SQS event source's `ScalingConfig.MaximumConcurrency`. */
const SQS_MAX_CONCURRENCY = { min: 2, max: 1000 } as const;

/**
 * How many hosts the crawl runs side by side: pollers × hosts per invocation (docs/cloud.md,
 * "How many hosts at once"). Each is a `crawlstack:*` context key of the same name.
 */
export interface WorkerScaleProps {
  /**
   * Frontier worker invocations at once: the event source's maxConcurrency (one runner per
   * poller), from 2 to {@link reservableConcurrency} (and Lambda's 1,000). @default 5
   */
  readonly workerMaxConcurrency?: number;
  /**
   * Hosts one invocation holds at once (1-500); the worker's memory is sized for them
   * (lambda-settings.ts, workerMemoryMb). @default 20
   */
  readonly workerHostsPerInvocation?: number;
  /**
   * Account concurrency this stack may take for the worker: the account's quota less what its
   * other functions need and the 100 Lambda keeps unreserved. @default 900
   */
  readonly reservableConcurrency?: number;
  /**
   * Reserve the worker's pollers from the account's concurrency (`ReservedConcurrentExecutions`):
   * other functions cannot starve the crawl, nor the crawl them. Off by default: a new account's
   * quota may leave nothing to reserve. @default false
   */
  readonly reserveWorkerConcurrency?: boolean;
}

/** The worker's scale, validated, with what follows from it. */
export interface WorkerScale {
  readonly pollers: number;
  readonly hostsPerInvocation: number;
  /** The worker's memory for its hosts per invocation. */
  readonly memoryMb: number;
  /** `ReservedConcurrentExecutions`, when reserved. */
  readonly reservedConcurrency: number | undefined;
}

function integerIn(key: string, value: number, min: number, max: number, why: string): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ContextValueError(key, value, `an integer from ${min} to ${max} (${why})`);
  }
  return value;
}

/**
 * Validates the worker's scale against Lambda's bounds and the concurrency the stack may reserve;
 * a bad value fails synthesis with a message naming its context key.
 */
export function workerScale(props: WorkerScaleProps): WorkerScale {
  const reservable = integerIn(
    CONTEXT_KEYS.reservableConcurrency,
    props.reservableConcurrency ?? DEFAULT_RESERVABLE_CONCURRENCY,
    SQS_MAX_CONCURRENCY.min,
    Number.MAX_SAFE_INTEGER,
    'the worker needs at least 2 pollers',
  );
  const pollers = integerIn(
    CONTEXT_KEYS.workerMaxConcurrency,
    props.workerMaxConcurrency ?? DEFAULT_WORKER_POLLERS,
    SQS_MAX_CONCURRENCY.min,
    Math.min(SQS_MAX_CONCURRENCY.max, reservable),
    `Lambda's SQS event sources take 2 to 1000, and ${CONTEXT_KEYS.reservableConcurrency} is ${reservable}`,
  );
  const hostsPerInvocation = integerIn(
    CONTEXT_KEYS.workerHostsPerInvocation,
    props.workerHostsPerInvocation ?? DEFAULT_HOSTS_PER_INVOCATION,
    1,
    MAX_HOSTS_PER_INVOCATION,
    'a socket per host in flight, of 1,024 file descriptors',
  );
  return {
    pollers,
    hostsPerInvocation,
    memoryMb: workerMemoryMb(hostsPerInvocation),
    reservedConcurrency: props.reserveWorkerConcurrency === true ? pollers : undefined,
  };
}
