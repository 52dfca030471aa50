/**
 * `npm run cloud:local`: the serverless stack on this machine. Synthesizes the CDK app when it is
 * stale, starts the stand-in endpoint (or uses `AWS_ENDPOINT_URL`, e.g. real LocalStack),
 * provisions the template's queues, tables and buckets, runs each bundled Lambda handler in
 * containers of its own (worker threads with the function's environment and credentials) and
 * drives them with the local triggers:
 *
 *   cdk.out/CrawlstackStack.template.json ──provision──► endpoint (stand-in :4566 | LocalStack)
 *   SQS event source mapping ──► SqsEventSource (pollers) ──► worker containers
 *   Function URL (AWS_IAM)   ──► FunctionUrlServer (bearer token | SigV4) ──► api containers
 *   Events::Rule rate(...)   ──► ScheduleTimer ──► scheduler containers
 *   Scheduler schedules made at run time (the API's recrawl schedules) ──► the endpoint's
 *     SchedulerService ──► the target's containers, as the schedule's role
 *
 * Every call a function makes (and its event source makes for it) carries the function's own
 * access key, which the stand-in endpoint maps to the function's execution role and its policies.
 *
 * Prints `endpoint=`, `api=` and `token=` lines on stdout (with a SigV4 key: `auth=sigv4`,
 * `region=` and `access_key_id=` instead of the token; logs go to stderr), and `dashboard=`: the
 * dashboard page for the stand-in's crawls on 127.0.0.1 (`--dashboard-port`, `--no-dashboard`);
 * writes the same to `.tmp/cloud-local.json` for `crawlstack cloud`, and runs until
 * SIGINT/SIGTERM. Tests use {@link startCloudLocal}.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GetQueueAttributesCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { createAwsClients } from '../functions/adapters/aws/clients.ts';
import {
  CLOUD_LOCAL_FILE,
  removeCloudLocalInfo,
  writeCloudLocalInfo,
} from '../functions/cli/cloud/cloud-local-file.ts';
import { bearerAuth, startCloudDashboard } from '../functions/dashboard/cloud-dashboard.ts';
import { type AwsLimits, awsLimits } from './aws-limits.ts';
import type { CfnTemplate } from './cfn-template.ts';
import type { ChaosOptions } from './chaos.ts';
import { type Endpoint, startEndpoint } from './endpoint.ts';
import type { EndpointMetrics } from './endpoint-metrics.ts';
import { FunctionUrlServer } from './function-url-server.ts';
import type { IamEnforcer, ObservedActions } from './iam-enforcer.ts';
import { AccountConcurrency, type FunctionStats, LocalLambda } from './local-lambda.ts';
import { type LambdaFunctionSpec, type ProvisionResult, provision } from './provision.ts';
import { type ScheduleStats, ScheduleTimer } from './schedule-timer.ts';
import type { ScheduleInvoker } from './scheduler-service.ts';
import type { SigV4Key } from './sigv4-verifier.ts';
import { type EventSourceStats, SqsEventSource } from './sqs-event-source.ts';

const PROJECT_DIR = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_TEMPLATE = join(PROJECT_DIR, 'cdk.out', 'CrawlstackStack.template.json');

export interface CloudLocalOptions {
  /** Stand-in listen address; loopback by default. */
  host?: string;
  /** Stand-in port: 4566 by default, 0 for a free one. */
  port?: number;
  /** Use this endpoint instead of starting the stand-in; defaults to `AWS_ENDPOINT_URL`. */
  endpoint?: string;
  /** Physical-name prefix (default `crawlstack`); tests pass a unique one. */
  prefix?: string;
  /** A template object or a path; default `cdk.out/CrawlstackStack.template.json`. */
  template?: CfnTemplate | string;
  /** Where `asset.<hash>` folders are; default: the template's folder. */
  assemblyDir?: string;
  /** `auto` (default for the default template) runs `npm run synth` when cdk.out is missing or older than lib/ or functions/. */
  synth?: 'auto' | 'always' | 'never';
  /** Runs every schedule at this period instead of its rate (tests: ~1000). */
  scheduleRateMs?: number;
  /** Port of the first function URL server (0 = free port). */
  apiPort?: number;
  /** Bearer token for the function URLs; random when absent. */
  token?: string;
  /**
   * Function URLs (AuthType AWS_IAM) accept only requests SigV4-signed with this key pair for
   * service `lambda` in `region`, as AWS does; no bearer token then.
   */
  sigv4?: SigV4Key;
  /** Added to every function's environment, over the template's values (e.g. CRAWLSTACK_*). */
  env?: Record<string, string>;
  /** A function's idle container is reclaimed after this long (default 5 minutes). */
  containerIdleMs?: number;
  /**
   * Appends one JSON line `{ prefix, iam }` (the IAM actions each function was allowed and
   * denied) to this file when the stack stops; default `CRAWLSTACK_IAM_REPORT`. Stand-in only.
   */
  iamReport?: string;
  /**
   * Start one container per function with the stack (default true), so the first invocation of
   * each is warm; `false` leaves every first invocation to start cold, as Lambda does.
   */
  prewarm?: boolean;
  region?: string;
  /**
   * Overrides for the SQS event sources (tests shorten the long poll and the batching window):
   * for every source, and per function (logical id) in `byFunction`, which wins.
   */
  eventSource?: EventSourceOverrides & { byFunction?: Record<string, EventSourceOverrides> };
  /**
   * Per function (logical id): a timeout other than the template's. Tests shorten the worker's
   * together with its queue's visibility timeout (below), so that crashed batches return in
   * seconds; Lambda refuses a queue whose visibility timeout is shorter than the function's.
   */
  functions?: Record<string, { timeoutSeconds?: number }>;
  /** Per queue (logical id): a visibility timeout other than the template's, set before any trigger runs. */
  queues?: Record<string, { visibilityTimeoutSeconds?: number }>;
  /**
   * Per function (logical id): kill its containers at random points of invocations, seeded
   * (see chaos.ts). Stand-in containers only.
   */
  chaos?: Record<string, ChaosOptions>;
  /** Human log lines; default stderr. */
  log?: (message: string) => void;
  /** AWS limits at scale, over the `CRAWLSTACK_LOCAL_*` variables (see aws-limits.ts). */
  limits?: Partial<AwsLimits>;
  /**
   * Serve the dashboard for the stand-in's crawls on 127.0.0.1 (`port` 0: a free one); it calls
   * the API with the bearer token. Not with `sigv4` (`crawlstack cloud ui` signs its calls).
   */
  dashboard?: { port?: number };
}

