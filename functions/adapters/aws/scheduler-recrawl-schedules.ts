/**
 * Recurring recrawls on EventBridge Scheduler: one schedule per archive, named after it, in the
 * stack's schedule group; its target is the scheduler function, invoked with the round's input
 * through the role the stack made for it (the API passes that role: iam:PassRole). A schedule is
 * created, or replaced by UpdateSchedule when the archive has one (Scheduler answers a second
 * CreateSchedule with ConflictException).
 */
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import type {
  RecrawlSchedule,
  RecrawlScheduleSpec,
  RecrawlSchedules,
  ScheduledRecrawl,
} from '../../cloud/ports/recrawl-schedules.ts';
import { clientBase, clientRequestHandler } from './clients.ts';

/** Where the schedules go and what they invoke (the stack's environment, env.ts). */
export interface SchedulerTarget {
  /** The stack's schedule group. */
  group: string;
  /** ARN of the function each schedule invokes (the scheduler). */
  targetArn: string;
  /** ARN of the role Scheduler invokes it with. */
  roleArn: string;
}

/** An EventBridge Scheduler client built as every other client is (clients.ts). */
export function createSchedulerClient(env: Record<string, string | undefined>): SchedulerClient {
  return new SchedulerClient({ ...clientBase(env), requestHandler: clientRequestHandler() });
}

// A failed invocation is tried again twice within the hour; a round is idempotent per number.
const RETRY_POLICY = { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 };

export class SchedulerRecrawlSchedules implements RecrawlSchedules {
  readonly #client: SchedulerClient;
  readonly #target: SchedulerTarget;

  constructor(client: SchedulerClient, target: SchedulerTarget) {
    this.#client = client;
    this.#target = target;
  }

  async put(spec: RecrawlScheduleSpec): Promise<'created' | 'replaced'> {
    const input = {
      Name: spec.archive,
      GroupName: this.#target.group,
      ScheduleExpression: spec.expression,
      ScheduleExpressionTimezone: 'UTC',
      ...(spec.startAt === undefined ? {} : { StartDate: new Date(spec.startAt) }),
      FlexibleTimeWindow: { Mode: 'OFF' as const },
      State: 'ENABLED' as const,
      Description: `crawlstack: recrawl of archive ${spec.archive}`,
      Target: {
        Arn: this.#target.targetArn,
        RoleArn: this.#target.roleArn,
        Input: JSON.stringify(spec.input),
        RetryPolicy: RETRY_POLICY,
      },
    };
    try {
      await this.#client.send(new CreateScheduleCommand(input));
      return 'created';
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
    }
    await this.#client.send(new UpdateScheduleCommand(input));
    return 'replaced';
  }

  async get(archive: string): Promise<RecrawlSchedule | undefined> {
    try {
      const found = await this.#client.send(
        new GetScheduleCommand({ Name: archive, GroupName: this.#target.group }),
      );
      const input = JSON.parse(found.Target?.Input ?? '{}') as ScheduledRecrawl;
      const schedule: RecrawlSchedule = {
        archive,
        expression: found.ScheduleExpression ?? '',
        state: found.State === 'DISABLED' ? 'DISABLED' : 'ENABLED',
        input: { recrawl: input.recrawl ?? archive, settings: input.settings ?? {} },
      };
      if (found.StartDate !== undefined) schedule.startAt = found.StartDate.getTime();
      if (found.CreationDate !== undefined) schedule.createdAt = found.CreationDate.getTime();
      return schedule;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  }

  async remove(archive: string): Promise<boolean> {
    try {
      await this.#client.send(new DeleteScheduleCommand({ Name: archive, GroupName: this.#target.group }));
      return true;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return false;
      throw error;
    }
  }
}
