/**
 * A crawl's recurring recrawl (docs/recrawl.md, cloud): `POST /crawls/{id}/schedule` creates (or
 * replaces) one EventBridge Scheduler schedule for the crawl's archive, `GET` shows it with what its
 * runs did, `DELETE` removes it. The settings of the rounds are checked here as a round would
 * check them, so a schedule never starts rounds that are refused one after another.
 */
import type { CrawlRegistry } from '../ports/cloud-ports.ts';
import type { RecrawlSchedules, ScheduledRun, ScheduledRunLog } from '../ports/recrawl-schedules.ts';
import { DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES, parseRecrawlEvery } from './recrawl-every.ts';
import { archiveOf, type RecrawlRefusal, roundSettings, unarchivedProblem } from './start-recrawl.ts';

/** What the schedule routes need. */
export interface RecrawlScheduleDeps {
  table: CrawlRegistry;
  schedules: RecrawlSchedules;
  runs: ScheduledRunLog;
  clock: { now(): number };
  /** The stack's shortest interval between rounds (default 60). */
  minIntervalMinutes?: number;
}

/** A schedule as `GET /crawls/{id}/schedule` shows it. */
export interface RecrawlScheduleView {
  archive: string;
  expression: string;
  state: string;
  settings: Record<string, unknown>;
  /** ISO time of the next run, when the expression is a rate. */
  nextRun?: string;
  rounds: { started: number; skipped: number; failed: number };
  last?: ScheduledRun;
}

/** Created or replaced, or why not. */
export type ScheduleRecrawlOutcome =
  | { kind: 'scheduled'; replaced: boolean; view: RecrawlScheduleView }
  | RecrawlRefusal;

/** Creates or replaces the schedule of `crawlId`'s archive; `body` is `{ every, ...settings }`. */
export async function scheduleRecrawl(
  deps: RecrawlScheduleDeps,
  crawlId: string,
  body: unknown,
): Promise<ScheduleRecrawlOutcome> {
  const from = await deps.table.getCrawl(crawlId);
  if (from === undefined) return { kind: 'not-found' };
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return {
      kind: 'invalid',
      problems: ['body: expected an object { "every": "7 days", ...settings of the rounds }'],
    };
  const { every: everyText, ...settings } = body as Record<string, unknown>;
  const every = parseRecrawlEvery(everyText, deps.minIntervalMinutes ?? DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES);
  const round = roundSettings(from, settings);
  const problems = [...(every.ok ? [] : [every.problem]), ...(round.ok ? [] : round.problems)];
  if (!every.ok || problems.length > 0) return { kind: 'invalid', problems };
  const unarchived = unarchivedProblem(from);
  if (unarchived !== undefined) return { kind: 'conflict', problem: unarchived };
  const archive = archiveOf(from);
  const now = deps.clock.now();
  // A rate's first round comes one period after scheduling: the crawl asked of has just run.
  const startAt = every.intervalMs === undefined ? undefined : now + every.intervalMs;
  const put = await deps.schedules.put({
    archive,
    expression: every.expression,
    ...(startAt === undefined ? {} : { startAt }),
    input: { recrawl: archive, settings },
  });
  const view = await showRecrawlSchedule(deps, crawlId);
  if (view.kind !== 'schedule') throw new Error(`the schedule of ${archive} was created but cannot be read`);
  return { kind: 'scheduled', replaced: put === 'replaced', view: view.view };
}

/** The schedule of `crawlId`'s archive with its runs, `none`, or `not-found` (no such crawl). */
export async function showRecrawlSchedule(
  deps: RecrawlScheduleDeps,
  crawlId: string,
): Promise<
  { kind: 'schedule'; view: RecrawlScheduleView } | { kind: 'none'; archive: string } | { kind: 'not-found' }
> {
  const from = await deps.table.getCrawl(crawlId);
  if (from === undefined) return { kind: 'not-found' };
  const archive = archiveOf(from);
  const [schedule, runs] = await Promise.all([deps.schedules.get(archive), deps.runs.read(archive)]);
  if (schedule === undefined) return { kind: 'none', archive };
  const view: RecrawlScheduleView = {
    archive,
    expression: schedule.expression,
    state: schedule.state,
    settings: schedule.input.settings,
    rounds: { started: runs.started, skipped: runs.skipped, failed: runs.failed },
  };
  const next = nextRun(schedule.expression, schedule.startAt, deps.clock.now());
  if (next !== undefined) view.nextRun = new Date(next).toISOString();
  if (runs.last !== undefined) view.last = runs.last;
  return { kind: 'schedule', view };
}

/** Removes the schedule of `crawlId`'s archive: `removed`, `none` (it had none), `not-found`. */
export async function removeRecrawlSchedule(
  deps: RecrawlScheduleDeps,
  crawlId: string,
): Promise<{ kind: 'removed'; archive: string } | { kind: 'none'; archive: string } | { kind: 'not-found' }> {
  const from = await deps.table.getCrawl(crawlId);
  if (from === undefined) return { kind: 'not-found' };
  const archive = archiveOf(from);
  return (await deps.schedules.remove(archive)) ? { kind: 'removed', archive } : { kind: 'none', archive };
}

/** The next run of a rate schedule that started (or starts) at `startAt`; undefined for cron. */
export function nextRun(expression: string, startAt: number | undefined, now: number): number | undefined {
  const every = parseRecrawlEvery(expression, 0);
  if (!every.ok || every.intervalMs === undefined || startAt === undefined) return undefined;
  if (now <= startAt) return startAt;
  return startAt + Math.ceil((now - startAt) / every.intervalMs) * every.intervalMs;
}