/** What a test may change in an event source mapping. */
export interface EventSourceOverrides {
  waitTimeSeconds?: number;
  maxConcurrency?: number;
  /** Replaces a non-zero `MaximumBatchingWindowInSeconds` (a template without a window keeps none). */
  batchingWindowSeconds?: number;
}

/** Numbers for the cost benchmark, keyed by logical id. */
export interface CloudLocalMetrics {
  /** Absent when an external endpoint (real LocalStack) is used. */
  endpoint?: EndpointMetrics;
  functions: Record<string, FunctionStats>;
  eventSources: Record<string, EventSourceStats>;
  schedules: Record<string, ScheduleStats>;
  /** IAM actions each function's role was allowed and denied (stand-in only). */
  iam?: ObservedActions;
}

/** A running local cloud. */
export interface CloudLocal {
  /** Base URL of the (first) function URL, no trailing slash. */
  api: string;
  /** The bearer token; empty when the URLs check SigV4 signatures. */
  token: string;
  /** How the function URLs authenticate callers. */
  auth: 'bearer' | 'sigv4';
  endpoint: string;
  /** The region of every ARN, queue URL and signature. */
  region: string;
  /** Every function URL by its logical id. */
  urls: Record<string, string>;
  provisioned: ProvisionResult;
  /** The local functions by logical id (tests invoke them directly). */
  lambdas: Record<string, LocalLambda>;
  /** The dashboard's URL, when one was asked for (`dashboard`) and the API takes the token. */
  dashboard?: string;
  /** The stand-in's IAM (tests register callers with a role's policies); absent for an external endpoint. */
  iam?: IamEnforcer;
  metrics(): CloudLocalMetrics;
  /** Stops triggers (waiting for running invocations), then the endpoint if it was started here. */
  stop(): Promise<void>;
}

