/**
 * Lambda execution environments ("containers"), seen from the runtime: start one (the cold
 * start), run one invocation at a time in it, kill it. {@link WorkerContainer} is the real one: a
 * worker thread with its own module state and `process.env` (see `lambda-container-worker.ts`).
 * {@link InProcessContainer} calls a function of this process; trigger tests use it to drive
 * hand-written handlers, and it cannot be killed (its promise is abandoned instead).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ContainerData, InvokeRequest } from './lambda-container-worker.ts';
import {
  callHandler,
  deserializeError,
  type InvocationInfo,
  type LambdaHandler,
  lambdaContext,
  type SerializedError,
} from './lambda-context.ts';

/**
 * How one run in a container ended. `result` is the JSON text the function returned; `heapBytes`
 * the most heap the container's thread held during the run (sampled; worker containers only).
 */
export type ContainerRun =
  | { kind: 'ok'; result: string | undefined; cpuMs: number; heapBytes?: number }
  | { kind: 'error'; error: Error; cpuMs: number; heapBytes?: number }
  /** The container died during the run (uncaught exception, out of memory, exit). */
  | { kind: 'crashed'; error: Error };

/** One execution environment. */
export interface LambdaContainer {
  readonly id: number;
  /** Runs one invocation; never called again before the previous run settled. */
  run(event: string, info: InvocationInfo): Promise<ContainerRun>;
  /** Ends the environment (a timeout, idle reclaim, shutdown). */
  kill(): Promise<void>;
}

/** Starts a container; rejects with the init error (module missing, threw, no handler export). */
export type ContainerFactory = (id: number) => Promise<LambdaContainer>;

/** The handler module or export could not be found. */
export class HandlerLoadError extends Error {
  readonly code: 'module-not-found' | 'handler-not-function';
  constructor(code: 'module-not-found' | 'handler-not-function', message: string) {
    super(message);
    this.name = 'HandlerLoadError';
    this.code = code;
  }
}

/** An error the function's initialization raised (Lambda's `Runtime.ImportModuleError` & co). */
export class InitError extends Error {
  constructor(cause: Error) {
    super(`init failed: ${cause.name}: ${cause.message}`, { cause });
    this.name = cause.name === 'Runtime.HandlerNotFound' ? cause.name : 'Runtime.InitError';
  }
}

/** `index.handler` in `assetDir`: the module file (`index.mjs|.js|.cjs`) and the export name. */
export function resolveHandler(assetDir: string, handlerName: string): { file: string; exportName: string } {
  const dot = handlerName.lastIndexOf('.');
  const moduleName = dot === -1 ? handlerName : handlerName.slice(0, dot);
  const exportName = dot === -1 ? 'handler' : handlerName.slice(dot + 1);
  const file = ['.mjs', '.js', '.cjs']
    .map((ext) => join(assetDir, moduleName + ext))
    .find((f) => existsSync(f));
  if (file === undefined) {
    throw new HandlerLoadError(
      'module-not-found',
      `no ${moduleName}.mjs, .js or .cjs in ${assetDir} (has cdk synth run?)`,
    );
  }
  return { file, exportName };
}

