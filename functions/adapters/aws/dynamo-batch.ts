/**
 * BatchGetItem and BatchWriteItem over any number of keys or items: chunked to DynamoDB's limits
 * (100 keys, 25 writes), with unprocessed keys and items sent again with a short backoff. Throws
 * `DynamoBatchIncompleteError` when DynamoDB keeps leaving work unprocessed.
 */
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A DynamoDB item or key as the document client takes it. */
export type DocItem = Record<string, unknown>;

const GET_CHUNK = 100;
const WRITE_CHUNK = 25;
const MAX_ROUNDS = 8;

/** DynamoDB kept leaving keys or items unprocessed (throttling); the caller's operation did not complete. */
export class DynamoBatchIncompleteError extends Error {
  readonly code = 'DYNAMO_BATCH_INCOMPLETE' as const;
  /** Throttling passes: retrying later can help. */
  readonly retryable = true;
  constructor(operation: string, left: number) {
    super(`${operation}: ${left} keys/items still unprocessed after ${MAX_ROUNDS} rounds`);
    this.name = 'DynamoBatchIncompleteError';
  }
}

function backoff(round: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** round)));
}

/** Options of {@link batchGetAll}. */
export interface BatchGetOptions {
  consistent?: boolean;
  projection?: string;
  names?: Record<string, string>;
}

/** Reads every key (in chunks of 100); resolves the items found, in no particular order. */
export async function batchGetAll(
  doc: DynamoDBDocumentClient,
  table: string,
  keys: readonly DocItem[],
  options: BatchGetOptions = {},
): Promise<DocItem[]> {
  const out: DocItem[] = [];
  const chunks: DocItem[][] = [];
  for (let i = 0; i < keys.length; i += GET_CHUNK) chunks.push(keys.slice(i, i + GET_CHUNK));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: DocItem[] = chunk;
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_ROUNDS) throw new DynamoBatchIncompleteError('BatchGetItem', pending.length);
        if (round > 0) await backoff(round);
        const response = await doc.send(
          new BatchGetCommand({
            RequestItems: {
              [table]: {
                Keys: pending,
                ...(options.consistent ? { ConsistentRead: true } : {}),
                ...(options.projection === undefined ? {} : { ProjectionExpression: options.projection }),
                ...(options.names === undefined ? {} : { ExpressionAttributeNames: options.names }),
              },
            },
          }),
        );
        out.push(...((response.Responses?.[table] ?? []) as DocItem[]));
        pending = (response.UnprocessedKeys?.[table]?.Keys ?? []) as DocItem[];
      }
    }),
  );
  return out;
}

/** One write of a BatchWriteItem call: an item to put, or the key of one to delete. */
export type BatchWrite = { put: DocItem } | { delete: DocItem };

/** Writes every put and delete (in chunks of 25, unconditionally: BatchWriteItem has no conditions). */
export async function batchWriteAll(
  doc: DynamoDBDocumentClient,
  table: string,
  writes: readonly BatchWrite[],
): Promise<void> {
  const chunks: BatchWrite[][] = [];
  for (let i = 0; i < writes.length; i += WRITE_CHUNK) chunks.push(writes.slice(i, i + WRITE_CHUNK));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: Record<string, unknown>[] = chunk.map((w) =>
        'put' in w ? { PutRequest: { Item: w.put } } : { DeleteRequest: { Key: w.delete } },
      );
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_ROUNDS) throw new DynamoBatchIncompleteError('BatchWriteItem', pending.length);
        if (round > 0) await backoff(round);
        const response = await doc.send(
          new BatchWriteCommand({ RequestItems: { [table]: pending as never } }),
        );
        pending = (response.UnprocessedItems?.[table] ?? []) as Record<string, unknown>[];
      }
    }),
  );
}

/** Runs `work` over `items` with at most `limit` calls in flight. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const runners: Promise<void>[] = [];
  for (let r = 0; r < Math.min(limit, items.length); r++) {
    runners.push(
      (async () => {
        while (next < items.length) {
          const i = next++;
          await work(items[i]!, i);
        }
      })(),
    );
  }
  await Promise.all(runners);
}

/** True for the SDK error DynamoDB returns when a condition expression fails. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}
