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
 * A host's log is bounded (`logLimit`, 50,000 fingerprints): the claim that would pass it appends
 * a closing chunk instead, and from then on the host's new URLs are claimed one item each
 * (`seenurl#<crawlId>#<fp>`: a read, then a conditional write with the owner), as before the
 * logs. The closed log stays the record of the host's first URLs, complete for whoever read its
 * closing chunk, so a container never holds more than the bound of one host in memory and never
 * reads a million-URL log at every claim. Race-free across the switch: nothing is appended after
 * the closing chunk (an append at its number fails; the reread finds it), and every chunk before
 * it existed when it was written.
 *
 * The owner rule is the per-URL store's: a fingerprint claimed by `owner` answers `true` to the
 * same owner again (a redelivered page re-queues its children), `false` to any other.
 */
import { type DynamoDBDocumentClient, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LRUCache } from 'lru-cache';
import { TABLE_KEYS } from '../../cloud/env.ts';
import type { ClaimGate, ClaimOptions, OwnedSeenStore } from '../../cloud/ports/cloud-ports.ts';
import type { Fingerprint } from '../../core/types.ts';
import { batchGetAll, forEachLimited, isConditionalCheckFailed } from './dynamo-batch.ts';
import { KEEP_FOREVER, type Retention } from './retention.ts';

/** The partition of a host's URL-seen log. */
export function seenLogPartition(crawlId: string, host: string): string {
  return `seen#${crawlId}#${host}`;
}

/** The item of a URL claimed on its own, once its host's log is closed. */
export function seenUrlKey(crawlId: string, fp: Fingerprint): Record<string, string> {
  return { [TABLE_KEYS.partitionKey]: `seenurl#${crawlId}#${fp}`, [TABLE_KEYS.sortKey]: 'seen' };
}

/** Fingerprints per chunk at most: 8 bytes each, far below DynamoDB's 400 KB item. */
const CHUNK_MAX = 30_000;
/** Appends tried before a claim gives up (each failure means another claimer appended first). */
const APPEND_ATTEMPTS = 50;
const SORT_WIDTH = 10;
const FINGERPRINT = /^[0-9a-f]{16}$/;

/** Options of {@link DynamoSeenLog}. */
export interface DynamoSeenLogOptions {
  /** Fingerprints a host's log holds before it closes (see above). Default 50,000 (about 4 MB kept). */
  logLimit?: number;
  /**
   * The read logs this store keeps: a container shares one {@link SeenLogCache} between its
   * crawls, so their logs together stay within one bound. Default: one of its own, of 110,000
   * fingerprints.
   */
  logs?: SeenLogCache;
  /** Owners of recently answered fingerprints kept for {@link DynamoSeenLog.ownerOf}. Default 20,000. */
  ownersKept?: number;
  /** When chunks expire (the table's TTL). Default: never. */
  retention?: Retention;
}

/** One host's log as this container has read it: every fingerprint's owner, the next chunk, closed or not. */
interface HostLog {
  owners: Map<Fingerprint, string>;
  next: number;
  closed: boolean;
}

/** Read logs by `<crawlId> <host>`, bounded by the fingerprints they hold. */
export type SeenLogCache = LRUCache<string, HostLog>;

/**
 * A cache of read logs holding at most `fingerprints` of them (about 73 bytes each in V8: a
 * 16-character key and a shared owner; measured 72.5), whole hosts dropped least recently used
 * first. A dropped log is read again when it is needed.
 */
export function seenLogCache(fingerprints: number): SeenLogCache {
  return new LRUCache({
    maxSize: fingerprints,
    maxEntrySize: fingerprints,
    sizeCalculation: (log) => log.owners.size + 1,
  });
}

/** Conditional writes of single-URL claims in flight at once. */
const CONCURRENCY = 16;

