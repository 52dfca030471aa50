import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import { openTestEndpoint, type TestEndpoint, uniquePrefix } from './helpers.ts';

describe('createAwsClients', () => {
  it('passes the endpoint to every client, path-style S3 and test credentials', async () => {
    const clients = createAwsClients({ AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' });
    try {
      assert.equal(clients.endpoint, 'http://127.0.0.1:4566');
      assert.equal(clients.region, 'us-east-1');
      for (const client of [clients.sqs, clients.dynamo, clients.s3]) {
        const endpoint = await client.config.endpoint?.();
        assert.equal(endpoint?.hostname, '127.0.0.1');
        assert.equal(endpoint?.port, 4566);
        assert.equal(await client.config.region(), 'us-east-1');
        const credentials = await client.config.credentials();
        assert.equal(credentials.accessKeyId, 'test');
        assert.equal(credentials.secretAccessKey, 'test');
      }
      assert.equal(clients.s3.config.forcePathStyle, true);
    } finally {
      clients.destroy();
    }
  });

  it('keeps credentials and region the environment names', async () => {
    const clients = createAwsClients({
      AWS_ENDPOINT_URL: 'http://localhost:4566',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDLOCAL',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'session',
    });
    try {
      assert.equal(await clients.sqs.config.region(), 'eu-west-1');
      const credentials = await clients.dynamo.config.credentials();
      assert.equal(credentials.accessKeyId, 'AKIDLOCAL');
      assert.equal(credentials.sessionToken, 'session');
    } finally {
      clients.destroy();
    }
    const regional = createAwsClients({ AWS_REGION: 'ap-south-1', AWS_DEFAULT_REGION: 'eu-west-1' });
    assert.equal(regional.region, 'ap-south-1');
    regional.destroy();
  });

  it('configures nothing special for real AWS', async () => {
    const clients = createAwsClients({});
    try {
      assert.equal(clients.endpoint, undefined);
      assert.equal(clients.s3.config.forcePathStyle ?? false, false);
      // No custom endpoint: the SDK resolves the regional AWS one per request.
      assert.equal(clients.sqs.config.endpoint, undefined);
    } finally {
      clients.destroy();
    }
  });
});

describe('createAwsClients against the endpoint', () => {
  let ep: TestEndpoint;
  before(async () => {
    ep = await openTestEndpoint();
  });
  after(() => ep.close());

  it('reaches queues whose URL names a host that does not resolve', async () => {
    const clients = createAwsClients({ AWS_ENDPOINT_URL: ep.url });
    try {
      const { QueueUrl } = await clients.sqs.send(
        new CreateQueueCommand({ QueueName: `${uniquePrefix()}-url` }),
      );
      await clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x' }));
      const { Attributes } = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      assert.equal(Attributes?.ApproximateNumberOfMessages, '1');
    } finally {
      clients.destroy();
    }
  });

  it('writes S3 objects path-style and drops undefined attributes in the document client', async () => {
    const clients = createAwsClients({ AWS_ENDPOINT_URL: ep.url });
    const prefix = uniquePrefix();
    try {
      await clients.s3.send(new CreateBucketCommand({ Bucket: `${prefix}-bucket` }));
      await clients.s3.send(new PutObjectCommand({ Bucket: `${prefix}-bucket`, Key: 'a/b', Body: 'x' }));
      await clients.dynamo.send(
        new CreateTableCommand({
          TableName: `${prefix}-doc`,
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      await clients.doc.send(
        new PutCommand({ TableName: `${prefix}-doc`, Item: { pk: 'a', gone: undefined } }),
      );
      const { Item } = await clients.doc.send(
        new GetCommand({ TableName: `${prefix}-doc`, Key: { pk: 'a' } }),
      );
      assert.deepEqual(Item, { pk: 'a' });
    } finally {
      clients.destroy();
    }
  });
});
