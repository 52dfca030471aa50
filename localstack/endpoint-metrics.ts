/**
 * Request counting for the stand-in endpoint, and the DynamoDB capacity arithmetic the cost
 * benchmark reads: on-demand write request units (1 KB per item, rounded up) and read request
 * units (4 KB, eventually consistent reads at half price), computed from the request and response
 * bodies as DynamoDB documents them.
 */

/** A DynamoDB attribute value in the wire format (`{ "S": "x" }`, `{ "N": "1" }`, ...). */
export type WireAttributeValue = Record<string, unknown>;
/** A DynamoDB item or key in the wire format. */
export type WireItem = Record<string, WireAttributeValue>;

/** Capacity one table consumed. */
export interface TableUnits {
  writeRequestUnits: number;
  readRequestUnits: number;
}

/** What went through the endpoint since it started (or since the last reset). */
export interface EndpointMetrics {
  totalRequests: number;
  /** Requests per service and operation: `sqs.SendMessageBatch`, `dynamodb.PutItem`, `s3.PutObject`. */
  requests: {
    sqs: Record<string, number>;
    dynamodb: Record<string, number>;
    s3: Record<string, number>;
    other: Record<string, number>;
  };
  dynamodb: TableUnits & {
    /** Conditional writes that failed; each still consumed a write unit. */
    failedConditionalWrites: number;
    byTable: Record<string, TableUnits>;
    /**
     * Units per table, operation and item family (`CrawlTable UpdateItem host`: the sort key's, or
     * a short partition key's, text before its first `#`): where a bill's units come from.
     */
    /** By table, operation and item family, with the items charged (units per item = size). */
    byFamily: Record<string, TableUnits & { items?: number }>;
    /**
     * The base-table partition keys that took the most writes in one second, busiest first (at
     * most {@link HOT_KEYS}): AWS serves at most 1,000 WCU a second to one partition key. Since
     * the start or the last reset (a delta of two snapshots keeps the later one's).
     */
    hotKeys: PartitionKeyWrites[];
  };
  s3: {
    /** Bytes of request bodies sent to S3 (Content-Length), multipart parts included. */
    bytesUploaded: number;
  };
  sqs: {
    /**
     * Requests as SQS bills them: each started 64 KiB of a request's payload (a send's messages,
     * a receive's answer) is one request.
     */
    billedRequests: number;
    /** Per queue name, per operation. */
    byQueue: Record<string, Record<string, SqsOperationCount>>;
  };
}

/** Write units one partition key of one table took. */
export interface PartitionKeyWrites {
  table: string;
  /** The partition key's value (`S` or `N`; `B` as base64). */
  key: string;
  /** Write units in all. */
  writeUnits: number;
  /** Write units in its busiest wall-clock second. */
  peakPerSecond: number;
}

/** Partition keys {@link EndpointMetrics} lists. */
export const HOT_KEYS = 10;

/** One SQS operation on one queue. */
export interface SqsOperationCount {
  requests: number;
  /** In 64 KiB chunks of payload (see `sqsBilledUnits`). */
  billed: number;
  /** ReceiveMessage calls that returned no message (idle long polls). */
  empty: number;
}

/** SQS's billing unit: one request per started 64 KiB of payload, at least one. */
export function sqsBilledUnits(requestBytes: number, responseBytes: number): number {
  return Math.max(1, Math.ceil(Math.max(requestBytes, responseBytes) / 65_536));
}

/** One table's share of one request. */
export interface CapacityCharge {
  table: string;
  writeRequestUnits: number;
  readRequestUnits: number;
}

/** A charge with, for a base-table write, the item or key written (its partition key is charged). */
type KeyedCharge = CapacityCharge & { item?: WireItem };

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  // ASCII is the common case (attribute names, URLs); skip the encoder for it.
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) return encoder.encode(text).length;
  }
  return text.length;
}

