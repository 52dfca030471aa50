import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ArnNaming,
  deleteObjectsKeys,
  dynamoAuthorizations,
  type IamAuthorization,
  s3Authorizations,
  sqsAuthorizations,
} from '../../../localstack/iam-actions.ts';
import { IamEnforcer } from '../../../localstack/iam-enforcer.ts';

const TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table';
const naming: ArnNaming = {
  table: (name) => `${TABLE}/${name}`,
  queue: (urlOrName) => `arn:aws:sqs:us-east-1:000000000000:${urlOrName.split('/').pop()}`,
  partitionKey: (table) => (table === 'urls' ? 'pk' : undefined),
};
const QUEUE_URL = 'http://127.0.0.1:4566/000000000000/frontier.fifo';
const QUEUE = 'arn:aws:sqs:us-east-1:000000000000:frontier.fifo';
const HOST = { host: '127.0.0.1:4566' };

const pairs = (list: IamAuthorization[]) => list.map((a) => `${a.action} ${a.resource}`);

/**
 * Every SDK operation the functions call (functions/adapters/aws, the event source mapping and
 * the provisioning aside), with the request the SDK sends, and the permissions AWS requires.
 */
const DYNAMO_CASES: [string, unknown, string[]][] = [
  ['GetItem', { TableName: 'urls', Key: { pk: { S: 'a' } } }, [`dynamodb:GetItem ${TABLE}/urls`]],
  ['PutItem', { TableName: 'urls', Item: { pk: { S: 'a' } } }, [`dynamodb:PutItem ${TABLE}/urls`]],
  ['UpdateItem', { TableName: 'urls', Key: { pk: { S: 'a' } } }, [`dynamodb:UpdateItem ${TABLE}/urls`]],
  ['DeleteItem', { TableName: 'crawls', Key: { pk: { S: 'a' } } }, [`dynamodb:DeleteItem ${TABLE}/crawls`]],
  ['Query', { TableName: 'crawls' }, [`dynamodb:Query ${TABLE}/crawls`]],
  ['Query', { TableName: 'urls', IndexName: 'byCrawl' }, [`dynamodb:Query ${TABLE}/urls/index/byCrawl`]],
  ['Scan', { TableName: 'urls', IndexName: 'byCrawl' }, [`dynamodb:Scan ${TABLE}/urls/index/byCrawl`]],
  [
    'BatchGetItem',
    { RequestItems: { urls: { Keys: [{ pk: { S: 'a' } }] }, crawls: { Keys: [] } } },
    [`dynamodb:BatchGetItem ${TABLE}/urls`, `dynamodb:BatchGetItem ${TABLE}/crawls`],
  ],
  [
    'BatchWriteItem',
    {
      RequestItems: {
        urls: [{ PutRequest: { Item: { pk: { S: 'a' } } } }],
        crawls: [{ DeleteRequest: { Key: { pk: { S: 'b' } } } }],
      },
    },
    [`dynamodb:BatchWriteItem ${TABLE}/urls`, `dynamodb:BatchWriteItem ${TABLE}/crawls`],
  ],
  [
    'TransactWriteItems',
    {
      TransactItems: [
        { Put: { TableName: 'urls', Item: { pk: { S: 'a' } } } },
        { Update: { TableName: 'crawls', Key: { pk: { S: 'c' } } } },
        { ConditionCheck: { TableName: 'crawls', Key: { pk: { S: 'c' } } } },
        { Delete: { TableName: 'urls', Key: { pk: { S: 'd' } } } },
      ],
    },
    [
      `dynamodb:PutItem ${TABLE}/urls`,
      `dynamodb:UpdateItem ${TABLE}/crawls`,
      `dynamodb:ConditionCheckItem ${TABLE}/crawls`,
      `dynamodb:DeleteItem ${TABLE}/urls`,
    ],
  ],
  [
    'TransactGetItems',
    { TransactItems: [{ Get: { TableName: 'urls', Key: { pk: { S: 'a' } } } }] },
    [`dynamodb:GetItem ${TABLE}/urls`],
  ],
  ['DescribeTable', { TableName: 'urls' }, [`dynamodb:DescribeTable ${TABLE}/urls`]],
  ['ListTables', {}, ['dynamodb:ListTables *']],
];

const SQS_CASES: [string, unknown, string[]][] = [
  ['SendMessage', { QueueUrl: QUEUE_URL }, [`sqs:SendMessage ${QUEUE}`]],
  ['SendMessageBatch', { QueueUrl: QUEUE_URL, Entries: [] }, [`sqs:SendMessage ${QUEUE}`]],
  ['ReceiveMessage', { QueueUrl: QUEUE_URL }, [`sqs:ReceiveMessage ${QUEUE}`]],
  ['DeleteMessage', { QueueUrl: QUEUE_URL }, [`sqs:DeleteMessage ${QUEUE}`]],
  ['DeleteMessageBatch', { QueueUrl: QUEUE_URL }, [`sqs:DeleteMessage ${QUEUE}`]],
  ['ChangeMessageVisibility', { QueueUrl: QUEUE_URL }, [`sqs:ChangeMessageVisibility ${QUEUE}`]],
  ['ChangeMessageVisibilityBatch', { QueueUrl: QUEUE_URL }, [`sqs:ChangeMessageVisibility ${QUEUE}`]],
  ['GetQueueAttributes', { QueueUrl: QUEUE_URL }, [`sqs:GetQueueAttributes ${QUEUE}`]],
  ['GetQueueUrl', { QueueName: 'frontier.fifo' }, [`sqs:GetQueueUrl ${QUEUE}`]],
  ['ListQueues', {}, ['sqs:ListQueues *']],
];

