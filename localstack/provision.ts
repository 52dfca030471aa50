/**
 * Creates what a synthesized CDK template declares, on any SQS/DynamoDB/S3 endpoint (the stand-in
 * or real LocalStack), and reads the Lambda functions and their triggers out of it so the local
 * runtime can run them. Physical names are deterministic (prefix + logical id), so a second run
 * against the same endpoint finds and reuses what the first one made.
 */
import { resolve as resolvePath } from 'node:path';
import {
  type AttributeDefinition,
  type BillingMode,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  type LocalSecondaryIndex,
  type Projection,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  HeadBucketCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  type CfnResource,
  type CfnTemplate,
  type IntrinsicContext,
  type ResolvedReference,
  resolveIntrinsics,
  TemplateError,
} from './cfn-template.ts';
import { awsManagedPolicy, type NamedPolicy, type ResourcePolicySpec, type RoleSpec } from './iam-roles.ts';

/** The clients provisioning talks to (a subset of `createAwsClients`). */
export interface ProvisionClients {
  sqs: SQSClient;
  dynamo: DynamoDBClient;
  s3: S3Client;
}

export interface ProvisionOptions {
  /** Prepended to every physical name (`t1234` makes `t1234-FrontierQueue.fifo`), so parallel runs do not collide. */
  prefix?: string;
  region?: string;
  /** Account id in the ARNs made up locally (Lambda, IAM); the emulators report their own for queues and tables. */
  accountId?: string;
  /** The cloud assembly folder (`cdk.out`) that `aws:asset:path` is relative to. */
  assemblyDir?: string;
  stackName?: string;
}

/** One created resource (queue, table, bucket) or registered function. */
export interface ProvisionedResource {
  logicalId: string;
  type: string;
  name: string;
  arn: string;
  /** Queue URL for queues. */
  url?: string;
}

/** A Lambda function as the local runtime needs it. */
export interface LambdaFunctionSpec {
  logicalId: string;
  name: string;
  arn: string;
  /** `index.handler`: module `index` in the asset folder, export `handler`. */
  handler: string;
  runtime?: string;
  /** The bundled asset folder (`cdk.out/asset.<hash>`); absent for inline code. */
  assetDir?: string;
  /** Environment variables with every intrinsic resolved to the endpoint's values. */
  env: Record<string, string>;
  timeoutSeconds: number;
  memoryMb: number;
  reservedConcurrency?: number;
  /** `RecursiveLoop`: `Terminate` (Lambda's default) stops recursive chains at 16 invocations. */
  recursiveLoop: 'Allow' | 'Terminate';
  /** The execution role, when it is a role of the template (its policies are in `roles`). */
  roleLogicalId?: string;
  /** The `Role` property: the execution role's ARN. */
  roleArn?: string;
}

/** An SQS event source mapping (the only kind the stand-in runs). */
export interface EventSourceMappingSpec {
  logicalId: string;
  functionLogicalId: string;
  queueLogicalId: string;
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  reportBatchItemFailures: boolean;
  /** `ScalingConfig.MaximumConcurrency`, when set. */
  maximumConcurrency?: number;
  maximumBatchingWindowSeconds: number;
  enabled: boolean;
}

/** A Lambda function URL. */
export interface FunctionUrlSpec {
  logicalId: string;
  functionLogicalId: string;
  authType: 'AWS_IAM' | 'NONE';
  invokeMode: string;
}

/** An EventBridge rule (or Scheduler schedule) with a schedule expression and Lambda targets. */
export interface ScheduleSpec {
  logicalId: string;
  type: string;
  scheduleExpression: string;
  enabled: boolean;
  arn: string;
  targets: { functionLogicalId: string; input?: unknown }[];
}

/** Everything {@link provision} made or read. */
export interface ProvisionResult {
  resources: Record<string, ProvisionedResource>;
  functions: Record<string, LambdaFunctionSpec>;
  eventSourceMappings: EventSourceMappingSpec[];
  functionUrls: FunctionUrlSpec[];
  schedules: ScheduleSpec[];
  /** Execution roles with their policies, by logical id. */
  roles: Record<string, RoleSpec>;
  /** Queue and bucket policies. */
  resourcePolicies: ResourcePolicySpec[];
  /** What was skipped or approximated, one sentence each (TTL on dynalite, custom resources, ...). */
  notes: string[];
}

