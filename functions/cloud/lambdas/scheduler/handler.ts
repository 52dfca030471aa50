/**
 * The scheduler's Lambda handler: an EventBridge tick runs one pass over the registered crawls:
 * the AOPIC step of each running crawl, then completion. A crawl's recurring recrawl schedule
 * (EventBridge Scheduler) invokes it too, with `{ recrawl, settings }`: that starts the archive's
 * next round (functions/cloud/use-cases/run-scheduled-recrawl.ts).
 */
import type { ScheduledEvent } from 'aws-lambda';
import type { ScheduledRecrawl, ScheduledRun } from '../../ports/recrawl-schedules.ts';
import { type CompleteCrawlsDeps, completeCrawls, type TickResult } from '../../use-cases/complete-crawls.ts';
import {
  isScheduledRecrawl,
  runScheduledRecrawl,
  type ScheduledRecrawlDeps,
} from '../../use-cases/run-scheduled-recrawl.ts';

/** The scheduler's deps: the tick's, and the scheduled recrawls' (absent: such events are refused). */
export type SchedulerDeps = CompleteCrawlsDeps & { recrawl?: ScheduledRecrawlDeps };

/** Thrown for a scheduled recrawl event when the function was wired without recrawls. */
export class RecrawlNotWiredError extends Error {
  readonly code = 'RECRAWL_NOT_WIRED' as const;
  constructor() {
    super('a scheduled recrawl reached a scheduler wired without recrawls');
    this.name = 'RecrawlNotWiredError';
  }
}

/** The handler: a tick (any other event) or a scheduled recrawl. */
export interface SchedulerHandler {
  (event?: ScheduledEvent): Promise<TickResult>;
  (event: ScheduledRecrawl): Promise<ScheduledRun>;
}

/** Builds the handler: a tick's content does not matter (every tick does the same work). */
export function createScheduler(deps: SchedulerDeps): SchedulerHandler {
  const handler = async (event?: ScheduledEvent | ScheduledRecrawl): Promise<TickResult | ScheduledRun> => {
    if (!isScheduledRecrawl(event)) return completeCrawls(deps);
    if (deps.recrawl === undefined) throw new RecrawlNotWiredError();
    return runScheduledRecrawl(deps.recrawl, event);
  };
  return handler as SchedulerHandler;
}