function newestMtime(path: string): number {
  let newest = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = join(path, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function templateIsStale(templatePath: string): boolean {
  let built: number;
  try {
    built = statSync(templatePath).mtimeMs;
  } catch {
    return true;
  }
  return ['lib', 'functions'].some((dir) => newestMtime(join(PROJECT_DIR, dir)) > built);
}

async function synthesize(log: (message: string) => void): Promise<void> {
  log('cloud:local: running npm run synth');
  const npmCli = process.env.npm_execpath;
  const [command, args] = npmCli ? [process.execPath, [npmCli, 'run', 'synth']] : ['npm', ['run', 'synth']];
  // The child's stdout goes to our stderr: stdout carries only the key=value lines.
  const child = spawn(command, args, { cwd: PROJECT_DIR, stdio: ['ignore', 2, 2] });
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('exit', done);
  });
  if (code !== 0) throw new Error(`npm run synth failed (exit ${code})`);
}

async function waitForHealth(endpoint: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const response = await fetch(`${endpoint}/_localstack/health`);
      const body = (await response.json()) as { services?: Record<string, string> };
      const services = body.services ?? {};
      if (['sqs', 'dynamodb', 's3'].every((s) => services[s] === 'running' || services[s] === 'available'))
        return;
      last = JSON.stringify(services);
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline) throw new Error(`${endpoint} not ready after ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The synthesized CrawlstackStack template (running `npm run synth` first when cdk.out is missing
 * or older than lib/ or functions/), and the assembly folder its assets are in.
 */
export async function synthesizedTemplate(
  log: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
): Promise<{ template: CfnTemplate; assemblyDir: string }> {
  if (templateIsStale(DEFAULT_TEMPLATE)) await synthesize(log);
  return {
    template: JSON.parse(readFileSync(DEFAULT_TEMPLATE, 'utf8')) as CfnTemplate,
    assemblyDir: dirname(DEFAULT_TEMPLATE),
  };
}

/**
 * What a Scheduler schedule of the stand-in invokes: the local function with the target's ARN,
 * after the schedule's role is allowed `lambda:InvokeFunction` on it (its policies from the
 * template), as Scheduler assumes the role to invoke.
 */
function scheduleInvoker(
  endpoint: Endpoint,
  provisioned: ProvisionResult,
  lambdas: Record<string, LocalLambda>,
  region: string,
): ScheduleInvoker {
  return async ({ arn, roleArn, input }) => {
    const role = Object.values(provisioned.roles).find((r) => r.arn === roleArn);
    if (role === undefined) return { ok: false, detail: `role ${roleArn} is not a role of the template` };
    const key = `scheduler-role:${roleArn}`;
    const accountId = roleArn.split(':')[4] ?? '000000000000';
    if (endpoint.iam.caller(key) === undefined) {
      endpoint.iam.register(key, {
        name: role.logicalId,
        sessionArn: `arn:aws:sts::${accountId}:assumed-role/${role.name}/scheduler`,
        roleArn,
        accountId,
        policies: role.policies,
      });
    }
    const denial = await endpoint.iam.check(
      key,
      [{ action: 'lambda:InvokeFunction', resource: arn }],
      region,
    );
    if (denial !== undefined) return { ok: false, detail: denial.message };
    const logicalId = Object.entries(provisioned.functions).find(([, spec]) => spec.arn === arn)?.[0];
    const lambda = logicalId === undefined ? undefined : lambdas[logicalId];
    if (lambda === undefined) return { ok: false, detail: `no function ${arn} runs in this stack` };
    const outcome = await lambda.invoke(input);
    return outcome.kind === 'ok' ? { ok: true } : { ok: false, detail: JSON.stringify(outcome) };
  };
}

/** Starts the whole stack locally; see the file comment. */
export async function startCloudLocal(options: CloudLocalOptions = {}): Promise<CloudLocal> {
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const region = options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const limits = awsLimits(process.env, options.limits);

  let template: CfnTemplate;
  let assemblyDir: string;
  if (typeof options.template === 'object') {
    template = options.template;
    assemblyDir = resolve(options.assemblyDir ?? join(PROJECT_DIR, 'cdk.out'));
  } else {
    const templatePath = resolve(options.template ?? DEFAULT_TEMPLATE);
    const synth = options.synth ?? (options.template === undefined ? 'auto' : 'never');
    if (synth === 'always' || (synth === 'auto' && templateIsStale(templatePath))) await synthesize(log);
    template = JSON.parse(readFileSync(templatePath, 'utf8')) as CfnTemplate;
    assemblyDir = resolve(options.assemblyDir ?? dirname(templatePath));
  }

  const stoppers: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stopOne of stoppers.splice(0).reverse()) {
      try {
        await stopOne();
      } catch (error) {
        log(`cloud:local: error while stopping: ${String(error)}`);
      }
    }
  };

  try {
    const external = options.endpoint ?? process.env.AWS_ENDPOINT_URL;
    let endpoint: Endpoint | undefined;
    let endpointUrl: string;
    if (external) {
      endpointUrl = external.replace(/\/+$/, '');
      await waitForHealth(endpointUrl, 60_000);
    } else {
      const started = await startEndpoint({
        host: options.host ?? '127.0.0.1',
        port: options.port ?? 4566,
        region,
        limits,
      });
      stoppers.push(() => started.close());
      const report = options.iamReport ?? process.env.CRAWLSTACK_IAM_REPORT;
      if (report) {
        // Runs before the endpoint closes (stoppers run last first), after every trigger stopped.
        stoppers.push(async () => {
          const line = { prefix: options.prefix ?? 'crawlstack', iam: started.iam.observed() };
          appendFileSync(report, `${JSON.stringify(line)}\n`);
        });
      }
      endpoint = started;
      endpointUrl = started.url;
    }

    const awsEnv: Record<string, string> = {
      AWS_ENDPOINT_URL: endpointUrl,
      AWS_REGION: region,
      AWS_DEFAULT_REGION: region,
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID || 'test',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY || 'test',
    };
    const clients = createAwsClients(awsEnv);
    stoppers.push(async () => clients.destroy());

    const provisioned = await provision(template, clients, {
      prefix: options.prefix ?? 'crawlstack',
      region,
      assemblyDir,
    });
    for (const note of provisioned.notes) log(`cloud:local: ${note}`);
    for (const [logicalId, queue] of Object.entries(options.queues ?? {})) {
      const url = provisioned.resources[logicalId]?.url;
      if (url === undefined) throw new Error(`queues.${logicalId}: no such queue in the template`);
      if (queue.visibilityTimeoutSeconds !== undefined) {
        await clients.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: url,
            Attributes: { VisibilityTimeout: String(queue.visibilityTimeoutSeconds) },
          }),
        );
      }
    }

    // Only functions something triggers are loaded; custom-resource providers never run locally.
    const triggered = new Set<string>([
      ...provisioned.eventSourceMappings.filter((m) => m.enabled).map((m) => m.functionLogicalId),
      ...provisioned.functionUrls.map((u) => u.functionLogicalId),
      ...provisioned.schedules
        .filter((s) => s.enabled)
        .flatMap((s) => s.targets.map((t) => t.functionLogicalId)),
    ]);
    if (endpoint !== undefined) {
      for (const policy of provisioned.resourcePolicies) {
        for (const arn of policy.resourceArns) endpoint.iam.setResourcePolicy(arn, policy.document);
      }
    }
    const lambdas: Record<string, LocalLambda> = {};
    // Every function of the stack draws on one account's concurrency.
    const account = new AccountConcurrency(limits.accountConcurrency);
    // What the function's role's temporary credentials are to the function: its environment.
    const functionEnvs: Record<string, Record<string, string>> = {};
    for (const logicalId of triggered) {
      const spec = provisioned.functions[logicalId];
      if (spec === undefined) continue;
      if (spec.assetDir === undefined) throw new Error(`${logicalId} has no bundled asset to run`);
      const credentials = functionCredentials();
      if (endpoint !== undefined) {
        const role = spec.roleLogicalId === undefined ? undefined : provisioned.roles[spec.roleLogicalId];
        if (role === undefined)
          log(`cloud:local: ${logicalId}'s role is not in the template: every call it makes is denied`);
        const roleName = role?.name ?? spec.roleArn?.split('/').pop() ?? `${spec.name}-role`;
        endpoint.iam.register(credentials.AWS_ACCESS_KEY_ID, {
          name: logicalId,
          sessionArn: `arn:aws:sts::${spec.arn.split(':')[4]}:assumed-role/${roleName}/${spec.name}`,
          roleArn: role?.arn ?? spec.roleArn ?? '',
          accountId: spec.arn.split(':')[4] ?? '000000000000',
          context: { 'lambda:SourceFunctionArn': spec.arn },
          policies: role?.policies ?? [],
        });
      }
      const { NODE_OPTIONS: nodeOptions, ...templateEnv } = spec.env;
      // NODE_OPTIONS is read when a process starts; the one it would matter for locally is source maps.
      if (nodeOptions?.includes('--enable-source-maps')) process.setSourceMapsEnabled(true);
      const env = {
        ...lambdaRuntimeEnv(spec, region),
        ...templateEnv,
        ...awsEnv,
        ...credentials,
        // The stand-in crawls fixture sites on loopback: a deployment forbids private addresses
        // by default (crawlstack:allowPrivateAddresses), the stand-in allows them unless told.
        PRIVATE_ADDRESSES: 'allowed',
        ...options.env,
      };
      functionEnvs[logicalId] = env;
      const chaos = options.chaos?.[logicalId];
      const lambda = new LocalLambda({
        name: spec.name,
        code: { assetDir: spec.assetDir, handler: spec.handler, env },
        timeoutSeconds: options.functions?.[logicalId]?.timeoutSeconds ?? spec.timeoutSeconds,
        ...(chaos === undefined ? {} : { chaos }),
        memoryMb: spec.memoryMb,
        region,
        log,
        account,
        recursiveLoop: spec.recursiveLoop,
        recursionLimit: limits.recursionLimit,
        ...(options.containerIdleMs === undefined ? {} : { idleMs: options.containerIdleMs }),
        ...(spec.reservedConcurrency === undefined ? {} : { reservedConcurrency: spec.reservedConcurrency }),
      });
      stoppers.push(() => lambda.stop());
      lambdas[logicalId] = lambda;
    }

    if (endpoint !== undefined) {
      const scheduler = endpoint.scheduler;
      scheduler.setInvoker(scheduleInvoker(endpoint, provisioned, lambdas, region));
      stoppers.push(async () => scheduler.setInvoker(undefined));
    }

    // Before any trigger runs, so the first poll, tick or request finds a container.
    if (options.prewarm !== false) await Promise.all(Object.values(lambdas).map((l) => l.prewarm()));

    const eventSources: Record<string, SqsEventSource> = {};
    for (const mapping of provisioned.eventSourceMappings) {
      const lambda = lambdas[mapping.functionLogicalId];
      if (!mapping.enabled || lambda === undefined) continue;
      await refuseShortVisibility(clients.sqs, mapping.queueUrl, lambda);
      const overrides: EventSourceOverrides = {
        ...options.eventSource,
        ...options.eventSource?.byFunction?.[mapping.functionLogicalId],
      };
      const maxConcurrency = overrides.maxConcurrency ?? mapping.maximumConcurrency;
      const window =
        mapping.maximumBatchingWindowSeconds > 0 && overrides.batchingWindowSeconds !== undefined
          ? overrides.batchingWindowSeconds
          : mapping.maximumBatchingWindowSeconds;
      // Lambda polls with the function's execution role (it needs ReceiveMessage, DeleteMessage,
      // GetQueueAttributes on the queue), so the poller's calls are the function's.
      const pollerClients = createAwsClients(functionEnvs[mapping.functionLogicalId] ?? awsEnv);
      stoppers.push(async () => pollerClients.destroy());
      const source = new SqsEventSource({
        lambda,
        sqs: pollerClients.sqs,
        queueUrl: mapping.queueUrl,
        queueArn: mapping.queueArn,
        batchSize: mapping.batchSize,
        reportBatchItemFailures: mapping.reportBatchItemFailures,
        batchingWindowSeconds: window,
        region,
        log,
        ...(maxConcurrency === undefined ? {} : { maxConcurrency }),
        ...(overrides.waitTimeSeconds === undefined ? {} : { waitTimeSeconds: overrides.waitTimeSeconds }),
      }).start();
      stoppers.push(() => source.stop());
      eventSources[mapping.logicalId] = source;
    }

    const urls: Record<string, string> = {};
    let token = options.token;
    for (const [i, spec] of provisioned.functionUrls.entries()) {
      const lambda = lambdas[spec.functionLogicalId];
      if (lambda === undefined) continue;
      const server = new FunctionUrlServer({
        lambda,
        authType: spec.authType,
        host: '127.0.0.1',
        port: i === 0 ? (options.apiPort ?? 0) : 0,
        ...(token === undefined ? {} : { token }),
        ...(options.sigv4 === undefined ? {} : { sigv4: options.sigv4 }),
      });
      token ??= server.token; // one token for every URL
      urls[spec.logicalId] = await server.start();
      stoppers.push(() => server.stop());
    }

    const schedules: Record<string, ScheduleTimer> = {};
    for (const schedule of provisioned.schedules) {
      if (!schedule.enabled) continue;
      for (const [i, target] of schedule.targets.entries()) {
        const lambda = lambdas[target.functionLogicalId];
        if (lambda === undefined) continue;
        const timer = new ScheduleTimer({
          lambda,
          scheduleExpression: schedule.scheduleExpression,
          ruleArn: schedule.arn,
          log,
          ...(options.scheduleRateMs === undefined ? {} : { rateMs: options.scheduleRateMs }),
          ...(target.input === undefined ? {} : { input: target.input }),
        }).start();
        stoppers.push(() => timer.stop());
        schedules[i === 0 ? schedule.logicalId : `${schedule.logicalId}#${i}`] = timer;
      }
    }

    const api = Object.values(urls)[0] ?? '';
    let dashboard: string | undefined;
    if (options.dashboard !== undefined && api !== '') {
      if (options.sigv4 !== undefined) {
        log('cloud:local: no dashboard with SigV4 auth (crawlstack cloud ui signs its own calls)');
      } else {
        const served = await startCloudDashboard({
          api,
          auth: bearerAuth(token ?? ''),
          port: options.dashboard.port ?? 0,
        });
        stoppers.push(() => served.close());
        dashboard = served.url;
      }
    }
    const metrics = (): CloudLocalMetrics => {
      const out: CloudLocalMetrics = { functions: {}, eventSources: {}, schedules: {} };
      if (endpoint !== undefined) {
        out.endpoint = endpoint.metrics();
        out.iam = endpoint.iam.observed();
      }
      for (const [id, lambda] of Object.entries(lambdas)) out.functions[id] = lambda.stats();
      for (const [id, source] of Object.entries(eventSources)) out.eventSources[id] = source.stats();
      for (const [id, timer] of Object.entries(schedules)) out.schedules[id] = timer.stats();
      return out;
    };
    let stopping: Promise<void> | undefined;
    return {
      api,
      token: options.sigv4 === undefined ? (token ?? '') : '',
      auth: options.sigv4 === undefined ? 'bearer' : 'sigv4',
      endpoint: endpointUrl,
      region,
      urls,
      provisioned,
      lambdas,
      ...(dashboard === undefined ? {} : { dashboard }),
      ...(endpoint === undefined ? {} : { iam: endpoint.iam }),
      metrics,
      stop: () => {
        stopping ??= stopAll();
        return stopping;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Lambda's CreateEventSourceMapping refuses a queue whose visibility timeout is shorter than the
 * function's timeout: a batch could become visible again while its invocation still runs, and a
 * second invocation would get the same messages (the worker's host ledger relies on one consumer
 * per FIFO group at a time). The stand-in refuses it too.
 */
async function refuseShortVisibility(
  sqs: ReturnType<typeof createAwsClients>['sqs'],
  queueUrl: string,
  lambda: LocalLambda,
): Promise<void> {
  const response = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['VisibilityTimeout'] }),
  );
  const visibility = Number(response.Attributes?.VisibilityTimeout ?? 30);
  const timeout = lambda.timeoutMs / 1000;
  if (visibility < timeout) {
    throw Object.assign(
      new Error(
        `Invalid request provided: Queue visibility timeout: ${visibility} seconds is less than Function timeout: ${timeout} seconds (${lambda.name}, ${queueUrl})`,
      ),
      { name: 'InvalidParameterValueException' },
    );
  }
}

