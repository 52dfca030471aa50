/**
 * Recurring recrawls with in-memory fakes: the `every` expressions a schedule takes (and the
 * reasons for those it refuses), the API's /crawls/{id}/schedule routes, and a scheduled run:
 * started, or skipped while the last round runs (counted, not thrown).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApiApp } from '../../../functions/cloud/lambdas/api/api-app.ts';
import { createScheduler, type SchedulerDeps } from '../../../functions/cloud/lambdas/scheduler/handler.ts';
import type {
  RecrawlSchedule,
  RecrawlScheduleSpec,
  RecrawlSchedules,
  ScheduledRun,
  ScheduledRunLog,
  ScheduledRuns,
} from '../../../functions/cloud/ports/recrawl-schedules.ts';
import { foldVisits } from '../../../functions/cloud/use-cases/archive-visits.ts';
import { parseRecrawlEvery } from '../../../functions/cloud/use-cases/recrawl-every.ts';
import { nextRun } from '../../../functions/cloud/use-cases/recrawl-schedule.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { fingerprint } from '../../../functions/core/url/fingerprint.ts';
import { MemoryCloud } from './memory-cloud.ts';

class MemorySchedules implements RecrawlSchedules {
  readonly byArchive = new Map<string, RecrawlSchedule>();
  async put(spec: RecrawlScheduleSpec): Promise<'created' | 'replaced'> {
    const had = this.byArchive.has(spec.archive);
    this.byArchive.set(spec.archive, structuredClone({ ...spec, state: 'ENABLED' as const }));
    return had ? 'replaced' : 'created';
  }
  async get(archive: string): Promise<RecrawlSchedule | undefined> {
    const found = this.byArchive.get(archive);
    return found === undefined ? undefined : structuredClone(found);
  }
  async remove(archive: string): Promise<boolean> {
    return this.byArchive.delete(archive);
  }
}

class MemoryRunLog implements ScheduledRunLog {
  readonly runs = new Map<string, ScheduledRuns>();
  async record(archive: string, run: ScheduledRun): Promise<void> {
    const runs = this.runs.get(archive) ?? { started: 0, skipped: 0, failed: 0 };
    runs[run.kind] += 1;
    runs.last = structuredClone(run);
    this.runs.set(archive, runs);
  }
  async read(archive: string): Promise<ScheduledRuns> {
    return structuredClone(this.runs.get(archive) ?? { started: 0, skipped: 0, failed: 0 });
  }
}

describe('every: the expressions a recurring recrawl takes', () => {
  it('turns "<n> <unit>" and rate(...) into Scheduler rate expressions with their period', () => {
    assert.deepEqual(parseRecrawlEvery('7 days'), {
      ok: true,
      expression: 'rate(7 days)',
      intervalMs: 7 * 86_400_000,
    });
    assert.deepEqual(parseRecrawlEvery('1 week'), {
      ok: true,
      expression: 'rate(7 days)',
      intervalMs: 7 * 86_400_000,
    });
    assert.deepEqual(parseRecrawlEvery('1 Days'), {
      ok: true,
      expression: 'rate(1 day)',
      intervalMs: 86_400_000,
    });
    assert.deepEqual(parseRecrawlEvery('120 minutes'), {
      ok: true,
      expression: 'rate(2 hours)',
      intervalMs: 7_200_000,
    });
    assert.deepEqual(parseRecrawlEvery(' rate(12 hours) '), {
      ok: true,
      expression: 'rate(12 hours)',
      intervalMs: 43_200_000,
    });
    assert.deepEqual(parseRecrawlEvery('cron(0 3 ? * MON *)'), {
      ok: true,
      expression: 'cron(0 3 ? * MON *)',
    });
  });

  it('refuses what is too often, malformed or not recurring, saying what is wrong', () => {
    const problem = (every: unknown, min?: number) => {
      const parsed = parseRecrawlEvery(every, min);
      assert.equal(parsed.ok, false, JSON.stringify(every));
      return parsed.ok ? '' : parsed.problem;
    };
    assert.match(problem('30 minutes'), /shorter than this stack's minimum interval of 1 hour/);
    assert.match(problem('rate(1 minute)'), /shorter than this stack's minimum interval of 1 hour/);
    assert.match(problem('12 hours', 1440), /minimum interval of 1 day/);
    assert.match(problem('0 days'), /at least 1/);
    assert.match(problem('2 fortnights'), /is not "<n> <unit>"/);
    assert.match(problem('1.5 days'), /is not "<n> <unit>"/);
    assert.match(problem('400 days'), /longer than a year/);
    assert.match(problem('rate(1 week)'), /minutes, hours or days/);
    assert.match(
      problem('weekly'),
      /is not "<n> <unit>" \(e\.g\. "7 days"\), rate\(\.\.\.\) or cron\(\.\.\.\)/,
    );
    assert.match(problem(7), /expected "<n> <unit>"/);
    assert.match(problem(undefined), /got null/);
    assert.match(problem('cron(0 3 * *)'), /six fields/);
    assert.match(problem('cron(0 3 1 * MON *)'), /one of day-of-month and day-of-week must be "\?"/);
    assert.match(problem('cron(*/5 * ? * * *)'), /minutes field must be one minute/);
    assert.match(problem('cron(0 * ? * * *)', 1440), /hours field must be one hour/);
    assert.match(problem('at(2027-01-01T00:00:00)'), /not recurring/);
  });

  it('knows the next run of a rate schedule from its start', () => {
    const hour = 3_600_000;
    assert.equal(nextRun('rate(1 hour)', 10 * hour, 5 * hour), 10 * hour);
    assert.equal(nextRun('rate(1 hour)', 10 * hour, 12.5 * hour), 13 * hour);
    assert.equal(nextRun('cron(0 3 ? * MON *)', 10 * hour, 12 * hour), undefined);
  });
});

