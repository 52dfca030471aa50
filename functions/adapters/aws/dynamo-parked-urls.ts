/**
 * AOPIC's parked URLs on DynamoDB: an item per parked URL (UrlTable, `pk = <crawlId>#<fp>`; its
 * URL-seen claim is in its host's log, DynamoSeenLog), made by its first park, and a sparse global secondary index (`ParkedIndex`: partition `parked =
 * <crawlId>#<shard>`, sort `cashKey`) lists a crawl's parked URLs richest first. Sixteen shards
 * (the fingerprint's first hex digit) spread a big crawl's parked URLs over partitions.
 */
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../../cloud/env.ts';
import { decodeTask, encodeTask } from '../../cloud/messages/task-message.ts';
import { ADMISSION_CLAIM_MS, type ParkedUrl, type ParkedUrls } from '../../cloud/ports/cloud-ports.ts';
import type { CrawlTask, Fingerprint } from '../../core/types.ts';
import { forEachLimited, isConditionalCheckFailed } from './dynamo-batch.ts';
import { KEEP_FOREVER, type Retention } from './retention.ts';

const SHARDS = 16;
/** Set on a URL the scheduler admitted: it may not be parked again. */
const ADMITTED = 'admitted';
const CONCURRENCY = 16;

/** The parked index's partition of a URL: its crawl and the first hex digit of its fingerprint. */
export function parkedShard(crawlId: string, fp: Fingerprint): string {
  return `${crawlId}#${fp[0] ?? '0'}`;
}

export class DynamoParkedUrls implements ParkedUrls {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  readonly #now: () => number;
  readonly #retention: Retention;

  constructor(
    doc: DynamoDBDocumentClient,
    table: string,
    now: () => number = Date.now,
    retention: Retention = KEEP_FOREVER,
  ) {
    this.#doc = doc;
    this.#table = table;
    this.#now = now;
    this.#retention = retention;
  }

  async park(
    crawlId: string,
    entries: readonly { task: CrawlTask; owner: string; key: number }[],
  ): Promise<void> {
    const expiresAt = this.#retention.expiresAt();
    const expiry = expiresAt === undefined ? '' : ', #x = if_not_exists(#x, :x)';
    await forEachLimited(entries, CONCURRENCY, async ({ task, owner, key }) => {
      await this.#update(crawlId, task.fp, {
        // The URL's own item, made here: its URL-seen claim is in its host's log (DynamoSeenLog).
        UpdateExpression: `SET #o = :o, #p = :p, #k = :k, #t = :t${expiry}`,
        // Only by the page that claimed it, and never again once admitted: a page redelivered
        // after a crash parks its links a second time, and a URL already sent to the frontier
        // must not be sent twice.
        ConditionExpression: '(attribute_not_exists(#o) OR #o = :o) AND attribute_not_exists(#a)',
        ExpressionAttributeNames: {
          '#p': TABLE_KEYS.parkedShard,
          '#k': TABLE_KEYS.parkedKey,
          '#t': 'task',
          '#o': 'owner',
          '#a': ADMITTED,
          ...(expiresAt === undefined ? {} : { '#x': TABLE_KEYS.expiresAt }),
        },
        ExpressionAttributeValues: {
          ':p': parkedShard(crawlId, task.fp),
          ':k': key,
          ':t': encodeTask(task),
          ':o': owner,
          ...(expiresAt === undefined ? {} : { ':x': expiresAt }),
        },
      });
    });
  }

  async credit(crawlId: string, credits: ReadonlyMap<Fingerprint, number>): Promise<Fingerprint[]> {
    const gone: Fingerprint[] = [];
    await forEachLimited([...credits], CONCURRENCY, async ([fp, amount]) => {
      const updated = await this.#update(crawlId, fp, {
        UpdateExpression: 'ADD #k :a',
        ConditionExpression: 'attribute_exists(#p)',
        ExpressionAttributeNames: { '#k': TABLE_KEYS.parkedKey, '#p': TABLE_KEYS.parkedShard },
        ExpressionAttributeValues: { ':a': amount },
      });
      if (!updated) gone.push(fp);
    });
    return gone;
  }

  async richest(crawlId: string, limit: number): Promise<ParkedUrl[]> {
    if (limit <= 0) return [];
    const shards = Array.from({ length: SHARDS }, (_, i) => `${crawlId}#${i.toString(16)}`);
    const found: ParkedUrl[] = [];
    await Promise.all(
      shards.map(async (shard) => {
        let start: Record<string, unknown> | undefined;
        let left = limit;
        do {
          const response = await this.#doc.send(
            new QueryCommand({
              TableName: this.#table,
              IndexName: TABLE_KEYS.parkedIndex,
              KeyConditionExpression: '#p = :p',
              ExpressionAttributeNames: { '#p': TABLE_KEYS.parkedShard },
              ExpressionAttributeValues: { ':p': shard },
              ScanIndexForward: false,
              Limit: left,
              ...(start === undefined ? {} : { ExclusiveStartKey: start }),
            }),
          );
          for (const item of response.Items ?? []) {
            const decoded = typeof item.task === 'string' ? decodeTask(item.task) : undefined;
            const key = item[TABLE_KEYS.parkedKey];
            if (decoded?.ok && typeof key === 'number') found.push({ task: decoded.task, key });
            left -= 1;
          }
          start = response.LastEvaluatedKey;
        } while (start !== undefined && left > 0);
      }),
    );
    found.sort((a, b) => b.key - a.key);
    return found.slice(0, limit);
  }

  async unpark(crawlId: string, fps: readonly Fingerprint[]): Promise<number> {
    let unparked = 0;
    await forEachLimited(fps, CONCURRENCY, async (fp) => {
      const updated = await this.#update(crawlId, fp, {
        UpdateExpression: 'REMOVE #p, #k, #t, admitting, admittingAt SET #a = :t',
        ConditionExpression: 'attribute_exists(#p)',
        ExpressionAttributeNames: {
          '#p': TABLE_KEYS.parkedShard,
          '#k': TABLE_KEYS.parkedKey,
          '#t': 'task',
          '#a': ADMITTED,
        },
        ExpressionAttributeValues: { ':t': true },
      });
      if (updated) unparked += 1;
    });
    return unparked;
  }

  async claimAdmission(
    crawlId: string,
    fps: readonly Fingerprint[],
    admitter: string,
  ): Promise<Fingerprint[]> {
    const now = this.#now();
    const mine: Fingerprint[] = [];
    await forEachLimited([...new Set(fps)], CONCURRENCY, async (fp) => {
      const claimed = await this.#update(crawlId, fp, {
        UpdateExpression: 'SET #c = :me, #ca = :now',
        ConditionExpression:
          'attribute_exists(#p) AND (attribute_not_exists(#c) OR #ca < :lapsed OR #c = :me)',
        ExpressionAttributeNames: { '#c': 'admitting', '#ca': 'admittingAt', '#p': TABLE_KEYS.parkedShard },
        ExpressionAttributeValues: { ':me': admitter, ':now': now, ':lapsed': now - ADMISSION_CLAIM_MS },
      });
      if (claimed) mine.push(fp);
    });
    return mine;
  }

  /** One conditional UpdateItem; false when its condition failed. */
  async #update(
    crawlId: string,
    fp: Fingerprint,
    input: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues?: Record<string, unknown>;
    },
  ): Promise<boolean> {
    try {
      await this.#doc.send(
        new UpdateCommand({ TableName: this.#table, Key: { pk: `${crawlId}#${fp}` }, ...input }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