function cpuMsSince(before: NodeJS.CpuUsage): number {
  const used = process.threadCpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** A container that calls a function of this process (shared module state: tests only). */
export class InProcessContainer implements LambdaContainer {
  readonly id: number;
  readonly #handler: LambdaHandler;

  constructor(id: number, handler: LambdaHandler) {
    this.id = id;
    this.#handler = handler;
  }

  async run(event: string, info: InvocationInfo): Promise<ContainerRun> {
    const before = process.threadCpuUsage();
    try {
      const result = await callHandler(this.#handler, JSON.parse(event), lambdaContext(info));
      return {
        kind: 'ok',
        result: result === undefined ? undefined : JSON.stringify(result),
        cpuMs: cpuMsSince(before),
      };
    } catch (error) {
      return {
        kind: 'error',
        error: error instanceof Error ? error : new Error(String(error)),
        cpuMs: cpuMsSince(before),
      };
    }
  }

  async kill(): Promise<void> {
    // A promise cannot be stopped; the runtime forgets this container and never calls it again.
  }
}

/** What a worker container is made of. */
export interface WorkerContainerSpec {
  /** Handler module and export (see {@link resolveHandler}). */
  file: string;
  exportName: string;
  /** The container's whole `process.env`. */
  env: Record<string, string>;
  /** Heap limit of the thread (Lambda's memory setting bounds the whole environment). */
  memoryMb: number;
  /** Where each line the handler writes to stdout or stderr goes. */
  log: (line: string) => void;
  /** Longest a cold start may take before it counts as failed. */
  initTimeoutMs: number;
}

const WORKER_ENTRY = new URL('./lambda-container-worker.ts', import.meta.url);

/** Forwards a stream's text to `log`, one line at a time. */
function forwardLines(stream: NodeJS.ReadableStream, log: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      log(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  });
  stream.on('end', () => {
    if (pending !== '') log(pending);
  });
}

type Settle = (run: ContainerRun) => void;

/** A worker thread running one function's handler (see `lambda-container-worker.ts`). */
export class WorkerContainer implements LambdaContainer {
  readonly id: number;
  readonly #worker: Worker;
  #pending: { id: number; settle: Settle } | undefined;
  #nextId = 0;
  #dead: Error | undefined;

  private constructor(id: number, worker: Worker) {
    this.id = id;
    this.#worker = worker;
    worker.on(
      'message',
      (message: {
        type: string;
        id?: number;
        ok?: boolean;
        result?: string;
        error?: SerializedError;
        cpuMicros?: number;
        heapBytes?: number;
      }) => {
        const pending = this.#pending;
        if (message.type !== 'done' || pending === undefined || pending.id !== message.id) return;
        const { settle } = pending;
        this.#pending = undefined;
        const cpuMs = (message.cpuMicros ?? 0) / 1000;
        const heap = message.heapBytes === undefined ? {} : { heapBytes: message.heapBytes };
        settle(
          message.ok
            ? { kind: 'ok', result: message.result, cpuMs, ...heap }
            : {
                kind: 'error',
                error: deserializeError(message.error ?? { name: 'Error', message: 'unknown' }),
                cpuMs,
                ...heap,
              },
        );
      },
    );
    const die = (error: Error) => {
      this.#dead ??= error;
      const pending = this.#pending;
      this.#pending = undefined;
      pending?.settle({ kind: 'crashed', error: this.#dead });
    };
    worker.on('error', (error) => {
      const oom = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      die(oom ? Object.assign(new Error(error.message), { name: 'Runtime.OutOfMemory' }) : error);
    });
    worker.on('exit', (code) =>
      die(Object.assign(new Error(`the runtime exited with code ${code}`), { name: 'Runtime.ExitError' })),
    );
  }

  /** Starts the thread and waits until the handler module is imported (the cold start). */
  static async start(id: number, spec: WorkerContainerSpec): Promise<WorkerContainer> {
    const data: ContainerData = { file: pathToFileURL(spec.file).href, exportName: spec.exportName };
    const worker = new Worker(WORKER_ENTRY, {
      workerData: data,
      env: spec.env,
      // No loaders of this process: the bundle runs on plain Node, as on Lambda.
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: spec.memoryMb },
    });
    forwardLines(worker.stdout, spec.log);
    forwardLines(worker.stderr, spec.log);
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              Object.assign(new Error(`init took over ${spec.initTimeoutMs} ms`), {
                name: 'Runtime.InitTimeout',
              }),
            ),
          spec.initTimeoutMs,
        );
        const done = (error?: Error) => {
          clearTimeout(timer);
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          if (error === undefined) resolve();
          else reject(error);
        };
        const onMessage = (message: { type: string; error?: SerializedError }) => {
          if (message.type === 'ready') done();
          else if (message.type === 'init-error')
            done(deserializeError(message.error ?? { name: 'Error', message: 'init failed' }));
        };
        const onError = (error: Error) => done(error);
        const onExit = (code: number) => done(new Error(`the runtime exited with code ${code} during init`));
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
      });
    } catch (error) {
      await worker.terminate();
      throw new InitError(error as Error);
    }
    worker.unref();
    return new WorkerContainer(id, worker);
  }

  run(event: string, info: InvocationInfo): Promise<ContainerRun> {
    if (this.#dead !== undefined) return Promise.resolve({ kind: 'crashed', error: this.#dead });
    // Referenced only while running: an idle environment does not keep the process alive.
    this.#worker.ref();
    return new Promise<ContainerRun>((settle) => {
      this.#nextId += 1;
      this.#pending = { id: this.#nextId, settle };
      const request: InvokeRequest = { type: 'invoke', id: this.#nextId, event, info };
      this.#worker.postMessage(request);
    }).finally(() => this.#worker.unref());
  }

  async kill(): Promise<void> {
    this.#dead ??= Object.assign(new Error('the container was stopped'), { name: 'Runtime.Stopped' });
    await this.#worker.terminate();
  }
}
