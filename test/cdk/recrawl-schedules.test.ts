/**
 * The recurring recrawls' resources and grants (lib/recrawl-schedules.ts): a schedule group of the
 * stack, a role that may only invoke the scheduler function, and the API allowed exactly the
 * schedule calls on that group's schedules and to pass that one role, to Scheduler only.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { App } from 'aws-cdk-lib';
import { readStackContext } from '../../lib/context.ts';
import { type CfnResource, roleOf, synthStack } from './synth.ts';

const built = synthStack({}, { bundle: false, validate: false });
after(() => built.dispose());
const resources = built.template.toJSON().Resources as Record<string, CfnResource>;

type RawStatement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Every statement of the role's attached and inline policies, as written. */
function statements(roleId: string): RawStatement[] {
  const out: RawStatement[] = [];
  for (const resource of Object.values(resources)) {
    const roles = (resource.Properties?.Roles ?? []) as { Ref?: string }[];
    if (resource.Type === 'AWS::IAM::Policy' && roles.some((r) => r.Ref === roleId))
      out.push(...list((resource.Properties!.PolicyDocument as { Statement: RawStatement[] }).Statement));
  }
  for (const policy of (resources[roleId]?.Properties?.Policies ?? []) as {
    PolicyDocument: { Statement: RawStatement[] };
  }[])
    out.push(...list(policy.PolicyDocument.Statement));
  return out;
}

describe('recurring recrawls: EventBridge Scheduler, granted exactly', () => {
  it('makes the schedule group a resource of the stack (deleting the stack deletes its schedules)', () => {
    const group = resources.RecrawlScheduleGroup;
    assert.equal(group?.Type, 'AWS::Scheduler::ScheduleGroup');
    assert.equal(group?.Properties?.Name, undefined, 'named per stack by CloudFormation');
  });

  it("lets Scheduler (this account's only) assume the schedule role, which may only invoke the scheduler", () => {
    const role = resources.RecrawlScheduleRole;
    assert.equal(role?.Type, 'AWS::IAM::Role');
    const trust = (role!.Properties!.AssumeRolePolicyDocument as { Statement: RawStatement[] }).Statement;
    assert.deepEqual(
      trust.map((s) => ({ action: s.Action, principal: (s as { Principal?: unknown }).Principal })),
      [{ action: 'sts:AssumeRole', principal: { Service: 'scheduler.amazonaws.com' } }],
    );
    assert.deepEqual(trust[0]?.Condition, {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
    });
    assert.deepEqual(
      statements('RecrawlScheduleRole').map((s) => ({ action: s.Action, resource: s.Resource })),
      [{ action: 'lambda:InvokeFunction', resource: { 'Fn::GetAtt': ['Scheduler', 'Arn'] } }],
    );
  });

  it("grants the API the schedule calls on its group's schedules only, and PassRole of that role to Scheduler only", () => {
    const api = statements(roleOf(built.template, 'Api'));
    const scheduler = api.filter((s) => list(s.Action).some((a) => a.startsWith('scheduler:')));
    assert.equal(scheduler.length, 1);
    assert.deepEqual(list(scheduler[0]!.Action).sort(), [
      'scheduler:CreateSchedule',
      'scheduler:DeleteSchedule',
      'scheduler:GetSchedule',
      'scheduler:UpdateSchedule',
    ]);
    assert.deepEqual(scheduler[0]!.Resource, {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':scheduler:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          ':schedule/',
          { Ref: 'RecrawlScheduleGroup' },
          '/*',
        ],
      ],
    });
    const pass = api.filter((s) => list(s.Action).includes('iam:PassRole'));
    assert.equal(pass.length, 1);
    assert.deepEqual(pass[0], {
      Effect: 'Allow',
      Action: 'iam:PassRole',
      Resource: { 'Fn::GetAtt': ['RecrawlScheduleRole', 'Arn'] },
      Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
    });
    // No other function may touch schedules or pass roles.
    for (const fn of ['FrontierWorker', 'Scheduler', 'Archiver']) {
      const actions = statements(roleOf(built.template, fn)).flatMap((s) => list(s.Action));
      assert.ok(!actions.some((a) => a.startsWith('scheduler:') || a === 'iam:PassRole'), fn);
    }
  });

  it('sets the minimum interval of the API (crawlstack:recrawlMinIntervalMinutes), and refuses a bad one', () => {
    const daily = synthStack({ recrawlMinIntervalMinutes: 1440 }, { bundle: false, validate: false });
    try {
      const api = daily.template.toJSON().Resources.Api as CfnResource;
      const vars = (api.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
      assert.equal(vars.RECRAWL_MIN_INTERVAL_MINUTES, '1440');
    } finally {
      daily.dispose();
    }
    const api = resources.Api!.Properties?.Environment as { Variables: Record<string, unknown> };
    assert.equal(api.Variables.RECRAWL_MIN_INTERVAL_MINUTES, undefined, "unset: the API's default, 60");
    const app = new App({ context: { 'crawlstack:recrawlMinIntervalMinutes': '1440' } });
    assert.equal(readStackContext(app.node).recrawlMinIntervalMinutes, 1440);
    assert.throws(
      () => synthStack({ recrawlMinIntervalMinutes: 0 }, { bundle: false, validate: false }),
      /recrawlMinIntervalMinutes must be an integer from 1 to 527040 \(a year\), got 0/,
    );
  });
});
