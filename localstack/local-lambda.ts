/**
 * One Lambda function: a pool of execution environments ("containers") and the rules Lambda
 * applies to them. An invocation takes a warm idle container (the most recently used) or starts a
 * new one (a cold start); at most the reserved concurrency run at once, or, without one, as many
 * as the account's concurrency leaves (1,000 shared by every function of the account, see
 * {@link AccountConcurrency}); beyond that an invocation is throttled. An invocation that passes the function's timeout is
 * killed together with its container, as Lambda does, so the next one starts cold. Containers
 * idle longer than `idleMs` are reclaimed. Each invocation's wall time (billed: rounded up to
 * 1 ms) and the CPU time of its container's thread are recorded for the cost benchmark.
 *
 * Where this machine is not Lambda's fleet: cold starts across all functions of the process take
 * turns (as many at once as cores), and an invocation waiting for its new container runs in one
 * that becomes idle first, if one does (see `StartGate`).
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { type ChaosKill, type ChaosOptions, checkChaos, seededRandom } from './chaos.ts';
import {
  type ContainerFactory,
  type ContainerRun,
  InProcessContainer,
  type LambdaContainer,
  resolveHandler,
  WorkerContainer,
} from './lambda-container.ts';
import type { InvocationInfo, LambdaHandler } from './lambda-context.ts';
import type { RecursiveLoop } from './recursion-detection.ts';

export type { LambdaHandler } from './lambda-context.ts';

/** The bundled code of a function, run in worker-thread containers. */
export interface FunctionCode {
  /** The asset folder (`cdk.out/asset.<hash>`). */
  assetDir: string;
  /** `index.handler`: module `index` in the asset folder, export `handler`. */
  handler: string;
  /** Each container's whole `process.env`: the function's environment and its credentials. */
  env: Record<string, string>;
}

export interface LocalLambdaOptions {
  name: string;
  /** The function's code: each container is a worker thread with its own modules and env. */
  code?: FunctionCode;
  /**
   * A handler of this process instead of `code`: every container calls this one function, so
   * module state is shared (tests of the triggers use it with hand-written handlers).
   */
  handler?: LambdaHandler;
  /** Function timeout; Lambda's default is 3 s. */
  timeoutSeconds?: number;
  memoryMb?: number;
  region?: string;
  accountId?: string;
  /** `ReservedConcurrentExecutions`: invocations beyond it are throttled, 0 disables the function. */
  reservedConcurrency?: number;
  /** Concurrent invocations without a reservation (Lambda's default account quota: 1,000). */
  accountConcurrency?: number;
  /**
   * The account's concurrency, shared with the other functions of the stack (it wins over
   * `accountConcurrency`, which gives the function an account of its own).
   */
  account?: AccountConcurrency;
  /** `RecursiveLoop` of the template: `Terminate` (Lambda's default) or `Allow`. */
  recursiveLoop?: RecursiveLoop;
  /** Invocations of one chain of events before `Terminate` stops it (Lambda: 16). */
  recursionLimit?: number;
  /** An idle container is reclaimed after this long (default 5 minutes). */
  idleMs?: number;
  /** Kill containers at random points of invocations (see chaos.ts); worker-thread containers only. */
  chaos?: ChaosOptions;
  /**
   * Where handler output, errors and timeouts go (Lambda writes them to its log group). Each line
   * a container writes to stdout or stderr comes with `[<name>] ` in front, and the container's
   * number as the second argument (its log stream: what CloudWatch shows per execution
   * environment); without this option those lines go to stderr and errors are not reported.
   */
  log?: (message: string, container?: number) => void;
}

/** Facts about one finished invocation. */
export interface InvocationRecord {
  kind: 'ok' | 'error' | 'timeout';
  /** Wall time of the invocation, ms (the cold start not included). */
  durationMs: number;
  /** `durationMs` rounded up to whole ms, at least 1: what Lambda bills. */
  billedMs: number;
  /** CPU time of the container thread during the invocation, ms; absent when it was killed. */
  cpuMs?: number;
  coldStart: boolean;
  /** The cold start (thread start + module import), ms, when there was one. */
  initMs?: number;
}

