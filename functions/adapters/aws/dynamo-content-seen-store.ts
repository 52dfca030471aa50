/**
 * Content-seen (exact body hash) on DynamoDB: UrlTable item `<crawlId>#c#<sha256>` naming the URL
 * that registered the hash first.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { CheckedContentSeenStore } from '../../cloud/ports/cloud-ports.ts';
import { isConditionalCheckFailed } from './dynamo-batch.ts';
import { KEEP_FOREVER, type Retention, withExpiry } from './retention.ts';

/**
 * One conditional `PutItem` per hash (`attribute_not_exists(pk) OR url = :url`, so a repeat by
 * the same URL is not a duplicate of itself). When the condition fails, the first URL comes from
 * the error's `Item` (DynamoDB's `ReturnValuesOnConditionCheckFailure`), or from a consistent
 * `GetItem` where the endpoint does not return it (dynalite).
 */
export class DynamoContentSeenStore implements CheckedContentSeenStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #crawlId: string;
  readonly #retention: Retention;

  constructor(
    doc: DynamoDBDocumentClient,
    table: string,
    crawlId: string,
    options: { retention?: Retention } = {},
  ) {
    this.#doc = doc;
    this.#table = table;
    this.#crawlId = crawlId;
    this.#retention = options.retention ?? KEEP_FOREVER;
  }

  /** One eventually consistent GetItem (0.5 read units). */
  async find(hash: string): Promise<string | undefined> {
    const { Item } = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: `${this.#crawlId}#c#${hash}` } }),
    );
    return Item?.url as string | undefined;
  }

  async claim(hash: string, url: string): Promise<string | undefined> {
    const pk = `${this.#crawlId}#c#${hash}`;
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: withExpiry({ pk, url }, this.#retention),
          ConditionExpression: 'attribute_not_exists(pk) OR #u = :u',
          ExpressionAttributeNames: { '#u': 'url' },
          ExpressionAttributeValues: { ':u': url },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return undefined;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const returned = (error as { Item?: Record<string, { S?: string }> }).Item?.url?.S;
      if (returned !== undefined) return returned;
      const response = await this.#doc.send(
        new GetCommand({ TableName: this.#table, Key: { pk }, ConsistentRead: true }),
      );
      return (response.Item?.url as string | undefined) ?? '';
    }
  }
}
