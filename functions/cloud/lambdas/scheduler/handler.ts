/**
 * The scheduler's Lambda handler: an EventBridge tick runs one pass over the registered crawls:
 * the AOPIC step of each running crawl, then completion.
 */
import type { ScheduledEvent } from 'aws-lambda';
import { type CompleteCrawlsDeps, completeCrawls, type TickResult } from '../../use-cases/complete-crawls.ts';

/** Builds the handler; the event's content does not matter (every tick does the same work). */
export function createScheduler(deps: CompleteCrawlsDeps): (event?: ScheduledEvent) => Promise<TickResult> {
  return async () => completeCrawls(deps);
}
