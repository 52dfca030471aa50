/**
 * One Lambda execution environment, as a worker thread: imports the function's bundled handler
 * with the function's own `process.env` (set by the parent when it starts the thread) and its own
 * module state, then runs one invocation at a time on request. Runs without the parent's loaders
 * (Node strips the types of this file itself), as Lambda runs the bundle.
 *
 *   parent ──{ invoke, id, event, info }──► this thread ──► handler(event, context)
 *          ◄──{ done, id, ok, result | error, cpuMicros, heapBytes }──
 */
import { enableCompileCache } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import {
  callHandler,
  type InvocationInfo,
  type LambdaHandler,
  lambdaContext,
  serializeError,
} from './lambda-context.ts';

/** What the parent passes as `workerData`. */
export interface ContainerData {
  /** File URL of the handler module. */
  file: string;
  exportName: string;
}

/** How often the thread's heap is sampled while an invocation runs, ms. */
const HEAP_SAMPLE_MS = 100;

/** This thread's V8 heap in use, plus memory held outside it for JS objects (buffers), bytes. */
function heapInUse(): number {
  const heap = getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
}

/** A request from the parent. */
export interface InvokeRequest {
  type: 'invoke';
  id: number;
  /** The event as JSON text (Lambda hands the function a JSON document). */
  event: string;
  info: InvocationInfo;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('lambda-container-worker.ts runs in a worker thread');
  const { file, exportName } = workerData as ContainerData;
  const started = performance.now();
  // V8's code cache on disk: the containers after the first skip compiling the bundle again.
  enableCompileCache(join(tmpdir(), 'crawlstack-lambda-compile-cache'));
  let handler: LambdaHandler;
  try {
    const module = (await import(file)) as Record<string, unknown>;
    const found = module[exportName] ?? (module.default as Record<string, unknown> | undefined)?.[exportName];
    if (typeof found !== 'function') {
      throw Object.assign(new Error(`${file} does not export a function named ${exportName}`), {
        name: 'Runtime.HandlerNotFound',
      });
    }
    handler = found as LambdaHandler;
  } catch (error) {
    port.postMessage({ type: 'init-error', error: serializeError(error) });
    return;
  }
  port.postMessage({ type: 'ready', initMs: performance.now() - started });

  port.on('message', async (request: InvokeRequest) => {
    if (request.type !== 'invoke') return;
    // Lambda's runtime sets it per invocation; the SDK adds it to every call as X-Amzn-Trace-Id.
    if (request.info.traceId === undefined) delete process.env._X_AMZN_TRACE_ID;
    else process.env._X_AMZN_TRACE_ID = request.info.traceId;
    const cpuBefore = process.threadCpuUsage();
    // The most the invocation held, sampled (a peak between two samples can be missed).
    let heapBytes = heapInUse();
    const sampler = setInterval(() => {
      heapBytes = Math.max(heapBytes, heapInUse());
    }, HEAP_SAMPLE_MS);
    let reply: Record<string, unknown>;
    try {
      const result = await callHandler(handler, JSON.parse(request.event), lambdaContext(request.info));
      // The runtime serializes the result as JSON; what cannot be serialized is a function error.
      const json = result === undefined ? undefined : JSON.stringify(result);
      reply = { ok: true, ...(json === undefined ? {} : { result: json }) };
    } catch (error) {
      reply = { ok: false, error: serializeError(error) };
    }
    const cpu = process.threadCpuUsage(cpuBefore);
    clearInterval(sampler);
    heapBytes = Math.max(heapBytes, heapInUse());
    port.postMessage({ type: 'done', id: request.id, cpuMicros: cpu.user + cpu.system, heapBytes, ...reply });
  });
}

await main();
