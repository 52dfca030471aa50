import { type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { EnvName } from '../functions/cloud/env.ts';

// Each helper sets the environment variable that tells the function where a resource is AND
// grants exactly the API calls the function makes on it, so a function can never know a resource
// it may not use, nor hold a permission it does not need. Actions are listed by the caller (next
// to the function, with the adapter methods that make them); resources are the one table (and
// the named indexes), queue or bucket.

/** A DynamoDB API call (the IAM action without its `dynamodb:` prefix). */
export type TableAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'BatchWriteItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem';

/** An SQS API call a function makes itself (the event source's own calls come with `consume`). */
export type QueueAction = 'SendMessage' | 'ChangeMessageVisibility' | 'GetQueueAttributes';

/** An S3 API call on the page bucket. */
export type BucketAction = 'PutObject' | 'GetObject' | 'ListBucket';

/** Sets `envName` to the table's name and allows `actions` on it (and `Query` on `indexes`). */
export function useTable(
  fn: lambda.Function,
  envName: EnvName,
  table: dynamodb.ITable,
  actions: readonly TableAction[],
  options: { indexes?: readonly string[]; indexActions?: readonly TableAction[] } = {},
): void {
  fn.addEnvironment(envName, table.tableName);
  if (actions.length > 0) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: actions.map((a) => `dynamodb:${a}`), resources: [table.tableArn] }),
    );
  }
  const indexes = options.indexes ?? [];
  if (indexes.length > 0) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: (options.indexActions ?? ['Query']).map((a) => `dynamodb:${a}`),
        resources: indexes.map((index) => `${table.tableArn}/index/${index}`),
      }),
    );
  }
}

/**
 * Sets `envName` to the queue's URL and allows `actions` on it. A function fed by the queue gets
 * the event source's own calls (ReceiveMessage, DeleteMessage, ...) from the event source itself.
 */
export function useQueue(
  fn: lambda.Function,
  envName: EnvName,
  queue: sqs.IQueue,
  actions: readonly QueueAction[],
): void {
  fn.addEnvironment(envName, queue.queueUrl);
  if (actions.length > 0) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: actions.map((a) => `sqs:${a}`), resources: [queue.queueArn] }),
    );
  }
}

/** Sets `envName` to the bucket's name and allows `actions` (object actions on its objects). */
export function useBucket(
  fn: lambda.Function,
  envName: EnvName,
  bucket: s3.IBucket,
  actions: readonly BucketAction[],
): void {
  fn.addEnvironment(envName, bucket.bucketName);
  const objectActions = actions.filter((a) => a !== 'ListBucket');
  if (objectActions.length > 0) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: objectActions.map((a) => `s3:${a}`),
        resources: [bucket.arnForObjects('*')],
      }),
    );
    // cdk-nag (AwsSolutions-IAM5) flags the `/*`. Object actions need object ARNs, and the keys
    // are made per batch (`warc/<crawl>/<date>/<stamp>-<hash>.warc.gz`), so only a wildcard
    // names them; the actions stay the exact calls listed, on this one bucket.
    const bucketId = Stack.of(bucket).resolve((bucket.node.defaultChild as CfnElement).logicalId) as string;
    if (fn.role !== undefined) {
      Validations.of(fn.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
        reason: `Object keys are generated per batch, so ${objectActions.join(', ')} can only name them with a wildcard; the actions are exactly the calls the function makes, on this bucket only.`,
      });
    }
  }
  if (actions.includes('ListBucket')) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
    );
  }
}
