/**
 * The durable half of URL-seen on DynamoDB, kept by host (Mercator's URL-seen merged in batches,
 * on DynamoDB): each (crawl, host) has an append-only log of claim chunks in the crawl table,
 * partition `seen#<crawlId>#<host>`, sort key the chunk's number. One claim call (one page's new
 * links) writes the fingerprints it finds new for a host as ONE chunk: the owner once, then 8
 * bytes per fingerprint. That is one write unit per (page, host) with new links (up to about 110
 * new URLs), where a conditional write per URL cost one per URL.
 *
 * Race-free without an item per URL: chunk n is written only if it does not exist yet
 * (`attribute_not_exists`), by a claimer that has read chunks 0..n-1; so a chunk holds only
 * fingerprints absent from every earlier one, and each fingerprint is in exactly one chunk, with
 * the owner that claimed it. A claimer that finds chunk n written (another container appended
 * first) reads the log from n, strongly consistent, and tries again with what is still new. A
 * container keeps the logs it has read (bounded by fingerprints; a dropped log is read again), so
 * the common claim, by the container that holds the host's group, is one write and no read.
 *
 * The owner rule is the per-URL store's: a fingerprint claimed by `owner` answers `true` to the
 * same owner again (a redelivered page re-queues its children), `false` to any other.
 */
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { LRUCache } from 'lru-cache';
import { TABLE_KEYS } from '../../cloud/env.ts';
import type { ClaimGate, ClaimOptions, OwnedSeenStore } from '../../cloud/ports/cloud-ports.ts';
import type { Fingerprint } from '../../core/types.ts';
import { isConditionalCheckFailed } from './dynamo-batch.ts';
import { KEEP_FOREVER, type Retention } from './retention.ts';

/** The partition of a host's URL-seen log. */
export function seenLogPartition(crawlId: string, host: string): string {
  return `seen#${crawlId}#${host}`;
}

/** Fingerprints per chunk at most: 8 bytes each, far below DynamoDB's 400 KB item. */
const CHUNK_MAX = 30_000;
/** Appends tried before a claim gives up (each failure means another claimer appended first). */
const APPEND_ATTEMPTS = 50;
const SORT_WIDTH = 10;
const FINGERPRINT = /^[0-9a-f]{16}$/;

/** Options of {@link DynamoSeenLog}. */
export interface DynamoSeenLogOptions {
  /** Fingerprints of read logs a container keeps for this crawl. Default 300,000 (about 30 MB). */
  keptFingerprints?: number;
  /** Owners of recently answered fingerprints kept for {@link DynamoSeenLog.ownerOf}. Default 20,000. */
  ownersKept?: number;
  /** When chunks expire (the table's TTL). Default: never. */
  retention?: Retention;
}

/** One host's log as this container has read it: every fingerprint's owner, and the next chunk. */
interface HostLog {
  owners: Map<Fingerprint, string>;
  next: number;
}