function base64Length(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

function numberLength(text: string): number {
  // "1 byte per two significant digits, plus 1": leading/trailing zeros, sign and point are free.
  const digits = text
    .replace(/[^0-9]/g, '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

/** Size in bytes of one attribute value as DynamoDB bills it. */
export function attributeValueSize(value: WireAttributeValue): number {
  if (typeof value.S === 'string') return utf8Length(value.S);
  if (typeof value.N === 'string') return numberLength(value.N);
  if (typeof value.B === 'string') return base64Length(value.B);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (Array.isArray(value.SS)) return (value.SS as string[]).reduce((n, s) => n + utf8Length(s), 0);
  if (Array.isArray(value.NS)) return (value.NS as string[]).reduce((n, s) => n + numberLength(s), 0);
  if (Array.isArray(value.BS)) return (value.BS as string[]).reduce((n, s) => n + base64Length(s), 0);
  if (Array.isArray(value.L)) {
    // 3 bytes for the list, 1 per element.
    return (value.L as WireAttributeValue[]).reduce((n, v) => n + 1 + attributeValueSize(v), 3);
  }
  if (value.M !== null && typeof value.M === 'object') {
    const map = value.M as WireItem;
    let size = 3;
    for (const name of Object.keys(map)) size += 1 + utf8Length(name) + attributeValueSize(map[name] ?? {});
    return size;
  }
  return 0;
}

/** Size in bytes of an item: attribute names plus values. */
export function itemSize(item: WireItem | undefined): number {
  if (item === undefined || item === null) return 0;
  let size = 0;
  for (const name of Object.keys(item)) size += utf8Length(name) + attributeValueSize(item[name] ?? {});
  return size;
}

function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

function readUnits(bytes: number, consistent: boolean): number {
  const units = Math.max(1, Math.ceil(bytes / 4096));
  return consistent ? units : units / 2;
}

function isConditionalFailure(status: number, response: unknown): boolean {
  if (status < 400 || response === null || typeof response !== 'object') return false;
  const type = (response as { __type?: unknown }).__type;
  return typeof type === 'string' && type.endsWith('ConditionalCheckFailedException');
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json {
  return value !== null && typeof value === 'object' ? (value as Json) : {};
}

function tableOf(request: Json): string {
  return typeof request.TableName === 'string' ? request.TableName : '?';
}

/** A global secondary index as CreateTable declared it: its name and key attribute names. */
export interface IndexSpec {
  name: string;
  keys: string[];
}

/**
 * Write units a successful write spends on a table's global secondary indexes (DynamoDB charges
 * them on top of the table's): a put whose item carries an index's keys writes the index entry;
 * an update that REMOVEs an index key deletes it (1), one that ADDs to a key moves it (delete +
 * put, 2), one that SETs a key writes it (1, counted as new: the request does not show whether
 * the entry existed). Entries are charged for the item's size as the request shows it.
 */
function indexCharges(
  operation: string,
  request: Json,
  indexes: readonly IndexSpec[],
  write: (table: string, units: number) => void,
): void {
  const table = tableOf(request);
  for (const index of indexes) {
    const target = `${table}/${index.name}`;
    if (operation === 'PutItem') {
      const item = asObject(request.Item) as WireItem;
      if (index.keys.every((k) => item[k] !== undefined)) write(target, writeUnits(itemSize(item)));
    } else if (operation === 'UpdateItem') {
      const names = asObject(request.ExpressionAttributeNames) as Record<string, string>;
      const expression = String(request.UpdateExpression ?? '').replace(/#\w+/g, (n) => names[n] ?? n);
      // The clauses: SET ..., REMOVE ..., ADD ..., DELETE ... (any order).
      const clauses = new Map<string, string>();
      for (const match of expression.matchAll(
        /\b(SET|REMOVE|ADD|DELETE)\b([\s\S]*?)(?=\b(?:SET|REMOVE|ADD|DELETE)\b|$)/g,
      )) {
        clauses.set(match[1]!, match[2]!);
      }
      const touches = (clause: string) =>
        index.keys.some((k) => new RegExp(`(^|[\\s,])${k}(\\s|=|,|$)`).test(clauses.get(clause) ?? ''));
      const values = asObject(request.ExpressionAttributeValues) as WireItem;
      const bytes = itemSize(request.Key as WireItem) + itemSize(values);
      if (touches('REMOVE')) write(target, 1);
      else if (touches('ADD')) write(target, 2 * writeUnits(bytes));
      else if (touches('SET')) write(target, writeUnits(bytes));
    }
  }
}

/**
 * The capacity one DynamoDB call consumed, per table. Approximations, stated once here:
 * UpdateItem is charged for its key plus the values it writes (DynamoDB charges the larger of the
 * item before and after, which the request does not show) unless the response returns the item;
 * DeleteItem is charged 1 unit unless the old item comes back; a Query or Scan is charged for the
 * items it returned (DynamoDB charges for the items it read before any filter).
 */
export function dynamoCapacity(
  operation: string,
  requestBody: unknown,
  status: number,
  responseBody: unknown,
  indexesOf: (table: string) => readonly IndexSpec[] = () => [],
): CapacityCharge[] {
  return keyedCharges(operation, requestBody, status, responseBody, indexesOf).map(
    ({ item: _item, ...charge }) => charge,
  );
}

/** {@link dynamoCapacity}, each base-table write with the item or key it wrote. */
function keyedCharges(
  operation: string,
  requestBody: unknown,
  status: number,
  responseBody: unknown,
  indexesOf: (table: string) => readonly IndexSpec[],
): KeyedCharge[] {
  const request = asObject(requestBody);
  const response = asObject(responseBody);
  const charges: KeyedCharge[] = [];
  const write = (table: string, units: number, item?: WireItem) =>
    charges.push({ table, writeRequestUnits: units, readRequestUnits: 0, ...(item ? { item } : {}) });
  const read = (table: string, units: number) =>
    charges.push({ table, writeRequestUnits: 0, readRequestUnits: units });

  if (status >= 400) {
    // A failed condition still costs a write; any other error (validation, missing table) none.
    if (isConditionalFailure(status, responseBody)) write(tableOf(request), 1, writtenItem(request));
    return charges;
  }
  indexCharges(operation, request, indexesOf(tableOf(request)), write);
  switch (operation) {
    case 'PutItem':
      write(tableOf(request), writeUnits(itemSize(request.Item as WireItem)), writtenItem(request));
      break;
    case 'UpdateItem': {
      const values = asObject(request.ExpressionAttributeValues) as WireItem;
      let bytes = itemSize(request.Key as WireItem) + itemSize(values);
      const legacy = asObject(request.AttributeUpdates);
      for (const name of Object.keys(legacy)) {
        bytes += utf8Length(name) + attributeValueSize(asObject(asObject(legacy[name]).Value));
      }
      bytes = Math.max(bytes, itemSize(response.Attributes as WireItem | undefined));
      write(tableOf(request), writeUnits(bytes), writtenItem(request));
      break;
    }
    case 'DeleteItem':
      write(
        tableOf(request),
        writeUnits(itemSize(response.Attributes as WireItem | undefined)),
        writtenItem(request),
      );
      break;
    case 'BatchWriteItem': {
      const unprocessed = asObject(response.UnprocessedItems);
      const items = asObject(request.RequestItems);
      for (const table of Object.keys(items)) {
        // Entries DynamoDB handed back were not written (matched by their JSON text).
        const skipped = new Set(
          ((unprocessed[table] as Json[] | undefined) ?? []).map((entry) => JSON.stringify(entry)),
        );
        for (const entry of (items[table] as Json[]) ?? []) {
          if (skipped.has(JSON.stringify(entry))) continue;
          const put = asObject(entry.PutRequest);
          if (put.Item === undefined)
            write(table, 1, asObject(asObject(entry.DeleteRequest).Key) as WireItem);
          else write(table, writeUnits(itemSize(put.Item as WireItem)), put.Item as WireItem);
        }
      }
      break;
    }
    case 'TransactWriteItems':
      for (const entry of (request.TransactItems as Json[] | undefined) ?? []) {
        for (const kind of ['Put', 'Update', 'Delete', 'ConditionCheck']) {
          const action = asObject(entry[kind]);
          if (action.TableName === undefined) continue;
          const bytes = kind === 'Put' ? itemSize(action.Item as WireItem) : itemSize(action.Key as WireItem);
          write(tableOf(action), 2 * writeUnits(bytes), writtenItem(action));
        }
      }
      break;
    case 'GetItem':
      read(
        tableOf(request),
        readUnits(itemSize(response.Item as WireItem | undefined), request.ConsistentRead === true),
      );
      break;
    case 'BatchGetItem': {
      const requested = asObject(request.RequestItems);
      const returned = asObject(response.Responses);
      const unprocessed = asObject(response.UnprocessedKeys);
      for (const table of Object.keys(requested)) {
        const spec = asObject(requested[table]);
        const consistent = spec.ConsistentRead === true;
        const keys = ((spec.Keys as unknown[]) ?? []).length;
        const items = (returned[table] as WireItem[] | undefined) ?? [];
        const skipped = ((asObject(unprocessed[table]).Keys as unknown[] | undefined) ?? []).length;
        let units = 0;
        for (const item of items) units += readUnits(itemSize(item), consistent);
        // A key that was looked up but not found still costs the minimum read.
        units += Math.max(0, keys - items.length - skipped) * readUnits(0, consistent);
        if (units > 0) read(table, units);
      }
      break;
    }
    case 'Query':
    case 'Scan': {
      let bytes = 0;
      for (const item of (response.Items as WireItem[] | undefined) ?? []) bytes += itemSize(item);
      read(tableOf(request), readUnits(bytes, request.ConsistentRead === true));
      break;
    }
    case 'TransactGetItems':
      for (const entry of (request.TransactItems as Json[] | undefined) ?? []) {
        const get = asObject(entry.Get);
        read(tableOf(get), 2 * readUnits(0, true));
      }
      break;
    default:
      break;
  }
  return charges;
}

/** The item (PutItem) or key (the other writes) a write request names. */
function writtenItem(request: Json): WireItem {
  return asObject(request.Item ?? request.Key) as WireItem;
}

/** The text of a key attribute's value: `S` and `N` as they are, `B` as its base64. */
function keyText(value: WireAttributeValue | undefined): string | undefined {
  const text = value?.S ?? value?.N ?? value?.B;
  return typeof text === 'string' ? text : undefined;
}

/** Per partition key: write units in all, in the current second, and in its busiest second. */
interface KeyTally {
  table: string;
  key: string;
  total: number;
  second: number;
  inSecond: number;
  peak: number;
}

const BUCKET_SUBRESOURCES = [
  'acl',
  'cors',
  'encryption',
  'lifecycle',
  'location',
  'logging',
  'notification',
  'ownershipControls',
  'policy',
  'publicAccessBlock',
  'tagging',
  'versioning',
  'website',
];

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * The S3 operation a REST request performs, from its method, path, query and headers. Path-style
 * (`/bucket/key`) and virtual-hosted (`bucket.host/key`) addressing are both understood.
 */
export function classifyS3Request(
  method: string,
  rawUrl: string,
  headers: Record<string, string | string[] | undefined>,
): string {
  const url = new URL(rawUrl, 'http://s3.local');
  const query = url.searchParams;
  const hostname = String(headers.host ?? '').split(':')[0] ?? '';
  const virtualHosted = hostname.includes('.') && !/^\d+\.\d+\.\d+\.\d+$/.test(hostname);
  const segments = url.pathname.split('/').filter((s) => s !== '');
  const hasBucket = virtualHosted || segments.length > 0;
  const hasKey = virtualHosted ? segments.length > 0 : segments.length > 1;
  const subresource = BUCKET_SUBRESOURCES.find((name) => query.has(name));
  const copy = headers['x-amz-copy-source'] !== undefined;

  if (!hasBucket) return method === 'GET' ? 'ListBuckets' : `${method} /`;
  if (!hasKey) {
    switch (method) {
      case 'GET':
        if (query.get('list-type') === '2') return 'ListObjectsV2';
        if (query.has('uploads')) return 'ListMultipartUploads';
        if (query.has('versions')) return 'ListObjectVersions';
        if (subresource === 'location') return 'GetBucketLocation';
        return subresource === undefined ? 'ListObjects' : `GetBucket${capitalized(subresource)}`;
      case 'HEAD':
        return 'HeadBucket';
      case 'PUT':
        return subresource === undefined ? 'CreateBucket' : `PutBucket${capitalized(subresource)}`;
      case 'DELETE':
        return subresource === undefined ? 'DeleteBucket' : `DeleteBucket${capitalized(subresource)}`;
      case 'POST':
        return query.has('delete') ? 'DeleteObjects' : 'PostBucket';
      default:
        return `${method} bucket`;
    }
  }
  switch (method) {
    case 'GET':
      if (query.has('uploadId')) return 'ListParts';
      if (query.has('tagging')) return 'GetObjectTagging';
      return 'GetObject';
    case 'HEAD':
      return 'HeadObject';
    case 'PUT':
      if (query.has('uploadId') && query.has('partNumber')) return copy ? 'UploadPartCopy' : 'UploadPart';
      if (query.has('tagging')) return 'PutObjectTagging';
      return copy ? 'CopyObject' : 'PutObject';
    case 'DELETE':
      if (query.has('uploadId')) return 'AbortMultipartUpload';
      return 'DeleteObject';
    case 'POST':
      if (query.has('uploads')) return 'CreateMultipartUpload';
      if (query.has('uploadId')) return 'CompleteMultipartUpload';
      return 'PostObject';
    default:
      return `${method} object`;
  }
}

function emptyMetrics(): EndpointMetrics {
  return {
    totalRequests: 0,
    requests: { sqs: {}, dynamodb: {}, s3: {}, other: {} },
    dynamodb: {
      writeRequestUnits: 0,
      readRequestUnits: 0,
      failedConditionalWrites: 0,
      byTable: {},
      byFamily: {},
      hotKeys: [],
    },
    s3: { bytesUploaded: 0 },
    sqs: { billedRequests: 0, byQueue: {} },
  };
}

/** The key or item a DynamoDB request names first (a batch's first request's). */
function firstKey(request: Json): WireItem | undefined {
  if (request.Key !== undefined) return request.Key as WireItem;
  if (request.Item !== undefined) return request.Item as WireItem;
  const values = asObject(request.ExpressionAttributeValues) as WireItem;
  const pk = values[':pk'];
  if (pk !== undefined) return { pk };
  const batch = asObject(request.RequestItems);
  const first = Object.values(batch)[0] as Json | Json[] | undefined;
  if (Array.isArray(first)) {
    const entry = asObject(first[0]);
    return (asObject(entry.PutRequest).Item ?? asObject(entry.DeleteRequest).Key) as WireItem | undefined;
  }
  return (asObject(first).Keys as WireItem[] | undefined)?.[0];
}

/** An item's family: a short partition key prefix before `#`, else the sort key's, else `-`. */
function itemFamily(key: WireItem | undefined): string {
  if (key === undefined) return '-';
  const text = (name: string) => {
    const value = asObject(key[name]);
    return typeof value.S === 'string' ? value.S : undefined;
  };
  const prefix = (text('pk') ?? '').split('#')[0] ?? '';
  if (/^[a-z-]{1,12}$/.test(prefix)) return prefix;
  return text('sk')?.split('#')[0] ?? '-';
}

/** Accumulates {@link EndpointMetrics}; snapshots are copies, so callers can diff them. */
export class EndpointMetricsRecorder {
  #metrics = emptyMetrics();
  /** Global secondary indexes per table, learnt from the CreateTable calls that went through. */
  readonly #indexes = new Map<string, IndexSpec[]>();
  /** Partition key attribute per table, learnt from CreateTable too. */
  readonly #partitionKeys = new Map<string, string>();
  /** Writes per table and partition key (a map entry per key: a few MB for 100,000 keys). */
  #keys = new Map<string, KeyTally>();
  readonly #now: () => number;

  /** `now`: the clock, ms, whose whole seconds {@link PartitionKeyWrites.peakPerSecond} counts in. */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Counts one request to `service` performing `operation`. */
  count(service: keyof EndpointMetrics['requests'], operation: string): void {
    this.#metrics.totalRequests += 1;
    const table = this.#metrics.requests[service];
    table[operation] = (table[operation] ?? 0) + 1;
  }

  /** Adds the capacity a finished DynamoDB call consumed. */
  dynamo(operation: string, requestBody: unknown, status: number, responseBody: unknown): void {
    const totals = this.#metrics.dynamodb;
    if (operation === 'CreateTable' && status < 400) this.#learnSchema(asObject(requestBody));
    if (isConditionalFailure(status, responseBody)) totals.failedConditionalWrites += 1;
    const indexesOf = (table: string) => this.#indexes.get(table) ?? [];
    for (const charge of keyedCharges(operation, requestBody, status, responseBody, indexesOf)) {
      totals.writeRequestUnits += charge.writeRequestUnits;
      totals.readRequestUnits += charge.readRequestUnits;
      const table = totals.byTable[charge.table] ?? { writeRequestUnits: 0, readRequestUnits: 0 };
      table.writeRequestUnits += charge.writeRequestUnits;
      table.readRequestUnits += charge.readRequestUnits;
      totals.byTable[charge.table] = table;
      const name = `${charge.table} ${operation} ${itemFamily(firstKey(asObject(requestBody)))}`;
      const family = totals.byFamily[name] ?? { writeRequestUnits: 0, readRequestUnits: 0, items: 0 };
      family.writeRequestUnits += charge.writeRequestUnits;
      family.readRequestUnits += charge.readRequestUnits;
      family.items = (family.items ?? 0) + 1;
      totals.byFamily[name] = family;
      if (charge.item !== undefined) this.#tallyKey(charge.table, charge.item, charge.writeRequestUnits);
    }
  }

  #tallyKey(table: string, item: WireItem, units: number): void {
    const attribute = this.#partitionKeys.get(table);
    const key = attribute === undefined ? undefined : keyText(item[attribute]);
    if (key === undefined) return;
    const id = `${table}\u0000${key}`;
    const second = Math.floor(this.#now() / 1000);
    let tally = this.#keys.get(id);
    if (tally === undefined) {
      tally = { table, key, total: 0, second, inSecond: 0, peak: 0 };
      this.#keys.set(id, tally);
    }
    if (tally.second !== second) {
      tally.second = second;
      tally.inSecond = 0;
    }
    tally.total += units;
    tally.inSecond += units;
    tally.peak = Math.max(tally.peak, tally.inSecond);
  }

  /** The {@link HOT_KEYS} keys with the busiest second, busiest first (ties: most units in all). */
  #hotKeys(): PartitionKeyWrites[] {
    const hottest: KeyTally[] = [];
    const order = (a: KeyTally, b: KeyTally) => b.peak - a.peak || b.total - a.total;
    for (const tally of this.#keys.values()) {
      if (hottest.length === HOT_KEYS && order(tally, hottest[HOT_KEYS - 1]!) >= 0) continue;
      hottest.push(tally);
      hottest.sort(order);
      if (hottest.length > HOT_KEYS) hottest.pop();
    }
    return hottest.map((t) => ({ table: t.table, key: t.key, writeUnits: t.total, peakPerSecond: t.peak }));
  }

  #learnSchema(request: Json): void {
    const hash = ((request.KeySchema as Json[] | undefined) ?? []).find((k) => k.KeyType === 'HASH');
    if (hash !== undefined) this.#partitionKeys.set(tableOf(request), String(hash.AttributeName));
    const specs: IndexSpec[] = [];
    for (const index of (request.GlobalSecondaryIndexes as Json[] | undefined) ?? []) {
      const keys = ((index.KeySchema as Json[] | undefined) ?? []).map((k) => String(k.AttributeName));
      specs.push({ name: String(index.IndexName), keys });
    }
    if (specs.length > 0) this.#indexes.set(tableOf(request), specs);
  }

  /**
   * Adds one SQS call's queue and billable size (the call itself is counted by {@link count}).
   * `queueUrl` may be absent (ListQueues); the queue is its URL's last path segment.
   */
  sqs(
    operation: string,
    queueUrl: string | undefined,
    requestBytes: number,
    responseBytes: number,
    empty: boolean,
  ): void {
    const units = sqsBilledUnits(requestBytes, responseBytes);
    this.#metrics.sqs.billedRequests += units;
    const queue = queueUrl === undefined ? '-' : (queueUrl.split('/').pop() ?? queueUrl);
    const byQueue = this.#metrics.sqs.byQueue;
    const byOperation = byQueue[queue] ?? {};
    byQueue[queue] = byOperation;
    const entry = byOperation[operation] ?? { requests: 0, billed: 0, empty: 0 };
    byOperation[operation] = entry;
    entry.requests += 1;
    entry.billed += units;
    if (empty) entry.empty += 1;
  }

  /** Adds the body size of an S3 upload. */
  s3Upload(bytes: number): void {
    if (Number.isFinite(bytes) && bytes > 0) this.#metrics.s3.bytesUploaded += bytes;
  }

  snapshot(): EndpointMetrics {
    const copy = structuredClone(this.#metrics);
    copy.dynamodb.hotKeys = this.#hotKeys();
    return copy;
  }

  reset(): void {
    this.#metrics = emptyMetrics();
    this.#keys = new Map();
  }
}