/** How one invocation ended. `billedMs` is the duration rounded up to 1 ms, as Lambda bills. */
export type InvokeOutcome =
  | ({ kind: 'ok'; result: unknown; billedMs: number } & Partial<InvocationFacts>)
  | ({ kind: 'error'; error: unknown; billedMs: number } & Partial<InvocationFacts>)
  | ({ kind: 'timeout'; billedMs: number } & Partial<InvocationFacts>)
  | { kind: 'throttled' };

/** An invocation record without its kind (the outcome carries that). */
export type InvocationFacts = Omit<InvocationRecord, 'kind'>;

/** Counters for the cost benchmark. */
export interface FunctionStats {
  invocations: number;
  errors: number;
  timeouts: number;
  throttles: number;
  /** Sum of billed durations, ms (cold starts not included). */
  billedMs: number;
  /** billedMs x memory, the unit Lambda prices compute in. */
  gbSeconds: number;
  memoryMb: number;
  maxConcurrent: number;
  /** Sum of the container threads' CPU time over the invocations, ms. */
  cpuMs: number;
  /**
   * The most V8 heap (used + external) one container held during an invocation, MiB, sampled
   * every 100 ms; 0 for in-process containers. The runtime's own memory (about 112 MiB RSS for
   * the worker, lambda-settings.ts) comes on top.
   */
  peakHeapMb: number;
  /** Containers started (each a cold start), and their summed start time, ms. */
  coldStarts: number;
  initMs: number;
  /** Containers alive now, the most at once, and those killed (timeout, crash, out of memory, chaos). */
  containers: number;
  peakContainers: number;
  killedContainers: number;
  /** Containers killed by chaos, when and during which invocation (see chaos.ts). */
  chaosKills: ChaosKill[];
  /** One record per invocation (the last {@link MAX_RECORDS}). */
  perInvocation: InvocationRecord[];
}

/**
 * An account's concurrency: the invocations running at once across every function without a
 * reservation may not exceed `limit` minus the reservations (Lambda keeps those for their
 * functions). An invocation beyond it is throttled.
 */
export class AccountConcurrency {
  readonly limit: number;
  #reserved = 0;
  #inUse = 0;
  #peak = 0;
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`account concurrency must be >= 1, got ${limit}`);
    this.limit = limit;
  }
  /** Sets `count` aside for one function's reservation. */
  reserve(count: number): void {
    this.#reserved += count;
  }
  /** Invocations running now, and the most at once (functions without a reservation). */
  get inUse(): number {
    return this.#inUse;
  }
  get peak(): number {
    return this.#peak;
  }
  /** Takes one unit, or returns false when the unreserved pool is exhausted. */
  tryAcquire(): boolean {
    if (this.#inUse >= this.limit - this.#reserved) return false;
    this.#inUse += 1;
    this.#peak = Math.max(this.#peak, this.#inUse);
    return true;
  }
  release(): void {
    this.#inUse -= 1;
  }
}

/** Lambda's synchronous response payload limit (6 MB). */
export const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;
const MAX_RECORDS = 100_000;
/** How long Lambda gives a cold start (10 s) before it retries it within the invocation. */
const INIT_LIMIT_MS = 10_000;

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}

function namedError(name: string, message: string): Error {
  return Object.assign(new Error(message), { name });
}

interface Idle {
  container: LambdaContainer;
  timer: NodeJS.Timeout;
}

/** A container for an invocation: warm, freshly started (with its init time), or none. */
type Acquired =
  | { kind: 'warm'; container: LambdaContainer }
  | { kind: 'cold'; container: LambdaContainer; initMs: number }
  | { kind: 'failed'; error: unknown; initMs: number };

