import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { startEndpoint } from '../../../localstack/endpoint.ts';
import {
  classifyS3Request,
  dynamoCapacity,
  type EndpointMetrics,
  itemSize,
} from '../../../localstack/endpoint-metrics.ts';
import { openTestEndpoint, type TestEndpoint, uniquePrefix } from './helpers.ts';

describe('stand-in endpoint', () => {
  let ep: TestEndpoint;
  before(async () => {
    ep = await openTestEndpoint();
  });
  after(() => ep.close());

  it('answers the LocalStack health check', async () => {
    const response = await fetch(`${ep.url}/_localstack/health`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as { services: Record<string, string> };
    for (const service of ['sqs', 'dynamodb', 's3']) {
      assert.match(body.services[service] ?? '', /^(running|available)$/, service);
    }
  });

  it('keeps a FIFO group blocked while one of its messages is in flight', async () => {
    const { QueueUrl } = await ep.clients.sqs.send(
      new CreateQueueCommand({
        QueueName: `${uniquePrefix()}-blocking.fifo`,
        Attributes: { FifoQueue: 'true', VisibilityTimeout: '30' },
      }),
    );
    await ep.clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: [
          { Id: '1', MessageBody: 'g1-first', MessageGroupId: 'g1', MessageDeduplicationId: 'a' },
          { Id: '2', MessageBody: 'g1-second', MessageGroupId: 'g1', MessageDeduplicationId: 'b' },
          { Id: '3', MessageBody: 'g2-only', MessageGroupId: 'g2', MessageDeduplicationId: 'c' },
        ],
      }),
    );
    const receive = async (wait: number) =>
      (
        await ep.clients.sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: wait }),
        )
      ).Messages ?? [];
    const first = await receive(1);
    const bodies = first.map((m) => m.Body);
    assert.ok(bodies.includes('g1-first'), `first receive: ${bodies}`);
    assert.ok(bodies.includes('g2-only'));
    // g1-first is in flight: nothing else of g1 may come out now (real SQS may have put
    // g1-second into the first receive already; the stand-in returns one message per group).
    const second = await receive(0);
    assert.deepEqual(
      second.map((m) => m.Body),
      [],
    );
    const remove = async (messages: Message[]) =>
      ep.clients.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    await remove(first);
    if (!bodies.includes('g1-second')) {
      const third = await receive(1);
      assert.deepEqual(
        third.map((m) => m.Body),
        ['g1-second'],
      );
      await remove(third);
    }
  });

  it('serves on a free port when asked for port 0, and two at once', async (t) => {
    if (ep.standIn === undefined) {
      t.skip('AWS_ENDPOINT_URL is set: the stand-in is not started');
      return;
    }
    const [a, b] = await Promise.all([startEndpoint({ port: 0 }), startEndpoint({ port: 0 })]);
    try {
      assert.notEqual(a.port, 0);
      assert.notEqual(a.port, b.port);
      assert.equal(a.url, `http://127.0.0.1:${a.port}`);
      const health = await fetch(`${b.url}/_localstack/health`);
      assert.equal(health.status, 200);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('counts requests by operation and DynamoDB capacity units', async (t) => {
    const standIn = ep.standIn;
    if (standIn === undefined) {
      t.skip('metrics exist only on the stand-in (AWS_ENDPOINT_URL is set)');
      return;
    }
    const prefix = uniquePrefix();
    const table = `${prefix}-units`;
    const dynamo = ep.clients.dynamo;
    await dynamo.send(
      new CreateTableCommand({
        TableName: table,
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const { QueueUrl } = await ep.clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-count` }));
    await ep.clients.s3.send(new CreateBucketCommand({ Bucket: `${prefix}-count` }));
    standIn.resetMetrics();

    // DynamoDB: 1 + 2 + 1 (failed condition) + 3 write units; 0.5 + 1 + 0.5 read units.
    await dynamo.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'small' } } }));
    await dynamo.send(
      new PutItemCommand({ TableName: table, Item: { pk: { S: 'big' }, body: { S: 'x'.repeat(1500) } } }),
    );
    await assert.rejects(
      dynamo.send(
        new PutItemCommand({
          TableName: table,
          Item: { pk: { S: 'small' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
      ConditionalCheckFailedException,
    );
    await ep.clients.doc.send(
      new BatchWriteCommand({
        RequestItems: {
          [table]: ['b1', 'b2', 'b3'].map((pk) => ({ PutRequest: { Item: { pk } } })),
        },
      }),
    );
    await dynamo.send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'small' } } }));
    await dynamo.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: 'big' } }, ConsistentRead: true }),
    );
    await dynamo.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'big' } },
      }),
    );

    await ep.clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: [
          { Id: 'a', MessageBody: 'a' },
          { Id: 'b', MessageBody: 'b' },
        ],
      }),
    );
    await ep.clients.sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));

    const Bucket = `${prefix}-count`;
    await ep.clients.s3.send(new PutObjectCommand({ Bucket, Key: 'pages/1.warc', Body: 'hello world' }));
    await ep.clients.s3.send(new HeadObjectCommand({ Bucket, Key: 'pages/1.warc' }));
    const object = await ep.clients.s3.send(new GetObjectCommand({ Bucket, Key: 'pages/1.warc' }));
    assert.equal(await object.Body?.transformToString(), 'hello world');
    await ep.clients.s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'pages/' }));

    const metrics = standIn.metrics();
    assert.deepEqual(metrics.requests.dynamodb, {
      PutItem: 3,
      BatchWriteItem: 1,
      GetItem: 2,
      Query: 1,
    });
    assert.deepEqual(metrics.requests.sqs, { SendMessageBatch: 1, ReceiveMessage: 1 });
    assert.deepEqual(metrics.requests.s3, { PutObject: 1, HeadObject: 1, GetObject: 1, ListObjectsV2: 1 });
    assert.equal(metrics.totalRequests, 13);
    assert.equal(metrics.dynamodb.writeRequestUnits, 7);
    assert.equal(metrics.dynamodb.readRequestUnits, 2);
    assert.equal(metrics.dynamodb.failedConditionalWrites, 1);
    assert.deepEqual(metrics.dynamodb.byTable[table], { writeRequestUnits: 7, readRequestUnits: 2 });
    assert.equal(metrics.s3.bytesUploaded, 11);
    // Per partition key: the failed condition is charged to the key it named.
    assert.deepEqual(Object.fromEntries(metrics.dynamodb.hotKeys.map((k) => [k.key, k.writeUnits])), {
      small: 2,
      big: 2,
      b1: 1,
      b2: 1,
      b3: 1,
    });

    const served = (await (await fetch(`${ep.url}/_crawlstack/metrics`)).json()) as EndpointMetrics;
    assert.deepEqual(served, metrics);
    await fetch(`${ep.url}/_crawlstack/metrics/reset`, { method: 'POST' });
    assert.equal(standIn.metrics().totalRequests, 0);
  });

  it('routes a client that names the raw DynamoDB endpoint too', async () => {
    // Any SDK configured with the endpoint works, not only the factory's clients.
    const plain = new DynamoDBClient({
      endpoint: ep.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    try {
      await assert.rejects(
        plain.send(new GetItemCommand({ TableName: `${uniquePrefix()}-missing`, Key: { pk: { S: 'x' } } })),
        (error: Error) => error.name === 'ResourceNotFoundException',
      );
    } finally {
      plain.destroy();
    }
  });
});

describe('capacity arithmetic', () => {
  it('sizes items as DynamoDB documents', () => {
    assert.equal(itemSize({ pk: { S: 'abc' } }), 5);
    assert.equal(itemSize({ n: { N: '12345' } }), 1 + 4);
    assert.equal(itemSize({ b: { B: Buffer.from('abcd').toString('base64') } }), 5);
    assert.equal(itemSize({ ok: { BOOL: true }, no: { NULL: true } }), 2 + 1 + 2 + 1);
    assert.equal(itemSize({ l: { L: [{ S: 'a' }, { S: 'bc' }] } }), 1 + 3 + 2 + 3);
    assert.equal(itemSize({ m: { M: { k: { S: 'v' } } } }), 1 + 3 + 1 + 1 + 1);
    assert.equal(itemSize({ s: { S: 'é' } }), 3);
  });

  it("charges a global secondary index's writes on top of the table's", () => {
    const indexes = () => [{ name: 'ParkedIndex', keys: ['parked', 'cashKey'] }];
    const key = { pk: { S: 'c#0123456789abcdef' } };
    const update = (UpdateExpression: string, names: Record<string, string>, values = {}) =>
      dynamoCapacity(
        'UpdateItem',
        {
          TableName: 't',
          Key: key,
          UpdateExpression,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
        200,
        {},
        indexes,
      );
    const units = (charges: ReturnType<typeof dynamoCapacity>) =>
      Object.fromEntries(charges.map((c) => [c.table, c.writeRequestUnits]));
    // Parking writes the index entry; crediting moves it (delete + put); unparking deletes it.
    assert.deepEqual(
      units(
        update(
          'SET #p = :p, #k = :k, #t = :t',
          { '#p': 'parked', '#k': 'cashKey', '#t': 'task' },
          {
            ':p': { S: 'c#0' },
            ':k': { N: '0.001' },
          },
        ),
      ),
      { 't/ParkedIndex': 1, t: 1 },
    );
    assert.deepEqual(units(update('ADD #k :a', { '#k': 'cashKey' }, { ':a': { N: '0.1' } })), {
      't/ParkedIndex': 2,
      t: 1,
    });
    assert.deepEqual(units(update('REMOVE #p, #k, #t', { '#p': 'parked', '#k': 'cashKey', '#t': 'task' })), {
      't/ParkedIndex': 1,
      t: 1,
    });
    // Writes that do not touch the index keys cost the table alone.
    assert.deepEqual(units(update('SET #o = :o', { '#o': 'owner' }, { ':o': { S: 'x' } })), { t: 1 });
    const put = (item: Record<string, unknown>) =>
      units(dynamoCapacity('PutItem', { TableName: 't', Item: item }, 200, {}, indexes));
    assert.deepEqual(put({ ...key, owner: { S: 'x' } }), { t: 1 });
    assert.deepEqual(put({ ...key, parked: { S: 'c#0' }, cashKey: { N: '1' } }), {
      t: 1,
      't/ParkedIndex': 1,
    });
  });

  it('charges writes per started KB and reads per started 4 KB', () => {
    const big = { pk: { S: 'k' }, v: { S: 'x'.repeat(2048) } };
    assert.deepEqual(dynamoCapacity('PutItem', { TableName: 't', Item: big }, 200, {}), [
      { table: 't', writeRequestUnits: 3, readRequestUnits: 0 },
    ]);
    assert.deepEqual(
      dynamoCapacity('GetItem', { TableName: 't', Key: {} }, 200, { Item: { v: { S: 'x'.repeat(5000) } } }),
      [{ table: 't', writeRequestUnits: 0, readRequestUnits: 1 }],
    );
    assert.deepEqual(
      dynamoCapacity('UpdateItem', { TableName: 't', Key: { pk: { S: 'k' } } }, 200, { Attributes: big }),
      [{ table: 't', writeRequestUnits: 3, readRequestUnits: 0 }],
    );
    assert.deepEqual(
      dynamoCapacity('PutItem', { TableName: 't' }, 400, { __type: 'x#ValidationException' }),
      [],
    );
    assert.deepEqual(
      dynamoCapacity(
        'BatchGetItem',
        { RequestItems: { t: { Keys: [{}, {}, {}], ConsistentRead: true } } },
        200,
        { Responses: { t: [{ pk: { S: 'a' } }] }, UnprocessedKeys: {} },
      ),
      [{ table: 't', writeRequestUnits: 0, readRequestUnits: 3 }],
    );
  });

  it('names S3 operations from method, path and query', () => {
    const h = { host: '127.0.0.1:4566' };
    assert.equal(classifyS3Request('GET', '/', h), 'ListBuckets');
    assert.equal(classifyS3Request('PUT', '/b', h), 'CreateBucket');
    assert.equal(classifyS3Request('GET', '/b?list-type=2&prefix=x', h), 'ListObjectsV2');
    assert.equal(classifyS3Request('PUT', '/b/k/1', h), 'PutObject');
    assert.equal(classifyS3Request('PUT', '/b/k?partNumber=1&uploadId=u', h), 'UploadPart');
    assert.equal(classifyS3Request('POST', '/b/k?uploads', h), 'CreateMultipartUpload');
    assert.equal(classifyS3Request('POST', '/b?delete', h), 'DeleteObjects');
    assert.equal(classifyS3Request('PUT', '/b/k', { ...h, 'x-amz-copy-source': '/b/j' }), 'CopyObject');
    assert.equal(classifyS3Request('GET', '/k', { host: 'b.localhost:4566' }), 'GetObject');
  });
});
