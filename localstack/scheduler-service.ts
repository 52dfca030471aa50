/**
 * EventBridge Scheduler in the stand-in endpoint: the schedule calls of its REST-JSON API as the
 * AWS SDK sends them (`POST /schedules/{Name}` CreateSchedule, `PUT` UpdateSchedule, `GET`
 * GetSchedule, `DELETE` DeleteSchedule, the group in `GroupName` / `?groupName=`), authorized like
 * every other call (`scheduler:<Operation>` on `schedule/<group>/<name>`; creating or updating
 * also needs `iam:PassRole` of the target's role with `iam:PassedToService`
 * `scheduler.amazonaws.com`), and run: a `rate(...)` schedule invokes its target (a local Lambda,
 * with the target's `Input`) from its `StartDate` on at its rate, divided by
 * `CRAWLSTACK_LOCAL_SCHEDULE_SPEEDUP` (aws-limits.ts) so a test sees `rate(1 hour)` fire every
 * second. Each invocation is authorized as the schedule's role (`lambda:InvokeFunction` on the
 * target). `cron(...)` schedules are kept and shown but never fired here (logged once).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IamAuthorization } from './iam-actions.ts';
import { parseRateExpression } from './schedule-timer.ts';

/** What firing a schedule asks of the stack: invoke `arn` as `roleArn` with `input`. */
export type ScheduleInvoker = (target: {
  arn: string;
  roleArn: string;
  input: unknown;
  scheduleArn: string;
}) => Promise<{ ok: boolean; detail?: string }>;

/** Per schedule: runs fired and runs that failed (refused or the function failed). */
export interface LocalScheduleStats {
  fired: number;
  failed: number;
}

export interface SchedulerServiceOptions {
  accountId: string;
  /** Divides every schedule's rate and start delay (1: AWS's timing). */
  speedup: number;
  /** Evaluates a request's authorizations (the endpoint's IAM enforcer); undefined: allowed. */
  authorize: (
    accessKeyId: string | undefined,
    authorizations: IamAuthorization[],
    region: string,
  ) => Promise<{ message: string } | undefined>;
  log?: (line: string) => void;
}

interface StoredSchedule {
  name: string;
  group: string;
  arn: string;
  region: string;
  request: Record<string, unknown>;
  created: number;
  modified: number;
  timer?: NodeJS.Timeout;
  stats: LocalScheduleStats;
}

const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;

