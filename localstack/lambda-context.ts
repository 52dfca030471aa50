/**
 * What a Lambda handler receives besides its event, and how it is called: the `Context` object
 * and the two handler styles (async, or a callback as third parameter). Shared by the container
 * thread (`lambda-container-worker.ts`) and the in-process containers that trigger tests use.
 * No imports with side effects: the container thread loads this file by itself.
 */
import type { Callback, Context } from 'aws-lambda';

/** A Lambda handler in either style: async, or with a callback as third parameter. */
export type LambdaHandler = (event: never, context: Context, callback: Callback) => unknown;

/** The plain data a `Context` is built from (it crosses the thread boundary). */
export interface InvocationInfo {
  functionName: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  /** Epoch ms at which the invocation times out (`getRemainingTimeInMillis` counts down to it). */
  deadlineMs: number;
  /**
   * The invocation's X-Ray trace header: the runtime sets it as `_X_AMZN_TRACE_ID`, where the
   * SDK's recursion-detection middleware reads it (see recursion-detection.ts).
   */
  traceId?: string;
}

/** The `Context` Lambda's Node.js runtime passes to a handler. */
export function lambdaContext(info: InvocationInfo): Context {
  const fail = (reason: unknown) => {
    throw reason instanceof Error ? reason : new Error(String(reason));
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: info.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: info.invokedFunctionArn,
    memoryLimitInMB: info.memoryLimitInMB,
    awsRequestId: info.awsRequestId,
    logGroupName: `/aws/lambda/${info.functionName}`,
    logStreamName: `local/[$LATEST]${info.awsRequestId.replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, info.deadlineMs - Date.now()),
    done: (error?: Error) => {
      if (error) fail(error);
    },
    fail,
    succeed: () => {},
  };
}

/** Calls `handler` as the runtime does; resolves with its result (returned or passed to the callback). */
export function callHandler(handler: LambdaHandler, event: unknown, context: Context): Promise<unknown> {
  if (handler.length >= 3) {
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

/** An error as it crosses the thread boundary (and as Lambda reports it: type, message, stack). */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    return {
      name: error.name,
      message: error.message,
      ...(error.stack === undefined ? {} : { stack: error.stack }),
    };
  }
  return { name: 'Error', message: String(error) };
}

/** An `Error` carrying a serialized error's name, message and stack. */
export function deserializeError(error: SerializedError): Error {
  const out = new Error(error.message);
  out.name = error.name;
  if (error.stack !== undefined) out.stack = error.stack;
  return out;
}
