/**
 * Which IAM permissions an AWS API call needs: the action(s), the resource ARN(s) and the
 * request's service condition keys, read from the request as it reaches the endpoint. This is
 * what AWS's authorization layer derives before it evaluates the caller's policies (the Service
 * Authorization Reference lists, per API, the actions and resource types required):
 *
 * - DynamoDB: `dynamodb:<Operation>` on `table/<name>` (or `table/<name>/index/<index>` for a
 *   Query or Scan of an index); batch calls need their own action on every table they name;
 *   transactions need the item action (PutItem, UpdateItem, ...) of each part on its table.
 * - SQS: `sqs:<Operation>` on the queue ARN; the batch calls need the single action
 *   (SendMessageBatch -> `sqs:SendMessage`), there is no `sqs:*Batch` action.
 * - S3: listing a bucket is `s3:ListBucket` on the bucket; reading, writing and deleting objects
 *   are `s3:GetObject`, `s3:PutObject` (multipart upload parts included) and `s3:DeleteObject` on
 *   `bucket/key`; a copy also reads its source.
 */
import { classifyS3Request } from './endpoint-metrics.ts';

/** One permission a request needs: allowed only if every one of a request's is allowed. */
export interface IamAuthorization {
  action: string;
  /** The resource ARN, or `*` for actions without a resource type (ListQueues, ListTables). */
  resource: string;
  /** Service condition keys this request sets (`s3:prefix`, `dynamodb:LeadingKeys`, ...). */
  context?: Record<string, string | string[]>;
}

