import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Match } from 'aws-cdk-lib/assertions';
import { ENV, FUNCTION_ENV, type FunctionRole, TUNING_ENV } from '../../functions/cloud/env.ts';
import { allowedOn, type CfnResource, roleOf, statementsOf, synthStack } from './synth.ts';

// One synthesis (with real esbuild bundling) shared by every test in this file: it takes seconds.
const built = synthStack();
after(() => built.dispose());
const { template } = built;
const resources = template.toJSON().Resources as Record<string, CfnResource>;

const FUNCTIONS: Record<FunctionRole, string> = {
  frontierWorker: 'FrontierWorker',
  api: 'Api',
  scheduler: 'Scheduler',
  archiver: 'Archiver',
};
/** What each environment variable must hold: a reference to a resource, or a setting's value. */
const ENV_TARGET: Record<keyof typeof ENV, string | { value: unknown }> = {
  urlTable: 'UrlTable',
  crawlTable: 'CrawlTable',
  frontierQueueUrl: 'FrontierQueue',
  frontierDlqUrl: 'FrontierDlq',
  pageBucket: 'PageBucket',
  captureQueueUrl: 'CaptureQueue',
  captureDlqUrl: 'CaptureDlq',
  frontierMaxReceives: { value: '10' },
  retentionDays: { value: '90' },
  privateAddresses: { value: 'forbidden' },
  recrawlScheduleGroup: 'RecrawlScheduleGroup',
  recrawlScheduleRoleArn: { value: { 'Fn::GetAtt': ['RecrawlScheduleRole', 'Arn'] } },
  recrawlTargetArn: { value: { 'Fn::GetAtt': ['Scheduler', 'Arn'] } },
};
const byType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const props = (id: string) => {
  const r = resources[id];
  assert.ok(r, `resource ${id} exists`);
  return r.Properties ?? {};
};
const grantsOf = (functionId: string) => statementsOf(template, roleOf(template, functionId));

describe('logical IDs (the contract with the local stand-in)', () => {
  it('pins the main resources to fixed logical IDs', () => {
    const expected: Record<string, string> = {
      FrontierQueue: 'AWS::SQS::Queue',
      FrontierDlq: 'AWS::SQS::Queue',
      CaptureQueue: 'AWS::SQS::Queue',
      CaptureDlq: 'AWS::SQS::Queue',
      UrlTable: 'AWS::DynamoDB::Table',
      CrawlTable: 'AWS::DynamoDB::Table',
      PageBucket: 'AWS::S3::Bucket',
      FrontierWorker: 'AWS::Lambda::Function',
      Api: 'AWS::Lambda::Function',
      Scheduler: 'AWS::Lambda::Function',
      Archiver: 'AWS::Lambda::Function',
      ScheduleRule: 'AWS::Events::Rule',
    };
    for (const [id, type] of Object.entries(expected)) assert.equal(resources[id]?.Type, type, id);
  });

  it('has exactly the four functions, all nodejs22.x on arm64 with their own log group', () => {
    const fns = byType('AWS::Lambda::Function');
    assert.deepEqual(fns.map(([id]) => id).sort(), ['Api', 'Archiver', 'FrontierWorker', 'Scheduler']);
    for (const [id, fn] of fns) {
      assert.equal(fn.Properties?.Runtime, 'nodejs22.x', id);
      assert.deepEqual(fn.Properties?.Architectures, ['arm64'], id);
      assert.equal(fn.Properties?.Handler, 'index.handler', id);
      assert.equal(fn.Properties?.TracingConfig, undefined, `${id}: X-Ray off by default`);
      const logging = fn.Properties?.LoggingConfig as { LogGroup: { Ref: string } } | undefined;
      const logGroup = logging?.LogGroup.Ref ?? '';
      assert.equal(resources[logGroup]?.Type, 'AWS::Logs::LogGroup');
      assert.equal(resources[logGroup]?.Properties?.RetentionInDays, 30);
    }
    assert.deepEqual(
      Object.fromEntries(fns.map(([id, fn]) => [id, [fn.Properties?.MemorySize, fn.Properties?.Timeout]])),
      // The worker's memory is sized for its 20 hosts per invocation (lambda-settings.ts).
      { FrontierWorker: [320, 45], Api: [256, 15], Scheduler: [256, 60], Archiver: [256, 60] },
    );
  });
});