/** A Scheduler error as the SDK reads it (REST-JSON: the status and `x-amzn-errortype`). */
class SchedulerError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function epochMs(value: unknown): number | undefined {
  if (typeof value === 'number') return value * 1000; // REST-JSON timestamps are epoch seconds
  if (typeof value === 'string' && value !== '') {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

/** The emulated service; the endpoint hands it every request signed for service `scheduler`. */
export class SchedulerService {
  readonly #options: SchedulerServiceOptions;
  readonly #schedules = new Map<string, StoredSchedule>();
  #invoker: ScheduleInvoker | undefined;

  constructor(options: SchedulerServiceOptions) {
    this.#options = options;
  }

  /** Sets what fired schedules invoke (the local stack, once its functions exist). */
  setInvoker(invoker: ScheduleInvoker | undefined): void {
    this.#invoker = invoker;
  }

  /** Runs per schedule ARN. */
  stats(): Record<string, LocalScheduleStats> {
    const out: Record<string, LocalScheduleStats> = {};
    for (const s of this.#schedules.values()) out[s.arn] = { ...s.stats };
    return out;
  }

  /** Stops every schedule's timer (the endpoint closes). */
  stop(): void {
    for (const s of this.#schedules.values()) clearTimeout(s.timer);
  }

  /** Answers one request (the body already read). */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    accessKeyId: string | undefined,
    region: string,
  ): Promise<void> {
    try {
      const answer = await this.#route(req, body, accessKeyId, region);
      const text = JSON.stringify(answer);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } catch (error) {
      const e =
        error instanceof SchedulerError
          ? error
          : new SchedulerError(500, 'InternalServerException', String(error));
      const text = JSON.stringify({ Message: e.message });
      res.writeHead(e.status, {
        'content-type': 'application/json',
        'x-amzn-errortype': e.type,
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    }
  }

  /** The operation a request names (for the endpoint's counts). */
  static operationOf(method: string, path: string): string {
    if (!path.startsWith('/schedules/'))
      return path.startsWith('/schedule-groups') ? 'ScheduleGroup' : 'Unknown';
    return (
      { POST: 'CreateSchedule', PUT: 'UpdateSchedule', GET: 'GetSchedule', DELETE: 'DeleteSchedule' }[
        method
      ] ?? 'Unknown'
    );
  }

  async #route(
    req: IncomingMessage,
    body: string,
    accessKeyId: string | undefined,
    region: string,
  ): Promise<unknown> {
    const url = new URL(req.url ?? '/', 'http://local');
    const method = req.method ?? 'GET';
    const operation = SchedulerService.operationOf(method, url.pathname);
    if (operation === 'Unknown' || operation === 'ScheduleGroup')
      throw new SchedulerError(
        404,
        'UnknownOperationException',
        `the stand-in's Scheduler knows the schedule calls only, not ${method} ${url.pathname}`,
      );
    const name = decodeURIComponent(url.pathname.slice('/schedules/'.length));
    if (!NAME.test(name))
      throw new SchedulerError(
        400,
        'ValidationException',
        `Name ${JSON.stringify(name)}: 1 to 64 of [0-9a-zA-Z-_.]`,
      );
    let request: Record<string, unknown> = {};
    if (body !== '') {
      try {
        request = JSON.parse(body) as Record<string, unknown>;
      } catch {
        throw new SchedulerError(400, 'ValidationException', 'the body is not JSON');
      }
    }
    const group =
      (typeof request.GroupName === 'string' ? request.GroupName : url.searchParams.get('groupName')) ||
      'default';
    const arn = `arn:aws:scheduler:${region}:${this.#options.accountId}:schedule/${group}/${name}`;
    const authorizations: IamAuthorization[] = [{ action: `scheduler:${operation}`, resource: arn }];
    const roleArn = (request.Target as { RoleArn?: unknown } | undefined)?.RoleArn;
    if ((operation === 'CreateSchedule' || operation === 'UpdateSchedule') && typeof roleArn === 'string')
      authorizations.push({
        action: 'iam:PassRole',
        resource: roleArn,
        context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
      });
    const denial = await this.#options.authorize(accessKeyId, authorizations, region);
    if (denial !== undefined) throw new SchedulerError(403, 'AccessDeniedException', denial.message);

    const key = `${group}/${name}`;
    const existing = this.#schedules.get(key);
    switch (operation) {
      case 'CreateSchedule':
      case 'UpdateSchedule': {
        if (operation === 'CreateSchedule' && existing !== undefined)
          throw new SchedulerError(409, 'ConflictException', `Schedule ${name} already exists.`);
        if (operation === 'UpdateSchedule' && existing === undefined)
          throw new SchedulerError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
        this.#validate(request);
        const now = Date.now();
        if (existing !== undefined) clearTimeout(existing.timer);
        const schedule: StoredSchedule = {
          name,
          group,
          arn,
          region,
          request,
          created: existing?.created ?? now,
          modified: now,
          stats: existing?.stats ?? { fired: 0, failed: 0 },
        };
        this.#schedules.set(key, schedule);
        this.#arm(schedule);
        return { ScheduleArn: arn };
      }
      case 'GetSchedule': {
        if (existing === undefined)
          throw new SchedulerError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
        const r = existing.request;
        return {
          Arn: existing.arn,
          Name: name,
          GroupName: group,
          ScheduleExpression: r.ScheduleExpression,
          ...(r.ScheduleExpressionTimezone === undefined
            ? {}
            : { ScheduleExpressionTimezone: r.ScheduleExpressionTimezone }),
          ...(r.StartDate === undefined ? {} : { StartDate: r.StartDate }),
          ...(r.EndDate === undefined ? {} : { EndDate: r.EndDate }),
          ...(r.Description === undefined ? {} : { Description: r.Description }),
          State: r.State ?? 'ENABLED',
          CreationDate: existing.created / 1000,
          LastModificationDate: existing.modified / 1000,
          FlexibleTimeWindow: r.FlexibleTimeWindow,
          Target: r.Target,
          ActionAfterCompletion: r.ActionAfterCompletion ?? 'NONE',
        };
      }
      default: {
        if (existing === undefined)
          throw new SchedulerError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
        clearTimeout(existing.timer);
        this.#schedules.delete(key);
        return {};
      }
    }
  }

  #validate(request: Record<string, unknown>): void {
    const problems: string[] = [];
    const expression = request.ScheduleExpression;
    if (typeof expression !== 'string' || !/^(rate|cron|at)\(.*\)$/.test(expression))
      problems.push('ScheduleExpression: rate(...), cron(...) or at(...)');
    const window = request.FlexibleTimeWindow as { Mode?: unknown } | undefined;
    if (window?.Mode !== 'OFF' && window?.Mode !== 'FLEXIBLE')
      problems.push('FlexibleTimeWindow.Mode: OFF or FLEXIBLE');
    const target = request.Target as { Arn?: unknown; RoleArn?: unknown } | undefined;
    if (typeof target?.Arn !== 'string' || typeof target.RoleArn !== 'string')
      problems.push('Target: Arn and RoleArn are required');
    if (problems.length > 0) throw new SchedulerError(400, 'ValidationException', problems.join('; '));
  }

  /** Sets the schedule's next firing: its start date, then every rate period (both sped up). */
  #arm(schedule: StoredSchedule): void {
    const r = schedule.request;
    if (r.State === 'DISABLED') return;
    const expression = String(r.ScheduleExpression);
    let rateMs: number;
    try {
      rateMs = parseRateExpression(expression);
    } catch {
      this.#options.log?.(
        `scheduler: ${schedule.arn}: ${expression} is kept but not fired by the stand-in (rate(...) only)`,
      );
      return;
    }
    const speedup = this.#options.speedup;
    const period = Math.max(1, rateMs / speedup);
    const start = epochMs(r.StartDate);
    const first = start === undefined ? period : Math.max(0, (start - Date.now()) / speedup);
    const fire = () => {
      schedule.timer = setTimeout(fire, period);
      void this.#fire(schedule);
    };
    schedule.timer = setTimeout(fire, first);
  }

  async #fire(schedule: StoredSchedule): Promise<void> {
    schedule.stats.fired += 1;
    const target = schedule.request.Target as { Arn: string; RoleArn: string; Input?: string };
    let input: unknown = {};
    try {
      input = target.Input === undefined ? {} : JSON.parse(target.Input);
    } catch {
      input = target.Input; // Scheduler passes a non-JSON Input as it is
    }
    const invoker = this.#invoker;
    const outcome =
      invoker === undefined
        ? { ok: false, detail: 'no function is runnable behind this endpoint' }
        : await invoker({ arn: target.Arn, roleArn: target.RoleArn, input, scheduleArn: schedule.arn }).catch(
            (error: unknown) => ({ ok: false, detail: String(error) }),
          );
    if (!outcome.ok) {
      schedule.stats.failed += 1;
      this.#options.log?.(
        `scheduler: ${schedule.arn} could not invoke ${target.Arn}: ${outcome.detail ?? 'failed'}`,
      );
    }
  }
}