/**
 * Cold starts at once, across every function of this process. Lambda starts environments on
 * machines of their own; here they share this machine's cores, and a burst of thread starts (a
 * schedule compressed to a second, many pollers at once) would make every start, and everything
 * else, crawl. Starts beyond this wait for a slot; an invocation waiting for one takes a
 * container that becomes idle first.
 */
class StartGate {
  readonly #limit: number;
  #running = 0;
  readonly #queue: (() => void)[] = [];
  constructor(limit: number) {
    this.#limit = limit;
  }
  async run<T>(start: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#limit) await new Promise<void>((resolve) => this.#queue.push(resolve));
    this.#running += 1;
    try {
      return await start();
    } finally {
      this.#running -= 1;
      this.#queue.shift()?.();
    }
  }
}

const coldStarts = new StartGate(Math.max(2, availableParallelism()));

/** A function instance: call {@link LocalLambda.invoke} once per event, as Lambda would. */
export class LocalLambda {
  readonly name: string;
  readonly arn: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  readonly region: string;
  readonly accountId: string;
  readonly reservedConcurrency: number | undefined;
  readonly recursiveLoop: RecursiveLoop;
  readonly recursionLimit: number;
  readonly #account: AccountConcurrency;
  readonly #idleMs: number;
  readonly #log: ((message: string, container?: number) => void) | undefined;
  readonly #start: ContainerFactory;
  readonly #chaos: { options: ChaosOptions; draw: () => number } | undefined;
  /** Warm containers, most recently used last. */
  readonly #idle: Idle[] = [];
  readonly #live = new Set<LambdaContainer>();
  /** Invocations waiting for a container, oldest first. */
  readonly #waiting: ((acquired: Acquired) => void)[] = [];
  /** Container starts waiting for a slot, and starts under way. */
  #queuedStarts = 0;
  #activeStarts = 0;
  #containerIds = 0;
  #inFlight = 0;
  #stopped = false;
  #stats: FunctionStats;