describe('triggers', () => {
  it('feeds the frontier worker from the FIFO queue with partial batch failures', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    const mappings = byType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties ?? {});
    const worker = mappings.find((m) => JSON.stringify(m.FunctionName) === '{"Ref":"FrontierWorker"}');
    // FIFO: at most 10 per batch and no batching window (Lambda allows neither for FIFO).
    assert.deepEqual(worker, {
      EventSourceArn: { 'Fn::GetAtt': ['FrontierQueue', 'Arn'] },
      FunctionName: { Ref: 'FrontierWorker' },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 3 },
    });
  });

  it('lets a function that sends to the queue that invokes it recurse (RecursiveLoop: Allow)', () => {
    // Lambda's default (Terminate) stops a chain of events after 16 invocations: every crawl
    // deeper than 16 generations would end in the DLQ. Only such functions get Allow.
    const recursive = new Set<string>();
    for (const [, mapping] of byType('AWS::Lambda::EventSourceMapping')) {
      const { FunctionName, EventSourceArn } = mapping.Properties as {
        FunctionName: { Ref: string };
        EventSourceArn: { 'Fn::GetAtt': [string] };
      };
      const fn = FunctionName.Ref;
      const queue = EventSourceArn['Fn::GetAtt'][0];
      if (allowedOn(grantsOf(fn), queue).has('sqs:SendMessage')) recursive.add(fn);
    }
    assert.deepEqual([...recursive], ['FrontierWorker']);
    for (const [id, fn] of byType('AWS::Lambda::Function')) {
      assert.equal(fn.Properties?.RecursiveLoop, recursive.has(id) ? 'Allow' : undefined, id);
    }
  });

  it('feeds the archiver from the capture queue in large batches over a batching window', () => {
    const mappings = byType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties ?? {});
    const archiver = mappings.find((m) => JSON.stringify(m.FunctionName) === '{"Ref":"Archiver"}');
    assert.deepEqual(archiver, {
      EventSourceArn: { 'Fn::GetAtt': ['CaptureQueue', 'Arn'] },
      FunctionName: { Ref: 'Archiver' },
      // Up to 5,000 captures (or Lambda's 6 MB payload) gathered over 60 s: one WARC object and
      // one index object per crawl per batch.
      BatchSize: 5000,
      MaximumBatchingWindowInSeconds: 60,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
  });

  it('runs the scheduler every minute from an EventBridge rule', () => {
    template.resourceCountIs('AWS::Events::Rule', 1);
    const rule = props('ScheduleRule');
    assert.equal(rule.ScheduleExpression, 'rate(1 minute)');
    assert.equal(rule.State, 'ENABLED');
    const targets = rule.Targets as { Arn: unknown }[];
    assert.equal(targets.length, 1);
    assert.deepEqual(targets[0]?.Arn, { 'Fn::GetAtt': ['Scheduler', 'Arn'] });
    // A missed tick is superseded by the next one: no retry storms of stale ticks.
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: 'Scheduler' },
      MaximumRetryAttempts: 0,
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': ['Scheduler', 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': ['ScheduleRule', 'Arn'] },
    });
  });

  it('serves the API from a function URL with IAM auth and no CORS', () => {
    const urls = byType('AWS::Lambda::Url');
    assert.equal(urls.length, 1);
    const url = urls[0]![1].Properties!;
    assert.equal(url.AuthType, 'AWS_IAM');
    assert.deepEqual(url.TargetFunctionArn, { 'Fn::GetAtt': ['Api', 'Arn'] });
    assert.equal(url.Cors, undefined);
    // No public invoke permission: AWS_IAM means callers need their own grant.
    for (const [id, p] of byType('AWS::Lambda::Permission')) {
      assert.notEqual(p.Properties?.Principal, '*', id);
    }
  });
});