/** How the endpoint names its resources in ARNs. */
export interface ArnNaming {
  /** ARN of a DynamoDB table by name. */
  table(name: string): string;
  /** ARN of a queue by its URL or name. */
  queue(urlOrName: string): string;
  /** The partition key attribute of a table, when known (for `dynamodb:LeadingKeys`). */
  partitionKey?(table: string): string | undefined;
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The scalar value of a key attribute (`{ S: 'x' }` -> `x`), for `dynamodb:LeadingKeys`. */
function keyValue(attribute: unknown): string | undefined {
  const value = asObject(attribute);
  for (const type of ['S', 'N', 'B']) if (typeof value[type] === 'string') return value[type] as string;
  return undefined;
}

function dedupe(list: IamAuthorization[]): IamAuthorization[] {
  const seen = new Set<string>();
  return list.filter((a) => {
    const key = `${a.action} ${a.resource} ${JSON.stringify(a.context ?? {})}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// DynamoDB request parameters that are condition keys of their own.
const DYNAMO_PARAMETER_KEYS: [string, string][] = [
  ['ReturnValues', 'dynamodb:ReturnValues'],
  ['Select', 'dynamodb:Select'],
  ['ReturnConsumedCapacity', 'dynamodb:ReturnConsumedCapacity'],
];

function dynamoContext(
  request: Json,
  table: string,
  leadingKeys: string[],
  naming: ArnNaming,
): Record<string, string | string[]> | undefined {
  const context: Record<string, string | string[]> = {};
  for (const [parameter, key] of DYNAMO_PARAMETER_KEYS) {
    const value = text(request[parameter]);
    if (value !== undefined) context[key] = value;
  }
  if (leadingKeys.length > 0 && naming.partitionKey?.(table) !== undefined) {
    context['dynamodb:LeadingKeys'] = [...new Set(leadingKeys)];
  }
  return Object.keys(context).length > 0 ? context : undefined;
}

/** The partition key values an item-level request touches on `table`. */
function leadingKeysOf(items: unknown[], table: string, naming: ArnNaming): string[] {
  const key = naming.partitionKey?.(table);
  if (key === undefined) return [];
  return items.map((item) => keyValue(asObject(item)[key])).filter((v): v is string => v !== undefined);
}

function tableAuthorization(
  action: string,
  request: Json,
  table: string,
  naming: ArnNaming,
  items: unknown[] = [],
): IamAuthorization {
  const context = dynamoContext(request, table, leadingKeysOf(items, table, naming), naming);
  return { action, resource: naming.table(table), ...(context === undefined ? {} : { context }) };
}

/** The table a PartiQL statement names (`SELECT ... FROM "t"`, `INSERT INTO "t"`, ...). */
function partiqlTarget(statement: string): { action: string; table: string } {
  const verb = statement.trim().split(/\s+/)[0]?.toUpperCase() ?? '';
  const action =
    verb === 'INSERT'
      ? 'dynamodb:PartiQLInsert'
      : verb === 'UPDATE'
        ? 'dynamodb:PartiQLUpdate'
        : verb === 'DELETE'
          ? 'dynamodb:PartiQLDelete'
          : 'dynamodb:PartiQLSelect';
  const match = /\b(?:FROM|INTO|UPDATE)\s+"?([A-Za-z0-9_.-]+)"?/i.exec(statement);
  return { action, table: match?.[1] ?? '*' };
}

/** The permissions a DynamoDB call needs (operation = the `X-Amz-Target` suffix). */
export function dynamoAuthorizations(
  operation: string,
  body: unknown,
  naming: ArnNaming,
): IamAuthorization[] {
  const request = asObject(body);
  const table = text(request.TableName);
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return table === undefined
        ? []
        : [tableAuthorization(`dynamodb:${operation}`, request, table, naming, [request.Key])];
    case 'PutItem':
      return table === undefined
        ? []
        : [tableAuthorization('dynamodb:PutItem', request, table, naming, [request.Item])];
    case 'Query':
    case 'Scan': {
      if (table === undefined) return [];
      const index = text(request.IndexName);
      const resource = naming.table(table) + (index === undefined ? '' : `/index/${index}`);
      const context = dynamoContext(request, table, [], naming);
      return [{ action: `dynamodb:${operation}`, resource, ...(context === undefined ? {} : { context }) }];
    }
    case 'BatchGetItem':
      return Object.entries(asObject(request.RequestItems)).map(([name, spec]) =>
        tableAuthorization(
          'dynamodb:BatchGetItem',
          request,
          name,
          naming,
          (asObject(spec).Keys as unknown[] | undefined) ?? [],
        ),
      );
    case 'BatchWriteItem':
      return Object.entries(asObject(request.RequestItems)).map(([name, writes]) =>
        tableAuthorization(
          'dynamodb:BatchWriteItem',
          request,
          name,
          naming,
          ((writes as unknown[] | undefined) ?? []).map((w) => {
            const write = asObject(w);
            return asObject(write.PutRequest).Item ?? asObject(write.DeleteRequest).Key;
          }),
        ),
      );
    case 'TransactWriteItems':
    case 'TransactGetItems': {
      const parts: [string, string, string][] = [
        ['Put', 'dynamodb:PutItem', 'Item'],
        ['Update', 'dynamodb:UpdateItem', 'Key'],
        ['Delete', 'dynamodb:DeleteItem', 'Key'],
        ['ConditionCheck', 'dynamodb:ConditionCheckItem', 'Key'],
        ['Get', 'dynamodb:GetItem', 'Key'],
      ];
      const out: IamAuthorization[] = [];
      for (const entry of (request.TransactItems as unknown[] | undefined) ?? []) {
        for (const [part, action, itemField] of parts) {
          const spec = asObject(asObject(entry)[part]);
          const name = text(spec.TableName);
          if (name !== undefined)
            out.push(tableAuthorization(action, request, name, naming, [spec[itemField]]));
        }
      }
      return dedupe(out);
    }
    case 'ExecuteStatement':
    case 'ExecuteTransaction':
    case 'BatchExecuteStatement': {
      const statements =
        operation === 'ExecuteStatement'
          ? [request]
          : (((request.TransactStatements ?? request.Statements) as unknown[] | undefined) ?? []);
      return dedupe(
        statements.map((s) => {
          const target = partiqlTarget(String(asObject(s).Statement ?? ''));
          return {
            action: target.action,
            resource: target.table === '*' ? '*' : naming.table(target.table),
          };
        }),
      );
    }
    case 'ListTables':
    case 'DescribeEndpoints':
    case 'DescribeLimits':
      return [{ action: `dynamodb:${operation}`, resource: '*' }];
    case 'TagResource':
    case 'UntagResource':
    case 'ListTagsOfResource':
      return [{ action: `dynamodb:${operation}`, resource: text(request.ResourceArn) ?? '*' }];
    default:
      // Table administration (CreateTable, DescribeTable, UpdateTimeToLive, ...): same name.
      return [{ action: `dynamodb:${operation}`, resource: table === undefined ? '*' : naming.table(table) }];
  }
}

// SQS batch operations are authorized as their single-message action.
const SQS_BATCH_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'sqs:SendMessage',
  DeleteMessageBatch: 'sqs:DeleteMessage',
  ChangeMessageVisibilityBatch: 'sqs:ChangeMessageVisibility',
};

/** The permissions an SQS call (JSON protocol) needs. */
export function sqsAuthorizations(operation: string, body: unknown, naming: ArnNaming): IamAuthorization[] {
  const request = asObject(body);
  const action = SQS_BATCH_ACTIONS[operation] ?? `sqs:${operation}`;
  if (operation === 'ListQueues') return [{ action, resource: '*' }];
  const queue =
    text(request.QueueUrl) ??
    text(request.QueueName) ??
    (operation.endsWith('MessageMoveTask') || operation === 'ListMessageMoveTasks'
      ? text(request.SourceArn)
      : undefined);
  if (queue === undefined) return [{ action, resource: '*' }];
  return [{ action, resource: queue.startsWith('arn:') ? queue : naming.queue(queue) }];
}

/** Bucket and key of an S3 request, path-style or virtual-hosted. */
export function s3Location(
  rawUrl: string,
  headers: Record<string, string | string[] | undefined>,
): { bucket?: string; key?: string } {
  const url = new URL(rawUrl, 'http://s3.local');
  const hostname = String(headers.host ?? '').split(':')[0] ?? '';
  const virtualHosted = hostname.includes('.') && !/^\d+\.\d+\.\d+\.\d+$/.test(hostname);
  const path = url.pathname.replace(/^\//, '');
  if (virtualHosted) {
    const bucket = hostname.split('.')[0] ?? '';
    return path === '' ? { bucket } : { bucket, key: decodeURIComponent(path) };
  }
  if (path === '') return {};
  const slash = path.indexOf('/');
  if (slash === -1 || slash === path.length - 1)
    return { bucket: decodeURIComponent(path.replace(/\/$/, '')) };
  return { bucket: decodeURIComponent(path.slice(0, slash)), key: decodeURIComponent(path.slice(slash + 1)) };
}

// Bucket subresource -> [get, put, delete] actions (a deletion of CORS, tagging and encryption
// settings is authorized as their put).
const BUCKET_SUBRESOURCE_ACTIONS: Record<string, [string, string, string]> = {
  acl: ['s3:GetBucketAcl', 's3:PutBucketAcl', 's3:PutBucketAcl'],
  cors: ['s3:GetBucketCORS', 's3:PutBucketCORS', 's3:PutBucketCORS'],
  encryption: [
    's3:GetEncryptionConfiguration',
    's3:PutEncryptionConfiguration',
    's3:PutEncryptionConfiguration',
  ],
  lifecycle: ['s3:GetLifecycleConfiguration', 's3:PutLifecycleConfiguration', 's3:PutLifecycleConfiguration'],
  logging: ['s3:GetBucketLogging', 's3:PutBucketLogging', 's3:PutBucketLogging'],
  notification: ['s3:GetBucketNotification', 's3:PutBucketNotification', 's3:PutBucketNotification'],
  ownershipControls: [
    's3:GetBucketOwnershipControls',
    's3:PutBucketOwnershipControls',
    's3:PutBucketOwnershipControls',
  ],
  policy: ['s3:GetBucketPolicy', 's3:PutBucketPolicy', 's3:DeleteBucketPolicy'],
  publicAccessBlock: [
    's3:GetBucketPublicAccessBlock',
    's3:PutBucketPublicAccessBlock',
    's3:PutBucketPublicAccessBlock',
  ],
  tagging: ['s3:GetBucketTagging', 's3:PutBucketTagging', 's3:PutBucketTagging'],
  versioning: ['s3:GetBucketVersioning', 's3:PutBucketVersioning', 's3:PutBucketVersioning'],
  website: ['s3:GetBucketWebsite', 's3:PutBucketWebsite', 's3:DeleteBucketWebsite'],
};

function bucketArn(bucket: string): string {
  return `arn:aws:s3:::${bucket}`;
}

function objectArn(bucket: string, key: string): string {
  return `arn:aws:s3:::${bucket}/${key}`;
}

/** The source object of a copy (`x-amz-copy-source: /bucket/key?versionId=...`). */
function copySource(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const path = decodeURIComponent(value.split('?')[0] ?? '').replace(/^\//, '');
  const slash = path.indexOf('/');
  return slash <= 0 ? undefined : objectArn(path.slice(0, slash), path.slice(slash + 1));
}

/**
 * The permissions an S3 REST call needs. `deleteKeys` are the keys of a DeleteObjects body (each
 * needs `s3:DeleteObject`).
 */
export function s3Authorizations(
  method: string,
  rawUrl: string,
  headers: Record<string, string | string[] | undefined>,
  deleteKeys: readonly string[] = [],
): IamAuthorization[] {
  const operation = classifyS3Request(method, rawUrl, headers);
  const { bucket, key } = s3Location(rawUrl, headers);
  const query = new URL(rawUrl, 'http://s3.local').searchParams;
  const versioned = query.has('versionId');
  if (operation === 'ListBuckets') return [{ action: 's3:ListAllMyBuckets', resource: '*' }];
  if (bucket === undefined) return [{ action: `s3:${operation}`, resource: '*' }];
  const onBucket = (action: string, context?: Record<string, string>): IamAuthorization => ({
    action,
    resource: bucketArn(bucket),
    ...(context === undefined || Object.keys(context).length === 0 ? {} : { context }),
  });
  const onObject = (action: string): IamAuthorization => ({
    action,
    resource: objectArn(bucket, key ?? ''),
  });
  switch (operation) {
    case 'ListObjects':
    case 'ListObjectsV2':
    case 'HeadBucket': {
      const context: Record<string, string> = {};
      for (const [param, name] of [
        ['prefix', 's3:prefix'],
        ['delimiter', 's3:delimiter'],
        ['max-keys', 's3:max-keys'],
      ] as const) {
        const value = query.get(param);
        if (value !== null) context[name] = value;
      }
      return [onBucket('s3:ListBucket', context)];
    }
    case 'ListObjectVersions':
      return [onBucket('s3:ListBucketVersions')];
    case 'ListMultipartUploads':
      return [onBucket('s3:ListBucketMultipartUploads')];
    case 'GetBucketLocation':
    case 'CreateBucket':
    case 'DeleteBucket':
      return [onBucket(`s3:${operation}`)];
    case 'GetObject':
    case 'HeadObject':
      return [onObject(versioned ? 's3:GetObjectVersion' : 's3:GetObject')];
    case 'GetObjectTagging':
    case 'PutObjectTagging':
    case 'AbortMultipartUpload':
      return [onObject(`s3:${operation}`)];
    case 'PutObject':
    case 'PostObject':
    case 'CreateMultipartUpload':
    case 'UploadPart':
    case 'CompleteMultipartUpload':
      return [onObject('s3:PutObject')];
    case 'CopyObject':
    case 'UploadPartCopy': {
      const source = copySource(headers['x-amz-copy-source']);
      const out = [onObject('s3:PutObject')];
      if (source !== undefined) out.push({ action: 's3:GetObject', resource: source });
      return out;
    }
    case 'ListParts':
      return [onObject('s3:ListMultipartUploadParts')];
    case 'DeleteObject':
      return [onObject(versioned ? 's3:DeleteObjectVersion' : 's3:DeleteObject')];
    case 'DeleteObjects':
      return dedupe(deleteKeys.map((k) => ({ action: 's3:DeleteObject', resource: objectArn(bucket, k) })));
    default: {
      const sub = /^(Get|Put|Delete)Bucket([A-Za-z]+)$/.exec(operation);
      const name = sub?.[2] === undefined ? undefined : sub[2].charAt(0).toLowerCase() + sub[2].slice(1);
      const actions = name === undefined ? undefined : BUCKET_SUBRESOURCE_ACTIONS[name];
      if (actions !== undefined) {
        const index = sub?.[1] === 'Get' ? 0 : sub?.[1] === 'Put' ? 1 : 2;
        return [onBucket(actions[index] as string)];
      }
      return [key === undefined ? onBucket(`s3:${operation}`) : onObject(`s3:${operation}`)];
    }
  }
}

/** The keys of a DeleteObjects request body (`<Delete><Object><Key>k</Key>...`). */
export function deleteObjectsKeys(xml: string): string[] {
  const unescapeXml = (s: string) =>
    s
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&quot;', '"')
      .replaceAll('&apos;', "'")
      .replaceAll('&amp;', '&');
  return [...xml.matchAll(/<Key>([\s\S]*?)<\/Key>/g)].map((m) => unescapeXml(m[1] ?? ''));
}
