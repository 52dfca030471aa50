/**
 * The Lambda triggers, locally: one import for the pieces `cloud-local.ts` and the emulator tests
 * put together (each lives in its own file).
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
  applyFunctionEnvironment,
  EnvironmentConflictError,
  HandlerLoadError,
  loadHandler,
  releaseFunctionEnvironment,
} from './load-handler.ts';
export {
  type FunctionStats,
  type InvokeOutcome,
  type LambdaHandler,
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