const QUEUE = 'AWS::SQS::Queue';
const TABLE = 'AWS::DynamoDB::Table';
const GLOBAL_TABLE = 'AWS::DynamoDB::GlobalTable';
const BUCKET = 'AWS::S3::Bucket';
const FUNCTION = 'AWS::Lambda::Function';
const PROVISIONED_TYPES = new Set([QUEUE, TABLE, GLOBAL_TABLE, BUCKET, FUNCTION]);
// Read elsewhere in this file, or meaningless without IAM, logs and CloudFormation itself.
const QUIETLY_IGNORED = new Set([
  'AWS::Lambda::EventSourceMapping',
  'AWS::Lambda::Url',
  'AWS::Lambda::Permission',
  'AWS::Events::Rule',
  'AWS::Scheduler::Schedule',
  // The stand-in's Scheduler keeps schedules in any group named (scheduler-service.ts).
  'AWS::Scheduler::ScheduleGroup',
  'AWS::IAM::Role',
  'AWS::IAM::Policy',
  'AWS::IAM::ManagedPolicy',
  'AWS::SQS::QueuePolicy',
  'AWS::S3::BucketPolicy',
  'AWS::Logs::LogGroup',
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::Dashboard',
  'AWS::CDK::Metadata',
]);

// CloudFormation property name -> SQS attribute name, for the attributes passed through as text.
const QUEUE_ATTRIBUTES = [
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'DelaySeconds',
  'FifoQueue',
  'FifoThroughputLimit',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'VisibilityTimeout',
];

function cleanName(text: string, pattern: RegExp): string {
  return text.replace(pattern, '-');
}

