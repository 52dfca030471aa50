/**
 * CrawlTable on DynamoDB: partition key `pk` = crawl id, sort key `sk`:
 *
 *   crawl              status, config, seeds, allowed hosts, final counters
 *   budget             pages fetched so far, only for crawls with maxPages (approximate)
 *   host#<host>        politeness state + the host's ledger (exact counters, see HostRecord),
 *                      its FIFO group's size and back queue version (HostGroup)
 *   robots#<origin>    robots.txt entry (DynamoRobotsCache)
 *   rules#<origin>     the duplicate-URL rules of an origin (`scheme://host[:port]`, JSON) and a
 *                      version; written only when they change (docs/duplicate-urls.md). Items
 *                      `rules#<host>` written before rules were kept per origin are never read.
 *   rules-news         the crawl's rules news: 64 slots `<version> <origin>`
 *
 * (Page records are not here: the archiver writes them to S3 index objects.)
 *
 * plus the hosts' back queues, pk `bq#<crawlId>#<host>` (DynamoHostBacklog), and the registry of
 * running crawls: pk `crawls`, sk `<crawlId>` (the scheduler Queries it
 * instead of scanning the table).
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandOutput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../../cloud/env.ts';
import {
  type BacklogCredits,
  type CloudAopicState,
  type CompletionWatch,
  type CounterShard,
  type CrawlCounters,
  type CrawlRecord,
  type CrawlStatus,
  emptyHostCounts,
  type HostCounts,
  type HostGroup,
  type HostRecord,
  type RecrawlOf,
  sequenceKey,
} from '../../cloud/messages/crawl-records.ts';
import type {
  BatchState,
  BatchStateRequest,
  CrawlDispatch,
  CrawlTableStore,
  HostRulesWrite,
  HostUpdate,
  HostUpdateResult,
  StoredHostRules,
} from '../../cloud/ports/cloud-ports.ts';
import { emptyBatchState, rulesNewsSlot, stateKey } from '../../cloud/ports/cloud-ports.ts';
import type { CrawlConfig } from '../../core/config.ts';
import type { HeldForm, HostRuleRecord, RuleRecord } from '../../core/quality/duplicate-url-rules.ts';
import type { ProbeAnswer } from '../../core/quality/soft-404.ts';
import { batchGetAll, type DocItem, isConditionalCheckFailed } from './dynamo-batch.ts';
import { robotsEntryFromItem, robotsKey } from './dynamo-robots-cache.ts';
import { KEEP_FOREVER, type Retention, withExpiry } from './retention.ts';

/** Partition key of the registry of running crawls. */
export const REGISTRY_PK = 'crawls';

/** Partition key of the catalog of every crawl (sort key `<createdAt>#<id>`: newest last). */
export const CATALOG_PK = 'catalog';

/** A catalog sort key: ISO time, '#', a crawl id. */
const CATALOG_SK = /^\d{4}-\d{2}-\d{2}T[0-9:.]{8,12}Z#[0-9a-f-]{36}$/;

/**
 * Plain counter attributes of a host item (by-status, by-reason and skipped-link counts are
 * `s:<code>`, `r:<reason>`, `l:<reason>`).
 */
const COUNT_FIELDS = [
  'finished',
  'fetched',
  'enqueued',
  'parked',
  'lambda',
  'history',
  'bytes',
  'failed',
  'duplicates',
  'retries',
  'requests',
  'dlq',
  'lookups',
  'cacheHits',
] as const;

