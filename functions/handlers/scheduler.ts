/**
 * The scheduler's Lambda handler: an EventBridge tick runs one completion pass over the
 * registered crawls (and, once AOPIC exists, its credit step; see `CreditRedistribution`).
 */
import type { ScheduledEvent } from 'aws-lambda';
import { type CompleteCrawlsDeps, completeCrawls, type TickResult } from '../cloud/complete-crawls.ts';

/** Builds the handler; the event's content does not matter (every tick does the same work). */
export function createScheduler(deps: CompleteCrawlsDeps): (event?: ScheduledEvent) => Promise<TickResult> {
  return async () => completeCrawls(deps);
}
