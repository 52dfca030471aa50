/**
 * Limits AWS enforces that crawlstack can hit, refused by the stand-in as AWS refuses them:
 * DynamoDB key and item sizes, SQS message and batch sizes and entry counts, the FIFO
 * deduplication window, and Lambda's 6 MB payloads through a function URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { FunctionUrlServer } from '../../../localstack/function-url-server.ts';
import { LocalLambda } from '../../../localstack/local-lambda.ts';
import { EXTERNAL_ENDPOINT, openTestEndpoint, type TestEndpoint, uniquePrefix } from './helpers.ts';

/** The SDK error name and message of a refused call. */
async function refused(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  assert.fail('the call was accepted');
}

const x = (n: number) => 'x'.repeat(n);

describe('limits AWS enforces', () => {
  let ep: TestEndpoint;
  const table = `${uniquePrefix()}-limits`;

  before(async () => {
    ep = await openTestEndpoint();
    await ep.clients.dynamo.send(
      new CreateTableCommand({
        TableName: table,
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: 'gp', AttributeType: 'S' },
          { AttributeName: 'gs', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byG',
            KeySchema: [
              { AttributeName: 'gp', KeyType: 'HASH' },
              { AttributeName: 'gs', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      }),
    );
  });
  after(() => ep?.close());

  it('DynamoDB: partition keys up to 2,048 bytes, sort keys up to 1,024, in every call', async () => {
    const doc = ep.clients.doc;
    await doc.send(new PutCommand({ TableName: table, Item: { pk: x(2048), sk: x(1024) } }));
    const hashTooLong =
      /ValidationException: .*Size of hashkey has exceeded the maximum size limit of\s?2048 bytes/;
    const rangeTooLong =
      /ValidationException: .*Aggregated size of all range keys has exceeded the size limit of 1024 bytes/;
    assert.match(
      await refused(doc.send(new PutCommand({ TableName: table, Item: { pk: x(2049), sk: 'a' } }))),
      hashTooLong,
    );
    assert.match(
      await refused(doc.send(new PutCommand({ TableName: table, Item: { pk: 'a', sk: x(1025) } }))),
      rangeTooLong,
    );
    assert.match(
      await refused(doc.send(new GetCommand({ TableName: table, Key: { pk: x(2049), sk: 'a' } }))),
      hashTooLong,
    );
    assert.match(
      await refused(
        doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: 'a', sk: x(1025) },
            UpdateExpression: 'SET v = :v',
            ExpressionAttributeValues: { ':v': 1 },
          }),
        ),
      ),
      rangeTooLong,
    );
    assert.match(
      await refused(
        doc.send(
          new BatchWriteCommand({
            RequestItems: { [table]: [{ PutRequest: { Item: { pk: x(2049), sk: 'a' } } }] },
          }),
        ),
      ),
      hashTooLong,
    );
  });

  it('DynamoDB: global secondary index keys have the same limits', async () => {
    const doc = ep.clients.doc;
    await doc.send(
      new PutCommand({ TableName: table, Item: { pk: 'g', sk: '1', gp: x(2048), gs: x(1024) } }),
    );
    const put = await refused(
      doc.send(new PutCommand({ TableName: table, Item: { pk: 'g', sk: '2', gp: x(2049), gs: 'a' } })),
    );
    assert.equal(
      put,
      'ValidationException: One or more parameter values were invalid: Size limit exceeded for Index Key gp Actual Size: 2049 bytes Max Size: 2048 bytes IndexName: byG',
    );
    const update = await refused(
      doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: 'g', sk: '1' },
          UpdateExpression: 'SET #s = :s',
          ExpressionAttributeNames: { '#s': 'gs' },
          ExpressionAttributeValues: { ':s': x(1025) },
        }),
      ),
    );
    assert.match(update, /Size limit exceeded for Index Key gs Actual Size: 1025 bytes Max Size: 1024 bytes/);
    const batch = await refused(
      doc.send(
        new BatchWriteCommand({
          RequestItems: { [table]: [{ PutRequest: { Item: { pk: 'g', sk: '3', gp: x(3000) } } }] },
        }),
      ),
    );
    assert.match(batch, /Index Key gp Actual Size: 3000 bytes/);
  });

  it('DynamoDB: items up to 400 KB (names and values), put, updated or batch-written', async () => {
    const doc = ep.clients.doc;
    // Item size = attribute names + values: pk(2)+1, sk(2)+1, v(1) + the rest.
    const overhead = 2 + 1 + 2 + 1 + 1;
    await doc.send(
      new PutCommand({ TableName: table, Item: { pk: 'a', sk: 'b', v: x(409_600 - overhead) } }),
    );
    const tooBig = /ValidationException: Item size (to update )?has exceeded the maximum allowed size/;
    assert.match(
      await refused(
        doc.send(new PutCommand({ TableName: table, Item: { pk: 'a', sk: 'c', v: x(409_601 - overhead) } })),
      ),
      tooBig,
    );
    assert.match(
      await refused(
        doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: 'a', sk: 'b' },
            UpdateExpression: 'SET w = :w',
            ExpressionAttributeValues: { ':w': 'grows past 400 KB' },
          }),
        ),
      ),
      tooBig,
    );
    assert.match(
      await refused(
        doc.send(
          new BatchWriteCommand({
            RequestItems: {
              [table]: [{ PutRequest: { Item: { pk: 'a', sk: 'd', v: x(409_601 - overhead) } } }],
            },
          }),
        ),
      ),
      tooBig,
    );
  });

  it("SQS: messages up to the queue's MaximumMessageSize (1 MiB by default)", async () => {
    const sqs = ep.clients.sqs;
    const plain = (await sqs.send(new CreateQueueCommand({ QueueName: `${uniquePrefix()}-plain` }))).QueueUrl;
    const small = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: `${uniquePrefix()}-256k`,
          Attributes: { MaximumMessageSize: '262144' },
        }),
      )
    ).QueueUrl;
    await sqs.send(new SendMessageCommand({ QueueUrl: plain, MessageBody: x(1_048_576) }));
    assert.match(
      await refused(sqs.send(new SendMessageCommand({ QueueUrl: plain, MessageBody: x(1_048_577) }))),
      /InvalidParameterValue: .*Message must be shorter than 1048576 bytes/,
    );
    await sqs.send(new SendMessageCommand({ QueueUrl: small, MessageBody: x(262_144) }));
    assert.match(
      await refused(sqs.send(new SendMessageCommand({ QueueUrl: small, MessageBody: x(262_145) }))),
      /Message must be shorter than 262144 bytes/,
    );
    // In a batch, an entry that is too long fails alone.
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: small,
        Entries: [
          { Id: 'long', MessageBody: x(262_145) },
          { Id: 'short', MessageBody: 'fits' },
        ],
      }),
    );
    assert.deepEqual(
      batch.Failed?.map((f) => [f.Id, f.Code, f.SenderFault]),
      [['long', 'InvalidParameterValue', true]],
    );
    assert.deepEqual(
      batch.Successful?.map((s) => s.Id),
      ['short'],
    );
  });

  it('SQS: a batch holds at most 10 entries and 1 MiB in all', async () => {
    const sqs = ep.clients.sqs;
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: `${uniquePrefix()}-batch` }))).QueueUrl;
    const entries = (n: number, body: string) =>
      Array.from({ length: n }, (_, i) => ({ Id: `e${i}`, MessageBody: body }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries(10, 'x') }));
    assert.match(
      await refused(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries(11, 'x') }))),
      /^TooManyEntriesInBatchRequest/,
    );
    assert.match(
      await refused(
        sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries(2, x(600_000)) })),
      ),
      /^BatchRequestTooLong: .*1048576 bytes/,
    );
    const handles = Array.from({ length: 11 }, (_, i) => ({ Id: `h${i}`, ReceiptHandle: `r${i}` }));
    assert.match(
      await refused(sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: handles }))),
      /^TooManyEntriesInBatchRequest/,
    );
    assert.match(
      await refused(
        sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: url,
            Entries: handles.map((h) => ({ ...h, VisibilityTimeout: 0 })),
          }),
        ),
      ),
      /^TooManyEntriesInBatchRequest/,
    );
  });

  it('SQS FIFO: a deduplication id is remembered for exactly 5 minutes', {
    skip: EXTERNAL_ENDPOINT && "stand-in only (the test moves the emulator's clock)",
  }, async () => {
    const sqs = ep.clients.sqs;
    const url = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: `${uniquePrefix()}-dedup.fifo`,
          Attributes: { FifoQueue: 'true' },
        }),
      )
    ).QueueUrl;
    const send = () =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: 'page',
          MessageGroupId: 'host',
          MessageDeduplicationId: 'same-id',
        }),
      );
    const depth = async () =>
      Number(
        (
          await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
          )
        ).Attributes?.ApproximateNumberOfMessages,
      );
    // Only Date moves (fauxqs reads Date.now()); timers and sockets keep real time.
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      const first = await send();
      mock.timers.tick(4 * 60_000 + 59_000);
      const again = await send();
      assert.equal(again.MessageId, first.MessageId, 'a duplicate within 5 minutes is accepted and dropped');
      assert.equal(await depth(), 1);
      mock.timers.tick(2_000);
      const later = await send();
      assert.notEqual(later.MessageId, first.MessageId, 'after 5 minutes the id is new again');
      assert.equal(await depth(), 2);
    } finally {
      mock.timers.reset();
    }
  });
});

