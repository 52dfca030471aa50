/**
 * The two backends every contract suite runs against: the embedded crawler's own ports over a
 * local SQLite state file (each call one crawl step, committed as the crawler commits a step), and an SQS/DynamoDB/S3 endpoint (the stand-in on a free port, or the one
 * `AWS_ENDPOINT_URL` names, e.g. real LocalStack) with tables, queues and buckets created here
 * under unique names, with the key schemas of the CDK stack.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { type AwsClients, createAwsClients } from '../../functions/adapters/aws/clients.ts';
import { CrawlDb } from '../../functions/adapters/local/crawl-db.ts';
import { PendingClaims, StepUnit } from '../../functions/adapters/local/step-unit.ts';
import { TABLE_KEYS } from '../../functions/cloud/env.ts';
import { parseCrawlConfig } from '../../functions/core/config.ts';
import { AopicLedger } from '../../functions/core/scheduling/aopic.ts';
import { AopicDispatchPolicy } from '../../functions/embedded/aopic-dispatch-policy.ts';
import { type Endpoint, startEndpoint } from '../../localstack/endpoint.ts';

/** Read once at load: the local Lambda runtime sets AWS_ENDPOINT_URL itself while it runs. */
export const EXTERNAL_ENDPOINT = process.env.AWS_ENDPOINT_URL?.replace(/\/+$/, '') || undefined;

let counter = 0;
const runId = `${process.pid.toString(36)}${randomBytes(2).toString('hex')}`;

/** A name unique to this process and call. */
export function uniqueName(stem: string): string {
  counter += 1;
  return `c${runId}${counter}-${stem}`;
}

/** A local SQLite state in a temporary folder, with the embedded crawler's step machinery. */
export interface LocalBackend {
  db: CrawlDb;
  dir: string;
  /**
   * Runs `work` as one crawl step: a StepUnit over the state (claims visible to the other running
   * steps at once), committed when `work` resolves with the same write the crawler commits.
   */
  step<T>(work: (unit: StepUnit) => Promise<T>): Promise<T>;
  close(): void;
}

/** Opens a fresh CrawlDb in a temporary folder, ordered as a default crawl orders its frontier. */
export function openLocalBackend(): LocalBackend {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-contract-'));
  const db = new CrawlDb(join(dir, 'state.sqlite'));
  const config = parseCrawlConfig({ seeds: ['http://contract.test/'] });
  if (!config.ok) throw new Error(config.problems.join('; '));
  db.prioritize = new AopicDispatchPolicy(config.config, new AopicLedger(), 0).prioritize;
  const pending = new PendingClaims();
  return {
    db,
    dir,
    async step(work) {
      const unit = new StepUnit(db, pending);
      try {
        const result = await work(unit);
        db.commit({ ...unit.write(), checkpoint: null });
        return result;
      } finally {
        unit.release();
      }
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An endpoint and helpers that create resources on it (removed by `close`). */
export interface AwsBackend {
  url: string;
  standIn?: Endpoint;
  clients: AwsClients;
  /** UrlTable's schema: `pk` (S), and the parked index. */
  urlTable(): Promise<string>;
  /** CrawlTable's schema: `pk` (S) + `sk` (S). */
  crawlTable(): Promise<string>;
  /** A FIFO queue with the frontier's settings; resolves its URL. */
  fifoQueue(visibilityTimeoutSeconds?: number): Promise<string>;
  /** A standard queue (the capture queue and its DLQ); resolves its URL. */
  standardQueue(visibilityTimeoutSeconds?: number): Promise<string>;
  bucket(): Promise<string>;
  close(): Promise<void>;
}

/** Starts the stand-in on port 0, or uses `AWS_ENDPOINT_URL`. */
export async function openAwsBackend(): Promise<AwsBackend> {
  const standIn = EXTERNAL_ENDPOINT === undefined ? await startEndpoint({ port: 0 }) : undefined;
  const url = standIn?.url ?? (EXTERNAL_ENDPOINT as string);
  const clients = createAwsClients({ AWS_ENDPOINT_URL: url, AWS_REGION: 'us-east-1' });
  const tables: string[] = [];
  const queues: string[] = [];

  async function table(
    stem: string,
    keys: KeySchemaElement[],
    indexes: Pick<CreateTableCommandInput, 'GlobalSecondaryIndexes' | 'AttributeDefinitions'> = {},
  ): Promise<string> {
    const name = uniqueName(stem);
    await clients.dynamo.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          ...keys.map((k) => ({ AttributeName: k.AttributeName as string, AttributeType: 'S' as const })),
          ...(indexes.AttributeDefinitions ?? []),
        ],
        KeySchema: keys,
        ...(indexes.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: indexes.GlobalSecondaryIndexes } : {}),
      }),
    );
    tables.push(name);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const described = await clients.dynamo.send(new DescribeTableCommand({ TableName: name }));
      if (described.Table?.TableStatus === 'ACTIVE') return name;
      if (Date.now() > deadline) throw new Error(`table ${name} not ACTIVE after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  return {
    url,
    ...(standIn === undefined ? {} : { standIn }),
    clients,
    // As lib/storage.ts declares it: the parked index of AOPIC's parked URLs.
    urlTable: () =>
      table('urls', [{ AttributeName: 'pk', KeyType: 'HASH' }], {
        AttributeDefinitions: [
          { AttributeName: TABLE_KEYS.parkedShard, AttributeType: 'S' },
          { AttributeName: TABLE_KEYS.parkedKey, AttributeType: 'N' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: TABLE_KEYS.parkedIndex,
            KeySchema: [
              { AttributeName: TABLE_KEYS.parkedShard, KeyType: 'HASH' },
              { AttributeName: TABLE_KEYS.parkedKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['task'] },
          },
        ],
      }),
    crawlTable: () =>
      table('crawls', [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ]),
    async fifoQueue(visibilityTimeoutSeconds = 30) {
      const response = await clients.sqs.send(
        new CreateQueueCommand({
          QueueName: `${uniqueName('frontier')}.fifo`,
          Attributes: {
            FifoQueue: 'true',
            ContentBasedDeduplication: 'false',
            DeduplicationScope: 'messageGroup',
            FifoThroughputLimit: 'perMessageGroupId',
            VisibilityTimeout: String(visibilityTimeoutSeconds),
          },
        }),
      );
      const queueUrl = response.QueueUrl as string;
      queues.push(queueUrl);
      return queueUrl;
    },
    async standardQueue(visibilityTimeoutSeconds = 30) {
      const response = await clients.sqs.send(
        new CreateQueueCommand({
          QueueName: uniqueName('captures'),
          Attributes: { VisibilityTimeout: String(visibilityTimeoutSeconds) },
        }),
      );
      const queueUrl = response.QueueUrl as string;
      queues.push(queueUrl);
      return queueUrl;
    },
    async bucket() {
      const name = uniqueName('pages').toLowerCase();
      await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async close() {
      if (standIn === undefined) {
        // On a shared endpoint, leave nothing behind (buckets are left: emptying them is noise).
        for (const name of tables)
          await clients.dynamo.send(new DeleteTableCommand({ TableName: name })).catch(() => {});
        for (const queueUrl of queues)
          await clients.sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => {});
      }
      clients.destroy();
      await standIn?.close();
    },
  };
}