export class DynamoSeenLog implements OwnedSeenStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #crawlId: string;
  readonly #logs: LRUCache<string, HostLog>;
  readonly #owners: LRUCache<Fingerprint, string>;
  readonly #retention: Retention;
  readonly #logLimit: number;

  constructor(
    doc: DynamoDBDocumentClient,
    table: string,
    crawlId: string,
    options: DynamoSeenLogOptions = {},
  ) {
    this.#doc = doc;
    this.#table = table;
    this.#crawlId = crawlId;
    this.#logs = options.logs ?? seenLogCache(110_000);
    this.#owners = new LRUCache({ max: options.ownersKept ?? 20_000 });
    this.#retention = options.retention ?? KEEP_FOREVER;
    this.#logLimit = options.logLimit ?? 50_000;
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
    await Promise.all([...byHost.keys()].map(async (host) => logs.set(host, await this.#log(host))));
    let unclaimed = this.#answerKnown(byHost, logs, owner, answers);
    // Hosts whose logs are closed: their URLs' own items are read before the gate, as the logs were.
    const closed = new Set([...byHost.keys()].filter((host) => logs.get(host)!.closed));
    if (closed.size > 0) {
      const inClosed = [...closed].flatMap((host) => [...byHost.get(host)!].filter((fp) => !answers.has(fp)));
      await this.#readEach(inClosed, owner, answers);
      unclaimed = unclaimed.filter((fp) => !answers.has(fp));
    }
    if (unclaimed.length > 0 && !(await passes(gate, unclaimed))) {
      return fps.map((fp) => answers.get(fp) === true);
    }
    for (const [host, set] of byHost) {
      const fresh = [...set].filter((fp) => !answers.has(fp));
      if (fresh.length === 0) continue;
      if (closed.has(host)) await this.#putEach(fresh, owner, answers);
      else await this.#append(host, logs.get(host)!, fresh, owner, answers);
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
    return [...byHost].flatMap(([host, set]) => this.#unknown(logs.get(host)!, [...set], owner, answers));
  }

  #answer(fp: Fingerprint, found: string, owner: string, answers: Map<Fingerprint, boolean>): void {
    answers.set(fp, found === owner);
    this.#owners.set(fp, found);
  }

  /**
   * Claims `fresh` (absent from `log` as read) for `owner`: appended to the log until it lands, or,
   * once the log is closed (by this claim or another), one item per URL.
   */
  async #append(
    host: string,
    log: HostLog,
    fresh: Fingerprint[],
    owner: string,
    answers: Map<Fingerprint, boolean>,
  ): Promise<void> {
    let left = fresh;
    for (let attempt = 0; left.length > 0 && !log.closed; attempt++) {
      // Another claim of this container may have appended some of them since this one looked
      // (it waited at its gate, or on other hosts' appends): the log as held now answers those.
      left = this.#unknown(log, left, owner, answers);
      if (left.length === 0) break;
      if (attempt === APPEND_ATTEMPTS) {
        throw new Error(`URL-seen log of ${host}: ${APPEND_ATTEMPTS} appends lost to other claimers`);
      }
      const piece = left.slice(0, CHUNK_MAX);
      const closing = log.owners.size + piece.length > this.#logLimit;
      const n = log.next;
      if (await this.#put(host, n, closing ? [] : piece, owner, closing)) {
        // Not `+= 1`: another claim of this container may have lost chunk n meanwhile and read it
        // back (log.next is n + 1 then); counting it twice would skip chunk n + 1 for good.
        log.next = Math.max(log.next, n + 1);
        if (closing) {
          log.closed = true;
          break;
        }
        for (const fp of piece) {
          log.owners.set(fp, owner);
          this.#answer(fp, owner, owner, answers);
        }
        left = left.slice(piece.length);
      } else {
        await this.#readFrom(host, log);
        left = this.#unknown(log, left, owner, answers);
      }
    }
    // Re-set so the cache counts the log's new size.
    this.#logs.set(this.#logKey(host), log);
    if (left.length > 0) await this.#putEach(await this.#readEach(left, owner, answers), owner, answers);
  }

  /** The fingerprints `log` does not hold; those it holds are answered. */
  #unknown(log: HostLog, fps: readonly Fingerprint[], owner: string, answers: Map<Fingerprint, boolean>) {
    return fps.filter((fp) => {
      const found = log.owners.get(fp);
      if (found === undefined) return true;
      this.#answer(fp, found, owner, answers);
      return false;
    });
  }

  /**
   * Claims of a closed log's host are each URL's own item: read first (eventually consistent, half
   * a read unit each); answers those found and returns the rest.
   */
  async #readEach(fps: readonly Fingerprint[], owner: string, answers: Map<Fingerprint, boolean>) {
    if (fps.length === 0) return [];
    const items = await batchGetAll(
      this.#doc,
      this.#table,
      fps.map((fp) => seenUrlKey(this.#crawlId, fp)),
      { projection: '#pk, #o', names: { '#pk': TABLE_KEYS.partitionKey, '#o': 'owner' } },
    );
    const found = new Map<string, string>();
    for (const item of items) found.set(String(item[TABLE_KEYS.partitionKey]), String(item.owner));
    const toPut: Fingerprint[] = [];
    for (const fp of fps) {
      const claimedBy = found.get(seenUrlKey(this.#crawlId, fp)[TABLE_KEYS.partitionKey]!);
      if (claimedBy === undefined) toPut.push(fp);
      else this.#answer(fp, claimedBy, owner, answers);
    }
    return toPut;
  }

  /**
   * Then a conditional write each for those not found (`attribute_not_exists OR owner = :owner`,
   * so the owner's redelivery claims them again).
   */
  async #putEach(
    toPut: readonly Fingerprint[],
    owner: string,
    answers: Map<Fingerprint, boolean>,
  ): Promise<void> {
    const expiresAt = this.#retention.expiresAt();
    await forEachLimited(toPut, CONCURRENCY, async (fp) => {
      try {
        await this.#doc.send(
          new UpdateCommand({
            TableName: this.#table,
            Key: seenUrlKey(this.#crawlId, fp),
            UpdateExpression: expiresAt === undefined ? 'SET #o = :o' : 'SET #o = :o, #x = :x',
            ConditionExpression: 'attribute_not_exists(#pk) OR #o = :o',
            ExpressionAttributeNames: {
              '#pk': TABLE_KEYS.partitionKey,
              '#o': 'owner',
              ...(expiresAt === undefined ? {} : { '#x': TABLE_KEYS.expiresAt }),
            },
            ExpressionAttributeValues: {
              ':o': owner,
              ...(expiresAt === undefined ? {} : { ':x': expiresAt }),
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        this.#answer(fp, owner, owner, answers);
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // DynamoDB returns the item that failed the condition; endpoints that do not leave the owner unknown.
        const claimedBy = (error as { Item?: Record<string, { S?: string }> }).Item?.owner?.S;
        if (claimedBy === undefined) answers.set(fp, false);
        else this.#answer(fp, claimedBy, owner, answers);
      }
    });
  }

  /** Writes chunk `n` of the host's log (the closing one with `closed`); false when it exists already. */
  async #put(
    host: string,
    n: number,
    fps: readonly Fingerprint[],
    owner: string,
    closed: boolean,
  ): Promise<boolean> {
    const expiresAt = this.#retention.expiresAt();
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            [TABLE_KEYS.partitionKey]: seenLogPartition(this.#crawlId, host),
            [TABLE_KEYS.sortKey]: sortKey(n),
            owner,
            ...(closed ? { closed: true } : { fps: packFingerprints(fps) }),
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
    const known = this.#logs.get(this.#logKey(host));
    if (known !== undefined) return known;
    const log: HostLog = { owners: new Map(), next: 0, closed: false };
    await this.#readFrom(host, log);
    this.#logs.set(this.#logKey(host), log);
    return log;
  }

  #logKey(host: string): string {
    return `${this.#crawlId} ${host}`;
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
        const closing = item.closed === true;
        if (
          !Number.isInteger(n) ||
          typeof owner !== 'string' ||
          !(closing || item.fps instanceof Uint8Array)
        ) {
          throw new Error(`URL-seen log of ${host}: chunk ${String(item[TABLE_KEYS.sortKey])} is malformed`);
        }
        if (closing) {
          log.closed = true;
        } else {
          for (const fp of unpackFingerprints(item.fps as Uint8Array)) {
            if (!log.owners.has(fp)) log.owners.set(fp, owner);
          }
        }
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