function prefixed(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}-${name}`;
}

function queueName(prefix: string, base: string, fifo: boolean): string {
  const stem = cleanName(base.replace(/\.fifo$/, ''), /[^A-Za-z0-9_-]/g);
  const suffix = fifo ? '.fifo' : '';
  return prefixed(prefix, stem).slice(0, 80 - suffix.length) + suffix;
}

function tableName(prefix: string, base: string): string {
  return cleanName(prefixed(prefix, base), /[^A-Za-z0-9_.-]/g).slice(0, 255);
}

function bucketName(prefix: string, base: string): string {
  const name = cleanName(prefixed(prefix, base).toLowerCase(), /[^a-z0-9.-]/g)
    .replace(/^[^a-z0-9]+/, '')
    .replace(/[^a-z0-9]+$/, '')
    .slice(0, 63)
    .replace(/[^a-z0-9]+$/, '');
  return name.length >= 3 ? name : `${name}bkt`;
}

function functionName(prefix: string, base: string): string {
  return cleanName(prefixed(prefix, base), /[^A-Za-z0-9_-]/g).slice(0, 64);
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : '';
}

function numberProperty(value: unknown, fallback: number): number {
  const n = Number(value);
  return value === undefined || value === null || Number.isNaN(n) ? fallback : n;
}

function textValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Creates and reads resources for one template; one instance per {@link provision} call. */
class Provisioner {
  readonly #template: CfnTemplate;
  readonly #clients: ProvisionClients;
  readonly #prefix: string;
  readonly #region: string;
  readonly #accountId: string;
  readonly #assemblyDir: string;
  readonly #context: IntrinsicContext;
  readonly #pending = new Map<string, Promise<ResolvedReference>>();
  readonly result: ProvisionResult = {
    resources: {},
    functions: {},
    eventSourceMappings: [],
    functionUrls: [],
    schedules: [],
    roles: {},
    resourcePolicies: [],
    notes: [],
  };

  constructor(template: CfnTemplate, clients: ProvisionClients, options: ProvisionOptions) {
    this.#template = template;
    this.#clients = clients;
    this.#prefix = options.prefix ?? '';
    this.#region = options.region ?? 'us-east-1';
    this.#accountId = options.accountId ?? '000000000000';
    this.#assemblyDir = resolvePath(options.assemblyDir ?? 'cdk.out');
    const parameters: Record<string, unknown> = {};
    for (const [name, spec] of Object.entries(template.Parameters ?? {})) parameters[name] = spec.Default;
    this.#context = {
      region: this.#region,
      accountId: this.#accountId,
      stackName: options.stackName ?? 'CrawlstackStack',
      parameters,
      reference: (logicalId, path) => this.#reference(logicalId, path),
    };
  }

  async run(): Promise<ProvisionResult> {
    const resources = this.#template.Resources;
    if (resources === null || typeof resources !== 'object') {
      throw new TemplateError('invalid-template', 'Resources', 'the template has no Resources');
    }
    for (const [logicalId, resource] of Object.entries(resources)) {
      if (PROVISIONED_TYPES.has(resource.Type)) await this.#reference(logicalId, logicalId);
      else if (
        resource.Type.startsWith('Custom::') ||
        resource.Type === 'AWS::CloudFormation::CustomResource'
      ) {
        this.result.notes.push(`${logicalId} (${resource.Type}): custom resources do not run locally`);
      } else if (!QUIETLY_IGNORED.has(resource.Type) && !resource.Type.startsWith('AWS::Lambda::')) {
        this.result.notes.push(`${logicalId} (${resource.Type}): not emulated, ignored`);
      }
    }
    await this.#iam(resources);
    for (const [logicalId, resource] of Object.entries(resources)) {
      switch (resource.Type) {
        case 'AWS::Lambda::EventSourceMapping':
          await this.#eventSourceMapping(logicalId, resource);
          break;
        case 'AWS::Lambda::Url':
          await this.#functionUrl(logicalId, resource);
          break;
        case 'AWS::Events::Rule':
        case 'AWS::Scheduler::Schedule':
          await this.#schedule(logicalId, resource);
          break;
        default:
          break;
      }
    }
    return this.result;
  }

  #resource(logicalId: string, path: string): CfnResource {
    const resource = this.#template.Resources[logicalId];
    if (resource === undefined) {
      throw new TemplateError('unknown-resource', path, `no resource ${logicalId} in the template`);
    }
    return resource;
  }

  #reference(logicalId: string, path: string): Promise<ResolvedReference> {
    let pending = this.#pending.get(logicalId);
    if (pending === undefined) {
      pending = this.#create(logicalId, this.#resource(logicalId, path));
      this.#pending.set(logicalId, pending);
    }
    return pending;
  }

  async #properties(logicalId: string, resource: CfnResource): Promise<Record<string, unknown>> {
    const resolved = await resolveIntrinsics(
      resource.Properties ?? {},
      this.#context,
      `${logicalId}.Properties`,
    );
    return resolved as Record<string, unknown>;
  }

  async #create(logicalId: string, resource: CfnResource): Promise<ResolvedReference> {
    switch (resource.Type) {
      case QUEUE:
        return this.#queue(logicalId, await this.#properties(logicalId, resource));
      case TABLE:
      case GLOBAL_TABLE:
        return this.#table(logicalId, resource.Type, await this.#properties(logicalId, resource));
      case BUCKET:
        return this.#bucket(logicalId, await this.#properties(logicalId, resource));
      case FUNCTION:
        return this.#function(logicalId, resource);
      case 'AWS::IAM::Role': {
        const name = functionName(this.#prefix, logicalId);
        return {
          ref: name,
          attributes: { Arn: `arn:aws:iam::${this.#accountId}:role/${name}`, RoleId: name },
        };
      }
      case 'AWS::Scheduler::ScheduleGroup': {
        const name = functionName(this.#prefix, logicalId);
        return {
          ref: name,
          attributes: { Arn: `arn:aws:scheduler:${this.#region}:${this.#accountId}:schedule-group/${name}` },
        };
      }
      case 'AWS::IAM::ManagedPolicy': {
        const name = functionName(this.#prefix, logicalId);
        return { ref: `arn:aws:iam::${this.#accountId}:policy/${name}`, attributes: {} };
      }
      default: {
        // Not emulated (a log group, a topic): a stable name, and an ARN for policies naming it.
        const name = prefixed(this.#prefix, logicalId);
        const service = resource.Type.split('::')[1]?.toLowerCase() ?? 'unknown';
        const arn =
          resource.Type === 'AWS::Logs::LogGroup'
            ? `arn:aws:logs:${this.#region}:${this.#accountId}:log-group:${name}:*`
            : `arn:aws:${service}:${this.#region}:${this.#accountId}:${name}`;
        return { ref: name, attributes: { Arn: arn } };
      }
    }
  }

  async #queue(logicalId: string, props: Record<string, unknown>): Promise<ResolvedReference> {
    const fifo = props.FifoQueue === true || props.FifoQueue === 'true';
    const name = queueName(
      this.#prefix,
      typeof props.QueueName === 'string' ? props.QueueName : logicalId,
      fifo,
    );
    const attributes: Record<string, string> = {};
    for (const key of QUEUE_ATTRIBUTES) {
      if (props[key] !== undefined) attributes[key] = textValue(props[key]);
    }
    if (props.RedrivePolicy !== undefined) {
      const policy =
        typeof props.RedrivePolicy === 'string'
          ? (JSON.parse(props.RedrivePolicy) as Record<string, unknown>)
          : (props.RedrivePolicy as Record<string, unknown>);
      // Key order fixed: SQS compares attribute text when a queue is created a second time.
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: policy.deadLetterTargetArn,
        maxReceiveCount: Number(policy.maxReceiveCount),
      });
    }
    if (props.RedriveAllowPolicy !== undefined)
      attributes.RedriveAllowPolicy = textValue(props.RedriveAllowPolicy);
    if (props.KmsMasterKeyId !== undefined) {
      this.result.notes.push(`${logicalId}: KMS encryption ignored locally`);
    }

    let url: string;
    try {
      url = (
        await this.#clients.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))
      ).QueueUrl as string;
    } catch (error) {
      // Same name, other attributes (an earlier run of an older template): reuse and update it.
      if (!/QueueNameExists|QueueAlreadyExists/.test(errorName(error))) throw error;
      url = (await this.#clients.sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl as string;
      const { FifoQueue: _fifo, ...settable } = attributes;
      await this.#clients.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: settable }));
    }
    const described = await this.#clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    const arn = described.Attributes?.QueueArn ?? `arn:aws:sqs:${this.#region}:${this.#accountId}:${name}`;
    this.result.resources[logicalId] = { logicalId, type: QUEUE, name, arn, url };
    return { ref: url, attributes: { Arn: arn, QueueUrl: url, QueueName: name } };
  }

  async #table(logicalId: string, type: string, props: Record<string, unknown>): Promise<ResolvedReference> {
    const name = tableName(this.#prefix, typeof props.TableName === 'string' ? props.TableName : logicalId);
    const payPerRequest = props.BillingMode === 'PAY_PER_REQUEST';
    const throughput = (spec: unknown) => {
      const t = (spec ?? {}) as Record<string, unknown>;
      return {
        ReadCapacityUnits: numberProperty(t.ReadCapacityUnits, 5),
        WriteCapacityUnits: numberProperty(t.WriteCapacityUnits, 5),
      };
    };
    const keySchema = (value: unknown) =>
      ((value as Record<string, unknown>[]) ?? []).map((k) => ({
        AttributeName: String(k.AttributeName),
        KeyType: k.KeyType,
      })) as KeySchemaElement[];
    const gsis = ((props.GlobalSecondaryIndexes as Record<string, unknown>[] | undefined) ?? []).map(
      (index) => {
        const gsi: GlobalSecondaryIndex = {
          IndexName: String(index.IndexName),
          KeySchema: keySchema(index.KeySchema),
          Projection: index.Projection as Projection,
        };
        if (!payPerRequest) gsi.ProvisionedThroughput = throughput(index.ProvisionedThroughput);
        return gsi;
      },
    );
    const lsis = ((props.LocalSecondaryIndexes as Record<string, unknown>[] | undefined) ?? []).map(
      (index): LocalSecondaryIndex => ({
        IndexName: String(index.IndexName),
        KeySchema: keySchema(index.KeySchema),
        Projection: index.Projection as Projection,
      }),
    );
    const input = {
      TableName: name,
      KeySchema: keySchema(props.KeySchema),
      AttributeDefinitions: props.AttributeDefinitions as AttributeDefinition[],
      BillingMode: (payPerRequest ? 'PAY_PER_REQUEST' : 'PROVISIONED') as BillingMode,
      ...(payPerRequest ? {} : { ProvisionedThroughput: throughput(props.ProvisionedThroughput) }),
      ...(gsis.length > 0 ? { GlobalSecondaryIndexes: gsis } : {}),
      ...(lsis.length > 0 ? { LocalSecondaryIndexes: lsis } : {}),
    };
    let created = true;
    try {
      await this.#clients.dynamo.send(new CreateTableCommand(input));
    } catch (error) {
      if (errorName(error) !== 'ResourceInUseException') throw error;
      created = false;
    }
    const table = await this.#waitActive(name);
    const arn = table.TableArn ?? `arn:aws:dynamodb:${this.#region}:${this.#accountId}:table/${name}`;

    const replica = ((props.Replicas as Record<string, unknown>[] | undefined) ?? [])[0] ?? {};
    const ttl = (props.TimeToLiveSpecification ?? {}) as Record<string, unknown>;
    if (
      created &&
      (ttl.Enabled === true || ttl.Enabled === 'true') &&
      typeof ttl.AttributeName === 'string'
    ) {
      try {
        await this.#clients.dynamo.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
          }),
        );
      } catch (error) {
        this.result.notes.push(
          `${logicalId}: TTL on "${ttl.AttributeName}" skipped, the endpoint does not support it (${errorName(error) || 'error'}); items never expire locally`,
        );
      }
    }
    if (props.PointInTimeRecoverySpecification !== undefined || replica.PointInTimeRecoverySpecification) {
      this.result.notes.push(`${logicalId}: point-in-time recovery ignored locally`);
    }
    if (props.StreamSpecification !== undefined) {
      this.result.notes.push(`${logicalId}: DynamoDB streams are not emulated by the stand-in`);
    }
    this.result.resources[logicalId] = { logicalId, type, name, arn };
    const attributes: Record<string, string> = { Arn: arn };
    if (table.LatestStreamArn !== undefined) attributes.StreamArn = table.LatestStreamArn;
    return { ref: name, attributes };
  }

  async #waitActive(name: string): Promise<TableDescription> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { Table } = await this.#clients.dynamo.send(new DescribeTableCommand({ TableName: name }));
      if (Table?.TableStatus === 'ACTIVE') return Table;
      if (Date.now() > deadline) throw new Error(`table ${name} did not become ACTIVE within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async #bucket(logicalId: string, props: Record<string, unknown>): Promise<ResolvedReference> {
    const name = bucketName(
      this.#prefix,
      typeof props.BucketName === 'string' ? props.BucketName : logicalId,
    );
    try {
      await this.#clients.s3.send(
        new CreateBucketCommand({
          Bucket: name,
          ...(this.#region === 'us-east-1'
            ? {}
            : {
                CreateBucketConfiguration: { LocationConstraint: this.#region as BucketLocationConstraint },
              }),
        }),
      );
    } catch (error) {
      if (!/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(errorName(error))) throw error;
      await this.#clients.s3.send(new HeadBucketCommand({ Bucket: name }));
    }
    for (const key of ['LifecycleConfiguration', 'VersioningConfiguration', 'BucketEncryption']) {
      if (props[key] !== undefined) this.result.notes.push(`${logicalId}: ${key} ignored locally`);
    }
    const arn = `arn:aws:s3:::${name}`;
    this.result.resources[logicalId] = { logicalId, type: BUCKET, name, arn };
    return {
      ref: name,
      attributes: {
        Arn: arn,
        DomainName: `${name}.s3.amazonaws.com`,
        RegionalDomainName: `${name}.s3.${this.#region}.amazonaws.com`,
      },
    };
  }

  async #function(logicalId: string, resource: CfnResource): Promise<ResolvedReference> {
    const raw = resource.Properties ?? {};
    const explicitName =
      raw.FunctionName === undefined ? undefined : await this.#text(raw.FunctionName, logicalId);
    const name = functionName(this.#prefix, explicitName ?? logicalId);
    const arn = `arn:aws:lambda:${this.#region}:${this.#accountId}:function:${name}`;
    this.result.resources[logicalId] = { logicalId, type: FUNCTION, name, arn };

    const variables = ((raw.Environment as Record<string, unknown> | undefined)?.Variables ?? {}) as Record<
      string,
      unknown
    >;
    const resolved = (await resolveIntrinsics(
      variables,
      this.#context,
      `${logicalId}.Environment`,
    )) as Record<string, unknown>;
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(resolved)) env[key] = textValue(value);

    const spec: LambdaFunctionSpec = {
      logicalId,
      name,
      arn,
      handler: typeof raw.Handler === 'string' ? raw.Handler : 'index.handler',
      env,
      timeoutSeconds: numberProperty(raw.Timeout, 3),
      memoryMb: numberProperty(raw.MemorySize, 128),
      recursiveLoop: recursiveLoopOf(raw.RecursiveLoop, logicalId),
    };
    if (typeof raw.Runtime === 'string') spec.runtime = raw.Runtime;
    if (raw.Role !== undefined) {
      spec.roleArn = await this.#text(raw.Role, `${logicalId}.Role`);
      const role = raw.Role as Record<string, unknown>;
      const target = Array.isArray(role['Fn::GetAtt']) ? (role['Fn::GetAtt'] as unknown[])[0] : role.Ref;
      if (typeof target === 'string' && this.#template.Resources[target]?.Type === 'AWS::IAM::Role') {
        spec.roleLogicalId = target;
      }
    }
    if (raw.ReservedConcurrentExecutions !== undefined) {
      spec.reservedConcurrency = numberProperty(raw.ReservedConcurrentExecutions, 0);
    }
    const assetDir = this.#assetDir(resource);
    if (assetDir === undefined)
      this.result.notes.push(`${logicalId}: no bundled asset (inline code?), not runnable`);
    else spec.assetDir = assetDir;
    this.result.functions[logicalId] = spec;
    return { ref: name, attributes: { Arn: arn } };
  }

  /** A policy document with its intrinsics resolved, or undefined (and a note) if it cannot be. */
  async #document(value: unknown, path: string): Promise<unknown | undefined> {
    try {
      return await resolveIntrinsics(value, this.#context, path);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      this.result.notes.push(`${path}: ${error.message}; the policy is left out (its grants are missing)`);
      return undefined;
    }
  }

  /**
   * Roles (inline, customer managed, AWS managed and AWS::IAM::Policy attachments) and queue and
   * bucket policies, resolved to the provisioned ARNs, for the endpoint's IAM evaluation.
   */
  async #iam(resources: Record<string, CfnResource>): Promise<void> {
    const roles = this.result.roles;
    const byName = new Map<string, RoleSpec>();
    const managed = new Map<string, NamedPolicy>();
    const attach = async (logicalId: string, raw: Record<string, unknown>, policy: NamedPolicy) => {
      const names = (await resolveIntrinsics(
        raw.Roles ?? [],
        this.#context,
        `${logicalId}.Roles`,
      )) as unknown[];
      for (const name of names) byName.get(String(name))?.policies.push(policy);
    };
    for (const [logicalId, resource] of Object.entries(resources)) {
      if (resource.Type !== 'AWS::IAM::Role') continue;
      const { ref, attributes } = await this.#reference(logicalId, logicalId);
      const role: RoleSpec = { logicalId, name: ref, arn: attributes.Arn ?? '', policies: [] };
      const raw = resource.Properties ?? {};
      for (const [i, inline] of ((raw.Policies as Record<string, unknown>[] | undefined) ?? []).entries()) {
        const path = `${logicalId}.Policies[${i}]`;
        const document = await this.#document(inline.PolicyDocument, `${path}.PolicyDocument`);
        if (document !== undefined)
          role.policies.push({ name: await this.#text(inline.PolicyName, path), document });
      }
      roles[logicalId] = role;
      byName.set(ref, role);
    }
    for (const [logicalId, resource] of Object.entries(resources)) {
      const raw = resource.Properties ?? {};
      if (resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy') {
        const document = await this.#document(raw.PolicyDocument, `${logicalId}.PolicyDocument`);
        if (document === undefined) continue;
        const name =
          resource.Type === 'AWS::IAM::Policy'
            ? await this.#text(raw.PolicyName ?? logicalId, `${logicalId}.PolicyName`)
            : (await this.#reference(logicalId, logicalId)).ref;
        if (resource.Type === 'AWS::IAM::ManagedPolicy') managed.set(name, { name, document });
        await attach(logicalId, raw, { name, document });
      } else if (resource.Type === 'AWS::SQS::QueuePolicy' || resource.Type === 'AWS::S3::BucketPolicy') {
        const document = await this.#document(raw.PolicyDocument, `${logicalId}.PolicyDocument`);
        if (document === undefined) continue;
        const targets =
          resource.Type === 'AWS::SQS::QueuePolicy'
            ? ((await resolveIntrinsics(raw.Queues ?? [], this.#context, `${logicalId}.Queues`)) as unknown[])
            : [await this.#text(raw.Bucket, `${logicalId}.Bucket`)];
        const resourceArns = targets.map((target) => {
          const found = Object.values(this.result.resources).find(
            (r) => r.url === target || r.name === target || r.arn === target,
          );
          return found?.arn ?? String(target);
        });
        this.result.resourcePolicies.push({ logicalId, resourceArns, document });
      }
    }
    for (const [logicalId, resource] of Object.entries(resources)) {
      if (resource.Type !== 'AWS::IAM::Role') continue;
      const raw = resource.Properties ?? {};
      const arns = (await resolveIntrinsics(
        raw.ManagedPolicyArns ?? [],
        this.#context,
        `${logicalId}.ManagedPolicyArns`,
      )) as unknown[];
      for (const value of arns) {
        const arn = String(value);
        const document = managed.get(arn)?.document ?? awsManagedPolicy(arn);
        if (document === undefined) {
          this.result.notes.push(
            `${logicalId}: managed policy ${arn} is unknown locally; its grants are missing`,
          );
        } else if (!roles[logicalId]?.policies.some((p) => p.name === arn)) {
          // (a template's managed policy may already be attached through its own Roles list)
          roles[logicalId]?.policies.push({ name: arn, document });
        }
      }
    }
  }

  #assetDir(resource: CfnResource): string | undefined {
    const assetPath = resource.Metadata?.['aws:asset:path'];
    if (typeof assetPath === 'string') return resolvePath(this.#assemblyDir, assetPath);
    const code = (resource.Properties?.Code ?? {}) as Record<string, unknown>;
    const key = typeof code.S3Key === 'string' ? /^([0-9a-f]{64})\.zip$/.exec(code.S3Key) : null;
    return key ? resolvePath(this.#assemblyDir, `asset.${key[1]}`) : undefined;
  }

  async #text(value: unknown, path: string): Promise<string> {
    return textValue(await resolveIntrinsics(value, this.#context, path));
  }

  /** The logical id of the function a property points at (Ref, GetAtt Arn, name or ARN text). */
  async #functionId(value: unknown, path: string): Promise<string | undefined> {
    if (value !== null && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      const target = Array.isArray(object['Fn::GetAtt'])
        ? (object['Fn::GetAtt'] as unknown[])[0]
        : typeof object.Ref === 'string'
          ? object.Ref
          : undefined;
      if (typeof target === 'string') {
        const resource = this.#template.Resources[target];
        if (resource?.Type === FUNCTION) return target;
        if (resource?.Type === 'AWS::Lambda::Alias' || resource?.Type === 'AWS::Lambda::Version') {
          return this.#functionId(resource.Properties?.FunctionName, path);
        }
      }
    }
    const text = await this.#text(value, path);
    // A qualified ARN (`...:function:name:alias`) names the same function.
    const parts = text.split(':');
    const unqualified = parts.length === 8 ? parts.slice(0, 7).join(':') : text;
    for (const spec of Object.values(this.result.functions)) {
      if (spec.name === text || spec.arn === unqualified) return spec.logicalId;
    }
    return undefined;
  }

  async #eventSourceMapping(logicalId: string, resource: CfnResource): Promise<void> {
    const raw = resource.Properties ?? {};
    const functionLogicalId = await this.#functionId(raw.FunctionName, `${logicalId}.FunctionName`);
    const sourceArn = await this.#text(raw.EventSourceArn, `${logicalId}.EventSourceArn`);
    const queue = Object.values(this.result.resources).find((r) => r.type === QUEUE && r.arn === sourceArn);
    if (functionLogicalId === undefined || queue === undefined) {
      this.result.notes.push(
        `${logicalId}: only SQS event sources on template functions run locally, skipped`,
      );
      return;
    }
    const props = await this.#properties(logicalId, resource);
    const spec: EventSourceMappingSpec = {
      logicalId,
      functionLogicalId,
      queueLogicalId: queue.logicalId,
      queueUrl: queue.url ?? '',
      queueArn: queue.arn,
      batchSize: numberProperty(props.BatchSize, 10),
      reportBatchItemFailures: ((props.FunctionResponseTypes as string[] | undefined) ?? []).includes(
        'ReportBatchItemFailures',
      ),
      maximumBatchingWindowSeconds: numberProperty(props.MaximumBatchingWindowInSeconds, 0),
      enabled: props.Enabled !== false && props.Enabled !== 'false',
    };
    const scaling = props.ScalingConfig as Record<string, unknown> | undefined;
    if (scaling?.MaximumConcurrency !== undefined) {
      spec.maximumConcurrency = numberProperty(scaling.MaximumConcurrency, 2);
    }
    this.result.eventSourceMappings.push(spec);
  }

  async #functionUrl(logicalId: string, resource: CfnResource): Promise<void> {
    const raw = resource.Properties ?? {};
    const functionLogicalId = await this.#functionId(raw.TargetFunctionArn, `${logicalId}.TargetFunctionArn`);
    if (functionLogicalId === undefined) {
      this.result.notes.push(`${logicalId}: function URL target is not a template function, skipped`);
      return;
    }
    const invokeMode = typeof raw.InvokeMode === 'string' ? raw.InvokeMode : 'BUFFERED';
    if (invokeMode !== 'BUFFERED') {
      this.result.notes.push(`${logicalId}: InvokeMode ${invokeMode} served as BUFFERED locally`);
    }
    this.result.functionUrls.push({
      logicalId,
      functionLogicalId,
      authType: raw.AuthType === 'NONE' ? 'NONE' : 'AWS_IAM',
      invokeMode,
    });
  }

  async #schedule(logicalId: string, resource: CfnResource): Promise<void> {
    const raw = resource.Properties ?? {};
    if (raw.ScheduleExpression === undefined) {
      this.result.notes.push(`${logicalId}: event-pattern rules are not emulated, skipped`);
      return;
    }
    const scheduleExpression = await this.#text(raw.ScheduleExpression, `${logicalId}.ScheduleExpression`);
    const rawTargets =
      resource.Type === 'AWS::Scheduler::Schedule'
        ? [raw.Target as Record<string, unknown>]
        : ((raw.Targets as Record<string, unknown>[] | undefined) ?? []);
    const targets: ScheduleSpec['targets'] = [];
    for (const [i, target] of rawTargets.entries()) {
      const path = `${logicalId}.Targets[${i}]`;
      const functionLogicalId = await this.#functionId(target?.Arn, `${path}.Arn`);
      if (functionLogicalId === undefined) {
        this.result.notes.push(`${path}: only Lambda targets run locally, skipped`);
        continue;
      }
      if (target?.InputTransformer !== undefined || target?.InputPath !== undefined) {
        this.result.notes.push(`${path}: input transformation ignored, the target gets the scheduled event`);
      }
      const input = target?.Input === undefined ? undefined : await this.#text(target.Input, `${path}.Input`);
      targets.push(
        input === undefined ? { functionLogicalId } : { functionLogicalId, input: JSON.parse(input) },
      );
    }
    const name = prefixed(this.#prefix, logicalId);
    this.result.schedules.push({
      logicalId,
      type: resource.Type,
      scheduleExpression,
      enabled: raw.State === undefined || raw.State === 'ENABLED',
      arn: `arn:aws:events:${this.#region}:${this.#accountId}:rule/${name}`,
      targets,
    });
  }
}

/**
 * Creates the queues, tables and buckets `template` declares (deterministic names: `prefix` +
 * logical id), resolves the Lambda functions' environments to the endpoint's URLs, names and
 * ARNs, and returns the functions with their triggers. Idempotent: existing resources are reused.
 * TTL, point-in-time recovery, streams, KMS and custom resources are skipped and listed in `notes`.
 */
export function provision(
  template: CfnTemplate,
  clients: ProvisionClients,
  options: ProvisionOptions = {},
): Promise<ProvisionResult> {
  return new Provisioner(template, clients, options).run();
}

/** `RecursiveLoop` of a function: absent means `Terminate`; anything else is refused. */
function recursiveLoopOf(value: unknown, logicalId: string): 'Allow' | 'Terminate' {
  if (value === undefined || value === 'Terminate') return 'Terminate';
  if (value === 'Allow') return 'Allow';
  throw new Error(`${logicalId}.RecursiveLoop must be Allow or Terminate, got ${JSON.stringify(value)}`);
}