describe('queues', () => {
  const highThroughputFifo = {
    FifoQueue: true,
    ContentBasedDeduplication: false,
    DeduplicationScope: 'messageGroup',
    FifoThroughputLimit: 'perMessageGroupId',
    MessageRetentionPeriod: 14 * 24 * 3600,
    SqsManagedSseEnabled: true,
  };

  it('makes the frontier a high-throughput FIFO queue with redrive to the DLQ', () => {
    const queue = props('FrontierQueue');
    assert.deepEqual(
      { ...queue, VisibilityTimeout: undefined, RedrivePolicy: undefined },
      {
        ...highThroughputFifo,
        VisibilityTimeout: undefined,
        RedrivePolicy: undefined,
      },
    );
    // 5 x the worker timeout, and with one more timeout still inside the 300 s FIFO deduplication
    // window, so a crashed batch's re-sent links are dropped as duplicates (issue 8, item 5).
    assert.equal(queue.VisibilityTimeout, 5 * 45);
    assert.ok((queue.VisibilityTimeout as number) + 45 < 300);
    assert.deepEqual(queue.RedrivePolicy, {
      deadLetterTargetArn: { 'Fn::GetAtt': ['FrontierDlq', 'Arn'] },
      maxReceiveCount: 10,
    });
  });

  it('makes the DLQ a FIFO queue keeping messages 14 days', () => {
    assert.deepEqual(props('FrontierDlq'), highThroughputFifo);
  });

  it('makes the capture queue a standard queue whose visibility covers the window and retries, with redrive', () => {
    const queue = props('CaptureQueue');
    assert.equal(queue.FifoQueue, undefined, 'standard: only standard queues allow large batches');
    assert.equal(queue.VisibilityTimeout, 6 * 60 + 60, '6 x the archiver timeout + the batching window');
    assert.equal(queue.MessageRetentionPeriod, 14 * 24 * 3600);
    assert.equal(queue.SqsManagedSseEnabled, true);
    assert.deepEqual(queue.RedrivePolicy, {
      deadLetterTargetArn: { 'Fn::GetAtt': ['CaptureDlq', 'Arn'] },
      maxReceiveCount: 5,
    });
    assert.deepEqual(props('CaptureDlq'), {
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
  });

  it('denies non-TLS access to every queue', () => {
    for (const queue of ['FrontierQueue', 'FrontierDlq', 'CaptureQueue', 'CaptureDlq']) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: queue }],
        PolicyDocument: {
          Statement: [
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ],
        },
      });
    }
  });
});

