/**
 * The archives' per-URL state on DynamoDB, in the crawl table: an entry per URL with partition
 * `arc#<archive>#<shard>` (16 shards by fingerprint, so that one archive's writes spread over
 * keys and a round is planned with 16 Queries) and sort key the URL's fingerprint; the rounds
 * item at `arc#<archive>` / `rounds`. An entry's states are gzipped JSON (a page's links are most
 * of it: gzip brings an entry of 100 links from ~8 KB to ~2 KB, a quarter of the write units).
 * Archive items carry no expiry: an archive outlives its crawls' queues.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../../cloud/env.ts';
import type { ArchiveEntry, ArchiveRounds } from '../../cloud/messages/archive-records.ts';
import type { ArchiveStore } from '../../cloud/ports/cloud-ports.ts';
import type { ArchivedPage } from '../../core/recrawl/archived-page.ts';
import { fingerprint } from '../../core/url/fingerprint.ts';
import { batchGetAll, batchWriteAll, type DocItem, isConditionalCheckFailed } from './dynamo-batch.ts';

/** Partitions of one archive's entries. */
export const ARCHIVE_SHARDS = 16;

/** The partition of a URL's entry (by its fingerprint's first hex digit). */
export function archivePartition(archive: string, fp: string): string {
  return `arc#${archive}#${Number.parseInt(fp.slice(0, 1), 16) % ARCHIVE_SHARDS}`;
}

const ROUNDS_SK = 'rounds';

export class DynamoArchiveStore implements ArchiveStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(doc: DynamoDBDocumentClient, table: string) {
    this.#doc = doc;
    this.#table = table;
  }

  async entries(archive: string, urls: readonly string[]): Promise<Map<string, ArchiveEntry>> {
    const keys = [...new Set(urls)].map((url) => key(archive, fingerprint(url)));
    const items = await batchGetAll(this.#doc, this.#table, keys, { consistent: true });
    const found = new Map<string, ArchiveEntry>();
    for (const item of items) {
      const entry = entryOf(item);
      if (entry !== undefined) found.set(entry.page.url, entry);
    }
    return found;
  }

  async put(archive: string, entries: readonly ArchiveEntry[]): Promise<void> {
    await batchWriteAll(
      this.#doc,
      this.#table,
      entries.map((entry) => ({
        put: {
          ...key(archive, fingerprint(entry.page.url)),
          round: entry.round,
          page: pack(entry.page),
          ...(entry.before === undefined ? {} : { before: pack(entry.before) }),
        },
      })),
    );
  }

  async pages(archive: string): Promise<ArchivedPage[]> {
    const shards = Array.from({ length: ARCHIVE_SHARDS }, (_, n) => `arc#${archive}#${n}`);
    const lists = await Promise.all(
      shards.map(async (pk) => {
        const pages: ArchivedPage[] = [];
        let start: Record<string, unknown> | undefined;
        do {
          const response = await this.#doc.send(
            new QueryCommand({
              TableName: this.#table,
              KeyConditionExpression: '#pk = :pk',
              ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey, '#page': 'page' },
              ExpressionAttributeValues: { ':pk': pk },
              ProjectionExpression: '#page',
              ...(start === undefined ? {} : { ExclusiveStartKey: start }),
            }),
          );
          for (const item of response.Items ?? []) {
            if (item.page instanceof Uint8Array) pages.push(unpack(item.page));
          }
          start = response.LastEvaluatedKey;
        } while (start !== undefined);
        return pages;
      }),
    );
    return lists.flat();
  }

  async rounds(archive: string): Promise<ArchiveRounds | undefined> {
    const [item] = await batchGetAll(
      this.#doc,
      this.#table,
      [{ [TABLE_KEYS.partitionKey]: `arc#${archive}`, [TABLE_KEYS.sortKey]: ROUNDS_SK }],
      { consistent: true },
    );
    if (item === undefined) return undefined;
    const rounds: ArchiveRounds = { rounds: Number(item.rounds ?? 0) };
    if (typeof item.last === 'string') rounds.last = item.last;
    return rounds;
  }

  async startRound(archive: string, round: number, crawlId: string): Promise<boolean> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { [TABLE_KEYS.partitionKey]: `arc#${archive}`, [TABLE_KEYS.sortKey]: ROUNDS_SK },
          UpdateExpression: 'SET rounds = :round, #last = :crawl',
          ConditionExpression:
            round === 1 ? 'attribute_not_exists(rounds) OR rounds = :before' : 'rounds = :before',
          ExpressionAttributeNames: { '#last': 'last' },
          ExpressionAttributeValues: { ':round': round, ':before': round - 1, ':crawl': crawlId },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}

function key(archive: string, fp: string): DocItem {
  return { [TABLE_KEYS.partitionKey]: archivePartition(archive, fp), [TABLE_KEYS.sortKey]: fp };
}

function pack(page: ArchivedPage): Uint8Array {
  return gzipSync(JSON.stringify(page));
}

function unpack(bytes: Uint8Array): ArchivedPage {
  return JSON.parse(gunzipSync(bytes).toString('utf8')) as ArchivedPage;
}

function entryOf(item: DocItem): ArchiveEntry | undefined {
  if (!(item.page instanceof Uint8Array) || typeof item.round !== 'string') return undefined;
  const entry: ArchiveEntry = { page: unpack(item.page), round: item.round };
  if (item.before instanceof Uint8Array) entry.before = unpack(item.before);
  return entry;
}
