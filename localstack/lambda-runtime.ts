/**
 * The Lambda triggers and functions, locally: one import for the pieces `cloud-local.ts` and the
 * emulator tests put together (each lives in its own file).
 */

export {
  type FunctionUrlResponse,
  FunctionUrlServer,
  type FunctionUrlServerOptions,
  isTextContentType,
  toFunctionUrlEvent,
  toFunctionUrlResponse,
} from './function-url-server.ts';
export {
  type ContainerRun,
  HandlerLoadError,
  InitError,
  InProcessContainer,
  type LambdaContainer,
  resolveHandler,
  WorkerContainer,
} from './lambda-container.ts';
export { callHandler, type InvocationInfo, type LambdaHandler, lambdaContext } from './lambda-context.ts';
export {
  type FunctionCode,
  type FunctionStats,
  type InvocationRecord,
  type InvokeOutcome,
  LocalLambda,
  type LocalLambdaOptions,
} from './local-lambda.ts';
export {
  parseRateExpression,
  ScheduleExpressionError,
  type ScheduleStats,
  ScheduleTimer,
  type ScheduleTimerOptions,
} from './schedule-timer.ts';
export { type BatchSettlement, type SettlementOptions, settleSqsBatch } from './sqs-batch-settlement.ts';
export {
  type EventSourceStats,
  SqsEventSource,
  type SqsEventSourceOptions,
  toSqsRecords,
} from './sqs-event-source.ts';
