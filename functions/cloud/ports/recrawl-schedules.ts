/**
 * The recurring recrawl of a crawl's archive (docs/recrawl.md, cloud): one schedule per archive,
 * named after it, that invokes the scheduler function with a {@link ScheduledRecrawl} input; and
 * the log of what its runs did. AWS: EventBridge Scheduler and an item of the crawl table.
 */

/** What a schedule's target receives: the archive whose next round to start, and its settings. */
export interface ScheduledRecrawl {
  /** The archive id (its first crawl's id). */
  recrawl: string;
  /** The settings of each round (POST /crawls/{id}/recrawl's body). */
  settings: Record<string, unknown>;
}

/** A schedule as it is created. */
export interface RecrawlScheduleSpec {
  archive: string;
  /** `rate(...)` or `cron(...)` (recrawl-every.ts). */
  expression: string;
  /** The first run no earlier than this (epoch ms); absent: as the expression says. */
  startAt?: number;
  input: ScheduledRecrawl;
}

/** A schedule as it is read back. */
export interface RecrawlSchedule extends RecrawlScheduleSpec {
  state: 'ENABLED' | 'DISABLED';
  createdAt?: number;
}

/**
 * The schedules. `put` creates the archive's schedule or replaces the one it has (idempotent for
 * the same spec); `get` resolves undefined when the archive has none; `remove` resolves false when
 * there was none (and removes nothing).
 */
export interface RecrawlSchedules {
  put(spec: RecrawlScheduleSpec): Promise<'created' | 'replaced'>;
  get(archive: string): Promise<RecrawlSchedule | undefined>;
  remove(archive: string): Promise<boolean>;
}

/** One run of a schedule: a round started, skipped (the previous one still runs), or refused. */
export type ScheduledRun =
  | { kind: 'started'; at: number; crawlId: string; round: number }
  | { kind: 'skipped' | 'failed'; at: number; reason: string };

/** What the runs of an archive's schedules did so far. */
export interface ScheduledRuns {
  started: number;
  skipped: number;
  failed: number;
  last?: ScheduledRun;
}

/**
 * The runs' log. `record` counts one run (at least once: a retried invocation may count twice) and
 * keeps it as the last; `read` resolves zero counts for an archive never run.
 */
export interface ScheduledRunLog {
  record(archive: string, run: ScheduledRun): Promise<void>;
  read(archive: string): Promise<ScheduledRuns>;
}