/** Reads and writes CrawlTable items for the API, the worker and the scheduler. */
export class DynamoCrawlTable implements CrawlTableStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #retention: Retention;

  /** `retention`: host, budget and robots items expire that long after their last write, a crawl item after it ends. */
  constructor(doc: DynamoDBDocumentClient, table: string, options: { retention?: Retention } = {}) {
    this.#doc = doc;
    this.#table = table;
    this.#retention = options.retention ?? KEEP_FOREVER;
  }

  // --- crawl item and registry ----------------------------------------------------------------

  /** Writes a new crawl item (fails if the id exists) and its registry entry. */
  async createCrawl(crawl: CrawlRecord): Promise<void> {
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: crawlItem(crawl),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: { pk: REGISTRY_PK, sk: crawl.id, createdAt: crawl.createdAt },
      }),
    );
    // GET /crawls pages through this (one small item per crawl; crawls start rarely).
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: withExpiry(
          { pk: CATALOG_PK, sk: `${crawl.createdAt}#${crawl.id}`, id: crawl.id },
          this.#retention,
        ),
      }),
    );
  }

  async listCrawls(
    limit: number,
    after?: string,
  ): Promise<{ crawls: CrawlRecord[]; next?: string } | undefined> {
    if (after !== undefined && !CATALOG_SK.test(after)) return undefined;
    const response: QueryCommandOutput = await this.#doc.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': CATALOG_PK },
        ScanIndexForward: false,
        Limit: limit,
        ...(after === undefined ? {} : { ExclusiveStartKey: { pk: CATALOG_PK, sk: after } }),
      }),
    );
    const ids = (response.Items ?? []).map((item) => item.id as string);
    const items = await batchGetAll(
      this.#doc,
      this.#table,
      ids.map((id) => ({ pk: id, sk: 'crawl' })),
    );
    const byId = new Map(items.map((item) => [item.pk as string, crawlFromItem(item)]));
    const crawls = ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
    const last = response.LastEvaluatedKey?.sk;
    return typeof last === 'string' ? { crawls, next: last } : { crawls };
  }

  async getCrawl(id: string): Promise<CrawlRecord | undefined> {
    const response = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: id, sk: 'crawl' }, ConsistentRead: true }),
    );
    return response.Item === undefined ? undefined : crawlFromItem(response.Item);
  }

  /**
   * Moves a running crawl to `cancelled`. Resolves the status the crawl has afterwards (a
   * finished crawl keeps its own), or undefined for an unknown id.
   */
  async cancelCrawl(id: string): Promise<CrawlStatus | undefined> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: id, sk: 'crawl' },
          UpdateExpression: 'SET #s = :c',
          ConditionExpression: '#s = :r',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':c': 'cancelled', ':r': 'running' },
        }),
      );
      return 'cancelled';
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return (await this.getCrawl(id))?.status;
    }
  }

  /**
   * Records the end of a crawl: a running crawl becomes `done` or `failed` (a cancelled one
   * stays `cancelled`), the final counters are frozen on the item, and the registry entry goes.
   */
  async finishCrawl(
    id: string,
    end: { status: 'done' | 'failed'; finishedAt: string; counters: CrawlCounters; lost: number },
  ): Promise<void> {
    const { finishedAt, counters, lost } = end;
    // A finished crawl's item goes with the rest of its items, the retention after its end.
    const expiresAt = this.#retention.expiresAt();
    const finish = async (toDone: boolean) => {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: id, sk: 'crawl' },
          UpdateExpression: `SET #fa = if_not_exists(#fa, :at), #c = :counters, #l = :lost${toDone ? ', #s = :done' : ''}${expiresAt === undefined ? '' : ', #x = :x'}`,
          ConditionExpression: toDone ? '#s = :running' : 'attribute_exists(pk)',
          ExpressionAttributeNames: {
            '#fa': 'finishedAt',
            '#c': 'counters',
            '#l': 'lost',
            ...(toDone ? { '#s': 'status' } : {}),
            ...(expiresAt === undefined ? {} : { '#x': TABLE_KEYS.expiresAt }),
          },
          ExpressionAttributeValues: {
            ':at': finishedAt,
            ':counters': counters,
            ':lost': lost,
            ...(toDone ? { ':done': end.status, ':running': 'running' } : {}),
            ...(expiresAt === undefined ? {} : { ':x': expiresAt }),
          },
        }),
      );
    };
    try {
      await finish(true);
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // Not running any more (cancelled meanwhile): keep its status, freeze the counters.
      await finish(false).catch((e: unknown) => {
        if (!isConditionalCheckFailed(e)) throw e;
      });
    }
    await this.#doc.send(new DeleteCommand({ TableName: this.#table, Key: { pk: REGISTRY_PK, sk: id } }));
  }

  /** Ids of the crawls in the registry (running, or cancelled and still draining). */
  async registeredCrawls(): Promise<string[]> {
    const ids: string[] = [];
    await this.#queryAll(
      { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': REGISTRY_PK } },
      (item) => ids.push(item.sk as string),
    );
    return ids;
  }

  /** Stores (or clears, with undefined) the scheduler's watch of a crawl. */
  async setWatch(id: string, watch: CompletionWatch | undefined): Promise<void> {
    await this.#updateCrawlAttribute(id, watch === undefined ? 'REMOVE' : 'SET', 'watch', watch);
  }

  /** Publishes the crawl's AOPIC state (the scheduler's step). */
  async setAopic(id: string, aopic: CloudAopicState): Promise<void> {
    await this.#updateCrawlAttribute(id, 'SET', 'aopic', aopic);
  }

  /** Adds to the admitted count, kept beside the AOPIC map (`aopicAdmitted`) so setAopic cannot overwrite it. */
  async addAdmitted(id: string, admitted: number): Promise<void> {
    if (admitted <= 0) return;
    await this.#updateCrawlAttribute(id, 'ADD', 'aopicAdmitted', admitted);
  }

  /**
   * Sets, adds to or removes (`value` unused) one attribute of the crawl's item; a crawl that does
   * not exist is not created (ConditionalCheckFailedException).
   */
  async #updateCrawlAttribute(
    id: string,
    action: 'SET' | 'ADD' | 'REMOVE',
    attribute: string,
    value: unknown,
  ): Promise<void> {
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: id, sk: 'crawl' },
        UpdateExpression: action === 'REMOVE' ? 'REMOVE #v' : action === 'SET' ? 'SET #v = :v' : 'ADD #v :v',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#v': attribute },
        ...(action === 'REMOVE' ? {} : { ExpressionAttributeValues: { ':v': value } }),
      }),
    );
  }

  /** Adds hosts to the crawl's scope (a seed redirected there). */
  async addAllowedHosts(id: string, hosts: readonly string[]): Promise<void> {
    if (hosts.length === 0) return;
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: id, sk: 'crawl' },
        UpdateExpression: 'ADD allowedHosts :h',
        ExpressionAttributeValues: { ':h': new Set(hosts) },
      }),
    );
  }

  /** Adds to the crawl's approximate count of fetched pages (its maxPages budget). */
  async addBudget(id: string, fetched: number, dispatch?: CrawlDispatch): Promise<void> {
    if (fetched <= 0) return;
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: id, sk: 'budget' },
        ...(dispatch === undefined
          ? this.#expiring('ADD fetched :n', { ':n': fetched })
          : this.#expiring('ADD fetched :n SET dispatchCash = :c, dispatchAt = :t', {
              ':n': fetched,
              ':c': dispatch.cash,
              ':t': dispatch.at,
            })),
      }),
    );
  }

  // --- duplicate-URL rules ---------------------------------------------------------------------

  async hostRules(crawlId: string, origin: string): Promise<StoredHostRules | undefined> {
    const { Item } = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: crawlId, sk: `rules#${origin}` } }),
    );
    return Item === undefined ? undefined : rulesFromItem(Item);
  }

  /**
   * A conditional PutItem on the version (rules change rarely: a few writes per host and crawl);
   * when another container wrote first, the item it wrote, read strongly consistent.
   */
  async putHostRules(
    crawlId: string,
    origin: string,
    records: readonly HostRuleRecord[],
    version: number,
    held: readonly HeldForm[] = [],
  ): Promise<HostRulesWrite> {
    const key = { pk: crawlId, sk: `rules#${origin}` };
    const item: DocItem = {
      ...key,
      origin,
      records: JSON.stringify(storedRules(records)),
      version: version + 1,
    };
    const forms = storedHeld(held);
    if (forms.length > 0) item.held = JSON.stringify(forms);
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: withExpiry(item, this.#retention),
          ...(version === 0
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': version } }),
        }),
      );
      return { written: true, version: version + 1 };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
    const { Item } = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: key, ConsistentRead: true }),
    );
    return { written: false, stored: Item === undefined ? { records: [], version: 0 } : rulesFromItem(Item) };
  }

  /** One SET of the origin's slot in the crawl's `rules-news` item (created by the first). */
  async announceHostRules(crawlId: string, origin: string, version: number): Promise<void> {
    const expiresAt = this.#retention.expiresAt();
    const names: Record<string, string> = { '#n': `n${rulesNewsSlot(origin)}` };
    const values: Record<string, unknown> = { ':n': `${version} ${origin}` };
    let expression = 'SET #n = :n';
    if (expiresAt !== undefined) {
      expression += ', #x = :x';
      names['#x'] = TABLE_KEYS.expiresAt;
      values[':x'] = expiresAt;
    }
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: crawlId, sk: 'rules-news' },
        UpdateExpression: expression,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }

  async crawlRules(crawlId: string): Promise<RuleRecord[]> {
    const out: RuleRecord[] = [];
    await this.#queryPrefix(crawlId, 'rules#', (item) => {
      // an item `rules#<host>` from before rules were kept per origin is left unread (learned again)
      const origin = (item.sk as string).slice(6);
      if (!origin.includes('://')) return;
      for (const record of rulesFromItem(item).records) out.push({ origin, ...record });
    });
    return out;
  }

  /** An update expression with the item's expiry set too (when the retention gives one). */
  #expiring(
    expression: string,
    values: Record<string, unknown>,
  ): {
    UpdateExpression: string;
    ExpressionAttributeValues: Record<string, unknown>;
    ExpressionAttributeNames?: Record<string, string>;
  } {
    const expiresAt = this.#retention.expiresAt();
    if (expiresAt === undefined) return { UpdateExpression: expression, ExpressionAttributeValues: values };
    return {
      // One SET clause per expression: joined to the expression's own when it has one.
      UpdateExpression: /\bSET /.test(expression)
        ? expression.replace(/\bSET /, 'SET #x = :x, ')
        : `${expression} SET #x = :x`,
      ExpressionAttributeValues: { ...values, ':x': expiresAt },
      ExpressionAttributeNames: { '#x': TABLE_KEYS.expiresAt },
    };
  }

  // --- hosts ----------------------------------------------------------------------------------

  /** Every host item of a crawl (to sum its counters). */
  async hosts(crawlId: string): Promise<HostRecord[]> {
    const hosts: HostRecord[] = [];
    // The end of a crawl is decided on it: no stale group size or ledger.
    await this.#queryPrefix(crawlId, 'host#', (item) => hosts.push(hostFromItem(item)), { consistent: true });
    return hosts;
  }

  /** At most `limit` host items of a crawl: one Query page, whatever the number of hosts. */
  async someHosts(crawlId: string, limit: number): Promise<HostRecord[]> {
    const response = await this.#doc.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': crawlId, ':p': 'host#' },
        Limit: limit,
      }),
    );
    return (response.Items ?? []).map((item) => hostFromItem(item));
  }

  /**
   * Writes a host's politeness state and adds its counts. With a `ledger`, the write is
   * conditional on the ledger not having counted `firstSeq` yet; when it has (the same messages
   * were handled twice, e.g. after their visibility ran out), the counts are dropped and only the
   * politeness state is written. Resolves whether the counts were added.
   */
  async updateHost(crawlId: string, host: string, update: HostUpdate): Promise<HostUpdateResult> {
    const names: Record<string, string> = { '#na': 'nextAllowedAt', '#h': 'host' };
    const values: Record<string, unknown> = { ':na': update.nextAllowedAt, ':h': host };
    const set = ['#na = :na', '#h = :h'];
    if (update.crawlDelayMs !== undefined) {
      names['#cd'] = 'crawlDelayMs';
      values[':cd'] = update.crawlDelayMs;
      set.push('#cd = :cd');
    }
    // Probe answers are politeness-like state: written even when the ledger had counted the records.
    let p = 0;
    for (const [origin, answer] of Object.entries(update.probes ?? {})) {
      p += 1;
      names[`#p${p}`] = `probe:${origin}`;
      values[`:p${p}`] = JSON.stringify(answer);
      set.push(`#p${p} = :p${p}`);
    }
    const expiresAt = this.#retention.expiresAt();
    if (expiresAt !== undefined) {
      names['#x'] = TABLE_KEYS.expiresAt;
      values[':x'] = expiresAt;
      set.push('#x = :x');
    }
    const politeness = { names: { ...names }, values: { ...values }, set: [...set] };
    const add = countAdds(update.counts, names, values);
    const conditions: string[] = [];
    if (update.recentlyFetched !== undefined) {
      names['#rf'] = 'recentlyFetched';
      values[':rf'] = Buffer.from(update.recentlyFetched.join(''), 'hex');
      set.push('#rf = :rf');
    }
    if (update.root !== undefined) {
      // The root credit this batch used comes off (what arrived since stays), and no more is written.
      names['#rh'] = 'rootHandled';
      values[':rh'] = true;
      set.push('#rh = :rh');
      if (update.root.used > 0) {
        names['#rc'] = 'rootCredit';
        values[':rc'] = -update.root.used;
        add.push('#rc :rc');
      }
    }
    if (update.ledger !== undefined) {
      names['#ds'] = 'doneSeq';
      values[':last'] = sequenceKey(update.ledger.lastSeq);
      values[':first'] = sequenceKey(update.ledger.firstSeq);
      set.push('#ds = :last');
      conditions.push('(attribute_not_exists(#ds) OR #ds < :first)');
    }
    const remove: string[] = [];
    const group = update.group;
    if (group !== undefined) {
      // DynamoDB refuses names an expression does not use: each is added with its use.
      const use = (name: keyof typeof GROUP_NAMES) => {
        names[name] = GROUP_NAMES[name];
      };
      if (group.queuedDelta !== 0) {
        use('#gq');
        values[':qd'] = group.queuedDelta;
        add.push('#gq :qd');
      }
      if (group.drained !== undefined) {
        use('#gd');
        values[':gd'] = group.drained;
        set.push('#gd = :gd');
      }
      if (group.added) {
        use('#gv');
        values[':one'] = 1;
        add.push('#gv :one');
      }
      // The holder's write ends a start: a starter that comes back later must not start again.
      use('#gs');
      remove.push('#gs');
      if (group.ended !== undefined) {
        use('#ge');
        values[':ge'] = group.ended;
        set.push('#ge = :ge');
      }
      if (group.credits !== undefined) {
        use('#gc');
        if (group.credits.size === 0) remove.push('#gc');
        else {
          values[':gc'] = encodeCredits(group.credits);
          set.push('#gc = :gc');
        }
      }
      if (group.idleAt !== undefined) {
        use('#gv');
        values[':gi'] = group.idleAt;
        conditions.push(group.idleAt === 0 ? '(attribute_not_exists(#gv) OR #gv = :gi)' : '#gv = :gi');
      }
    }
    const key = { pk: crawlId, sk: `host#${host}` };
    try {
      const response = await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: key,
          UpdateExpression: `SET ${set.join(', ')}${add.length > 0 ? ` ADD ${add.join(', ')}` : ''}${
            remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''
          }`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ...(conditions.length === 0 ? {} : { ConditionExpression: conditions.join(' AND ') }),
          // The old request count tells whether this write gave the host its first request.
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      const before = Number(response.Attributes?.requests ?? 0);
      return { counted: true, firstRequest: update.counts.requests > 0 && before === 0 };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
    if (update.ledger !== undefined && group?.idleAt !== undefined) {
      // Which condition failed? Read the item (strongly consistent; only on a failure). If the
      // ledger had not counted these records, it was the idle condition: an offer reached the
      // back queue since the holder read the item, and nothing was written. (The old item that
      // ReturnValuesOnConditionCheckFailure would give is not returned by every DynamoDB.)
      const read = await this.#doc.send(
        new GetCommand({ TableName: this.#table, Key: key, ConsistentRead: true }),
      );
      const item = read.Item ?? {};
      const done = typeof item.doneSeq === 'string' ? item.doneSeq : undefined;
      if (done === undefined || done < sequenceKey(update.ledger.firstSeq)) {
        return { counted: false, firstRequest: false, moved: groupFromItem(item) };
      }
    }
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: key,
        UpdateExpression: `SET ${politeness.set.join(', ')}`,
        ExpressionAttributeNames: politeness.names,
        ExpressionAttributeValues: politeness.values,
      }),
    );
    return { counted: false, firstRequest: false };
  }

  async addRootCredit(crawlId: string, host: string, amount: number): Promise<boolean> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: crawlId, sk: `host#${host}` },
          UpdateExpression: 'ADD #rc :a',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#rh)',
          ExpressionAttributeNames: { '#rc': 'rootCredit', '#rh': 'rootHandled' },
          ExpressionAttributeValues: { ':a': amount },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async noteBacklog(crawlId: string, host: string): Promise<HostGroup> {
    const response = await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: crawlId, sk: `host#${host}` },
        UpdateExpression: 'SET #h = :h ADD #gv :one',
        ExpressionAttributeNames: { '#h': 'host', '#gv': GROUP_NAMES['#gv'] },
        ExpressionAttributeValues: { ':h': host, ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return groupFromItem(response.Attributes ?? {});
  }

  async hostGroup(crawlId: string, host: string): Promise<HostGroup> {
    const read = await this.#doc.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: crawlId, sk: `host#${host}` },
        ConsistentRead: true,
        ProjectionExpression: Object.keys(GROUP_NAMES).join(', '),
        ExpressionAttributeNames: GROUP_NAMES,
      }),
    );
    return groupFromItem(read.Item ?? {});
  }

  async startGroup(
    crawlId: string,
    host: string,
    queued: number,
    starter: string,
    options: { noted?: boolean } = {},
  ): Promise<boolean> {
    const noted = options.noted === true;
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: crawlId, sk: `host#${host}` },
          // The host name too: a start may be the host item's first write.
          UpdateExpression: `SET #gq = :n, #gs = :s, #h = :h${noted ? ' ADD #gv :one' : ''}`,
          ConditionExpression: 'attribute_not_exists(#gq) OR #gq <= :zero OR #gs = :s',
          ExpressionAttributeNames: {
            '#gq': GROUP_NAMES['#gq'],
            '#gs': GROUP_NAMES['#gs'],
            '#h': 'host',
            ...(noted ? { '#gv': GROUP_NAMES['#gv'] } : {}),
          },
          ExpressionAttributeValues: {
            ':n': queued,
            ':s': starter,
            ':zero': 0,
            ':h': host,
            ...(noted ? { ':one': 1 } : {}),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** Every counter shard of a crawl (one Query of at most COUNTER_SHARDS small items). */
  async counterShards(crawlId: string): Promise<CounterShard[]> {
    const shards: CounterShard[] = [];
    // A worker decides from them that a crawl's frontier is dry: it must see its own write.
    await this.#queryPrefix(
      crawlId,
      'counts#',
      (item) => shards.push({ ...hostFromItem(item), hosts: Number(item.hosts ?? 0) }),
      { consistent: true },
    );
    return shards;
  }

  /** Adds a batch's counted totals to one shard (unconditional: see CounterShard). */
  async addToShard(crawlId: string, shard: number, counts: CounterShard): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const add = countAdds(counts, names, values);
    if (counts.hosts > 0) {
      names['#hosts'] = 'hosts';
      values[':hosts'] = counts.hosts;
      add.push('#hosts :hosts');
    }
    if (add.length === 0) return;
    const expiresAt = this.#retention.expiresAt();
    if (expiresAt !== undefined) {
      names['#x'] = TABLE_KEYS.expiresAt;
      values[':x'] = expiresAt;
    }
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: crawlId, sk: `counts#${shard}` },
        UpdateExpression: `ADD ${add.join(', ')}${expiresAt === undefined ? '' : ' SET #x = :x'}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }

  // --- the worker's batch read ----------------------------------------------------------------

  /**
   * The ledger positions of some hosts (eventually consistent, projected to `doneSeq`: half a
   * read unit each). A stale answer is an older position, which only makes the caller wait.
   */
  async doneSeqs(crawlId: string, hosts: readonly string[]): Promise<Map<string, string>> {
    const items = await batchGetAll(
      this.#doc,
      this.#table,
      [...new Set(hosts)].map((host) => ({ pk: crawlId, sk: `host#${host}` })),
      { projection: 'sk, doneSeq' },
    );
    const out = new Map<string, string>();
    for (const item of items) {
      if (typeof item.doneSeq === 'string') out.set((item.sk as string).slice(5), item.doneSeq);
    }
    return out;
  }

  /**
   * Reads everything a batch needs in two BatchGetItem rounds run together: host items strongly
   * consistent (politeness and the ledger must see the previous batch's write), the rest
   * eventually consistent (half price; a cancel or budget seen a moment late is harmless).
   */
  async loadBatchState(request: BatchStateRequest): Promise<BatchState> {
    const eventual: DocItem[] = [];
    for (const id of request.crawlIds) eventual.push({ pk: id, sk: 'crawl' });
    for (const id of request.budgets) eventual.push({ pk: id, sk: 'budget' });
    for (const { crawlId, origin } of request.robots) eventual.push(robotsKey(crawlId, origin));
    for (const { crawlId, origin } of request.rules ?? [])
      eventual.push({ pk: crawlId, sk: `rules#${origin}` });
    for (const id of request.rulesNews ?? []) eventual.push({ pk: id, sk: 'rules-news' });
    const consistent = request.hosts.map(({ crawlId, host }) => ({ pk: crawlId, sk: `host#${host}` }));
    const [loose, strict] = await Promise.all([
      batchGetAll(this.#doc, this.#table, dedupeKeys(eventual)),
      batchGetAll(this.#doc, this.#table, dedupeKeys(consistent), { consistent: true }),
    ]);
    const state = emptyBatchState();
    for (const item of [...loose, ...strict]) {
      const pk = item.pk as string;
      const sk = item.sk as string;
      if (sk === 'crawl') state.crawls.set(pk, crawlFromItem(item));
      else if (sk === 'budget') {
        state.budgets.set(pk, Number(item.fetched ?? 0));
        if (typeof item.dispatchCash === 'number' && typeof item.dispatchAt === 'number')
          state.dispatch.set(pk, { cash: item.dispatchCash, at: item.dispatchAt });
      } else if (sk.startsWith('host#')) state.hosts.set(stateKey(pk, sk.slice(5)), hostFromItem(item));
      else if (sk.startsWith('rules#')) state.rules.set(stateKey(pk, sk.slice(6)), rulesFromItem(item));
      else if (sk === 'rules-news') state.rulesNews.set(pk, rulesNewsFromItem(item));
      else if (sk.startsWith('robots#')) {
        const entry = robotsEntryFromItem(item);
        if (entry !== undefined) state.robots.set(stateKey(pk, sk.slice(7)), entry);
      }
    }
    return state;
  }

  /**
   * Every item of `crawlId` whose sort key starts with `prefix`, in sort-key order; `consistent`: a
   * strongly consistent read, for a caller that decides on what it reads.
   */
  async #queryPrefix(
    crawlId: string,
    prefix: string,
    each: (item: DocItem) => void,
    { consistent = false }: { consistent?: boolean } = {},
  ): Promise<void> {
    await this.#queryAll(
      {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': crawlId, ':p': prefix },
        ...(consistent ? { ConsistentRead: true } : {}),
      },
      each,
    );
  }

  async #queryAll(
    input: {
      KeyConditionExpression: string;
      ExpressionAttributeValues: Record<string, unknown>;
      ConsistentRead?: boolean;
    },
    each: (item: DocItem) => void,
  ): Promise<void> {
    let start: Record<string, unknown> | undefined;
    do {
      const response: QueryCommandOutput = await this.#doc.send(
        new QueryCommand({
          TableName: this.#table,
          ...input,
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      for (const item of response.Items ?? []) each(item);
      start = response.LastEvaluatedKey;
    } while (start !== undefined);
  }
}

/** The ADD clauses of a counts write (by-status, by-reason and skipped-link counts prefixed). */
function countAdds(c: HostCounts, names: Record<string, string>, values: Record<string, unknown>): string[] {
  const add: string[] = [];
  let n = 0;
  const addCount = (attribute: string, value: number) => {
    if (value === 0) return;
    n += 1;
    names[`#a${n}`] = attribute;
    values[`:a${n}`] = value;
    add.push(`#a${n} :a${n}`);
  };
  for (const field of COUNT_FIELDS) addCount(field, c[field]);
  for (const [status, count] of Object.entries(c.byStatus)) addCount(`s:${status}`, count);
  for (const [reason, count] of Object.entries(c.byReason)) addCount(`r:${reason}`, count);
  for (const [reason, count] of Object.entries(c.linksSkipped)) addCount(`l:${reason}`, count);
  for (const [verdict, count] of Object.entries(c.byChange)) addCount(`c:${verdict}`, count);
  return add;
}

/** A rules-news item's slots: origin -> version announced (slots not `<version> <origin>` are skipped). */
function rulesNewsFromItem(item: DocItem): Map<string, number> {
  const news = new Map<string, number>();
  for (const [name, value] of Object.entries(item)) {
    if (!/^n\d+$/.test(name) || typeof value !== 'string') continue;
    const space = value.indexOf(' ');
    const version = Number(value.slice(0, space));
    if (space > 0 && Number.isSafeInteger(version)) news.set(value.slice(space + 1), version);
  }
  return news;
}

/** A rules item's records and version (records that are not JSON read as none). */
function rulesFromItem(item: DocItem): StoredHostRules {
  let records: HostRuleRecord[] = [];
  try {
    const parsed = JSON.parse(String(item.records ?? '[]')) as unknown;
    if (Array.isArray(parsed)) records = parsed as HostRuleRecord[];
  } catch {
    // written by another version: the rules are learned again
  }
  const stored: StoredHostRules = { records, version: Number(item.version ?? 0) };
  if (typeof item.held === 'string') {
    try {
      const held = JSON.parse(item.held) as unknown;
      if (Array.isArray(held)) stored.held = held as HeldForm[];
    } catch {
      // written by another version: the forms are learned again
    }
  }
  return stored;
}

/** Held forms stored per host (newest first), and the longest URL kept: the item stays small. */
const STORED_HELD = 32;

function storedHeld(held: readonly HeldForm[]): HeldForm[] {
  return held.filter(([url]) => url.length <= STORED_URL_CHARS).slice(0, STORED_HELD);
}

/** Examples kept per stored rule, and the longest URL kept in one (an item holds at most 400 KB). */
const STORED_EXAMPLES = 3;
const STORED_URL_CHARS = 512;

/** The records as stored: a few short examples each, so 32 rules of a host stay far below 400 KB. */
function storedRules(records: readonly HostRuleRecord[]): HostRuleRecord[] {
  const short = ([a, b]: [string, string]) => a.length <= STORED_URL_CHARS && b.length <= STORED_URL_CHARS;
  return records.map((record) => {
    const stored: HostRuleRecord = {
      ...record,
      examples: record.examples.filter(short).slice(0, STORED_EXAMPLES),
    };
    if (record.counterExample !== undefined && !short(record.counterExample)) {
      stored.counterExample = [
        record.counterExample[0].slice(0, STORED_URL_CHARS),
        record.counterExample[1].slice(0, STORED_URL_CHARS),
      ];
    }
    return stored;
  });
}

function dedupeKeys(keys: DocItem[]): DocItem[] {
  const seen = new Set<string>();
  return keys.filter((key) => {
    const id = `${key.pk} ${key.sk}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

function crawlItem(crawl: CrawlRecord): DocItem {
  const item: DocItem = {
    pk: crawl.id,
    sk: 'crawl',
    status: crawl.status,
    createdAt: crawl.createdAt,
    config: crawl.config,
    seeds: crawl.seeds,
  };
  if (crawl.allowedHosts !== undefined && crawl.allowedHosts.length > 0)
    item.allowedHosts = new Set(crawl.allowedHosts);
  if (crawl.recrawl !== undefined) item.recrawl = crawl.recrawl;
  return item;
}

function crawlFromItem(item: DocItem): CrawlRecord {
  const crawl: CrawlRecord = {
    id: item.pk as string,
    status: item.status as CrawlStatus,
    createdAt: item.createdAt as string,
    config: item.config as CrawlConfig,
    seeds: Number(item.seeds ?? 0),
  };
  if (item.allowedHosts instanceof Set) crawl.allowedHosts = [...(item.allowedHosts as Set<string>)];
  if (typeof item.finishedAt === 'string') crawl.finishedAt = item.finishedAt;
  if (item.counters !== undefined) crawl.counters = item.counters as CrawlCounters;
  if (typeof item.lost === 'number') crawl.lost = item.lost;
  if (item.recrawl !== undefined && item.recrawl !== null) crawl.recrawl = item.recrawl as RecrawlOf;
  if (item.watch !== undefined && item.watch !== null) crawl.watch = item.watch as CompletionWatch;
  if (item.aopic !== undefined && item.aopic !== null) crawl.aopic = item.aopic as CloudAopicState;
  // The admitted count lives beside the map (see addAdmitted).
  if (typeof item.aopicAdmitted === 'number') {
    crawl.aopic = {
      bonus: 0,
      lambdaSpent: 0,
      history: 0,
      fetched: 0,
      ...crawl.aopic,
      admitted: item.aopicAdmitted,
    };
  } else if (crawl.aopic !== undefined) {
    crawl.aopic = { ...crawl.aopic, admitted: 0 };
  }
  return crawl;
}

/** Attribute names of a host item's group (see HostGroup). */
const GROUP_NAMES = {
  '#gq': 'groupQueued',
  '#gv': 'backlogVersion',
  '#gd': 'backlogDrained',
  '#gs': 'groupStarter',
  '#gc': 'backlogCredits',
  '#ge': 'groupStartsEnded',
};

/** Bytes of one credit: the fingerprint's 8 bytes, the amount (float64) and the misses (uint8). */
const CREDIT_BYTES = 17;

/** Back-queue credits as one binary attribute (17 bytes each: 24 of them stay below 420 bytes). */
export function encodeCredits(credits: BacklogCredits): Uint8Array {
  const out = Buffer.alloc(credits.size * CREDIT_BYTES);
  let at = 0;
  for (const [fp, { amount, misses }] of credits) {
    out.write(fp, at, 8, 'hex');
    out.writeDoubleBE(amount, at + 8);
    out.writeUInt8(Math.min(255, misses), at + 16);
    at += CREDIT_BYTES;
  }
  return out;
}

export function decodeCredits(bytes: Uint8Array): BacklogCredits {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const credits: BacklogCredits = new Map();
  for (let at = 0; at + CREDIT_BYTES <= buf.length; at += CREDIT_BYTES) {
    credits.set(buf.toString('hex', at, at + 8), {
      amount: buf.readDoubleBE(at + 8),
      misses: buf.readUInt8(at + 16),
    });
  }
  return credits;
}

function groupFromItem(item: DocItem): HostGroup {
  const group: HostGroup = {
    queued: Number(item.groupQueued ?? 0),
    version: Number(item.backlogVersion ?? 0),
    drained: Number(item.backlogDrained ?? 0),
  };
  if (typeof item.groupStarter === 'string') group.starter = item.groupStarter;
  if (item.backlogCredits instanceof Uint8Array) group.credits = decodeCredits(item.backlogCredits);
  if (Array.isArray(item.groupStartsEnded)) group.ended = item.groupStartsEnded.map(String);
  return group;
}

function hostFromItem(item: DocItem): HostRecord {
  const counts = emptyHostCounts();
  for (const field of COUNT_FIELDS) counts[field] = Number(item[field] ?? 0);
  for (const [name, value] of Object.entries(item)) {
    if (name.startsWith('s:')) counts.byStatus[name.slice(2)] = Number(value);
    else if (name.startsWith('r:')) counts.byReason[name.slice(2)] = Number(value);
    else if (name.startsWith('l:')) counts.linksSkipped[name.slice(2)] = Number(value);
    else if (name.startsWith('c:')) counts.byChange[name.slice(2)] = Number(value);
  }
  const probes: Record<string, ProbeAnswer> = {};
  for (const [name, value] of Object.entries(item)) {
    if (name.startsWith('probe:') && typeof value === 'string')
      probes[name.slice(6)] = JSON.parse(value) as ProbeAnswer;
  }
  const host: HostRecord = {
    ...counts,
    host: String(item.host ?? (item.sk as string).slice(5)),
    nextAllowedAt: Number(item.nextAllowedAt ?? 0),
  };
  if (typeof item.doneSeq === 'string') host.doneSeq = item.doneSeq;
  if (typeof item.crawlDelayMs === 'number') host.crawlDelayMs = item.crawlDelayMs;
  if (Object.keys(probes).length > 0) host.probes = probes;
  if (item.recentlyFetched instanceof Uint8Array) {
    const bytes = Buffer.from(item.recentlyFetched);
    host.recentlyFetched = [];
    for (let at = 0; at + 8 <= bytes.length; at += 8)
      host.recentlyFetched.push(bytes.toString('hex', at, at + 8));
  }
  if (item.groupQueued !== undefined || item.backlogVersion !== undefined) host.group = groupFromItem(item);
  if (typeof item.rootCredit === 'number') host.rootCredit = item.rootCredit;
  if (item.rootHandled === true) host.rootHandled = true;
  return host;
}
