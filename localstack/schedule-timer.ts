/**
 * An EventBridge schedule rule in process: a timer that invokes the function with a
 * `ScheduledEvent` at the rule's rate. As with EventBridge, a tick invokes the function whether or
 * not an earlier run is still going: runs overlap (each in its own container), and a function that
 * must not run twice at once has to guard itself.
 */
import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import type { InvokeOutcome, LocalLambda } from './local-lambda.ts';

export interface ScheduleTimerOptions {
  lambda: LocalLambda;
  /** `rate(1 minute)`, `rate(5 minutes)`, `rate(2 hours)`, `rate(1 day)`. */
  scheduleExpression?: string;
  /** Overrides the expression's rate (tests use a second or less). */
  rateMs?: number;
  /** The rule's ARN, put in `resources` of each event. */
  ruleArn?: string;
  /** A target's constant `Input`: sent instead of the scheduled event, as EventBridge does. */
  input?: unknown;
  log?: (message: string) => void;
}

/** Counters: runs started, runs started while an earlier one was still going, runs that failed. */
export interface ScheduleStats {
  fired: number;
  overlapped: number;
  failed: number;
}

/** The schedule expression names something the local timer cannot run. */
export class ScheduleExpressionError extends Error {
  readonly code = 'unsupported-schedule-expression';
  constructor(expression: string) {
    super(
      `schedule expression "${expression}" is not supported locally: use rate(...) or pass a rate override`,
    );
    this.name = 'ScheduleExpressionError';
  }
}

const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Milliseconds between runs for an EventBridge `rate(...)` expression. */
export function parseRateExpression(expression: string): number {
  const match = /^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$/.exec(expression.trim());
  if (match === null) throw new ScheduleExpressionError(expression);
  const unit = (match[2] ?? '').replace(/s$/, '');
  return Number(match[1]) * (UNIT_MS[unit] ?? 0);
}

/** Invokes one function on a schedule until {@link ScheduleTimer.stop}. */
export class ScheduleTimer {
  readonly rateMs: number;
  readonly #options: ScheduleTimerOptions;
  #timer: NodeJS.Timeout | undefined;
  readonly #running = new Set<Promise<InvokeOutcome>>();
  #stats: ScheduleStats = { fired: 0, overlapped: 0, failed: 0 };

  constructor(options: ScheduleTimerOptions) {
    this.#options = options;
    this.rateMs = options.rateMs ?? parseRateExpression(options.scheduleExpression ?? 'rate(1 minute)');
    if (!(this.rateMs > 0)) throw new ScheduleExpressionError(String(options.scheduleExpression));
  }

  stats(): ScheduleStats {
    return { ...this.#stats };
  }

  /** Starts the timer; the first run comes one period later, as a new rule's does. */
  start(): this {
    this.#timer ??= setInterval(() => {
      void this.trigger();
    }, this.rateMs);
    return this;
  }

  /** Runs once now, even if earlier runs are still going (they are counted as overlaps). */
  trigger(): Promise<InvokeOutcome> {
    this.#stats.fired += 1;
    if (this.#running.size > 0) this.#stats.overlapped += 1;
    const run: Promise<InvokeOutcome> = this.#options.lambda.invoke(this.#event()).then((outcome) => {
      if (outcome.kind !== 'ok') this.#stats.failed += 1;
      this.#running.delete(run);
      return outcome;
    });
    this.#running.add(run);
    return run;
  }

  /** Stops the timer and waits for the runs in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await Promise.all(this.#running);
  }

  #event(): unknown {
    if (this.#options.input !== undefined) return structuredClone(this.#options.input);
    const lambda = this.#options.lambda;
    const event: ScheduledEvent = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: lambda.accountId,
      // EventBridge stamps whole seconds.
      time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: lambda.region,
      resources: [this.#options.ruleArn ?? `arn:aws:events:${lambda.region}:${lambda.accountId}:rule/local`],
      detail: {},
    };
    return event;
  }
}