  constructor(options: LocalLambdaOptions) {
    this.name = options.name;
    this.region = options.region ?? 'us-east-1';
    this.accountId = options.accountId ?? '000000000000';
    this.arn = `arn:aws:lambda:${this.region}:${this.accountId}:function:${options.name}`;
    this.timeoutMs = (options.timeoutSeconds ?? 3) * 1000;
    this.memoryMb = options.memoryMb ?? 128;
    this.reservedConcurrency = options.reservedConcurrency;
    this.#account = options.account ?? new AccountConcurrency(options.accountConcurrency ?? 1000);
    if (this.reservedConcurrency !== undefined) this.#account.reserve(this.reservedConcurrency);
    this.recursiveLoop = options.recursiveLoop ?? 'Terminate';
    this.recursionLimit = options.recursionLimit ?? 16;
    this.#idleMs = options.idleMs ?? 5 * 60_000;
    this.#log = options.log;
    const { code, handler } = options;
    if (options.chaos !== undefined) {
      checkChaos(options.name, options.chaos);
      if (code === undefined)
        throw new Error(`${options.name}: chaos needs containers that can be killed (code)`);
      this.#chaos = { options: options.chaos, draw: seededRandom(options.chaos.seed) };
    }
    if (code !== undefined) {
      // Fails now, not at the first invocation, when the bundle is missing (cdk synth not run).
      const { file, exportName } = resolveHandler(code.assetDir, code.handler);
      const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
      this.#start = (id) =>
        WorkerContainer.start(id, {
          file,
          exportName,
          env: code.env,
          memoryMb: this.memoryMb,
          log: (line: string) => log(`[${this.name}] ${line}`, id),
          initTimeoutMs: INIT_LIMIT_MS + this.timeoutMs,
        });
    } else if (handler !== undefined) {
      this.#start = async (id) => new InProcessContainer(id, handler);
    } else {
      throw new Error(`${options.name}: LocalLambda needs code or a handler`);
    }
    this.#stats = {
      invocations: 0,
      errors: 0,
      timeouts: 0,
      throttles: 0,
      billedMs: 0,
      gbSeconds: 0,
      memoryMb: this.memoryMb,
      maxConcurrent: 0,
      cpuMs: 0,
      peakHeapMb: 0,
      coldStarts: 0,
      initMs: 0,
      containers: 0,
      peakContainers: 0,
      killedContainers: 0,
      chaosKills: [],
      perInvocation: [],
    };
  }

  /** Invocations running now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  stats(): FunctionStats {
    return {
      ...this.#stats,
      containers: this.#live.size,
      chaosKills: [...this.#stats.chaosKills],
      perInvocation: [...this.#stats.perInvocation],
    };
  }

  /**
   * Runs the handler once in a warm container or a new one. A timeout kills the container (and
   * with it everything the invocation was still doing) and reports `timeout`. `traceId` is the
   * invocation's trace header (the container's `_X_AMZN_TRACE_ID`).
   */
  async invoke(event: unknown, options: { traceId?: string } = {}): Promise<InvokeOutcome> {
    const reserved = this.reservedConcurrency;
    const admitted =
      !this.#stopped && (reserved === undefined ? this.#account.tryAcquire() : this.#inFlight < reserved);
    if (!admitted) {
      this.#stats.throttles += 1;
      return { kind: 'throttled' };
    }
    this.#inFlight += 1;
    this.#stats.invocations += 1;
    this.#stats.maxConcurrent = Math.max(this.#stats.maxConcurrent, this.#inFlight);
    try {
      return await this.#invoke(event, options.traceId);
    } finally {
      this.#inFlight -= 1;
      if (reserved === undefined) this.#account.release();
    }
  }

  /**
   * Starts `count` containers into the warm pool ahead of any invocation (as provisioned
   * concurrency would). Resolves when they are ready; an init failure is reported, not thrown (the
   * next invocation starts cold and fails as Lambda reports it).
   */
  async prewarm(count = 1): Promise<void> {
    await Promise.all(
      Array.from({ length: count }, async () => {
        this.#containerIds += 1;
        const id = this.#containerIds;
        const started = performance.now();
        try {
          const container = await coldStarts.run(() => this.#start(id));
          this.#stats.coldStarts += 1;
          this.#stats.initMs += performance.now() - started;
          this.#live.add(container);
          this.#stats.peakContainers = Math.max(this.#stats.peakContainers, this.#live.size);
          this.#release(container);
        } catch (error) {
          this.#log?.(`${this.name}: a container failed to start: ${describe(error)}`);
        }
      }),
    );
  }

  /** Kills every container; later invocations are throttled. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const idle of this.#idle.splice(0)) clearTimeout(idle.timer);
    for (const waiter of this.#waiting.splice(0)) {
      waiter({ kind: 'failed', error: namedError('Runtime.Stopped', `${this.name} was stopped`), initMs: 0 });
    }
    await Promise.all([...this.#live].map((c) => this.#discard(c, false)));
  }

  /** A warm container, or one started for this invocation (or the first to become idle meanwhile). */
  #acquire(): Promise<Acquired> {
    const warm = this.#idle.pop();
    if (warm !== undefined) {
      clearTimeout(warm.timer);
      return Promise.resolve({ kind: 'warm', container: warm.container });
    }
    const acquired = new Promise<Acquired>((resolve) => this.#waiting.push(resolve));
    if (this.#waiting.length > this.#queuedStarts + this.#activeStarts) this.#startContainer();
    return acquired;
  }

  #startContainer(): void {
    this.#queuedStarts += 1;
    void coldStarts
      .run(async () => {
        this.#queuedStarts -= 1;
        // Its waiter may have been served by a container that became idle meanwhile.
        if (this.#stopped || this.#waiting.length <= this.#activeStarts) return undefined;
        this.#activeStarts += 1;
        this.#containerIds += 1;
        const started = performance.now();
        try {
          return { container: await this.#start(this.#containerIds), initMs: performance.now() - started };
        } catch (error) {
          throw Object.assign(new Error('init failed'), {
            cause: error,
            initMs: performance.now() - started,
          });
        } finally {
          this.#activeStarts -= 1;
        }
      })
      .then(
        (started) => {
          if (started === undefined) return;
          const { container, initMs } = started;
          this.#stats.coldStarts += 1;
          this.#stats.initMs += initMs;
          this.#live.add(container);
          this.#stats.peakContainers = Math.max(this.#stats.peakContainers, this.#live.size);
          const waiter = this.#waiting.shift();
          if (waiter !== undefined) waiter({ kind: 'cold', container, initMs });
          // Its invocation ran elsewhere; with another container idle, this one is surplus.
          else if (this.#idle.length > 0) void this.#discard(container, false);
          else this.#release(container);
        },
        (failure: { cause: unknown; initMs: number }) => {
          this.#stats.coldStarts += 1;
          this.#stats.initMs += failure.initMs;
          this.#waiting.shift()?.({ kind: 'failed', error: failure.cause, initMs: failure.initMs });
          if (!this.#stopped && this.#waiting.length > this.#queuedStarts + this.#activeStarts) {
            this.#startContainer();
          }
        },
      );
  }

  async #invoke(event: unknown, traceId: string | undefined): Promise<InvokeOutcome> {
    const requestId = randomUUID();
    const acquired = await this.#acquire();
    if (acquired.kind === 'failed') {
      const ms = acquired.initMs;
      return this.#finish(requestId, { kind: 'error', error: acquired.error }, ms, undefined, true, ms);
    }
    const { container } = acquired;
    const initMs = acquired.kind === 'cold' ? acquired.initMs : undefined;

    const info: InvocationInfo = {
      functionName: this.name,
      invokedFunctionArn: this.arn,
      memoryLimitInMB: String(this.memoryMb),
      awsRequestId: requestId,
      deadlineMs: Date.now() + this.timeoutMs,
      ...(traceId === undefined ? {} : { traceId }),
    };
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<{ kind: 'timeout' }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'timeout' }), this.timeoutMs);
    });
    let chaosTimer: NodeJS.Timeout | undefined;
    const killAfter = this.#chaosDelay();
    const killed = new Promise<{ kind: 'killed' }>((resolve) => {
      if (killAfter !== undefined) chaosTimer = setTimeout(() => resolve({ kind: 'killed' }), killAfter);
    });
    let run: ContainerRun | { kind: 'timeout' } | { kind: 'killed' };
    try {
      // Lambda hands the function a JSON document: what does not survive JSON does not arrive.
      run = await Promise.race([container.run(JSON.stringify(event) ?? 'null', info), timeout, killed]);
    } finally {
      clearTimeout(timer);
      clearTimeout(chaosTimer);
    }
    const coldStart = initMs !== undefined;
    if ((run.kind === 'ok' || run.kind === 'error') && run.heapBytes !== undefined) {
      this.#stats.peakHeapMb = Math.max(this.#stats.peakHeapMb, run.heapBytes / 2 ** 20);
    }
    switch (run.kind) {
      case 'killed': {
        // When the thread is gone: anything it sent (a request) left it before this moment.
        await this.#discard(container, true);
        const killedAt = performance.now();
        this.#stats.chaosKills.push({ startedAt: started, killedAt });
        const error = namedError(
          'Runtime.ExitError',
          `chaos: the execution environment was killed ${Math.round(killedAt - started)} ms into the invocation`,
        );
        return this.#finish(
          requestId,
          { kind: 'error', error },
          killedAt - started,
          undefined,
          coldStart,
          initMs,
        );
      }
      case 'timeout':
        await this.#discard(container, true);
        return this.#finish(requestId, { kind: 'timeout' }, this.timeoutMs, undefined, coldStart, initMs);
      case 'crashed':
        await this.#discard(container, true);
        return this.#finish(
          requestId,
          { kind: 'error', error: run.error },
          performance.now() - started,
          undefined,
          coldStart,
          initMs,
        );
      case 'error':
        this.#release(container);
        return this.#finish(
          requestId,
          { kind: 'error', error: run.error },
          performance.now() - started,
          run.cpuMs,
          coldStart,
          initMs,
        );
      default: {
        this.#release(container);
        const durationMs = performance.now() - started;
        if (run.result !== undefined && Buffer.byteLength(run.result) > MAX_RESPONSE_BYTES) {
          const error = namedError(
            'Function.ResponseSizeTooLarge',
            `Response payload size (${Buffer.byteLength(run.result)} bytes) exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).`,
          );
          return this.#finish(requestId, { kind: 'error', error }, durationMs, run.cpuMs, coldStart, initMs);
        }
        const result = run.result === undefined ? undefined : JSON.parse(run.result);
        return this.#finish(requestId, { kind: 'ok', result }, durationMs, run.cpuMs, coldStart, initMs);
      }
    }
  }

  /**
   * With chaos, whether this invocation gets a kill and when (ms after its start). Both draws are
   * made for every invocation, so the sequence of decisions follows the seed.
   */
  #chaosDelay(): number | undefined {
    const chaos = this.#chaos;
    if (chaos === undefined) return undefined;
    const kill = chaos.draw() < chaos.options.killProbability;
    const at = chaos.draw();
    if (!kill) return undefined;
    return at * (chaos.options.withinMs ?? this.#typicalDurationMs());
  }

  /** The median duration of the last ok invocations (500 ms before there are any). */
  #typicalDurationMs(): number {
    const recent = this.#stats.perInvocation
      .slice(-50)
      .filter((r) => r.kind === 'ok')
      .map((r) => r.durationMs)
      .sort((a, b) => a - b);
    return recent.length === 0 ? 500 : recent[Math.floor(recent.length / 2)]!;
  }

  /** Records the invocation and completes its outcome. */
  #finish(
    requestId: string,
    outcome: { kind: 'ok'; result: unknown } | { kind: 'error'; error: unknown } | { kind: 'timeout' },
    durationMs: number,
    cpuMs: number | undefined,
    coldStart: boolean,
    initMs: number | undefined,
  ): InvokeOutcome {
    const billedMs = Math.max(1, Math.ceil(durationMs));
    const record: InvocationRecord = {
      kind: outcome.kind,
      durationMs,
      billedMs,
      coldStart,
      ...(cpuMs === undefined ? {} : { cpuMs }),
      ...(initMs === undefined ? {} : { initMs }),
    };
    const stats = this.#stats;
    stats.billedMs += billedMs;
    stats.gbSeconds += (billedMs / 1000) * (this.memoryMb / 1024);
    stats.cpuMs += cpuMs ?? 0;
    stats.perInvocation.push(record);
    if (stats.perInvocation.length > MAX_RECORDS) stats.perInvocation.shift();
    if (outcome.kind === 'error') {
      stats.errors += 1;
      this.#log?.(`${this.name} ${requestId} failed: ${describe(outcome.error)}`);
    } else if (outcome.kind === 'timeout') {
      stats.timeouts += 1;
      this.#log?.(`${this.name} ${requestId} timed out after ${this.timeoutMs} ms; its container was killed`);
    }
    const { kind: _kind, ...facts } = record;
    return { ...outcome, ...facts };
  }

  /** To the oldest waiting invocation, else back to the warm pool (reclaimed after `idleMs` unused). */
  #release(container: LambdaContainer): void {
    if (this.#stopped) {
      void this.#discard(container, false);
      return;
    }
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) {
      waiter({ kind: 'warm', container });
      return;
    }
    const timer = setTimeout(() => {
      const at = this.#idle.findIndex((i) => i.container === container);
      if (at !== -1) this.#idle.splice(at, 1);
      void this.#discard(container, false);
    }, this.#idleMs);
    timer.unref();
    this.#idle.push({ container, timer });
  }

  async #discard(container: LambdaContainer, killed: boolean): Promise<void> {
    if (!this.#live.delete(container)) return;
    if (killed) this.#stats.killedContainers += 1;
    await container.kill();
  }
}
