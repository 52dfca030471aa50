/**
 * The LocalStack-compatible stand-in endpoint: fauxqs (SQS + S3) and dynalite (DynamoDB), both in
 * memory, behind one HTTP listener that routes by `X-Amz-Target`, counts every request, and
 * answers LocalStack's health check so one wait-for-ready works against both.
 *
 *   client ──HTTP──► 127.0.0.1:4566 ─┬─ X-Amz-Target: DynamoDB_* ─► dynalite (in process)
 *                                    ├─ X-Amz-Target: AmazonSQS.* ─► fauxqs  (in process)
 *                                    ├─ signed for `scheduler`     ─► EventBridge Scheduler (scheduler-service.ts)
 *                                    ├─ anything else (S3 REST)   ─► fauxqs  (in process)
 *                                    ├─ GET /_localstack/health
 *                                    └─ GET /_crawlstack/metrics, POST /_crawlstack/metrics/reset
 *
 * Every DynamoDB, SQS, S3 and Scheduler call of a registered caller (a Lambda function's credentials, see
 * `iam-enforcer.ts`) is authorized against its role's policies before it reaches an emulator, and
 * refused as AWS refuses it.
 *
 * SQS keeps the `X-Amzn-Trace-Id` header of a send (or an `AWSTraceHeader` system attribute) as
 * the message's `AWSTraceHeader` and returns it to a receive that asks for it; fauxqs does not,
 * so the endpoint keeps it beside fauxqs, by message id (Lambda's recursive loop detection reads
 * it, see recursion-detection.ts). FIFO scan window, in-flight cap and retention: aws-limits.ts.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import dynalite from 'dynalite';
import { buildApp } from 'fauxqs';
import { type AwsLimits, awsLimits } from './aws-limits.ts';
import { type IndexKeys, indexesOfCreateTable, indexKeyViolation } from './dynamo-index-limits.ts';
import { classifyS3Request, type EndpointMetrics, EndpointMetricsRecorder } from './endpoint-metrics.ts';
import { limitedSqsStore } from './fauxqs-fifo.ts';
import {
  type ArnNaming,
  deleteObjectsKeys,
  dynamoAuthorizations,
  s3Authorizations,
  sqsAuthorizations,
} from './iam-actions.ts';
import {
  accessKeyIdOf,
  type IamDenial,
  IamEnforcer,
  presignedRefusal,
  signingRegionOf,
} from './iam-enforcer.ts';
import { SchedulerService } from './scheduler-service.ts';

/** Where to listen. */
export interface EndpointOptions {
  /** Loopback by default: the stand-in accepts any credentials, so it must not face a network. */
  host?: string;
  /** 4566 by default; 0 picks a free port (tests run in parallel). */
  port?: number;
  /** Region fauxqs puts in queue URLs and ARNs when a request does not name one. */
  region?: string;
  /** Over the `CRAWLSTACK_LOCAL_*` variables of this process (see aws-limits.ts). */
  limits?: Partial<AwsLimits>;
}

/** A running stand-in endpoint. */
export interface Endpoint {
  /** `http://127.0.0.1:<port>`, with the real port when 0 was asked for. */
  url: string;
  port: number;
  /** Requests by service and operation, DynamoDB capacity units, S3 bytes. */
  metrics(): EndpointMetrics;
  resetMetrics(): void;
  /** Callers (access key id -> role) and resource policies; requests of other keys are admin. */
  iam: IamEnforcer;
  /** EventBridge Scheduler: its schedules fire through the invoker the local stack sets. */
  scheduler: SchedulerService;
  /** Ends long polls, closes every connection and releases the in-memory stores. */
  close(): Promise<void>;
}

/** Body of `GET /_localstack/health`, in LocalStack's shape. */
export const STAND_IN_HEALTH = {
  services: {
    dynamodb: 'running',
    s3: 'running',
    sqs: 'running',
    sns: 'running',
    sts: 'running',
  },
  edition: 'crawlstack-stand-in',
  version: '1',
} as const;

