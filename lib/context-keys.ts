/**
 * The stack's context keys and the error for a bad value: a file of its own, so that the constructs
 * that validate their own settings (worker-scale.ts) need not import the stack's context reader.
 */

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
  archiveStorageClass: 'crawlstack:archiveStorageClass',
  archiveTransitionDays: 'crawlstack:archiveTransitionDays',
  allowPrivateAddresses: 'crawlstack:allowPrivateAddresses',
  recrawlMinIntervalMinutes: 'crawlstack:recrawlMinIntervalMinutes',
  tracing: 'crawlstack:tracing',
  throttleAlarm: 'crawlstack:throttleAlarm',
  alarmTopicArn: 'crawlstack:alarmTopicArn',
} as const;

/** Thrown when a context value has the wrong shape; names the key and the value. */
export class ContextValueError extends Error {
  /** Stable code for tests. */
  readonly code = 'BAD_CONTEXT_VALUE' as const;

  constructor(key: string, value: unknown, expected: string) {
    super(`context ${key}=${JSON.stringify(value)}: expected ${expected}`);
    this.name = 'ContextValueError';
  }
}
