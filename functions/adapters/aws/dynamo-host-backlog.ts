/**
 * The hosts' back queues on DynamoDB (see functions/cloud/frontier/back-queues.ts): items of the
 * crawl table with partition `bq#<crawlId>#<host>` (a key per host, so one host's writes stay far
 * below DynamoDB's 1,000 write units per second per key whatever the crawl's size) and sort key
 * `<richest task's cash, descending>#<hash of its tasks>`, so a Query reads a host's richest turns
 * first, strongly consistent. A turn is BACKLOG_TURN tasks in one item, gzipped (about 1 KB: one
 * write unit to add it, one to take it out, where an item per task cost two per task).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../../cloud/env.ts';
import { turnsOf } from '../../cloud/frontier/back-queues.ts';
import { decodeTask, encodeTask } from '../../cloud/messages/task-message.ts';
import type { BacklogTurn, HostBacklog } from '../../cloud/ports/cloud-ports.ts';
import type { CrawlTask } from '../../core/types.ts';
import { batchWriteAll } from './dynamo-batch.ts';
import { KEEP_FOREVER, type Retention } from './retention.ts';

/** The partition of a host's back queue. */
export function backlogPartition(crawlId: string, host: string): string {
  return `bq#${crawlId}#${host}`;
}

export class DynamoHostBacklog implements HostBacklog {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #retention: Retention;

  constructor(doc: DynamoDBDocumentClient, table: string, retention: Retention = KEEP_FOREVER) {
    this.#doc = doc;
    this.#table = table;
    this.#retention = retention;
  }

  async add(crawlId: string, host: string, tasks: readonly CrawlTask[]): Promise<void> {
    const expiresAt = this.#retention.expiresAt();
    await batchWriteAll(
      this.#doc,
      this.#table,
      turnsOf(tasks).map((turn) => ({
        put: {
          [TABLE_KEYS.partitionKey]: backlogPartition(crawlId, host),
          [TABLE_KEYS.sortKey]: turn.key,
          turn: gzipSync(JSON.stringify(turn.tasks.map(encodeTask))),
          ...(expiresAt === undefined ? {} : { [TABLE_KEYS.expiresAt]: expiresAt }),
        },
      })),
    );
  }

  async richest(crawlId: string, host: string, turns: number): Promise<BacklogTurn[]> {
    if (turns <= 0) return [];
    const response = await this.#doc.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey },
        ExpressionAttributeValues: { ':pk': backlogPartition(crawlId, host) },
        ConsistentRead: true,
        Limit: turns,
      }),
    );
    const out: BacklogTurn[] = [];
    for (const item of response.Items ?? []) {
      const body = item.turn;
      if (!(body instanceof Uint8Array)) continue;
      const tasks: CrawlTask[] = [];
      for (const encoded of JSON.parse(gunzipSync(body).toString('utf8')) as string[]) {
        const decoded = decodeTask(encoded);
        if (decoded.ok) tasks.push(decoded.task);
      }
      out.push({ key: String(item[TABLE_KEYS.sortKey]), tasks });
    }
    return out;
  }

  async remove(crawlId: string, host: string, turns: readonly BacklogTurn[]): Promise<void> {
    const keys = [...new Set(turns.map((t) => t.key))];
    await batchWriteAll(
      this.#doc,
      this.#table,
      keys.map((key) => ({
        delete: { [TABLE_KEYS.partitionKey]: backlogPartition(crawlId, host), [TABLE_KEYS.sortKey]: key },
      })),
    );
  }
}
