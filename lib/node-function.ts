import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { pinLogicalId } from './logical-id.ts';

/** The repository root: entries, lock file and tsconfig are found from here, whatever the cwd. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Properties of {@link createNodeFunction}. */
export interface NodeFunctionProps {
  /** Folder under functions/cloud/lambdas/ whose `entry.ts` exports `handler`, e.g. `frontier-worker`. */
  readonly entry: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  /** `ReservedConcurrentExecutions`. @default - none: the account's unreserved pool */
  readonly reservedConcurrency?: number | undefined;
  /** Retention of the function's log group. */
  readonly logRetention: logs.RetentionDays;
  /** Removal policy of the function's log group. */
  readonly logRemovalPolicy: RemovalPolicy;
  /** X-Ray active tracing. */
  readonly tracing: boolean;
  /**
   * `Allow` for a function that sends to the queue that invokes it by design; Lambda's default
   * (`Terminate`) stops such a chain after 16 invocations. @default Terminate
   */
  readonly recursiveLoop?: lambda.RecursiveLoop;
}

/**
 * A Node.js 22 arm64 Lambda bundled by the local esbuild (never Docker), as ESM with the AWS SDK
 * left to the runtime, and its own log group. The construct id becomes the logical ID.
 */
export function createNodeFunction(
  scope: Construct,
  id: string,
  props: NodeFunctionProps,
): nodejs.NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: props.logRetention,
    removalPolicy: props.logRemovalPolicy,
  });
  // Our own role instead of CDK's default (which attaches AWSLambdaBasicExecutionRole: logs on
  // Resource *): the function may write to its own log group only.
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: `crawlstack: execution role of ${id}`,
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  const fn = new nodejs.NodejsFunction(scope, id, {
    role,
    entry: join(ROOT, 'functions', 'cloud', 'lambdas', props.entry, 'entry.ts'),
    handler: 'handler',
    projectRoot: ROOT,
    depsLockFilePath: join(ROOT, 'package-lock.json'),
    description: props.description,
    // Node 22 is the project's runtime everywhere (dev, CI, Lambda); arm64 is ~20% cheaper per
    // GB-second and the code has no native addons.
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    ...(props.recursiveLoop === undefined ? {} : { recursiveLoop: props.recursiveLoop }),
    ...(props.reservedConcurrency === undefined
      ? {}
      : { reservedConcurrentExecutions: props.reservedConcurrency }),
    logGroup,
    tracing: props.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
    environment: {
      // Stack traces point into the TypeScript sources (the bundle ships a source map).
      NODE_OPTIONS: '--enable-source-maps',
    },
    bundling: {
      forceDockerBundling: false,
      format: nodejs.OutputFormat.ESM,
      // Prefer packages' ESM builds; fall back to CommonJS.
      mainFields: ['module', 'main'],
      target: 'node22',
      minify: true,
      sourceMap: true,
      // Line mapping without embedded sources: a several times smaller map to parse at cold start.
      sourcesContent: false,
      // The nodejs22.x runtime ships AWS SDK v3; bundling a second copy costs cold-start time.
      // @smithy/* goes with it because the SDK and Smithy packages must come from one release.
      externalModules: ['@aws-sdk/*', '@smithy/*'],
      // Some bundled CommonJS packages call require() for Node built-ins; give the ESM bundle one.
      banner:
        "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      logLevel: nodejs.LogLevel.WARNING,
    },
  });
  // cdk-nag (AwsSolutions-L1) wants the newest Node runtime (24). Node 22 is the project's
  // runtime everywhere (development, CI and tests run on the `node` 22 package, bundles target
  // node22): the Lambda runtime moves together with them, as one decision, not ahead of them.
  Validations.of(fn).acknowledge({
    id: 'AwsSolutions-L1',
    reason:
      'nodejs22.x is the runtime development, CI and the tests run on (bundles target node22); it is a supported LTS runtime, and moves to 24 together with them.',
  });
  if (props.tracing) {
    // X-Ray's PutTraceSegments and PutTelemetryRecords (which CDK grants for active tracing)
    // have no resource-level permissions: they exist only on `Resource: *`.
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions (only *); granted only with crawlstack:tracing=true.',
    });
  }
  pinLogicalId(fn);
  return fn;
}
