import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { type AwsClients, createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import { EXTERNAL_ENDPOINT, openTestEndpoint, type TestEndpoint, uniquePrefix } from './helpers.ts';

const ACCOUNT = '000000000000';
const SESSION = `arn:aws:sts::${ACCOUNT}:assumed-role/fn-role/fn`;

/** The SDK error of a refused call, or a failure if the call went through. */
async function refusal(call: Promise<unknown>): Promise<{ name: string; status?: number; message: string }> {
  try {
    await call;
  } catch (error) {
    const e = error as { name: string; message: string; $metadata?: { httpStatusCode?: number } };
    return {
      name: e.name,
      message: e.message,
      ...(e.$metadata?.httpStatusCode === undefined ? {} : { status: e.$metadata.httpStatusCode }),
    };
  }
  assert.fail('the call was allowed');
}

describe('IAM on the stand-in endpoint', {
  skip: EXTERNAL_ENDPOINT && 'stand-in only (LocalStack free does not enforce IAM)',
}, () => {
  let ep: TestEndpoint;
  let fn: AwsClients;
  const prefix = uniquePrefix();
  const urls = `${prefix}-urls`;
  const crawls = `${prefix}-crawls`;
  const bucket = `${prefix}-pages`.toLowerCase();
  const queueName = `${prefix}-frontier.fifo`;
  let queueUrl = '';
  const tableArn = (name: string) => `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/${name}`;
  const queueArn = `arn:aws:sqs:us-east-1:${ACCOUNT}:${queueName}`;

  before(async () => {
    ep = await openTestEndpoint();
    const admin = ep.clients;
    for (const [name, index] of [
      [urls, true],
      [crawls, false],
    ] as const) {
      await admin.dynamo.send(
        new CreateTableCommand({
          TableName: name,
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            ...(index ? [{ AttributeName: 'crawl', AttributeType: 'S' as const }] : []),
          ],
          BillingMode: 'PAY_PER_REQUEST',
          ...(index
            ? {
                GlobalSecondaryIndexes: [
                  {
                    IndexName: 'byCrawl',
                    KeySchema: [{ AttributeName: 'crawl', KeyType: 'HASH' }],
                    Projection: { ProjectionType: 'KEYS_ONLY' },
                  },
                ],
              }
            : {}),
        }),
      );
    }
    queueUrl = (
      await admin.sqs.send(
        new CreateQueueCommand({ QueueName: queueName, Attributes: { FifoQueue: 'true' } }),
      )
    ).QueueUrl as string;
    await admin.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await admin.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'public/a', Body: 'a' }));
    await admin.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'private/b', Body: 'b' }));

    ep.standIn?.iam.register('ASIAFUNCTIONKEY', {
      name: 'Fn',
      sessionArn: SESSION,
      roleArn: `arn:aws:iam::${ACCOUNT}:role/fn-role`,
      accountId: ACCOUNT,
      policies: [
        {
          name: 'grants',
          document: {
            Version: '2012-10-17',
            Statement: [
              // Read-only on urls (like the old Api grant), its index included.
              {
                Effect: 'Allow',
                Action: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchWriteItem'],
                Resource: [tableArn(urls), `${tableArn(urls)}/index/*`],
              },
              // Writes on crawls only for the partition keys of crawl c1.
              {
                Effect: 'Allow',
                Action: ['dynamodb:PutItem'],
                Resource: tableArn(crawls),
                Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['c1#*'] } },
              },
              { Effect: 'Allow', Action: ['sqs:ReceiveMessage'], Resource: queueArn },
              { Effect: 'Allow', Action: ['s3:GetObject'], Resource: `arn:aws:s3:::${bucket}/*` },
              {
                Effect: 'Allow',
                Action: ['s3:ListBucket'],
                Resource: `arn:aws:s3:::${bucket}`,
                Condition: { StringLike: { 's3:prefix': ['public/*'] } },
              },
            ],
          },
        },
      ],
    });
    // The bucket refuses private/ to everyone; TLS-only as CDK's enforceSSL writes it.
    ep.standIn?.iam.setResourcePolicy(`arn:aws:s3:::${bucket}`, {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:GetObject',
          Resource: `arn:aws:s3:::${bucket}/private/*`,
        },
        {
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:*',
          Resource: [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`],
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        },
      ],
    });
    fn = createAwsClients({
      AWS_ENDPOINT_URL: ep.url,
      AWS_ACCESS_KEY_ID: 'ASIAFUNCTIONKEY',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
    });
  });

  after(async () => {
    fn?.destroy();
    await ep?.close();
  });

  it("refuses a DynamoDB write the role does not grant, in DynamoDB's words", async () => {
    assert.equal((await fn.doc.send(new GetCommand({ TableName: urls, Key: { pk: 'a' } }))).Item, undefined);
    const denied = await refusal(
      fn.doc.send(
        new UpdateCommand({
          TableName: urls,
          Key: { pk: 'a' },
          UpdateExpression: 'SET seen = :t',
          ExpressionAttributeValues: { ':t': true },
        }),
      ),
    );
    assert.deepEqual(denied, {
      name: 'AccessDeniedException',
      status: 400,
      message: `User: ${SESSION} is not authorized to perform: dynamodb:UpdateItem on resource: ${tableArn(urls)} because no identity-based policy allows the dynamodb:UpdateItem action`,
    });
    // The index is its own resource: allowed here through `/index/*`.
    await fn.doc.send(
      new QueryCommand({
        TableName: urls,
        IndexName: 'byCrawl',
        KeyConditionExpression: 'crawl = :c',
        ExpressionAttributeValues: { ':c': 'c1' },
      }),
    );
    // A batch needs its action on every table it writes.
    const batch = await refusal(
      fn.doc.send(
        new BatchWriteCommand({
          RequestItems: {
            [urls]: [{ PutRequest: { Item: { pk: 'x' } } }],
            [crawls]: [{ PutRequest: { Item: { pk: 'c1#x' } } }],
          },
        }),
      ),
    );
    assert.match(batch.message, new RegExp(`dynamodb:BatchWriteItem on resource: ${tableArn(crawls)}`));
  });

  it('evaluates conditions: dynamodb:LeadingKeys and s3:prefix', async () => {
    await fn.doc.send(new PutCommand({ TableName: crawls, Item: { pk: 'c1#home' } }));
    const other = await refusal(fn.doc.send(new PutCommand({ TableName: crawls, Item: { pk: 'c2#home' } })));
    assert.equal(other.name, 'AccessDeniedException');
    const listed = await fn.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'public/' }));
    assert.deepEqual(
      listed.Contents?.map((c) => c.Key),
      ['public/a'],
    );
    const all = await refusal(fn.s3.send(new ListObjectsV2Command({ Bucket: bucket })));
    assert.deepEqual(all, {
      name: 'AccessDenied',
      status: 403,
      message: `User: ${SESSION} is not authorized to perform: s3:ListBucket on resource: "arn:aws:s3:::${bucket}" because no identity-based policy allows the s3:ListBucket action`,
    });
  });

  it('refuses S3 object writes and honours an explicit deny in the bucket policy', async () => {
    const read = await fn.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'public/a' }));
    assert.equal(await read.Body?.transformToString(), 'a');
    const put = await refusal(
      fn.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'public/c', Body: 'c' })),
    );
    assert.equal(put.name, 'AccessDenied');
    assert.equal(put.status, 403);
    assert.match(put.message, /s3:PutObject on resource: "arn:aws:s3:::.*\/public\/c"/);
    const denied = await refusal(fn.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'private/b' })));
    assert.equal(
      denied.message,
      `User: ${SESSION} is not authorized to perform: s3:GetObject on resource: "arn:aws:s3:::${bucket}/private/b" with an explicit deny in a resource-based policy`,
    );
    const head = await refusal(fn.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'private/b' })));
    assert.equal(head.status, 403);
  });

  it("takes a presigned GET as its signer's request: what the role may read, its denials, refused once expired", async () => {
    const url = (key: string, options: { expiresIn: number; signingDate?: Date }) =>
      getSignedUrl(fn.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), options);
    // Anyone holding the URL, without credentials of their own (what `crawlstack cloud download` does).
    const allowed = await fetch(await url('public/a', { expiresIn: 60 }));
    assert.equal(allowed.status, 200);
    assert.equal(await allowed.text(), 'a');
    const denied = await fetch(await url('private/b', { expiresIn: 60 }));
    assert.equal(denied.status, 403);
    const text = await denied.text();
    assert.match(text, /<Code>AccessDenied<\/Code>/);
    assert.ok(
      text.includes(
        `User: ${SESSION} is not authorized to perform: s3:GetObject on resource: &quot;arn:aws:s3:::${bucket}/private/b&quot; with an explicit deny`,
      ),
      text,
    );
    const observed = ep.standIn?.iam.observed().Fn?.['s3:GetObject'];
    assert.ok(observed !== undefined && observed.denied >= 1, "counted as the role's call");
    const expired = await fetch(
      await url('public/a', { expiresIn: 60, signingDate: new Date(Date.now() - 120_000) }),
    );
    assert.equal(expired.status, 403);
    assert.match(await expired.text(), /<Code>AccessDenied<\/Code><Message>Request has expired<\/Message>/);
  });

  it("refuses SQS calls in SQS's words, batches as their single action", async () => {
    await fn.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    const denied = await refusal(
      fn.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: [{ Id: '1', MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'd' }],
        }),
      ),
    );
    assert.deepEqual(denied, {
      name: 'AccessDenied',
      status: 403,
      message: `User: ${SESSION} is not authorized to perform: sqs:sendmessage on resource: ${queueArn} because no identity-based policy allows the sqs:sendmessage action`,
    });
  });

  it('lets unregistered keys (tests, provisioning) do anything, and counts what each caller did', async () => {
    await ep.clients.doc.send(new PutCommand({ TableName: urls, Item: { pk: 'admin' } }));
    const observed = ep.standIn?.iam.observed().Fn ?? {};
    assert.ok((observed['dynamodb:UpdateItem']?.denied ?? 0) >= 1);
    assert.ok((observed['dynamodb:GetItem']?.allowed ?? 0) >= 1);
    assert.ok((observed['sqs:ReceiveMessage']?.allowed ?? 0) >= 1);
    assert.ok((observed['sqs:SendMessage']?.denied ?? 0) >= 1);
    assert.deepEqual(observed['dynamodb:UpdateItem']?.resources, [tableArn(urls)]);
    assert.deepEqual(observed['s3:GetObject']?.resources, [`arn:aws:s3:::${bucket}/*`]);
    assert.deepEqual(Object.keys(ep.standIn?.iam.observed() ?? {}), ['Fn']);
  });
});
