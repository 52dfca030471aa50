/**
 * One Lambda function run in this process: builds the Context, enforces the timeout and reserved
 * concurrency, and keeps the numbers the Lambda bill is made of (invocations, billed duration).
 */
import { randomUUID } from 'node:crypto';
import type { Callback, Context } from 'aws-lambda';

/** A Lambda handler in either style: async, or with a callback as third parameter. */
export type LambdaHandler = (event: never, context: Context, callback: Callback) => unknown;

export interface LocalLambdaOptions {
  name: string;
  handler: LambdaHandler;
  /** Function timeout; Lambda's default is 3 s. */
  timeoutSeconds?: number;
  memoryMb?: number;
  region?: string;
  accountId?: string;
  /** `ReservedConcurrentExecutions`: invocations beyond it are throttled, 0 disables the function. */
  reservedConcurrency?: number;
  /** Where handler errors and timeouts are reported (Lambda would write them to its log group). */
  log?: (message: string) => void;
}

/** How one invocation ended. `billedMs` is the duration rounded up to 1 ms, as Lambda bills. */
export type InvokeOutcome =
  | { kind: 'ok'; result: unknown; billedMs: number }
  | { kind: 'error'; error: unknown; billedMs: number }
  | { kind: 'timeout'; billedMs: number }
  | { kind: 'throttled' };

/** Counters for the cost benchmark. */
export interface FunctionStats {
  invocations: number;
  errors: number;
  timeouts: number;
  throttles: number;
  /** Sum of billed durations, ms. */
  billedMs: number;
  /** billedMs x memory, the unit Lambda prices compute in. */
  gbSeconds: number;
  memoryMb: number;
  maxConcurrent: number;
}

/** A function instance: call {@link LocalLambda.invoke} once per event, as Lambda would. */
export class LocalLambda {
  readonly name: string;
  readonly arn: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  readonly region: string;
  readonly accountId: string;
  readonly reservedConcurrency: number | undefined;
  readonly #handler: LambdaHandler;
  readonly #log: ((message: string) => void) | undefined;
  #inFlight = 0;
  #stats: FunctionStats;

  constructor(options: LocalLambdaOptions) {
    this.name = options.name;
    this.region = options.region ?? 'us-east-1';
    this.accountId = options.accountId ?? '000000000000';
    this.arn = `arn:aws:lambda:${this.region}:${this.accountId}:function:${options.name}`;
    this.timeoutMs = (options.timeoutSeconds ?? 3) * 1000;
    this.memoryMb = options.memoryMb ?? 128;
    this.reservedConcurrency = options.reservedConcurrency;
    this.#handler = options.handler;
    this.#log = options.log;
    this.#stats = {
      invocations: 0,
      errors: 0,
      timeouts: 0,
      throttles: 0,
      billedMs: 0,
      gbSeconds: 0,
      memoryMb: this.memoryMb,
      maxConcurrent: 0,
    };
  }

  /** Invocations running now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  stats(): FunctionStats {
    return { ...this.#stats };
  }

  /**
   * Runs the handler once. A timeout ends the invocation for the caller (as Lambda reports it);
   * the handler's promise cannot be killed in process and is left to finish on its own.
   */
  async invoke(event: unknown): Promise<InvokeOutcome> {
    if (this.reservedConcurrency !== undefined && this.#inFlight >= this.reservedConcurrency) {
      this.#stats.throttles += 1;
      return { kind: 'throttled' };
    }
    this.#inFlight += 1;
    this.#stats.invocations += 1;
    this.#stats.maxConcurrent = Math.max(this.#stats.maxConcurrent, this.#inFlight);
    const requestId = randomUUID();
    const started = performance.now();
    const deadline = Date.now() + this.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      const run = this.#run(event, this.#context(requestId, deadline)).then(
        (result) => ({ kind: 'ok' as const, result }),
        (error: unknown) => ({ kind: 'error' as const, error }),
      );
      const timeout = new Promise<{ kind: 'timeout' }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'timeout' }), this.timeoutMs);
      });
      const outcome = await Promise.race([run, timeout]);
      const billedMs =
        outcome.kind === 'timeout' ? this.timeoutMs : Math.max(1, Math.ceil(performance.now() - started));
      this.#stats.billedMs += billedMs;
      this.#stats.gbSeconds += (billedMs / 1000) * (this.memoryMb / 1024);
      if (outcome.kind === 'error') {
        this.#stats.errors += 1;
        this.#log?.(`${this.name} ${requestId} failed: ${describe(outcome.error)}`);
      } else if (outcome.kind === 'timeout') {
        this.#stats.timeouts += 1;
        this.#log?.(`${this.name} ${requestId} timed out after ${this.timeoutMs} ms`);
      }
      return { ...outcome, billedMs };
    } finally {
      clearTimeout(timer);
      this.#inFlight -= 1;
    }
  }

  #run(event: unknown, context: Context): Promise<unknown> {
    const handler = this.#handler;
    if (handler.length >= 3) {
      // Callback style: the result is whatever the callback gets (or the promise returns).
      return new Promise((resolve, reject) => {
        const callback: Callback = (error, result) => (error ? reject(error) : resolve(result));
        try {
          const returned = handler(event as never, context, callback);
          if (returned instanceof Promise) returned.then(resolve, reject);
        } catch (error) {
          reject(error);
        }
      });
    }
    try {
      return Promise.resolve(handler(event as never, context, () => {}));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #context(requestId: string, deadline: number): Context {
    const fail = (reason: unknown) => {
      throw reason instanceof Error ? reason : new Error(String(reason));
    };
    return {
      callbackWaitsForEmptyEventLoop: true,
      functionName: this.name,
      functionVersion: '$LATEST',
      invokedFunctionArn: this.arn,
      memoryLimitInMB: String(this.memoryMb),
      awsRequestId: requestId,
      logGroupName: `/aws/lambda/${this.name}`,
      logStreamName: `local/[$LATEST]${requestId.replaceAll('-', '')}`,
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      done: (error?: Error) => {
        if (error) fail(error);
      },
      fail,
      succeed: () => {},
    };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}
