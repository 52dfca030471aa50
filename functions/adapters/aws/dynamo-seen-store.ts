/**
 * The durable half of URL-seen on DynamoDB: one UrlTable item per (crawl, URL fingerprint).
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LRUCache } from 'lru-cache';
import { TABLE_KEYS } from '../../cloud/env.ts';
import type { ClaimOptions, OwnedSeenStore } from '../../cloud/ports/cloud-ports.ts';
import type { Fingerprint } from '../../core/types.ts';
import { batchGetAll, forEachLimited, isConditionalCheckFailed } from './dynamo-batch.ts';
import { KEEP_FOREVER, type Retention } from './retention.ts';

/** Options of {@link DynamoSeenStore}. */
export interface DynamoSeenStoreOptions {
  /**
   * Read the fingerprints first (BatchGetItem, eventually consistent, 0.5 read unit each) and
   * put only those not found. A failed conditional put costs a full write unit ($0.625/M) where
   * a read costs $0.0625/M, so reading first pays as soon as more than ~10% of the cache misses
   * are URLs some other container already claimed. Default true.
   */
  readFirst?: boolean;
  /** Conditional puts in flight at once. Default 16. */
  concurrency?: number;
  /** Owners of recently answered fingerprints kept for {@link DynamoSeenStore.ownerOf}. Default 20,000. */
  ownersKept?: number;
  /** When claims expire (the table's TTL). Default: never. */
  retention?: Retention;
}

/**
 * Claims fingerprints with a conditional write (`UpdateItem` SET owner) on `pk = <crawlId>#<fp>`:
 * `attribute_not_exists(pk) OR owner = :owner`. Race-free: DynamoDB serializes conditional writes
 * to one item, so of two claimers of a new URL exactly one sees `true`. The owner rule lets a
 * redelivered parent page claim its children again (`true`) and so enqueue them again: a URL
 * claimed just before a crash still reaches the frontier (the FIFO deduplication id drops the
 * second copy if the first send did happen). Only `ConditionalCheckFailedException` means
 * "already seen"; every other error propagates.
 */
export class DynamoSeenStore implements OwnedSeenStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #crawlId: string;
  readonly #readFirst: boolean;
  readonly #concurrency: number;
  readonly #owners: LRUCache<Fingerprint, string>;
  readonly #parked: LRUCache<Fingerprint, true>;
  readonly #retention: Retention;

  constructor(
    doc: DynamoDBDocumentClient,
    table: string,
    crawlId: string,
    options: DynamoSeenStoreOptions = {},
  ) {
    this.#doc = doc;
    this.#table = table;
    this.#crawlId = crawlId;
    this.#readFirst = options.readFirst ?? true;
    this.#concurrency = options.concurrency ?? 16;
    this.#owners = new LRUCache({ max: options.ownersKept ?? 20_000 });
    this.#parked = new LRUCache({ max: options.ownersKept ?? 20_000 });
    this.#retention = options.retention ?? KEEP_FOREVER;
  }

  isParked(fp: Fingerprint): boolean {
    return this.#parked.has(fp);
  }

  /** The owner the store last reported for a fingerprint this instance was asked about, if known. */
  ownerOf(fp: Fingerprint): string | undefined {
    return this.#owners.get(fp);
  }

  /**
   * `owner` is any string (the worker passes a tag naming the claiming message). With `gate`,
   * the fingerprints found unclaimed are shown to it before the puts; when it answers false they
   * are not claimed (and answered `false`).
   */
  async claim(fps: readonly Fingerprint[], owner: string, options: ClaimOptions = {}): Promise<boolean[]> {
    const { gate } = options;
    if (fps.length === 0) return [];
    const unique = [...new Set(fps)];
    const answers = new Map<Fingerprint, boolean>();
    let toPut = unique;
    if (this.#readFirst) {
      const items = await batchGetAll(
        this.#doc,
        this.#table,
        unique.map((fp) => ({ pk: this.#key(fp) })),
        { projection: 'pk, #o, #p', names: { '#o': 'owner', '#p': TABLE_KEYS.parkedShard } },
      );
      const owners = new Map<string, unknown>();
      for (const item of items) {
        owners.set(item.pk as string, item.owner);
        const fp = (item.pk as string).slice(this.#crawlId.length + 1);
        if (item[TABLE_KEYS.parkedShard] !== undefined) this.#parked.set(fp, true);
        else this.#parked.delete(fp);
      }
      toPut = [];
      for (const fp of unique) {
        const key = this.#key(fp);
        const found = owners.get(key);
        if (typeof found === 'string') {
          answers.set(fp, found === owner);
          this.#owners.set(fp, found);
        } else if (owners.has(key)) {
          answers.set(fp, false);
        } else {
          toPut.push(fp);
        }
      }
    }
    if (toPut.length > 0 && gate !== undefined && !(await gate(toPut))) {
      return fps.map((fp) => answers.get(fp) === true);
    }
    await forEachLimited(toPut, this.#concurrency, async (fp) => {
      answers.set(fp, await this.#put(fp, owner));
    });
    return fps.map((fp) => answers.get(fp) === true);
  }

  async #put(fp: Fingerprint, owner: string): Promise<boolean> {
    try {
      // An update, not a put: a claim repeated by its owner (a redelivered page whose first
      // read missed the item) must keep what the item holds since (AOPIC's parked state).
      const expiresAt = this.#retention.expiresAt();
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: this.#key(fp) },
          UpdateExpression:
            expiresAt === undefined ? 'SET #o = :o' : 'SET #o = :o, #x = if_not_exists(#x, :x)',
          ConditionExpression: 'attribute_not_exists(pk) OR #o = :o',
          ExpressionAttributeNames: {
            '#o': 'owner',
            ...(expiresAt === undefined ? {} : { '#x': TABLE_KEYS.expiresAt }),
          },
          ExpressionAttributeValues: { ':o': owner, ...(expiresAt === undefined ? {} : { ':x': expiresAt }) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.#owners.set(fp, owner);
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // DynamoDB returns the item that failed the condition; endpoints that do not leave the owner unknown.
      const found = (error as { Item?: Record<string, { S?: string }> }).Item?.owner?.S;
      if (found !== undefined) this.#owners.set(fp, found);
      return false;
    }
  }

  #key(fp: Fingerprint): string {
    return `${this.#crawlId}#${fp}`;
  }
}
