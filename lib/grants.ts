import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { EnvName } from '../functions/env.ts';

// Each helper sets the environment variable that tells the function where a resource is AND
// grants the matching permission, so a function can never know a resource it may not use, nor
// hold a permission for a resource it cannot find. Grants come from CDK's own grant methods:
// least privilege, scoped to the one resource's ARN (and its indexes / objects).

/** What a function may do with a DynamoDB table. */
export type TableAccess = 'read' | 'readWrite';

/**
 * What a function may do with an SQS queue. `send` includes GetQueueAttributes (queue depth);
 * `inspect` is only that (GetQueueAttributes, GetQueueUrl): watching a queue's depth.
 */
export type QueueAccess = 'send' | 'consume' | 'sendAndConsume' | 'inspect';

/** What a function may do with an S3 bucket. `write` is PutObject (and multipart abort), not delete. */
export type BucketAccess = 'read' | 'write' | 'readWrite';

/** Sets `envName` to the table's name and grants `access` to its items. */
export function useTable(
  fn: lambda.Function,
  envName: EnvName,
  table: dynamodb.ITable,
  access: TableAccess,
): void {
  fn.addEnvironment(envName, table.tableName);
  if (access === 'read') table.grantReadData(fn);
  else table.grantReadWriteData(fn);
}

/** Sets `envName` to the queue's URL and grants `access` to its messages. */
export function useQueue(
  fn: lambda.Function,
  envName: EnvName,
  queue: sqs.IQueue,
  access: QueueAccess,
): void {
  fn.addEnvironment(envName, queue.queueUrl);
  if (access === 'inspect') {
    queue.grant(fn, 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl');
    return;
  }
  if (access !== 'consume') queue.grantSendMessages(fn);
  if (access !== 'send') queue.grantConsumeMessages(fn);
}

/** Sets `envName` to the bucket's name and grants `access` to its objects. */
export function useBucket(
  fn: lambda.Function,
  envName: EnvName,
  bucket: s3.IBucket,
  access: BucketAccess,
): void {
  fn.addEnvironment(envName, bucket.bucketName);
  if (access !== 'write') bucket.grantRead(fn);
  // grantPut, not grantWrite: grantWrite also allows DeleteObject, which no function needs.
  if (access !== 'read') bucket.grantPut(fn);
}