describe('/crawls/{id}/schedule and a scheduled run', () => {
  const first = '00000000-0000-4000-8000-000000000001';
  const NOW = Date.UTC(2026, 11, 1);

  async function setup(keepArchive = true) {
    const cloud = new MemoryCloud();
    const parsed = parseCrawlConfig({ seeds: ['https://example.com/'], keepArchive });
    if (!parsed.ok) throw new Error(parsed.problems.join());
    await cloud.table.createCrawl({
      id: first,
      status: 'done',
      createdAt: '2026-11-01T00:00:00.000Z',
      config: parsed.config,
      seeds: 1,
    });
    const url = 'https://example.com/';
    await foldVisits(
      cloud.archives,
      first,
      first,
      [
        {
          page: {
            fp: fingerprint(url),
            url,
            host: 'example.com',
            status: 200,
            kind: 'page',
            depth: 0,
            bytes: 1,
            outLinks: 0,
            fetchedAt: '2026-11-01T00:00:00.000Z',
            contentHash: 'h',
            contentType: 'text/html',
            messageId: 'm',
            enqueued: 0,
          },
        },
      ],
      true,
    );
    const schedules = new MemorySchedules();
    const runs = new MemoryRunLog();
    let n = 0;
    const deps = cloud.apiDeps({ now: () => NOW }, () => `11111111-1111-4111-8111-11111111111${n++}`);
    const app = createApiApp({ ...deps, recrawlSchedules: { schedules, runs } });
    const call = async (method: string, body?: unknown) => {
      const response = await app.request(`/crawls/${first}/schedule`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const lines: string[] = [];
    const scheduler = createScheduler({
      recrawl: { ...deps, archives: cloud.archives, runs, log: (line: string) => lines.push(line) },
    } as unknown as SchedulerDeps);
    return { cloud, schedules, runs, call, scheduler, lines };
  }

  it('creates, shows, replaces and removes the schedule of the archive', async () => {
    const { schedules, call } = await setup();
    const created = await call('POST', { every: '7 days', recrawlSchedule: 'uniform', recrawlBudget: 50 });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.deepEqual(created.json, {
      archive: first,
      expression: 'rate(7 days)',
      state: 'ENABLED',
      settings: { recrawlSchedule: 'uniform', recrawlBudget: 50 },
      nextRun: new Date(NOW + 7 * 86_400_000).toISOString(),
      rounds: { started: 0, skipped: 0, failed: 0 },
    });
    assert.deepEqual(schedules.byArchive.get(first)?.input, {
      recrawl: first,
      settings: { recrawlSchedule: 'uniform', recrawlBudget: 50 },
    });
    assert.equal((await call('GET')).status, 200);
    const replaced = await call('POST', { every: 'cron(0 3 ? * SUN *)' });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.json.expression, 'cron(0 3 ? * SUN *)');
    assert.equal(replaced.json.nextRun, undefined);
    assert.equal((await call('DELETE')).status, 200);
    const none = await call('GET');
    assert.equal(none.status, 404);
    assert.match(String(none.json.error), /has no recrawl schedule/);
    assert.equal((await call('DELETE')).status, 404);
  });

  it('refuses a bad expression and bad round settings together, and a crawl without an archive', async () => {
    const { call, schedules } = await setup();
    const bad = await call('POST', {
      every: '1 minute',
      recrawlSchedule: 'sometimes',
      seeds: ['https://x/'],
    });
    assert.equal(bad.status, 400);
    const problems = bad.json.problems as string[];
    assert.match(problems[0]!, /^every: "1 minute" is shorter than/);
    assert.match(problems[1]!, /^seeds: /);
    assert.equal((await call('POST', 'not an object')).status, 400);
    assert.equal(schedules.byArchive.size, 0);
    const unarchived = await setup(false);
    const refused = await unarchived.call('POST', { every: '7 days' });
    assert.equal(refused.status, 409);
    assert.match(String(refused.json.error), /keepArchive/);
  });

  it('starts a round for a schedule, skips (counts, logs, does not throw) while it runs, outlives the first crawl item', async () => {
    const { cloud, scheduler, runs, lines } = await setup();
    const started = await scheduler({ recrawl: first, settings: { recrawlSchedule: 'full' } });
    assert.equal(started.kind, 'started');
    const round = await cloud.table.getCrawl(started.kind === 'started' ? started.crawlId : '');
    assert.equal(round?.recrawl?.round, 1);
    assert.equal(round?.config.recrawlSchedule, 'full');
    const skipped = await scheduler({ recrawl: first, settings: {} });
    assert.equal(skipped.kind, 'skipped');
    assert.match(skipped.kind === 'skipped' ? skipped.reason : '', /is still running/);
    const bad = await scheduler({ recrawl: first, settings: { recrawlSchedule: 'never' } });
    assert.equal(bad.kind, 'failed');
    assert.deepEqual(
      { ...(await runs.read(first)), last: undefined },
      { started: 1, skipped: 1, failed: 1, last: undefined },
    );
    assert.equal(lines.length, 3);
    assert.match(lines[1]!, /skipped: crawl \S+ is still running/);
    // Round 1 ends; the first crawl's item expires (retentionDays): the next run starts from round 1.
    cloud.table.crawls.set(round!.id, { ...round!, status: 'done' });
    cloud.table.crawls.delete(first);
    const next = await scheduler({ recrawl: first, settings: {} });
    assert.equal(next.kind === 'started' ? next.round : next.kind, 2);
  });
});
