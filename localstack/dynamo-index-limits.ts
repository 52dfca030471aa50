/**
 * DynamoDB's size limits on secondary index keys, which dynalite does not check (it checks the
 * table's own keys, 2,048 bytes for a partition key and 1,024 for a sort key, and the 400 KB
 * item). An item whose index key attribute is longer than the index allows is refused:
 * "Size limit exceeded for Index Key <attr> Actual Size: <n> bytes Max Size: 2048 bytes
 * IndexName: <index>" (1,024 for an index sort key). Numbers are never too long for this.
 */

/** One secondary index: its name and key attributes with their types. */
export interface IndexKeys {
  name: string;
  partition: { name: string; type: string };
  sort?: { name: string; type: string };
}

type Json = Record<string, unknown>;

const PARTITION_MAX = 2048;
const SORT_MAX = 1024;

function asObject(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

/** The indexes a CreateTable request declares (global and local), or none. */
export function indexesOfCreateTable(request: unknown): IndexKeys[] {
  const spec = asObject(request);
  const types = new Map<string, string>();
  for (const d of (spec.AttributeDefinitions as Json[] | undefined) ?? []) {
    types.set(String(d.AttributeName), String(d.AttributeType));
  }
  const out: IndexKeys[] = [];
  for (const index of [
    ...((spec.GlobalSecondaryIndexes as Json[] | undefined) ?? []),
    ...((spec.LocalSecondaryIndexes as Json[] | undefined) ?? []),
  ]) {
    const schema = (index.KeySchema as Json[] | undefined) ?? [];
    const key = (kind: string) => {
      const name = schema.find((k) => k.KeyType === kind)?.AttributeName;
      return typeof name === 'string' ? { name, type: types.get(name) ?? 'S' } : undefined;
    };
    const partition = key('HASH');
    if (partition === undefined) continue;
    const sort = key('RANGE');
    out.push({ name: String(index.IndexName), partition, ...(sort === undefined ? {} : { sort }) });
  }
  return out;
}

/** Bytes of a string or binary key value as DynamoDB counts them; numbers count 0 here. */
function keyBytes(value: unknown): number {
  const v = asObject(value);
  if (typeof v.S === 'string') return Buffer.byteLength(v.S, 'utf8');
  if (typeof v.B === 'string') return Buffer.from(v.B, 'base64').length;
  return 0;
}

/** The attribute values an UpdateItem assigns directly (`SET a = :v`, legacy `PUT`). */
function assignedValues(request: Json): Json {
  const out: Json = {};
  const names = asObject(request.ExpressionAttributeNames) as Record<string, string>;
  const values = asObject(request.ExpressionAttributeValues);
  const set = /\bSET\b([\s\S]*?)(?=\b(?:REMOVE|ADD|DELETE)\b|$)/i.exec(
    String(request.UpdateExpression ?? ''),
  )?.[1];
  for (const assignment of set?.split(',') ?? []) {
    const match = /^\s*(#?[\w]+)\s*=\s*(:\w+)\s*$/.exec(assignment);
    if (match?.[1] === undefined || match[2] === undefined) continue;
    out[names[match[1]] ?? match[1]] = values[match[2]];
  }
  for (const [name, update] of Object.entries(asObject(request.AttributeUpdates))) {
    const u = asObject(update);
    if (u.Action === undefined || u.Action === 'PUT') out[name] = u.Value;
  }
  return out;
}

function check(item: Json, indexes: readonly IndexKeys[]): string | undefined {
  for (const index of indexes) {
    for (const [key, max] of [
      [index.partition, PARTITION_MAX],
      [index.sort, SORT_MAX],
    ] as const) {
      if (key === undefined || item[key.name] === undefined) continue;
      const size = keyBytes(item[key.name]);
      if (size > max) {
        return `One or more parameter values were invalid: Size limit exceeded for Index Key ${key.name} Actual Size: ${size} bytes Max Size: ${max} bytes IndexName: ${index.name}`;
      }
    }
  }
  return undefined;
}

/**
 * The ValidationException message for a write whose item carries an index key value over the
 * index's limit, or undefined. `indexesOf` gives a table's indexes.
 */
export function indexKeyViolation(
  operation: string,
  body: unknown,
  indexesOf: (table: string) => readonly IndexKeys[],
): string | undefined {
  const request = asObject(body);
  const table = String(request.TableName ?? '');
  switch (operation) {
    case 'PutItem':
      return check(asObject(request.Item), indexesOf(table));
    case 'UpdateItem':
      return check(assignedValues(request), indexesOf(table));
    case 'BatchWriteItem':
      for (const [name, writes] of Object.entries(asObject(request.RequestItems))) {
        for (const write of (writes as unknown[] | undefined) ?? []) {
          const problem = check(asObject(asObject(asObject(write).PutRequest).Item), indexesOf(name));
          if (problem !== undefined) return problem;
        }
      }
      return undefined;
    case 'TransactWriteItems':
      for (const entry of (request.TransactItems as unknown[] | undefined) ?? []) {
        const put = asObject(asObject(entry).Put);
        const update = asObject(asObject(entry).Update);
        const problem =
          put.TableName !== undefined
            ? check(asObject(put.Item), indexesOf(String(put.TableName)))
            : update.TableName !== undefined
              ? check(assignedValues(update), indexesOf(String(update.TableName)))
              : undefined;
        if (problem !== undefined) return problem;
      }
      return undefined;
    default:
      return undefined;
  }
}
