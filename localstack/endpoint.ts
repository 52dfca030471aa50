/**
 * The LocalStack-compatible stand-in endpoint: fauxqs (SQS + S3) and dynalite (DynamoDB), both in
 * memory, behind one HTTP listener that routes by `X-Amz-Target`, counts every request, and
 * answers LocalStack's health check so one wait-for-ready works against both.
 *
 *   client ──HTTP──► 127.0.0.1:4566 ─┬─ X-Amz-Target: DynamoDB_* ─► dynalite (in process)
 *                                    ├─ X-Amz-Target: AmazonSQS.* ─► fauxqs  (in process)
 *                                    ├─ anything else (S3 REST)   ─► fauxqs  (in process)
 *                                    ├─ GET /_localstack/health
 *                                    └─ GET /_crawlstack/metrics, POST /_crawlstack/metrics/reset
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import dynalite from 'dynalite';
import { buildApp } from 'fauxqs';
import { classifyS3Request, type EndpointMetrics, EndpointMetricsRecorder } from './endpoint-metrics.ts';
import { patchFauxqsFifo } from './fauxqs-fifo.ts';

/** Where to listen. */
export interface EndpointOptions {
  /** Loopback by default: the stand-in accepts any credentials, so it must not face a network. */
  host?: string;
  /** 4566 by default; 0 picks a free port (tests run in parallel). */
  port?: number;
  /** Region fauxqs puts in queue URLs and ARNs when a request does not name one. */
  region?: string;
}

/** A running stand-in endpoint. */
export interface Endpoint {
  /** `http://127.0.0.1:<port>`, with the real port when 0 was asked for. */
  url: string;
  port: number;
  /** Requests by service and operation, DynamoDB capacity units, S3 bytes. */
  metrics(): EndpointMetrics;
  resetMetrics(): void;
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

// dynalite's own limit; DynamoDB's is 16 MB too (BatchWriteItem of 25 x 400 KB items fits).
const MAX_DYNAMO_BODY = 16 * 1024 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Starts fauxqs and dynalite in memory behind one listener on `host:port`. */
export async function startEndpoint(options: EndpointOptions = {}): Promise<Endpoint> {
  const host = options.host ?? '127.0.0.1';
  const recorder = new EndpointMetricsRecorder();

  // Several messages of a FIFO group per receive, in order, as SQS does (see fauxqs-fifo.ts).
  await patchFauxqsFifo();
  // fauxqs' own startFauxqs() binds 0.0.0.0; its app is used here without listening at all:
  // requests are handed to its router in process, which also saves a hop per request.
  const fauxqs = buildApp({ logger: false, ...(options.region ? { defaultRegion: options.region } : {}) });
  // SQS calls: after fauxqs parsed the JSON body, note the queue and the request's size; when it
  // answers, add the answer's size (SQS bills per started 64 KiB of either).
  const sqsCalls = new WeakMap<object, { operation: string; queueUrl?: string; requestBytes: number }>();
  fauxqs.addHook('preHandler', async (request) => {
    const target = request.headers['x-amz-target'];
    if (typeof target !== 'string' || !target.startsWith('AmazonSQS.')) return;
    // The long-poll wrapper below records its receives itself, once per client call.
    if (request.headers[INTERNAL_HEADER] !== undefined) return;
    const body = request.body as { QueueUrl?: unknown } | undefined;
    sqsCalls.set(request.raw, {
      operation: target.slice('AmazonSQS.'.length),
      ...(typeof body?.QueueUrl === 'string' ? { queueUrl: body.QueueUrl } : {}),
      requestBytes: Number(request.headers['content-length'] ?? 0),
    });
  });
  fauxqs.addHook('onSend', async (request, _reply, payload) => {
    const call = sqsCalls.get(request.raw);
    if (call === undefined) return payload;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
    const empty = call.operation === 'ReceiveMessage' && !text.includes('"Messages":[{');
    recorder.sqs(call.operation, call.queueUrl, call.requestBytes, Buffer.byteLength(text), empty);
    return payload;
  });
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
    req.on('end', () => {
      if (size > MAX_DYNAMO_BODY) {
        sendJson(res, 413, { __type: 'com.amazon.coral.service#SerializationException' });
        return;
      }
      const body = Buffer.concat(chunks);
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
        recorder.dynamo(operation, parseJson(body.toString()), res.statusCode, parseJson(text));
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
      const input = (parseJson(body.toString()) ?? {}) as { WaitTimeSeconds?: unknown; QueueUrl?: unknown };
      const wait = typeof input.WaitTimeSeconds === 'number' ? input.WaitTimeSeconds : 0;
      const deadline = Date.now() + wait * 1000;
      let gone = false;
      res.on('close', () => {
        gone = !res.writableEnded;
      });
      const headers = { ...req.headers, [INTERNAL_HEADER]: '1' };
      delete headers['content-length'];
      try {
        for (;;) {
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
            const out: Record<string, string> = {};
            for (const [name, value] of Object.entries(answer.headers)) {
              if (['connection', 'keep-alive', 'transfer-encoding', 'date'].includes(name)) continue;
              if (value !== undefined) out[name] = String(value);
            }
            res.writeHead(answer.statusCode, out);
            res.end(answer.rawPayload);
            recorder.sqs(
              'ReceiveMessage',
              typeof input.QueueUrl === 'string' ? input.QueueUrl : undefined,
              body.length,
              answer.rawPayload.length,
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
      recorder.count('s3', classifyS3Request(method, url, req.headers));
      if (method === 'PUT' || method === 'POST')
        recorder.s3Upload(Number(req.headers['content-length'] ?? 0));
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
    close() {
      closing ??= (async () => {
        stopping = true;
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
