/**
 * One run of a crawl's recurring recrawl: the schedule's target (the scheduler function) starts
 * the next round of the archive with the schedule's settings. A round that finds the previous one
 * still running is skipped, a refused one is recorded as failed; neither throws, so that neither is
 * retried by Scheduler into a storm of refusals. Every run is counted in the run log.
 */
import type { ScheduledRecrawl, ScheduledRun, ScheduledRunLog } from '../ports/recrawl-schedules.ts';
import { type StartRecrawlDeps, startRecrawl } from './start-recrawl.ts';

/** What a scheduled run needs. */
export interface ScheduledRecrawlDeps extends StartRecrawlDeps {
  runs: ScheduledRunLog;
  log?: (line: string) => void;
}

/** Whether a Lambda event is a schedule's {@link ScheduledRecrawl} input. */
export function isScheduledRecrawl(event: unknown): event is ScheduledRecrawl {
  const value = event as Partial<ScheduledRecrawl> | null | undefined;
  return (
    typeof value?.recrawl === 'string' && (value.settings === undefined || typeof value.settings === 'object')
  );
}

/** Starts the next round of `input.recrawl` (or skips it), records and returns the run. */
export async function runScheduledRecrawl(
  deps: ScheduledRecrawlDeps,
  input: ScheduledRecrawl,
): Promise<ScheduledRun> {
  const archive = input.recrawl;
  // From the archive's last round when it has one: crawl items expire (retentionDays) after their
  // last write, and the last round's is the newest (the first crawl's may be long gone).
  const from = (await deps.archives.rounds(archive))?.last ?? archive;
  const outcome = await startRecrawl(deps, from, input.settings ?? {});
  const at = deps.clock.now();
  const run: ScheduledRun =
    outcome.kind === 'started'
      ? { kind: 'started', at, crawlId: outcome.id, round: outcome.recrawl.round }
      : outcome.kind === 'conflict'
        ? { kind: 'skipped', at, reason: outcome.problem }
        : {
            kind: 'failed',
            at,
            reason:
              outcome.kind === 'not-found'
                ? `crawl ${archive} is gone (its items expired?): remove the schedule`
                : `the schedule's settings are refused: ${outcome.problems.join('; ')}`,
          };
  await deps.runs.record(archive, run);
  deps.log?.(
    run.kind === 'started'
      ? `scheduled recrawl of ${archive}: round ${run.round} started as ${run.crawlId}`
      : `scheduled recrawl of ${archive} ${run.kind}: ${run.reason}`,
  );
  return run;
}
