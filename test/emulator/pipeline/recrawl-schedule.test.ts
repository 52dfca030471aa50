/**
 * `crawlstack cloud recrawl` and a crawl's recurring recrawl on the stand-in (docs/recrawl.md,
 * cloud): `crawlstack cloud schedule` (POST /crawls/{id}/schedule) creates an EventBridge Scheduler
 * schedule through the API's own role; the stand-in fires it
 * (CRAWLSTACK_LOCAL_SCHEDULE_SPEEDUP: `rate(1 hour)` every 3 s) through the schedule's role into the
 * scheduler function, which starts the archive's rounds by themselves; DELETE removes it and no
 * round follows. And the grants are exact: the API's role may not touch another group's schedules
 * nor pass another role.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { runCli } from '../../e2e/helpers.ts';
import { route } from '../../fixtures/recrawl-site.ts';
import { eventually, type SiteServer, startSite } from '../../fixtures/site-server.ts';
import { EXTERNAL_ENDPOINT, type Pipeline, startPipeline } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SPEEDUP = 1200; // rate(1 hour) -> every 3 s
const PERIOD_MS = 3_600_000 / SPEEDUP;

type ScheduleView = {
  archive: string;
  expression: string;
  nextRun?: string;
  rounds: { started: number; skipped: number; failed: number };
  last?: { kind: string; crawlId?: string; round?: number; reason?: string };
};

describe('pipeline: a recurring recrawl (EventBridge Scheduler)', {
  skip: EXTERNAL_ENDPOINT !== undefined && 'stand-in only',
}, () => {
  let pipeline: Pipeline;
  let site: SiteServer;
  before(async () => {
    pipeline = await startPipeline({ limits: { scheduleSpeedup: SPEEDUP } });
    site = await startSite(route, '127.0.0.72');
  });
  after(async () => {
    await pipeline?.stop();
    await site?.close();
  });

  const base = { allowPrivate: true, delayMs: 0, delayFactor: 0, soft404Probe: false, sitemaps: false };

  it('starts rounds by itself at its rate, each a crawl of its own, until the schedule is removed', async () => {
    const first = await pipeline.startCrawl({ ...base, seeds: [`${site.origin}/`], keepArchive: true });
    await pipeline.waitForStatus(first, ['done'], 30_000);
    await eventually(
      async () => ((await pipeline.pages(first)).length >= 5 ? true : undefined),
      20_000,
      'index',
    );

    // crawlstack cloud recrawl: a round now; a second while it runs is refused, saying why.
    const target = ['--api', pipeline.local.api, '--token', pipeline.local.token];
    const now = await runCli(['cloud', 'recrawl', first, '--schedule', 'full', ...target]);
    assert.equal(now.code, 0, now.stderr);
    const manual = now.stdout.trim();
    assert.match(manual, UUID);
    assert.match(now.stderr, new RegExp(`recrawl round 1 of archive ${first} started as crawl ${manual}`));
    const again = await runCli(['cloud', 'recrawl', first, ...target]);
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.stderr, /\(409\): round 1 \(crawl [0-9a-f-]+\) is still running/);
    await pipeline.waitForStatus(manual, ['done'], 30_000);

    const tooOften = await pipeline.api('POST', `/crawls/${first}/schedule`, { every: '5 minutes' });
    assert.equal(tooOften.status, 400);
    assert.match(
      String((tooOften.json.problems as string[])[0]),
      /shorter than this stack's minimum interval of 1 hour/,
    );
    assert.equal((await pipeline.api('GET', `/crawls/${first}/schedule`)).status, 404);

    const created = await runCli([
      'cloud',
      'schedule',
      first,
      '--every',
      '1 hour',
      '--schedule',
      'full',
      '--json',
      ...target,
    ]);
    assert.equal(created.code, 0, created.stderr);
    const view = JSON.parse(created.stdout) as ScheduleView & { settings: unknown };
    assert.equal(view.expression, 'rate(1 hour)');
    assert.equal(view.archive, first);
    assert.deepEqual(view.settings, { recrawlSchedule: 'full' });

    const two = await eventually(
      async () => {
        const shown = (await pipeline.api('GET', `/crawls/${first}/schedule`)).json as ScheduleView;
        return shown.rounds.started >= 2 ? shown : undefined;
      },
      40_000,
      'two scheduled rounds',
    );
    assert.equal(two.rounds.failed, 0, JSON.stringify(two));
    assert.equal(two.last?.kind, 'started');
    const round = await pipeline.status(two.last!.crawlId!);
    assert.equal(round.recrawl?.archive, first);
    assert.equal(round.recrawl?.round, two.last!.round);
    assert.equal(round.recrawl?.schedule, 'full', "the schedule's settings");
    assert.ok(two.last!.round! >= 3, 'after the manual round 1');
    const shown = await runCli(['cloud', 'schedule', first, '--show', ...target]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^recrawl schedule of archive \S+: rate\(1 hour\) \(UTC\), enabled$/m);
    assert.match(shown.stdout, /^ {2}rounds {7}\d+ started/m);

    const removed = await runCli(['cloud', 'schedule', first, '--remove', ...target]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await pipeline.api('GET', `/crawls/${first}/schedule`)).status, 404);
    assert.equal((await pipeline.api('DELETE', `/crawls/${first}/schedule`)).status, 404);
    const none = await runCli(['cloud', 'schedule', first, '--show', ...target]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /has no recrawl schedule/);
    // A run already invoked may still be starting its round: count after it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const listed = async () =>
      ((await pipeline.api('GET', '/crawls?limit=100')).json.crawls as { id: string }[]).length;
    const crawls = await listed();
    await new Promise((resolve) => setTimeout(resolve, 3 * PERIOD_MS));
    assert.equal(await listed(), crawls, 'no round after the schedule is removed');
  });

  it("denies the API's role another group's schedules and passing another role", async () => {
    const { local } = pipeline;
    const iam = local.iam!;
    const spec = local.provisioned.functions.Api!;
    const role = local.provisioned.roles[spec.roleLogicalId!]!;
    // A client with the Api role's policies, as the Api function's calls are evaluated.
    iam.register('ASIATESTAPISCHEDULES', {
      name: 'ApiAsTest',
      sessionArn: `arn:aws:sts::000000000000:assumed-role/${role.name}/test`,
      roleArn: role.arn,
      accountId: '000000000000',
      policies: role.policies,
    });
    const client = new SchedulerClient({
      region: local.region,
      endpoint: local.endpoint,
      credentials: { accessKeyId: 'ASIATESTAPISCHEDULES', secretAccessKey: 'test' },
    });
    const group = spec.env.RECRAWL_SCHEDULE_GROUP;
    const scheduleRole = local.provisioned.roles.RecrawlScheduleRole!.arn;
    const target = local.provisioned.functions.Scheduler!.arn;
    const create = (groupName: string | undefined, roleArn: string) =>
      client.send(
        new CreateScheduleCommand({
          Name: 'exactness',
          ...(groupName === undefined ? {} : { GroupName: groupName }),
          ScheduleExpression: 'rate(1 day)',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: { Arn: target, RoleArn: roleArn, Input: '{}' },
        }),
      );
    try {
      await assert.rejects(create('other-group', scheduleRole), (error: Error) => {
        assert.equal(error.name, 'AccessDeniedException');
        assert.match(
          error.message,
          /scheduler:CreateSchedule on resource: arn:aws:scheduler:[^:]+:000000000000:schedule\/other-group\/exactness/,
        );
        return true;
      });
      await assert.rejects(create(undefined, scheduleRole), /schedule\/default\/exactness/);
      await assert.rejects(create(group, spec.roleArn ?? role.arn), (error: Error) => {
        assert.equal(error.name, 'AccessDeniedException');
        assert.match(error.message, /iam:PassRole/);
        return true;
      });
      // The one combination granted.
      const made = await create(group, scheduleRole);
      assert.match(made.ScheduleArn ?? '', new RegExp(`schedule/${group}/exactness$`));
    } finally {
      client.destroy();
      iam.unregister('ASIATESTAPISCHEDULES');
    }
  });
});