describe('storage', () => {
  it('keys the URL table by crawlId#fingerprint only', () => {
    const table = props('UrlTable');
    assert.deepEqual(table.KeySchema, [{ AttributeName: 'pk', KeyType: 'HASH' }]);
  });

  it("indexes the URL table's parked URLs by crawl shard and cash, projecting only the task", () => {
    const table = props('UrlTable');
    assert.deepEqual(table.GlobalSecondaryIndexes, [
      {
        IndexName: 'ParkedIndex',
        KeySchema: [
          { AttributeName: 'parked', KeyType: 'HASH' },
          { AttributeName: 'cashKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['task'] },
      },
    ]);
    assert.deepEqual(
      new Set(table.AttributeDefinitions as unknown[]),
      new Set([
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'parked', AttributeType: 'S' },
        { AttributeName: 'cashKey', AttributeType: 'N' },
      ]),
    );
  });

  it('keys the crawl table by crawlId and a sort key', () => {
    const table = props('CrawlTable');
    assert.deepEqual(table.KeySchema, [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
  });

  it('makes both tables on-demand with TTL on expiresAt, PITR, retained, no local indexes', () => {
    assert.equal(props('CrawlTable').GlobalSecondaryIndexes, undefined);
    for (const id of ['UrlTable', 'CrawlTable']) {
      const table = props(id);
      assert.equal(table.BillingMode, 'PAY_PER_REQUEST', id);
      assert.deepEqual(table.TimeToLiveSpecification, { AttributeName: 'expiresAt', Enabled: true }, id);
      assert.deepEqual(table.PointInTimeRecoverySpecification, { PointInTimeRecoveryEnabled: true }, id);
      assert.equal(table.LocalSecondaryIndexes, undefined, id);
      assert.equal(resources[id]?.DeletionPolicy, 'Retain', id);
      assert.equal(resources[id]?.UpdateReplacePolicy, 'Retain', id);
    }
  });

  it('blocks all public access to the page bucket and encrypts it', () => {
    const bucket = props('PageBucket');
    assert.deepEqual(bucket.PublicAccessBlockConfiguration, {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    assert.deepEqual(bucket.BucketEncryption, {
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    assert.equal(bucket.VersioningConfiguration, undefined);
    assert.equal(resources.PageBucket?.DeletionPolicy, 'Retain');
    // No auto-delete custom resource outside dev.
    assert.equal(byType('Custom::S3AutoDeleteObjects').length, 0);
  });

  it('allows only TLS requests to the page bucket', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: 'PageBucket' },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('aborts stale multipart uploads, moves WARC to infrequent access, expires pages with the retention (90 days)', () => {
    const rules = (props('PageBucket').LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    assert.deepEqual(rules, [
      {
        Id: 'abort-incomplete-multipart',
        Status: 'Enabled',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      },
      {
        Id: 'warc-to-infrequent-access',
        Status: 'Enabled',
        Prefix: 'warc/',
        Transitions: [{ StorageClass: 'STANDARD_IA', TransitionInDays: 30 }],
      },
      { Id: 'expire-pages', Status: 'Enabled', ExpirationInDays: 90 },
    ]);
  });
});

describe('environment variables', () => {
  for (const [role, id] of Object.entries(FUNCTIONS) as [FunctionRole, string][]) {
    it(`gives ${id} exactly the variables functions/cloud/env.ts lists for it`, () => {
      const vars = (props(id).Environment as { Variables: Record<string, unknown> }).Variables;
      const expected: Record<string, unknown> = { NODE_OPTIONS: '--enable-source-maps' };
      for (const key of FUNCTION_ENV[role]) {
        const target = ENV_TARGET[key];
        expected[ENV[key]] = typeof target === 'string' ? { Ref: target } : target.value;
      }
      // The tunables CDK sets from its context (with their defaults here).
      if (role === 'frontierWorker') expected[TUNING_ENV.hostsPerInvocation] = '20';
      assert.deepEqual(vars, expected);
    });
  }
});

describe('least-privilege grants: exactly the calls each function makes', () => {
  // The event source mapping needs these on its queue (granted with it).
  const EVENT_SOURCE = [
    'sqs:ChangeMessageVisibility',
    'sqs:DeleteMessage',
    'sqs:GetQueueAttributes',
    'sqs:GetQueueUrl',
    'sqs:ReceiveMessage',
  ];
  const WORKER_TABLE_ACTIONS = [
    'dynamodb:BatchGetItem',
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:Query',
    'dynamodb:UpdateItem',
  ];
  // URL-seen claims live in the crawl table (the hosts' seen logs): the UrlTable keeps content
  // hashes (GetItem, PutItem) and parked URLs (UpdateItem, Query of the parked index).
  const WORKER_URL_TABLE_ACTIONS = [
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:Query',
    'dynamodb:UpdateItem',
  ];
  const EXPECTED: Record<string, Record<string, string[]>> = {
    FrontierWorker: {
      // Query: the parked index and the counter shards, when a batch finds a crawl's frontier
      // dry (dry-admission.ts).
      UrlTable: WORKER_URL_TABLE_ACTIONS,
      // The hosts' back queues: BatchWriteItem adds and takes out tasks (back-queues.ts).
      CrawlTable: [...WORKER_TABLE_ACTIONS, 'dynamodb:BatchWriteItem'].sort(),
      PageBucket: ['s3:PutObject'],
      FrontierQueue: [...new Set([...EVENT_SOURCE, 'sqs:SendMessage'])].sort(),
      FrontierDlq: ['sqs:SendMessage'],
      CaptureQueue: ['sqs:SendMessage'],
      CaptureDlq: [],
    },
    Api: {
      // POST /crawls claims the seeds in their hosts' seen logs (PutItem, Query), in the crawl table.
      UrlTable: [],
      // The seeds go through their hosts' back queues (BatchWriteItem, Query, UpdateItem).
      CrawlTable: [
        'dynamodb:BatchGetItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ],
      PageBucket: ['s3:GetObject', 's3:ListBucket'],
      FrontierQueue: ['sqs:SendMessage'],
      FrontierDlq: [],
      CaptureQueue: [],
      CaptureDlq: [],
    },
    Scheduler: {
      // Unparking admitted URLs (UpdateItem), the parked index (Query).
      UrlTable: ['dynamodb:Query', 'dynamodb:UpdateItem'],
      // Admitted URLs go through their hosts' back queues (BatchWriteItem); a round's rounds item
      // (BatchGetItem) and crawl item (PutItem).
      CrawlTable: [
        'dynamodb:BatchGetItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ],
      // The page counts in the crawl's index keys (a crawl ends on its own work).
      PageBucket: ['s3:ListBucket'],
      FrontierQueue: ['sqs:GetQueueAttributes', 'sqs:SendMessage'],
      FrontierDlq: [],
      CaptureQueue: ['sqs:GetQueueAttributes'],
      CaptureDlq: [],
    },
    Archiver: {
      UrlTable: [],
      CrawlTable: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:GetItem'],
      PageBucket: ['s3:PutObject'],
      FrontierQueue: [],
      FrontierDlq: [],
      CaptureQueue: EVENT_SOURCE,
      CaptureDlq: ['sqs:SendMessage'],
    },
  };

  for (const [fn, byResource] of Object.entries(EXPECTED)) {
    it(`${fn}: exactly its calls on each resource`, () => {
      const s = grantsOf(fn);
      for (const [resource, actions] of Object.entries(byResource)) {
        assert.deepEqual([...allowedOn(s, resource)].sort(), actions, `${fn} on ${resource}`);
      }
    });
  }

  it('Query on the URL table only through ParkedIndex (the scheduler, the worker)', () => {
    for (const fn of ['Scheduler', 'FrontierWorker']) {
      const s = grantsOf(fn);
      const query = s.filter(
        (st) => st.Action.includes('dynamodb:Query') && st.Resource.some((r) => r.includes('"UrlTable"')),
      );
      assert.ok(query.length > 0, fn);
      for (const st of query) for (const r of st.Resource) assert.match(r, /\/index\/ParkedIndex/, fn);
    }
  });

  it("writes logs only to the function's own log group; no managed policy, no wildcard", () => {
    const roles = byType('AWS::IAM::Role').map(([id]) => id);
    // The four functions' and the recrawl schedules' (test/cdk/recrawl-schedules.test.ts).
    assert.equal(roles.length, 5);
    for (const [fnRole, fn] of Object.values(FUNCTIONS).map((fn) => [roleOf(template, fn), fn])) {
      const role = resources[fnRole!]!;
      assert.equal(
        role.Properties?.ManagedPolicyArns,
        undefined,
        `${fn}: no AWSLambdaBasicExecutionRole (logs on *)`,
      );
      const logs = grantsOf(fn!).filter((st) => st.Action.some((a) => a.startsWith('logs:')));
      assert.equal(logs.length, 1, fn);
      assert.deepEqual(logs[0]!.Action.sort(), ['logs:CreateLogStream', 'logs:PutLogEvents']);
      assert.ok(
        logs[0]!.Resource.every((r) => r.includes(`${fn}Logs`)),
        `${fn}: ${logs[0]!.Resource}`,
      );
    }
    for (const role of roles) {
      for (const st of statementsOf(template, role)) {
        for (const action of st.Action) {
          assert.notEqual(action, '*', `${role}: Action *`);
          assert.doesNotMatch(action, /\*/, `${role}: wildcard action ${action}`);
        }
        assert.ok(!st.Resource.includes('"*"'), `${role}: Resource * on ${st.Action.join(',')}`);
      }
    }
  });
});

describe('alarms', () => {
  const alarms = byType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties ?? {});
  const find = (metric: string, dimension: unknown) =>
    alarms.filter(
      (a) =>
        a.MetricName === metric &&
        JSON.stringify(a.Dimensions).includes(JSON.stringify(dimension)) &&
        a.Threshold === 0 &&
        a.ComparisonOperator === 'GreaterThanThreshold',
    );

  it('alarms on any message in either DLQ', () => {
    for (const dlq of ['FrontierDlq', 'CaptureDlq']) {
      const found = find('ApproximateNumberOfMessagesVisible', { 'Fn::GetAtt': [dlq, 'QueueName'] });
      assert.equal(found.length, 1, dlq);
      assert.equal(found[0]?.Namespace, 'AWS/SQS');
    }
  });

  it('alarms on errors of each function over 5 minutes', () => {
    for (const id of Object.values(FUNCTIONS)) {
      const found = find('Errors', { Ref: id });
      assert.equal(found.length, 1, id);
      assert.equal(found[0]?.Namespace, 'AWS/Lambda');
      assert.equal(found[0]?.Period, 300);
      assert.equal(found[0]?.Statistic, 'Sum');
    }
  });

  it("alarms on the API's own 500 count, which Lambda's Errors metric never sees", () => {
    const found = find('ApiInternalErrors', { Name: 'Function', Value: 'Api' });
    assert.equal(found.length, 1);
    assert.equal(found[0]?.Namespace, 'crawlstack');
  });

  it('alarms on the age of the oldest frontier and capture message', () => {
    for (const [queue, seconds] of [
      ['FrontierQueue', 6 * 3600],
      ['CaptureQueue', 1800],
    ] as const) {
      const found = alarms.filter(
        (a) =>
          a.MetricName === 'ApproximateAgeOfOldestMessage' &&
          JSON.stringify(a.Dimensions).includes(JSON.stringify({ 'Fn::GetAtt': [queue, 'QueueName'] })),
      );
      assert.equal(found.length, 1, queue);
      assert.equal(found[0]?.Threshold, seconds);
    }
  });

  it('alarms on worker throttles, with no actions unless a topic is given', () => {
    assert.equal(find('Throttles', { Ref: 'FrontierWorker' }).length, 1);
    assert.equal(alarms.length, 10);
    for (const a of alarms) assert.equal(a.AlarmActions, undefined);
  });
});

describe('outputs', () => {
  it('exports the API URL and every resource name a client needs', () => {
    const url = byType('AWS::Lambda::Url')[0]![0];
    template.hasOutput('ApiUrl', { Value: { 'Fn::GetAtt': [url, 'FunctionUrl'] } });
    template.hasOutput('PageBucketName', { Value: { Ref: 'PageBucket' } });
    template.hasOutput('UrlTableName', { Value: { Ref: 'UrlTable' } });
    template.hasOutput('CrawlTableName', { Value: { Ref: 'CrawlTable' } });
    template.hasOutput('FrontierQueueUrl', { Value: { Ref: 'FrontierQueue' } });
    template.hasOutput('FrontierDlqUrl', { Value: { Ref: 'FrontierDlq' } });
    template.hasOutput('CaptureQueueUrl', { Value: { Ref: 'CaptureQueue' } });
    template.hasOutput('CaptureDlqUrl', { Value: { Ref: 'CaptureDlq' } });
  });
});

describe('bundles', () => {
  it('bundles each entry locally as one ES module with a source map and the SDK left out', () => {
    const manifest = JSON.parse(readFileSync(join(built.outdir, 'CrawlstackStack.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    for (const id of Object.values(FUNCTIONS)) {
      const code = props(id).Code as { S3Key: string };
      const hash = code.S3Key.replace(/\.zip$/, '');
      const asset = manifest.files[hash];
      assert.ok(asset, `${id}: asset ${hash} in the manifest`);
      const dir = join(built.outdir, asset.source.path);
      assert.ok(existsSync(join(dir, 'index.mjs.map')), `${id}: source map`);
      const js = readFileSync(join(dir, 'index.mjs'), 'utf8');
      assert.match(
        js,
        /export\s*\{[^}]*as handler\s*\}|export\s*\{\s*handler\s*\}/,
        `${id}: ESM handler export`,
      );
      assert.match(js, /createRequire/, `${id}: require shim banner`);
      // Imports of the runtime's SDK are expected; SDK code (which names its package) is not.
      const stripped = js.replace(/\bfrom\s*"@aws-sdk\/[^"]+"/g, '');
      assert.doesNotMatch(stripped, /@aws-sdk\/(?:client|lib)-/, `${id}: SDK not bundled`);
    }
  });
});

describe('CloudFormation validation', () => {
  it("passes CDK's built-in template validation with no finding", () => {
    const report = JSON.parse(readFileSync(join(built.outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations?: unknown[] }[];
    };
    assert.deepEqual(
      report.pluginReports.flatMap((r) => r.violations ?? []),
      [],
    );
  });
});