/** Marks the long-poll wrapper's own calls into fauxqs (not counted: the client's call is). */
const INTERNAL_HEADER = 'x-crawlstack-internal';
/** Marks the long-poll wrapper's repeats of one receive (authorized, but counted once). */
const REPEAT_HEADER = 'x-crawlstack-repeat';

// dynalite's own limit; DynamoDB's is 16 MB too (BatchWriteItem of 25 x 400 KB items fits).
const MAX_DYNAMO_BODY = 16 * 1024 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** DynamoDB's answer to a call its caller may not make (JSON 1.0, HTTP 400). */
function dynamoDenied(res: ServerResponse, denial: IamDenial): void {
  sendJson(res, 400, { __type: 'com.amazon.coral.service#AccessDeniedException', Message: denial.message });
}

/** S3's answer (HTTP 403, an XML error; a HEAD gets the status alone). */
function s3Denied(req: IncomingMessage, res: ServerResponse, denial: IamDenial): void {
  s3Error(req, res, 403, 'AccessDenied', denial.message);
}

/** An S3 error answer (XML, no body for HEAD). */
function s3Error(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
): void {
  const requestId = randomBytes(8).toString('hex').toUpperCase();
  const escapeXml = (s: string) =>
    s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
  const body =
    req.method === 'HEAD'
      ? ''
      : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(
          message,
        )}</Message><RequestId>${requestId}</RequestId><HostId>${requestId}</HostId></Error>`;
  req.resume();
  res.writeHead(status, {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
    'x-amz-request-id': requestId,
  });
  res.end(body);
}

/** What the S3 path needs of fastify's `inject` (light-my-request), whose overloads type poorly. */
interface InjectedAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  rawPayload: Buffer;
}

/** Replays a request into fauxqs in process (light-my-request), for a body the endpoint already read. */
function injectInto(
  app: { inject: unknown },
  request: { method: string; url: string; headers: Record<string, unknown>; payload: Buffer },
): Promise<InjectedAnswer> {
  return (app.inject as (options: typeof request) => Promise<InjectedAnswer>).call(app, request);
}

/** Headers of an injected fauxqs answer that may be passed on (not the hop-by-hop ones). */
function forwardedHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (['connection', 'keep-alive', 'transfer-encoding', 'date'].includes(name)) continue;
    if (value !== undefined) out[name] = String(value);
  }
  return out;
}

/** The trace header a send gives each message: its `AWSTraceHeader` attribute, else the header. */
function sentTrace(entry: unknown, header: string | undefined): string | undefined {
  const attribute = (entry as { MessageSystemAttributes?: { AWSTraceHeader?: { StringValue?: unknown } } })
    ?.MessageSystemAttributes?.AWSTraceHeader?.StringValue;
  return typeof attribute === 'string' ? attribute : header;
}

/** Whether a receive asked for the `AWSTraceHeader` system attribute. */
function wantsTrace(input: { AttributeNames?: unknown; MessageSystemAttributeNames?: unknown }): boolean {
  return [input.AttributeNames, input.MessageSystemAttributeNames].some(
    (names) => Array.isArray(names) && (names.includes('All') || names.includes('AWSTraceHeader')),
  );
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The service of a SigV4 `Authorization` header's credential scope (`.../region/service/aws4_request`). */
function signingServiceOf(headers: IncomingMessage['headers']): string | undefined {
  const header = Array.isArray(headers.authorization) ? headers.authorization[0] : headers.authorization;
  return header === undefined ? undefined : /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\//.exec(header)?.[1];
}

/** Starts fauxqs and dynalite in memory behind one listener on `host:port`. */
export async function startEndpoint(options: EndpointOptions = {}): Promise<Endpoint> {
  const host = options.host ?? '127.0.0.1';
  const recorder = new EndpointMetricsRecorder();

  const limits = awsLimits(process.env, options.limits);
  // Trace headers of the messages, by message id (see the module comment).
  const traces = new Map<string, string>();
  // Several messages of a FIFO group per receive, in order, as SQS does, and SQS's limits at
  // scale (see fauxqs-fifo.ts).
  const sqsStore = await limitedSqsStore({
    fifoScanWindow: limits.fifoScanWindow,
    fifoInflight: limits.fifoInflight,
    ...(limits.retentionSeconds === undefined ? {} : { retentionSeconds: limits.retentionSeconds }),
    onExpire: (messageId) => traces.delete(messageId),
  });
  const iam = new IamEnforcer();
  // dynalite names its tables' ARNs after the process environment when it starts (below).
  const dynamoRegion = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1';
  const dynamoAccount = (process.env.AWS_ACCOUNT_ID || '000000000000').replace(/[^\d]/g, '');
  // Partition keys (for dynamodb:LeadingKeys) and secondary index keys (their size limits) by
  // table, from the CreateTable calls that went through.
  const partitionKeys = new Map<string, string>();
  const indexKeys = new Map<string, IndexKeys[]>();
  const naming = (region: string): ArnNaming => ({
    table: (name) => `arn:aws:dynamodb:${dynamoRegion}:${dynamoAccount}:table/${name}`,
    // fauxqs names a queue's ARN after the region of the request that created it.
    queue: (urlOrName) => {
      const parts = urlOrName.split('/').filter((p) => p !== '');
      const name = parts.at(-1) ?? urlOrName;
      const account =
        parts.length >= 2 && /^\d{12}$/.test(parts.at(-2) ?? '') ? parts.at(-2) : '000000000000';
      return `arn:aws:sqs:${region}:${account}:${name}`;
    },
    partitionKey: (table) => partitionKeys.get(table),
  });
  const regionOf = (headers: IncomingMessage['headers'], rawUrl?: string) =>
    signingRegionOf(headers, rawUrl) ?? options.region ?? 'us-east-1';
  const scheduler = new SchedulerService({
    accountId: dynamoAccount,
    speedup: limits.scheduleSpeedup,
    authorize: (accessKeyId, authorizations, region) => iam.check(accessKeyId, authorizations, region),
  });
  // fauxqs' own startFauxqs() binds 0.0.0.0; its app is used here without listening at all:
  // requests are handed to its router in process, which also saves a hop per request.
  const fauxqs = buildApp({
    logger: false,
    ...(options.region ? { defaultRegion: options.region } : {}),
    stores: { sqsStore } as unknown as NonNullable<Parameters<typeof buildApp>[0]>['stores'],
  });
  // A send's trace header (and its entries' own), until its answer names the message ids.
  const sendTraces = new WeakMap<object, { header?: string; entries?: unknown[] }>();
  // SQS calls: after fauxqs parsed the JSON body, note the queue and the request's size; when it
  // answers, add the answer's size (SQS bills per started 64 KiB of either).
  const sqsCalls = new WeakMap<object, { operation: string; queueUrl?: string; requestBytes: number }>();
  fauxqs.addHook('preHandler', async (request, reply) => {
    const target = request.headers['x-amz-target'];
    if (typeof target !== 'string' || !target.startsWith('AmazonSQS.')) return;
    const operation = target.slice('AmazonSQS.'.length);
    // The long-poll wrapper below records its receives itself, once per client call.
    const internal = request.headers[INTERNAL_HEADER] !== undefined;
    const body = request.body as { QueueUrl?: unknown } | undefined;
    if (!internal) {
      sqsCalls.set(request.raw, {
        operation,
        ...(typeof body?.QueueUrl === 'string' ? { queueUrl: body.QueueUrl } : {}),
        requestBytes: Number(request.headers['content-length'] ?? 0),
      });
    }
    const region = regionOf(request.headers);
    const denial = await iam.check(
      accessKeyIdOf(request.headers),
      sqsAuthorizations(operation, body, naming(region)),
      region,
      request.headers[REPEAT_HEADER] === undefined,
    );
    if (denial !== undefined) {
      // SQS's JSON protocol; the query error header gives the SDK the error code `AccessDenied`.
      return reply
        .code(403)
        .header('content-type', 'application/x-amz-json-1.0')
        .header('x-amzn-query-error', 'AccessDenied;Sender')
        .send({ __type: 'com.amazon.coral.service#AccessDeniedException', message: denial.message });
    }
    const traceHeader = request.headers['x-amzn-trace-id'];
    const entries = (body as { Entries?: unknown } | undefined)?.Entries;
    if (operation === 'SendMessage' || operation === 'SendMessageBatch') {
      sendTraces.set(request.raw, {
        ...(typeof traceHeader === 'string' ? { header: traceHeader } : {}),
        ...(Array.isArray(entries) ? { entries } : { entries: [body] }),
      });
    } else if ((operation === 'DeleteMessage' || operation === 'DeleteMessageBatch') && traces.size > 0) {
      // The message leaves the queue: so does its trace header.
      const queue = typeof body?.QueueUrl === 'string' ? sqsStore.getQueue(body.QueueUrl) : undefined;
      const handles = Array.isArray(entries)
        ? entries.map((e) => (e as { ReceiptHandle?: unknown }).ReceiptHandle)
        : [(body as { ReceiptHandle?: unknown }).ReceiptHandle];
      for (const handle of handles) {
        const id =
          typeof handle === 'string' ? queue?.inflightMessages.get(handle)?.message.messageId : undefined;
        if (id !== undefined) traces.delete(id);
      }
    }
  });
  fauxqs.addHook('onSend', async (request, _reply, payload) => {
    const call = sqsCalls.get(request.raw);
    if (call === undefined) return payload;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
    const sent = sendTraces.get(request.raw);
    if (sent !== undefined) keepTraces(sent, parseJson(text));
    const empty = call.operation === 'ReceiveMessage' && !text.includes('"Messages":[{');
    recorder.sqs(call.operation, call.queueUrl, call.requestBytes, Buffer.byteLength(text), empty);
    return payload;
  });
  /** Notes the trace header of every message a send's answer names. */
  const keepTraces = (sent: { header?: string; entries?: unknown[] }, answer: unknown) => {
    const single = answer as { MessageId?: unknown; Successful?: { Id?: unknown; MessageId?: unknown }[] };
    if (typeof single?.MessageId === 'string') {
      const trace = sentTrace(sent.entries?.[0], sent.header);
      if (trace !== undefined) traces.set(single.MessageId, trace);
      return;
    }
    for (const done of single?.Successful ?? []) {
      const entry = sent.entries?.find((e) => (e as { Id?: unknown }).Id === done.Id);
      const trace = sentTrace(entry, sent.header);
      if (trace !== undefined && typeof done.MessageId === 'string') traces.set(done.MessageId, trace);
    }
  };
  /** A receive's answer with each message's `AWSTraceHeader`, when it asked for it. */
  const withTraces = (input: Record<string, unknown>, payload: Buffer): Buffer => {
    if (traces.size === 0 || !wantsTrace(input)) return payload;
    const answer = parseJson(payload.toString()) as
      | { Messages?: { MessageId?: string; Attributes?: Record<string, string> }[] }
      | undefined;
    let added = false;
    for (const message of answer?.Messages ?? []) {
      const trace = message.MessageId === undefined ? undefined : traces.get(message.MessageId);
      if (trace === undefined) continue;
      message.Attributes = { ...message.Attributes, AWSTraceHeader: trace };
      added = true;
    }
    return added ? Buffer.from(JSON.stringify(answer)) : payload;
  };
  await fauxqs.ready();
  // dynalite returns an http.Server; it is never bound either, its request listener is invoked.
  const dynamo = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

  const forwardToDynamo = (req: IncomingMessage, res: ServerResponse, operation: string) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_DYNAMO_BODY) chunks.push(chunk);
    });
    req.on('error', () => res.destroy());
    req.on('end', async () => {
      if (size > MAX_DYNAMO_BODY) {
        sendJson(res, 413, { __type: 'com.amazon.coral.service#SerializationException' });
        return;
      }
      const body = Buffer.concat(chunks);
      const request = parseJson(body.toString());
      if (operation === 'CreateTable') {
        const spec = (request ?? {}) as {
          TableName?: unknown;
          KeySchema?: { AttributeName?: unknown; KeyType?: unknown }[];
        };
        const hash = spec.KeySchema?.find((k) => k.KeyType === 'HASH')?.AttributeName;
        if (typeof spec.TableName === 'string' && typeof hash === 'string') {
          partitionKeys.set(spec.TableName, hash);
          indexKeys.set(spec.TableName, indexesOfCreateTable(request));
        }
      }
      const region = regionOf(req.headers);
      const denial = await iam.check(
        accessKeyIdOf(req.headers),
        dynamoAuthorizations(operation, request, naming(region)),
        region,
      );
      if (denial !== undefined) {
        dynamoDenied(res, denial);
        return;
      }
      const tooLong = indexKeyViolation(operation, request, (table) => indexKeys.get(table) ?? []);
      if (tooLong !== undefined) {
        sendJson(res, 400, { __type: 'com.amazon.coral.validate#ValidationException', message: tooLong });
        return;
      }
      // dynalite rethrows request stream errors; a buffered copy cannot fail mid-body, so a client
      // that hangs up early costs its own response, never the process.
      const copy = Object.assign(Readable.from(body.length > 0 ? [body] : []), {
        headers: req.headers,
        method: req.method,
        url: req.url,
      });
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      (res as unknown as { end: (...args: unknown[]) => ServerResponse }).end = (...args: unknown[]) => {
        const payload = args[0];
        const text =
          typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
        recorder.dynamo(operation, request, res.statusCode, parseJson(text));
        return end(...args);
      };
      dynamo.emit('request', copy, res);
    });
  };

  let stopping = false;
  /**
   * ReceiveMessage with long polling, as SQS does it. fauxqs wakes every waiting receive when one
   * message becomes available (and when a FIFO group unlocks); all but one then answer empty at
   * once. SQS keeps the others waiting until a message is there for them or their wait ends, so
   * here an early empty answer is not passed on: the receive is made again for the time left.
   * Without this, twenty idle pollers would each bill an empty receive per message sent.
   */
  const receiveWithLongPoll = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const input = (parseJson(body.toString()) ?? {}) as {
        WaitTimeSeconds?: unknown;
        QueueUrl?: unknown;
        [name: string]: unknown;
      };
      const wait = typeof input.WaitTimeSeconds === 'number' ? input.WaitTimeSeconds : 0;
      const deadline = Date.now() + wait * 1000;
      let gone = false;
      res.on('close', () => {
        gone = !res.writableEnded;
      });
      const headers: IncomingMessage['headers'] = { ...req.headers, [INTERNAL_HEADER]: '1' };
      delete headers['content-length'];
      try {
        for (let attempt = 0; ; attempt++) {
          if (attempt === 1) headers[REPEAT_HEADER] = '1';
          const left = deadline - Date.now();
          const payload =
            wait > 0 && left > 0
              ? JSON.stringify({ ...input, WaitTimeSeconds: Math.min(20, Math.ceil(left / 1000)) })
              : body.toString();
          const answer = await fauxqs.inject({
            method: 'POST',
            url: req.url ?? '/',
            headers,
            payload,
          });
          const empty = answer.statusCode === 200 && !answer.body.includes('"Messages":[{');
          if (!empty || gone || stopping || wait === 0 || Date.now() >= deadline - 50) {
            if (gone) return; // taken messages stay in flight until their visibility ends
            const out = empty ? answer.rawPayload : withTraces(input, answer.rawPayload);
            res.writeHead(answer.statusCode, {
              ...forwardedHeaders(answer.headers),
              'content-length': String(out.length),
            });
            res.end(out);
            recorder.sqs(
              'ReceiveMessage',
              typeof input.QueueUrl === 'string' ? input.QueueUrl : undefined,
              body.length,
              out.length,
              empty,
            );
            return;
          }
        }
      } catch (error) {
        if (!res.headersSent) sendJson(res, 500, { __type: 'InternalError', message: String(error) });
        else res.destroy();
      }
    });
  };

  /** A registered caller's S3 request: authorized first (a DeleteObjects body is read for its keys). */
  const authorizeS3 = async (
    req: IncomingMessage,
    res: ServerResponse,
    operation: string,
    accessKeyId: string | undefined,
  ) => {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    let body: Buffer | undefined;
    if (operation === 'DeleteObjects') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = Buffer.concat(chunks);
    }
    const region = regionOf(req.headers, url);
    const keys = body === undefined ? [] : deleteObjectsKeys(body.toString('utf8'));
    const denial = await iam.check(accessKeyId, s3Authorizations(method, url, req.headers, keys), region);
    if (denial !== undefined) {
      s3Denied(req, res, denial);
      return;
    }
    if (body === undefined) {
      fauxqs.routing(req, res);
      return;
    }
    const headers = { ...req.headers };
    delete headers['content-length'];
    const answer = await injectInto(fauxqs, { method, url, headers, payload: body });
    res.writeHead(answer.statusCode, forwardedHeaders(answer.headers));
    res.end(answer.rawPayload);
  };
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    if (url === '/_localstack/health' || url.startsWith('/_localstack/health?')) {
      sendJson(res, 200, STAND_IN_HEALTH);
      return;
    }
    if (url === '/_crawlstack/metrics') {
      sendJson(res, 200, recorder.snapshot());
      return;
    }
    if (url === '/_crawlstack/metrics/reset' && method === 'POST') {
      recorder.reset();
      sendJson(res, 200, { reset: true });
      return;
    }
    if (signingServiceOf(req.headers) === 'scheduler') {
      // REST-JSON, no X-Amz-Target: the credential scope names the service.
      recorder.count('other', `Scheduler.${SchedulerService.operationOf(method, url.split('?')[0] ?? url)}`);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('error', () => res.destroy());
      req.on('end', () => {
        void scheduler.handle(
          req,
          res,
          Buffer.concat(chunks).toString('utf8'),
          accessKeyIdOf(req.headers),
          regionOf(req.headers),
        );
      });
      return;
    }
    const target = req.headers['x-amz-target'];
    const targetName = Array.isArray(target) ? target[0] : target;
    if (targetName?.startsWith('DynamoDB')) {
      const operation = targetName.split('.')[1] ?? targetName;
      recorder.count('dynamodb', operation);
      forwardToDynamo(req, res, operation);
      return;
    }
    if (targetName === 'AmazonSQS.ReceiveMessage') {
      recorder.count('sqs', 'ReceiveMessage');
      receiveWithLongPoll(req, res);
      return;
    }
    if (targetName?.startsWith('AmazonSQS.')) {
      recorder.count('sqs', targetName.slice('AmazonSQS.'.length));
    } else if (String(req.headers['content-type'] ?? '').includes('x-www-form-urlencoded')) {
      // The Query protocol (SNS, STS); fauxqs answers both, nothing here uses them.
      recorder.count('other', 'QueryProtocol');
    } else {
      const operation = classifyS3Request(method, url, req.headers);
      recorder.count('s3', operation);
      if (method === 'PUT' || method === 'POST')
        recorder.s3Upload(Number(req.headers['content-length'] ?? 0));
      // A presigned URL (the API hands them out for downloads) is refused once it expired.
      const expired = presignedRefusal(url, Date.now());
      if (expired !== undefined) {
        s3Error(req, res, 403, 'AccessDenied', expired);
        return;
      }
      const accessKeyId = accessKeyIdOf(req.headers, url);
      if (iam.caller(accessKeyId) !== undefined) {
        authorizeS3(req, res, operation, accessKeyId).catch((error: unknown) => {
          if (!res.headersSent) sendJson(res, 500, { message: String(error) });
          else res.destroy();
        });
        return;
      }
    }
    fauxqs.routing(req, res);
  });

  // Longer than any client keeps an idle socket, so a reused keep-alive socket is never one the
  // server is closing at that moment (which surfaces as ECONNRESET in the SDK).
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4566, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    metrics: () => recorder.snapshot(),
    resetMetrics: () => recorder.reset(),
    iam,
    scheduler,
    close() {
      closing ??= (async () => {
        stopping = true;
        scheduler.stop();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // fauxqs' preClose hook ends waiting ReceiveMessage calls with an empty answer.
        await fauxqs.close();
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}
