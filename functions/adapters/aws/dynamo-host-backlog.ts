/**
 * The hosts' back queues on DynamoDB (see functions/cloud/frontier/back-queues.ts): items of the
 * crawl table with partition `bq#<crawlId>#<host>` (a key per host, so one host's writes stay far
 * below DynamoDB's 1,000 write units per second per key whatever the crawl's size) and sort key
 * `<cash, descending>#<fp>`, so a Query reads a host's richest tasks first, strongly consistent.
 * A task is one small item: one write unit to add it, one to take it out.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../../cloud/env.ts';
import { decodeTask, encodeTask } from '../../cloud/messages/task-message.ts';
import type { HostBacklog } from '../../cloud/ports/cloud-ports.ts';
import type { CrawlTask } from '../../core/types.ts';
import { batchWriteAll } from './dynamo-batch.ts';
import type { Retention } from './retention.ts';

/** The partition of a host's back queue. */
export function backlogPartition(crawlId: string, host: string): string {
  return `bq#${crawlId}#${host}`;
}

/**
 * A string that sorts in the opposite order of the number (bytewise, as DynamoDB compares
 * strings): the IEEE 754 bits made order-preserving (sign bit flipped for positives, every bit
 * for negatives), then inverted.
 */
export function descendingKey(value: number): string {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(value === 0 ? 0 : value);
  const negative = (bytes[0]! & 0x80) !== 0;
  for (let i = 0; i < 8; i++) {
    const ascending = negative ? bytes[i]! ^ 0xff : i === 0 ? bytes[i]! ^ 0x80 : bytes[i]!;
    bytes[i] = ascending ^ 0xff;
  }
  return bytes.toString('hex');
}

function sortKey(task: CrawlTask): string {
  return `${descendingKey(task.cash)}#${task.fp}`;
}

/**
 * One task per sort key, the last given winning (as a second put would): one BatchWriteItem
 * refuses a key given twice ("Provided list of item keys contains duplicates").
 */
function oncePerKey(tasks: readonly CrawlTask[]): Map<string, CrawlTask> {
  const out = new Map<string, CrawlTask>();
  for (const task of tasks) out.set(sortKey(task), task);
  return out;
}

export class DynamoHostBacklog implements HostBacklog {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #retention: Retention;

  constructor(doc: DynamoDBDocumentClient, table: string, retention: Retention) {
    this.#doc = doc;
    this.#table = table;
    this.#retention = retention;
  }

  async add(crawlId: string, host: string, tasks: readonly CrawlTask[]): Promise<void> {
    const expiresAt = this.#retention.expiresAt();
    await batchWriteAll(
      this.#doc,
      this.#table,
      [...oncePerKey(tasks)].map(([key, task]) => ({
        put: {
          [TABLE_KEYS.partitionKey]: backlogPartition(crawlId, host),
          [TABLE_KEYS.sortKey]: key,
          task: encodeTask(task),
          ...(expiresAt === undefined ? {} : { [TABLE_KEYS.expiresAt]: expiresAt }),
        },
      })),
    );
  }

  async richest(crawlId: string, host: string, limit: number): Promise<CrawlTask[]> {
    if (limit <= 0) return [];
    const response = await this.#doc.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey },
        ExpressionAttributeValues: { ':pk': backlogPartition(crawlId, host) },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    const tasks: CrawlTask[] = [];
    for (const item of response.Items ?? []) {
      const decoded = typeof item.task === 'string' ? decodeTask(item.task) : undefined;
      if (decoded?.ok) tasks.push(decoded.task);
    }
    return tasks;
  }

  async remove(crawlId: string, host: string, tasks: readonly CrawlTask[]): Promise<void> {
    await batchWriteAll(
      this.#doc,
      this.#table,
      [...oncePerKey(tasks).keys()].map((key) => ({
        delete: {
          [TABLE_KEYS.partitionKey]: backlogPartition(crawlId, host),
          [TABLE_KEYS.sortKey]: key,
        },
      })),
    );
  }
}