export class DynamoSeenLog implements OwnedSeenStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #crawlId: string;
  readonly #logs: LRUCache<string, HostLog>;
  readonly #owners: LRUCache<Fingerprint, string>;
  readonly #retention: Retention;

  constructor(
    doc: DynamoDBDocumentClient,
    table: string,
    crawlId: string,
    options: DynamoSeenLogOptions = {},
  ) {
    this.#doc = doc;
    this.#table = table;
    this.#crawlId = crawlId;
    const kept = options.keptFingerprints ?? 300_000;
    this.#logs = new LRUCache({
      maxSize: kept,
      maxEntrySize: kept,
      sizeCalculation: (log) => log.owners.size + 1,
    });
    this.#owners = new LRUCache({ max: options.ownersKept ?? 20_000 });
    this.#retention = options.retention ?? KEEP_FOREVER;
  }

  /** Parked state lives on the parked URL's own item, which this store never reads. */
  isParked(): boolean {
    return false;
  }

  ownerOf(fp: Fingerprint): string | undefined {
    return this.#owners.get(fp);
  }

  async claim(fps: readonly Fingerprint[], owner: string, options: ClaimOptions = {}): Promise<boolean[]> {
    if (fps.length === 0) return [];
    const { hosts, gate } = options;
    if (hosts === undefined || hosts.length !== fps.length) {
      throw new Error(`URL-seen by host: ${fps.length} fingerprints need as many hosts`);
    }
    const byHost = new Map<string, Set<Fingerprint>>();
    for (let i = 0; i < fps.length; i++) {
      const host = hosts[i]!;
      const set = byHost.get(host) ?? new Set<Fingerprint>();
      byHost.set(host, set);
      set.add(fps[i]!);
    }
    const answers = new Map<Fingerprint, boolean>();
    const logs = new Map<string, HostLog>();
    for (const host of byHost.keys()) logs.set(host, await this.#log(host));
    const unclaimed = this.#answerKnown(byHost, logs, owner, answers);
    if (unclaimed.length > 0 && !(await passes(gate, unclaimed))) {
      return fps.map((fp) => answers.get(fp) === true);
    }
    for (const [host, set] of byHost) {
      const fresh = [...set].filter((fp) => !answers.has(fp));
      if (fresh.length > 0) await this.#append(host, logs.get(host)!, fresh, owner, answers);
    }
    return fps.map((fp) => answers.get(fp) === true);
  }

  /** Answers the fingerprints the read logs already hold; returns the rest. */
  #answerKnown(
    byHost: Map<string, Set<Fingerprint>>,
    logs: Map<string, HostLog>,
    owner: string,
    answers: Map<Fingerprint, boolean>,
  ): Fingerprint[] {
    const unclaimed: Fingerprint[] = [];
    for (const [host, set] of byHost) {
      const log = logs.get(host)!;
      for (const fp of set) {
        const found = log.owners.get(fp);
        if (found === undefined) unclaimed.push(fp);
        else this.#answer(fp, found, owner, answers);
      }
    }
    return unclaimed;
  }

  #answer(fp: Fingerprint, found: string, owner: string, answers: Map<Fingerprint, boolean>): void {
    answers.set(fp, found === owner);
    this.#owners.set(fp, found);
  }

  /** Claims `fresh` (absent from `log` as read) for `owner`, appending chunks until one lands. */
  async #append(
    host: string,
    log: HostLog,
    fresh: Fingerprint[],
    owner: string,
    answers: Map<Fingerprint, boolean>,
  ): Promise<void> {
    let left = fresh;
    for (let attempt = 0; left.length > 0; attempt++) {
      if (attempt === APPEND_ATTEMPTS) {
        throw new Error(`URL-seen log of ${host}: ${APPEND_ATTEMPTS} appends lost to other claimers`);
      }
      const piece = left.slice(0, CHUNK_MAX);
      if (await this.#put(host, log.next, piece, owner)) {
        for (const fp of piece) {
          log.owners.set(fp, owner);
          this.#answer(fp, owner, owner, answers);
        }
        log.next += 1;
        left = left.slice(piece.length);
      } else {
        await this.#readFrom(host, log);
        left = left.filter((fp) => {
          const found = log.owners.get(fp);
          if (found === undefined) return true;
          this.#answer(fp, found, owner, answers);
          return false;
        });
      }
    }
    // Re-set so the cache counts the log's new size.
    this.#logs.set(host, log);
  }

  /** Writes chunk `n` of the host's log; false when it exists already. */
  async #put(host: string, n: number, fps: readonly Fingerprint[], owner: string): Promise<boolean> {
    const expiresAt = this.#retention.expiresAt();
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            [TABLE_KEYS.partitionKey]: seenLogPartition(this.#crawlId, host),
            [TABLE_KEYS.sortKey]: sortKey(n),
            owner,
            fps: packFingerprints(fps),
            ...(expiresAt === undefined ? {} : { [TABLE_KEYS.expiresAt]: expiresAt }),
          },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** The host's log as this container knows it, read in full the first time. */
  async #log(host: string): Promise<HostLog> {
    const known = this.#logs.get(host);
    if (known !== undefined) return known;
    const log: HostLog = { owners: new Map(), next: 0 };
    await this.#readFrom(host, log);
    this.#logs.set(host, log);
    return log;
  }

  /** Reads the host's chunks from `log.next` on (strongly consistent) into `log`. */
  async #readFrom(host: string, log: HostLog): Promise<void> {
    let start: Record<string, unknown> | undefined;
    do {
      const response = await this.#doc.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: '#pk = :pk AND #sk >= :from',
          ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey, '#sk': TABLE_KEYS.sortKey },
          ExpressionAttributeValues: {
            ':pk': seenLogPartition(this.#crawlId, host),
            ':from': sortKey(log.next),
          },
          ConsistentRead: true,
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      for (const item of response.Items ?? []) {
        const n = Number(item[TABLE_KEYS.sortKey]);
        const owner = item.owner;
        if (!Number.isInteger(n) || typeof owner !== 'string' || !(item.fps instanceof Uint8Array)) {
          throw new Error(`URL-seen log of ${host}: chunk ${String(item[TABLE_KEYS.sortKey])} is malformed`);
        }
        for (const fp of unpackFingerprints(item.fps)) if (!log.owners.has(fp)) log.owners.set(fp, owner);
        log.next = Math.max(log.next, n + 1);
      }
      start = response.LastEvaluatedKey;
    } while (start !== undefined);
  }
}

async function passes(gate: ClaimGate | undefined, unclaimed: readonly Fingerprint[]): Promise<boolean> {
  return gate === undefined || (await gate(unclaimed));
}

function sortKey(n: number): string {
  return String(n).padStart(SORT_WIDTH, '0');
}

/** 16 hex digits each, as 8 bytes each. */
export function packFingerprints(fps: readonly Fingerprint[]): Uint8Array {
  for (const fp of fps) if (!FINGERPRINT.test(fp)) throw new Error(`not a URL fingerprint: ${fp}`);
  return Buffer.from(fps.join(''), 'hex');
}

export function unpackFingerprints(bytes: Uint8Array): Fingerprint[] {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  const fps: Fingerprint[] = [];
  for (let i = 0; i + 16 <= hex.length; i += 16) fps.push(hex.slice(i, i + 16));
  return fps;
}
