/**
 * Loading bundled Lambda handlers into this process. All functions share one `process.env`, so
 * each function's environment is applied to it with a conflict check: functions may share a
 * variable only when they agree on its value (they name the same queue, table and bucket).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LambdaHandler } from './local-lambda.ts';

/** Two functions need different values for one environment variable. */
export class EnvironmentConflictError extends Error {
  readonly code = 'environment-conflict';
  readonly variable: string;
  constructor(variable: string, owners: string[], value: string, other: string) {
    super(
      `environment variable ${variable} is ${JSON.stringify(other)} for ${owners.join(', ')} but ${JSON.stringify(
        value,
      )} for another function; all local functions share one process.env, so their values must agree`,
    );
    this.name = 'EnvironmentConflictError';
    this.variable = variable;
  }
}

/** The handler module or export could not be found. */
export class HandlerLoadError extends Error {
  readonly code: 'module-not-found' | 'handler-not-function';
  constructor(code: 'module-not-found' | 'handler-not-function', message: string) {
    super(message);
    this.name = 'HandlerLoadError';
    this.code = code;
  }
}

interface AppliedVariable {
  value: string;
  owners: Set<string>;
  /** The value before the runtime set it, restored when the last owner releases it. */
  previous: string | undefined;
}

const applied = new Map<string, AppliedVariable>();
let loads = 0;

/**
 * Sets `env` on `process.env` for `owner` (a function name). Throws
 * {@link EnvironmentConflictError} before setting anything if another owner holds a different
 * value for one of the variables.
 */
export function applyFunctionEnvironment(owner: string, env: Record<string, string>): void {
  for (const [name, value] of Object.entries(env)) {
    const current = applied.get(name);
    if (current === undefined || current.value === value) continue;
    const others = [...current.owners].filter((o) => o !== owner);
    if (others.length > 0) throw new EnvironmentConflictError(name, others, value, current.value);
  }
  for (const [name, value] of Object.entries(env)) {
    const current = applied.get(name);
    if (current === undefined)
      applied.set(name, { value, owners: new Set([owner]), previous: process.env[name] });
    else {
      current.value = value;
      current.owners.add(owner);
    }
    process.env[name] = value;
  }
}

/** Gives up `owner`'s variables; a variable no function holds any more gets its old value back. */
export function releaseFunctionEnvironment(owner: string): void {
  for (const [name, variable] of applied) {
    if (!variable.owners.delete(owner) || variable.owners.size > 0) continue;
    applied.delete(name);
    if (variable.previous === undefined) delete process.env[name];
    else process.env[name] = variable.previous;
  }
}

/**
 * Imports the handler `handlerName` (`index.handler`: file `index.mjs|.js|.cjs` in `assetDir`,
 * export `handler`) after applying `env` for `owner`. Each call is a fresh module instance (a
 * cold start), so a test can load the same asset again with another environment.
 */
export async function loadHandler(
  assetDir: string,
  handlerName: string,
  env: Record<string, string> = {},
  owner: string = assetDir,
): Promise<LambdaHandler> {
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
  applyFunctionEnvironment(owner, env);
  loads += 1;
  const module = (await import(`${pathToFileURL(file).href}?instance=${loads}`)) as Record<string, unknown>;
  const handler =
    module[exportName] ?? (module.default as Record<string, unknown> | undefined)?.[exportName] ?? undefined;
  if (typeof handler !== 'function') {
    throw new HandlerLoadError(
      'handler-not-function',
      `${file} does not export a function named ${exportName}`,
    );
  }
  return handler as LambdaHandler;
}
