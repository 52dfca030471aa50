/**
 * AWS limits that only bite on big crawls, as the stand-in enforces them, each scaled down by an
 * environment variable so a test of a few thousand URLs reaches it (docs/cloud-local.md):
 *
 * | variable                              | AWS       | what                                          |
 * | ------------------------------------- | --------- | --------------------------------------------- |
 * | `CRAWLSTACK_LOCAL_RECURSION_LIMIT`    | 16        | Lambda's recursive loop detection             |
 * | `CRAWLSTACK_LOCAL_FIFO_SCAN_WINDOW`   | 120,000   | messages a FIFO receive looks at for groups    |
 * | `CRAWLSTACK_LOCAL_FIFO_INFLIGHT`      | 120,000   | in-flight messages of a FIFO queue             |
 * | `CRAWLSTACK_LOCAL_RETENTION_S`        | the queue's `MessageRetentionPeriod` | retention from the send |
 * | `CRAWLSTACK_LOCAL_ACCOUNT_CONCURRENCY`| 1,000     | concurrent invocations of the whole account    |
 * | `CRAWLSTACK_LOCAL_SCHEDULE_SPEEDUP`   | 1         | divides EventBridge Scheduler schedules' rates |
 *
 * The last is not a limit but time: 3600 fires a `rate(1 hour)` schedule every second, so a test
 * sees a crawl's recurring recrawl (scheduler-service.ts) run twice in seconds.
 */

/** The limits in force; see the module comment. */
export interface AwsLimits {
  recursionLimit: number;
  fifoScanWindow: number;
  fifoInflight: number;
  /** Seconds; absent: each queue's `MessageRetentionPeriod` alone. */
  retentionSeconds?: number;
  accountConcurrency: number;
  /** Scheduler schedules run this many times faster than their expression says. */
  scheduleSpeedup: number;
}

/** AWS's own values. */
export const AWS_LIMITS: Readonly<AwsLimits> = {
  recursionLimit: 16,
  fifoScanWindow: 120_000,
  fifoInflight: 120_000,
  accountConcurrency: 1000,
  scheduleSpeedup: 1,
};

const KNOBS = {
  recursionLimit: 'CRAWLSTACK_LOCAL_RECURSION_LIMIT',
  fifoScanWindow: 'CRAWLSTACK_LOCAL_FIFO_SCAN_WINDOW',
  fifoInflight: 'CRAWLSTACK_LOCAL_FIFO_INFLIGHT',
  retentionSeconds: 'CRAWLSTACK_LOCAL_RETENTION_S',
  accountConcurrency: 'CRAWLSTACK_LOCAL_ACCOUNT_CONCURRENCY',
  scheduleSpeedup: 'CRAWLSTACK_LOCAL_SCHEDULE_SPEEDUP',
} as const satisfies Record<keyof AwsLimits, string>;

/**
 * The limits from `env` (AWS's where a variable is unset), then `overrides` on top. A variable
 * that is not a positive integer is refused with its name, not ignored.
 */
export function awsLimits(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<AwsLimits> = {},
): AwsLimits {
  const limits: AwsLimits = { ...AWS_LIMITS };
  for (const [key, name] of Object.entries(KNOBS) as [keyof AwsLimits, string][]) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
    }
    limits[key] = value;
  }
  for (const [key, value] of Object.entries(overrides) as [keyof AwsLimits, number | undefined][]) {
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}
