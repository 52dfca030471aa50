import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { type CfnTemplate, TemplateError } from '../../../localstack/cfn-template.ts';
import { provision } from '../../../localstack/provision.ts';
import { synthStack } from '../../cdk/synth.ts';
import { FIXTURES, openTestEndpoint, type TestEndpoint, uniquePrefix } from './helpers.ts';

const template = JSON.parse(readFileSync(join(FIXTURES, 'template.json'), 'utf8')) as CfnTemplate;

describe('provision', () => {
  let ep: TestEndpoint;
  before(async () => {
    ep = await openTestEndpoint();
  });
  after(() => ep.close());

  it('creates the queues, tables and bucket of a template and reads its functions and triggers', async () => {
    const prefix = uniquePrefix();
    const result = await provision(template, ep.clients, { prefix, assemblyDir: FIXTURES });

    const queue = result.resources.FrontierQueue0F1E2D3C;
    const dlq = result.resources.FrontierDlqA1B2C3D4;
    assert.equal(queue?.name, `${prefix}-FrontierQueue0F1E2D3C.fifo`);
    assert.equal(dlq?.name, `${prefix}-FrontierDlqA1B2C3D4.fifo`);
    const { Attributes } = await ep.clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queue?.url, AttributeNames: ['All'] }),
    );
    assert.equal(Attributes?.FifoQueue, 'true');
    assert.equal(Attributes?.VisibilityTimeout, '6');
    assert.equal(Attributes?.MessageRetentionPeriod, '345600');
    assert.equal(Attributes?.ContentBasedDeduplication, 'false');
    assert.equal(Attributes?.DeduplicationScope, 'messageGroup');
    assert.equal(Attributes?.FifoThroughputLimit, 'perMessageGroupId');
    const redrive = JSON.parse(Attributes?.RedrivePolicy ?? '{}') as Record<string, unknown>;
    assert.equal(redrive.deadLetterTargetArn, dlq?.arn);
    assert.equal(Number(redrive.maxReceiveCount), 2);

    const urlTable = result.resources.UrlTable5E6F7A8B;
    assert.equal(urlTable?.name, `${prefix}-UrlTable5E6F7A8B`);
    const { Table } = await ep.clients.dynamo.send(new DescribeTableCommand({ TableName: urlTable?.name }));
    assert.equal(Table?.TableArn, urlTable?.arn);
    assert.deepEqual(Table?.KeySchema, [{ AttributeName: 'pk', KeyType: 'HASH' }]);
    assert.equal(Table?.BillingModeSummary?.BillingMode ?? 'PAY_PER_REQUEST', 'PAY_PER_REQUEST');
    assert.equal(Table?.GlobalSecondaryIndexes?.[0]?.IndexName, 'byCrawl');
    const crawlTable = result.resources.CrawlTable9C8D7E6F;
    const crawl = await ep.clients.dynamo.send(new DescribeTableCommand({ TableName: crawlTable?.name }));
    assert.equal(crawl.Table?.KeySchema?.length, 2);

    const bucket = result.resources.PageBucket1A2B3C4D;
    assert.equal(bucket?.name, `${prefix}-pagebucket1a2b3c4d`.toLowerCase());
    await ep.clients.s3.send(new HeadBucketCommand({ Bucket: bucket?.name }));

    const api = result.functions.ApiFunction22222222;
    assert.ok(api);
    assert.equal(api.handler, 'index.handler');
    assert.equal(api.assetDir, join(FIXTURES, 'asset.api'));
    assert.equal(api.timeoutSeconds, 10);
    assert.equal(api.memoryMb, 512);
    assert.equal(api.name, `${prefix}-ApiFunction22222222`);
    assert.deepEqual(api.env, {
      QUEUE_URL: queue?.url,
      QUEUE_ARN: queue?.arn,
      QUEUE_NAME: queue?.name,
      URL_TABLE: urlTable?.name,
      URL_TABLE_ARN: urlTable?.arn,
      CRAWL_TABLE: crawlTable?.name,
      PAGE_BUCKET: bucket?.name,
      BUCKET_PREFIX: `s3://${bucket?.name}/pages`,
      WHERE: `us-east-1/${bucket?.name}/${queue?.name}`,
      MAX_PAGES: '1000',
    });
    const scheduler = result.functions.SchedulerFunction44444444;
    assert.equal(scheduler?.timeoutSeconds, 3);
    assert.equal(scheduler?.reservedConcurrency, 1);

    assert.deepEqual(result.eventSourceMappings, [
      {
        logicalId: 'WorkerFunctionSqsEventSource55555555',
        functionLogicalId: 'WorkerFunction33333333',
        queueLogicalId: 'FrontierQueue0F1E2D3C',
        queueUrl: queue?.url,
        queueArn: queue?.arn,
        batchSize: 10,
        reportBatchItemFailures: true,
        maximumBatchingWindowSeconds: 0,
        enabled: true,
        maximumConcurrency: 2,
      },
    ]);
    assert.deepEqual(result.functionUrls, [
      {
        logicalId: 'ApiFunctionUrl66666666',
        functionLogicalId: 'ApiFunction22222222',
        authType: 'AWS_IAM',
        invokeMode: 'BUFFERED',
      },
    ]);
    assert.equal(result.schedules.length, 1);
    assert.equal(result.schedules[0]?.scheduleExpression, 'rate(1 minute)');
    assert.deepEqual(result.schedules[0]?.targets, [{ functionLogicalId: 'SchedulerFunction44444444' }]);

    const notes = result.notes.join('\n');
    assert.match(notes, /Custom::S3AutoDeleteObjects/);
    assert.match(notes, /point-in-time recovery ignored/);
    assert.match(notes, /LifecycleConfiguration ignored/);
    if (ep.standIn !== undefined) assert.match(notes, /TTL on "expiresAt" skipped/);
    assert.doesNotMatch(notes, /IAM::Role|Lambda::Permission|CDK::Metadata/);
  });

  it('reuses what an earlier run created', async () => {
    const prefix = uniquePrefix();
    const first = await provision(template, ep.clients, { prefix, assemblyDir: FIXTURES });
    const second = await provision(template, ep.clients, { prefix, assemblyDir: FIXTURES });
    assert.deepEqual(second.resources, first.resources);
    assert.deepEqual(second.functions, first.functions);
    const { QueueUrls } = await ep.clients.sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix }));
    assert.equal(QueueUrls?.length, 2);
  });

  it('names the place of an intrinsic it cannot evaluate', async () => {
    const bad: CfnTemplate = {
      Resources: {
        Fn: {
          Type: 'AWS::Lambda::Function',
          Properties: { Environment: { Variables: { X: { 'Fn::If': ['IsProd', 'a', 'b'] } } } },
        },
      },
    };
    await assert.rejects(
      provision(bad, ep.clients, { prefix: uniquePrefix() }),
      (error: unknown) =>
        error instanceof TemplateError &&
        error.code === 'unsupported-intrinsic' &&
        error.path === 'Fn.Environment.X',
    );
    const missing: CfnTemplate = {
      Resources: {
        Fn: {
          Type: 'AWS::Lambda::Function',
          Properties: { Environment: { Variables: { Q: { Ref: 'Nope' } } } },
        },
      },
    };
    await assert.rejects(
      provision(missing, ep.clients, { prefix: uniquePrefix() }),
      (error: unknown) => error instanceof TemplateError && error.code === 'unknown-resource',
    );
  });

  it('provisions the CrawlstackStack template, synthesized from lib/ by this test', async () => {
    // Synthesized here (bundles included), never whatever an earlier run left in cdk.out.
    const synth = synthStack({}, { validate: false });
    after(() => synth.dispose());
    const cdkTemplate = synth.template.toJSON() as CfnTemplate;
    const assemblyDir = synth.outdir;
    const result = await provision(cdkTemplate, ep.clients, { prefix: uniquePrefix(), assemblyDir });
    const types = Object.values(cdkTemplate.Resources).map((r) => r.Type);
    const expected = types.filter((type) =>
      ['AWS::SQS::Queue', 'AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable', 'AWS::S3::Bucket'].includes(
        type,
      ),
    ).length;
    assert.equal(
      Object.values(result.resources).filter((r) => r.type !== 'AWS::Lambda::Function').length,
      expected,
    );
    const triggered = [
      ...result.eventSourceMappings.map((m) => m.functionLogicalId),
      ...result.functionUrls.map((u) => u.functionLogicalId),
      ...result.schedules.flatMap((s) => s.targets.map((x) => x.functionLogicalId)),
    ];
    assert.ok(result.eventSourceMappings.length >= 1, 'the frontier queue feeds a worker');
    assert.ok(result.functionUrls.length >= 1, 'the API has a function URL');
    assert.ok(result.schedules.length >= 1, 'the scheduler has a rule');
    for (const id of triggered) {
      const spec = result.functions[id];
      assert.ok(spec?.assetDir, `${id} has an asset`);
      assert.ok(
        ['index.mjs', 'index.js'].some((f) => existsSync(join(spec.assetDir ?? '', f))),
        `${id}: bundle in ${spec.assetDir}`,
      );
    }
  });
});
