/**
 * The API's Lambda handler: the Hono app behind a function URL (payload format 2.0).
 */
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { handle } from 'hono/aws-lambda';
import { type ApiDeps, createApiApp } from './api-app.ts';

/** Builds the function URL handler over {@link createApiApp}. */
export function createApiHandler(
  deps: ApiDeps,
): (event: LambdaFunctionURLEvent) => Promise<LambdaFunctionURLResult> {
  const run = handle(createApiApp(deps));
  return async (event) => (await run(event as never)) as LambdaFunctionURLResult;
}
