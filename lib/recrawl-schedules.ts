import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { ENV, TUNING_ENV } from '../functions/cloud/env.ts';
import { pinLogicalId } from './logical-id.ts';

/** Properties of {@link RecrawlSchedules}. */
export interface RecrawlSchedulesProps {
  /** Creates, reads, replaces and deletes the schedules (the HTTP API). */
  readonly api: lambda.Function;
  /** What every schedule invokes: the scheduler, which starts the round. */
  readonly target: lambda.Function;
  /** The shortest interval between two rounds, in minutes (absent: the API's default, 60). */
  readonly minIntervalMinutes?: number;
}

/**
 * The recurring recrawls (docs/recrawl.md, cloud): an EventBridge Scheduler group of the stack
 * (`RecrawlScheduleGroup`: deleting the stack deletes the group, and with it every schedule in it),
 * the role the schedules invoke their target with (`RecrawlScheduleRole`: it may invoke the one
 * target function and nothing else), and the API's grants, exactly: the schedule calls it makes,
 * on schedules of this group only, and passing that one role, to Scheduler only.
 */
export class RecrawlSchedules extends Construct {
  readonly group: scheduler.CfnScheduleGroup;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: RecrawlSchedulesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // No name: CloudFormation makes one per stack, so two stacks in an account never share schedules.
    this.group = new scheduler.CfnScheduleGroup(this, 'RecrawlScheduleGroup', {});
    this.group.overrideLogicalId('RecrawlScheduleGroup');

    this.role = new iam.Role(this, 'RecrawlScheduleRole', {
      description:
        "crawlstack: EventBridge Scheduler invokes the scheduler function with a crawl's recrawl input",
      // Only this account's schedules may use the role (the confused-deputy condition AWS advises).
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    });
    pinLogicalId(this.role);
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.target.functionArn] }),
    );

    const { api } = props;
    api.addEnvironment(ENV.recrawlScheduleGroup, this.group.ref);
    api.addEnvironment(ENV.recrawlScheduleRoleArn, this.role.roleArn);
    api.addEnvironment(ENV.recrawlTargetArn, props.target.functionArn);
    const min = props.minIntervalMinutes;
    if (min !== undefined && (!Number.isInteger(min) || min < 1 || min > 366 * 24 * 60))
      throw new Error(`recrawlMinIntervalMinutes must be an integer from 1 to 527040 (a year), got ${min}`);
    if (min !== undefined)
      api.addEnvironment(TUNING_ENV.recrawlMinIntervalMinutes, String(props.minIntervalMinutes));
    // POST (CreateSchedule, UpdateSchedule when the archive has one), GET and DELETE
    // /crawls/{id}/schedule: schedules are named after archives, so only `<group>/*` names them.
    const schedules = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.group.ref}/*`,
    });
    api.addToRolePolicy(
      new iam.PolicyStatement({
        actions: [
          'scheduler:CreateSchedule',
          'scheduler:GetSchedule',
          'scheduler:UpdateSchedule',
          'scheduler:DeleteSchedule',
        ],
        resources: [schedules],
      }),
    );
    // Creating a schedule passes its role: this one, and to Scheduler only.
    api.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    if (api.role !== undefined) {
      Validations.of(api.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/<RecrawlScheduleGroup>/*]`,
        reason:
          "Schedules are named after crawls' archives, made at run time: only a wildcard in the stack's own schedule group names them; the actions are exactly the API's calls.",
      });
    }
  }
}