// [method, URL as the SDK sends it path-style, extra headers, expected]
const S3_CASES: [string, string, Record<string, string>, string[]][] = [
  ['PUT', '/pages/c1/w1.warc.gz?x-id=PutObject', {}, ['s3:PutObject arn:aws:s3:::pages/c1/w1.warc.gz']],
  ['GET', '/pages/c1/w1.warc.gz?x-id=GetObject', {}, ['s3:GetObject arn:aws:s3:::pages/c1/w1.warc.gz']],
  ['HEAD', '/pages/c1/w1.warc.gz', {}, ['s3:GetObject arn:aws:s3:::pages/c1/w1.warc.gz']],
  ['GET', '/pages?list-type=2&prefix=c1%2F', {}, ['s3:ListBucket arn:aws:s3:::pages']],
  ['HEAD', '/pages', {}, ['s3:ListBucket arn:aws:s3:::pages']],
  ['DELETE', '/pages/a%20b?x-id=DeleteObject', {}, ['s3:DeleteObject arn:aws:s3:::pages/a b']],
  ['POST', '/pages/big?uploads', {}, ['s3:PutObject arn:aws:s3:::pages/big']],
  ['PUT', '/pages/big?partNumber=1&uploadId=u1&x-id=UploadPart', {}, ['s3:PutObject arn:aws:s3:::pages/big']],
  ['POST', '/pages/big?uploadId=u1', {}, ['s3:PutObject arn:aws:s3:::pages/big']],
  [
    'DELETE',
    '/pages/big?uploadId=u1&x-id=AbortMultipartUpload',
    {},
    ['s3:AbortMultipartUpload arn:aws:s3:::pages/big'],
  ],
  [
    'PUT',
    '/pages/copy?x-id=CopyObject',
    { 'x-amz-copy-source': '/pages/orig' },
    ['s3:PutObject arn:aws:s3:::pages/copy', 's3:GetObject arn:aws:s3:::pages/orig'],
  ],
  ['GET', '/', {}, ['s3:ListAllMyBuckets *']],
  ['PUT', '/pages', {}, ['s3:CreateBucket arn:aws:s3:::pages']],
  ['GET', '/pages?lifecycle', {}, ['s3:GetLifecycleConfiguration arn:aws:s3:::pages']],
];

describe('IAM actions of AWS calls', () => {
  it('maps DynamoDB operations to their actions per table and index', () => {
    for (const [operation, body, expected] of DYNAMO_CASES) {
      assert.deepEqual(pairs(dynamoAuthorizations(operation, body, naming)), expected, operation);
    }
  });

  it('maps SQS operations, batches to their single-message action', () => {
    for (const [operation, body, expected] of SQS_CASES) {
      assert.deepEqual(pairs(sqsAuthorizations(operation, body, naming)), expected, operation);
    }
  });

  it('maps S3 requests to bucket and object actions', () => {
    for (const [method, url, headers, expected] of S3_CASES) {
      assert.deepEqual(
        pairs(s3Authorizations(method, url, { ...HOST, ...headers })),
        expected,
        `${method} ${url}`,
      );
    }
    const keys = deleteObjectsKeys(
      '<Delete><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key></Object></Delete>',
    );
    assert.deepEqual(keys, ['a&b', 'c']);
    assert.deepEqual(pairs(s3Authorizations('POST', '/pages?delete', HOST, keys)), [
      's3:DeleteObject arn:aws:s3:::pages/a&b',
      's3:DeleteObject arn:aws:s3:::pages/c',
    ]);
  });

  it('sets the condition keys of the request', () => {
    const [list] = s3Authorizations('GET', '/pages?list-type=2&prefix=c1%2F&delimiter=%2F&max-keys=5', HOST);
    assert.deepEqual(list?.context, { 's3:prefix': 'c1/', 's3:delimiter': '/', 's3:max-keys': '5' });
    const [put] = dynamoAuthorizations(
      'UpdateItem',
      { TableName: 'urls', Key: { pk: { S: 'c1#u' } }, ReturnValues: 'ALL_NEW' },
      naming,
    );
    assert.deepEqual(put?.context, { 'dynamodb:ReturnValues': 'ALL_NEW', 'dynamodb:LeadingKeys': ['c1#u'] });
    const [batch] = dynamoAuthorizations(
      'BatchWriteItem',
      {
        RequestItems: {
          urls: [
            { PutRequest: { Item: { pk: { S: 'x' } } } },
            { DeleteRequest: { Key: { pk: { S: 'y' } } } },
          ],
        },
      },
      naming,
    );
    assert.deepEqual(batch?.context, { 'dynamodb:LeadingKeys': ['x', 'y'] });
  });

  it('names only actions and resource types IAM knows (the evaluator validates each)', async () => {
    const enforcer = new IamEnforcer();
    enforcer.register('ASIAALL', {
      name: 'all',
      sessionArn: 'arn:aws:sts::000000000000:assumed-role/all/fn',
      roleArn: 'arn:aws:iam::000000000000:role/all',
      accountId: '000000000000',
      policies: [
        {
          name: 'all',
          document: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] },
        },
      ],
    });
    const all = [
      ...DYNAMO_CASES.flatMap(([op, body]) => dynamoAuthorizations(op, body, naming)),
      ...SQS_CASES.flatMap(([op, body]) => sqsAuthorizations(op, body, naming)),
      ...S3_CASES.flatMap(([method, url, headers]) => s3Authorizations(method, url, { ...HOST, ...headers })),
    ];
    for (const authorization of all) {
      const denial = await enforcer.check('ASIAALL', [authorization], 'us-east-1');
      assert.equal(
        denial,
        undefined,
        `${authorization.action} on ${authorization.resource}: ${denial?.message}`,
      );
    }
  });
});