/** Temporary credentials of an execution environment: an access key id the endpoint maps to a role. */
function functionCredentials(): Record<
  'AWS_ACCESS_KEY_ID' | 'AWS_SECRET_ACCESS_KEY' | 'AWS_SESSION_TOKEN',
  string
> {
  const base32 = (bytes: Buffer) =>
    [...bytes].map((b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[b % 32]).join('');
  return {
    // ASIA: the prefix of temporary (STS) access keys, which is what Lambda hands a function.
    AWS_ACCESS_KEY_ID: `ASIA${base32(randomBytes(16))}`,
    AWS_SECRET_ACCESS_KEY: randomBytes(30).toString('base64'),
    AWS_SESSION_TOKEN: randomBytes(48).toString('base64'),
  };
}

/** The variables Lambda's runtime sets in every execution environment. */
function lambdaRuntimeEnv(spec: LambdaFunctionSpec, region: string): Record<string, string> {
  return {
    AWS_LAMBDA_FUNCTION_NAME: spec.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${spec.name}`,
    AWS_EXECUTION_ENV: `AWS_Lambda_${spec.runtime ?? 'nodejs22.x'}`,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    LAMBDA_TASK_ROOT: spec.assetDir ?? '',
    _HANDLER: spec.handler,
    LANG: 'en_US.UTF-8',
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  };
}

function parseNumber(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      prefix: { type: 'string' },
      'api-port': { type: 'string' },
      token: { type: 'string' },
      'access-key-id': { type: 'string' },
      'secret-access-key': { type: 'string' },
      'schedule-rate-ms': { type: 'string' },
      template: { type: 'string' },
      assembly: { type: 'string' },
      synth: { type: 'boolean' },
      'no-synth': { type: 'boolean' },
      'info-file': { type: 'string' },
      'dashboard-port': { type: 'string' },
      'no-dashboard': { type: 'boolean' },
    },
  });
  const options: CloudLocalOptions = {};
  const port = parseNumber(values.port, 'port');
  const apiPort = parseNumber(values['api-port'], 'api-port');
  const rate = parseNumber(values['schedule-rate-ms'], 'schedule-rate-ms');
  if (port !== undefined) options.port = port;
  if (apiPort !== undefined) options.apiPort = apiPort;
  if (rate !== undefined) options.scheduleRateMs = rate;
  if (values.host !== undefined) options.host = values.host;
  if (values.prefix !== undefined) options.prefix = values.prefix;
  if (values.token !== undefined) options.token = values.token;
  const accessKeyId = values['access-key-id'];
  const secretAccessKey = values['secret-access-key'] ?? process.env.CRAWLSTACK_LOCAL_SECRET_ACCESS_KEY;
  if (accessKeyId !== undefined || values['secret-access-key'] !== undefined) {
    if (accessKeyId === undefined || secretAccessKey === undefined) {
      throw new Error(
        '--access-key-id and --secret-access-key (or CRAWLSTACK_LOCAL_SECRET_ACCESS_KEY) go together',
      );
    }
    options.sigv4 = { accessKeyId, secretAccessKey };
  }
  if (values.template !== undefined) options.template = values.template;
  if (values.assembly !== undefined) options.assemblyDir = values.assembly;
  if (values['no-dashboard'] !== true) {
    options.dashboard = { port: parseNumber(values['dashboard-port'], 'dashboard-port') ?? 0 };
  }
  if (values.synth) options.synth = 'always';
  if (values['no-synth']) options.synth = 'never';

  const local = await startCloudLocal(options);
  const lines = [`endpoint=${local.endpoint}`, `api=${local.api}`];
  if (local.auth === 'sigv4') {
    lines.push('auth=sigv4', `region=${local.region}`, `access_key_id=${options.sigv4?.accessKeyId ?? ''}`);
  } else {
    lines.push(`token=${local.token}`);
  }
  if (local.dashboard !== undefined) lines.push(`dashboard=${local.dashboard}`);
  // More than one function URL: name each (api= is the first).
  if (Object.keys(local.urls).length > 1) {
    for (const [id, url] of Object.entries(local.urls)) lines.push(`url.${id}=${url}`);
  }
  // The same, for `crawlstack cloud` run from the project folder (removed again when it stops).
  const infoPath = writeCloudLocalInfo(values['info-file'] ?? join(PROJECT_DIR, CLOUD_LOCAL_FILE), {
    api: local.api,
    auth: local.auth,
    ...(local.auth === 'bearer' ? { token: local.token } : {}),
    region: local.region,
    endpoint: local.endpoint,
    pid: process.pid,
  });
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) process.exit(1); // a second signal: stop waiting
    signalled = true;
    process.stderr.write(`cloud:local: ${signal}, stopping\n`);
    removeCloudLocalInfo(infoPath, process.pid);
    local.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`cloud:local: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  // Before the lines go out: whoever reads them may stop us at once.
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stderr.write(`cloud:local: ready (crawlstack cloud finds it through ${infoPath}); Ctrl-C stops\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `cloud:local: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
