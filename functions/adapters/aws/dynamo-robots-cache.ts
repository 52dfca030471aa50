/**
 * robots.txt cache on DynamoDB: CrawlTable item `robots#<origin>` of the crawl, with a warm
 * in-container map in front (entries are kept as objects, so their parsed rules stay memoized).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { LRUCache } from 'lru-cache';
import type { WarmRobotsCache } from '../../cloud/ports/cloud-ports.ts';
import type { Clock, RobotsEntry } from '../../core/ports.ts';
import { KEEP_FOREVER, type Retention, withExpiry } from './retention.ts';

/**
 * Largest gzipped body kept in an item. DynamoDB items are at most 400 KB, and RFC 9309 asks
 * crawlers to parse at least 500 KiB of robots.txt: text compresses 5-10x, so a real robots.txt
 * fits; one that does not (random bytes) keeps its complete lines that do (`truncated`).
 */
export const MAX_ROBOTS_GZIP_BYTES = 350_000;

/** The in-container map, shared by every crawl the container serves (keys include the crawl id). */
export type RobotsWarmCache = LRUCache<string, RobotsEntry>;

/** A warm map of `max` entries. */
export function createRobotsWarmCache(max = 2048): RobotsWarmCache {
  return new LRUCache<string, RobotsEntry>({ max });
}

/** The CrawlTable key of an origin's entry. */
export function robotsKey(crawlId: string, origin: string): { pk: string; sk: string } {
  return { pk: crawlId, sk: `robots#${origin}` };
}

/** The item for an entry (body gzipped into a Binary attribute, cut to whole lines if it must be). */
export function robotsItem(crawlId: string, origin: string, entry: RobotsEntry): Record<string, unknown> {
  const item: Record<string, unknown> = {
    ...robotsKey(crawlId, origin),
    status: entry.status,
    detail: entry.detail,
    fetchedAt: entry.fetchedAt,
    // Not `expiresAt`: that name is the table's TTL attribute, in epoch seconds.
    validUntil: entry.expiresAt,
  };
  if (entry.sitemapsQueued === true) item.sitemapsQueued = true;
  if (entry.neverAnswered === true) item.neverAnswered = true;
  if (entry.body !== undefined) {
    const { gz, truncated } = compressBody(entry.body);
    item.body = gz;
    if (truncated) item.truncated = true;
  }
  return item;
}

/** The entry an item stands for, or undefined when the item is not a robots entry. */
export function robotsEntryFromItem(item: Record<string, unknown> | undefined): RobotsEntry | undefined {
  if (item === undefined || typeof item.status !== 'string') return undefined;
  const entry: RobotsEntry = {
    status: item.status as RobotsEntry['status'],
    detail: String(item.detail ?? ''),
    fetchedAt: Number(item.fetchedAt ?? 0),
    expiresAt: Number(item.validUntil ?? 0),
  };
  if (item.sitemapsQueued === true) entry.sitemapsQueued = true;
  if (item.neverAnswered === true) entry.neverAnswered = true;
  if (item.body instanceof Uint8Array) entry.body = gunzipSync(item.body).toString('utf8');
  return entry;
}

function compressBody(body: string): { gz: Buffer; truncated: boolean } {
  let text = body;
  let gz = gzipSync(text, { level: 6 });
  let truncated = false;
  while (gz.length > MAX_ROBOTS_GZIP_BYTES && text.length > 0) {
    // Shrink in proportion, then back to the end of a line so no rule is cut in half.
    const target = Math.floor(text.length * (MAX_ROBOTS_GZIP_BYTES / gz.length) * 0.95);
    const newline = text.lastIndexOf('\n', target);
    text = newline > 0 ? text.slice(0, newline + 1) : '';
    gz = gzipSync(text, { level: 6 });
    truncated = true;
  }
  return { gz, truncated };
}

/**
 * RobotsCache for one crawl. `get` answers from the warm map while the entry is valid, then from
 * the table; `put` writes both. The worker can `prime` the map with items it read in its batch-wide BatchGetItem.
 */
export class DynamoRobotsCache implements WarmRobotsCache {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #crawlId: string;
  readonly #warm: RobotsWarmCache;
  readonly #clock: Clock;
  readonly #retention: Retention;

  constructor(
    doc: DynamoDBDocumentClient,
    table: string,
    crawlId: string,
    options: { warm?: RobotsWarmCache; clock?: Clock; retention?: Retention } = {},
  ) {
    this.#retention = options.retention ?? KEEP_FOREVER;
    this.#doc = doc;
    this.#table = table;
    this.#crawlId = crawlId;
    this.#warm = options.warm ?? createRobotsWarmCache();
    this.#clock = options.clock ?? { now: () => Date.now() };
  }

  /** True when the warm map holds the origin (the worker skips reading it again). */
  isWarm(origin: string): boolean {
    return this.#warm.has(this.#warmKey(origin));
  }

  /** Stores an entry read elsewhere in the warm map. */
  prime(origin: string, entry: RobotsEntry): void {
    this.#warm.set(this.#warmKey(origin), entry);
  }

  async get(origin: string): Promise<RobotsEntry | undefined> {
    const key = this.#warmKey(origin);
    const warm = this.#warm.get(key);
    // An expired warm entry may have been refreshed by another container: look before refetching.
    if (warm !== undefined && warm.expiresAt > this.#clock.now()) return warm;
    const response = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: robotsKey(this.#crawlId, origin) }),
    );
    const entry = robotsEntryFromItem(response.Item);
    if (entry !== undefined) this.#warm.set(key, entry);
    return entry ?? warm;
  }

  async put(origin: string, entry: RobotsEntry): Promise<void> {
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: withExpiry(robotsItem(this.#crawlId, origin, entry), this.#retention),
      }),
    );
    this.#warm.set(this.#warmKey(origin), entry);
  }

  #warmKey(origin: string): string {
    return `${this.#crawlId} ${origin}`;
  }
}