describe("Lambda's 6 MB payloads through a function URL", () => {
  const servers: FunctionUrlServer[] = [];
  after(() => Promise.all(servers.map((s) => s.stop())));

  async function serve(handler: (event: { body?: string }) => unknown): Promise<string> {
    const lambda = new LocalLambda({ name: 'payloads', handler: handler as never });
    const server = new FunctionUrlServer({ lambda, token: 't' });
    servers.push(server);
    return server.start();
  }

  it('takes a 6 MB request and refuses one byte more with 413', async () => {
    const url = await serve((event) => ({ statusCode: 200, body: String(event.body?.length ?? 0) }));
    const post = (bytes: number) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'text/plain' },
        body: x(bytes),
      });
    const fits = await post(6 * 1024 * 1024);
    assert.equal(fits.status, 200);
    assert.equal(await fits.text(), String(6 * 1024 * 1024));
    const over = await post(6 * 1024 * 1024 + 1);
    assert.equal(over.status, 413);
  });

  it('answers 502 when the function returns more than 6 MB', async () => {
    const url = await serve((event) => ({ statusCode: 200, body: x(Number(event.body)) }));
    const get = (bytes: number) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'text/plain' },
        body: String(bytes),
      });
    assert.equal((await get(6 * 1024 * 1024 - 100)).status, 200);
    assert.equal((await get(6 * 1024 * 1024)).status, 502);
  });
});
