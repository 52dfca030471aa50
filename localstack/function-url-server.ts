/**
 * A Lambda function URL in process: an HTTP server on loopback that turns each request into a
 * payload format 2.0 event and the handler's result back into a response. With `AuthType:
 * AWS_IAM`, requests must be SigV4-signed with the key the server was given (checked as Lambda
 * checks it, see `sigv4-verifier.ts`), or, without a key, carry a bearer token instead.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2WithIAMAuthorizer } from 'aws-lambda';
import type { InvokeOutcome, LocalLambda } from './local-lambda.ts';
import { type SigV4Key, verifySigV4 } from './sigv4-verifier.ts';

export interface FunctionUrlServerOptions {
  lambda: LocalLambda;
  /**
   * `AWS_IAM` (default) requires a SigV4 signature of `sigv4` when given, else
   * `Authorization: Bearer <token>`; `NONE` lets every request in.
   */
  authType?: 'AWS_IAM' | 'NONE';
  /** The one key pair allowed to invoke the URL (SigV4 for service `lambda` in the function's region). */
  sigv4?: SigV4Key;
  /** The bearer token; random (32 bytes, hex) when absent. */
  token?: string;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Request bodies above this are refused with 413, as Lambda's 6 MB synchronous payload limit does. */
  maxBodyBytes?: number;
}

const LAMBDA_PAYLOAD_LIMIT = 6 * 1024 * 1024;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Content types a function URL passes as text; every other body arrives base64-encoded. */
export function isTextContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return (
    type.startsWith('text/') ||
    /^application\/([a-z0-9.+-]+\+)?(json|xml|javascript|yaml|x-yaml)$/.test(type) ||
    type === 'application/x-javascript'
  );
}

function requestTime(epochMs: number): string {
  const d = new Date(epochMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(
    d.getUTCMinutes(),
  )}:${two(d.getUTCSeconds())} +0000`;
}

/** Builds the payload format 2.0 event Lambda gives a function URL handler for `req`. */
export function toFunctionUrlEvent(
  req: IncomingMessage,
  body: Buffer,
  lambda: Pick<LocalLambda, 'accountId' | 'region'>,
  epochMs: number,
  caller?: { accessKeyId: string },
): APIGatewayProxyEventV2WithIAMAuthorizer {
  const rawUrl = req.url ?? '/';
  const queryAt = rawUrl.indexOf('?');
  const rawPath = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : rawUrl.slice(queryAt + 1);

  // Repeated headers are joined with commas, names lowercased; cookies travel separately.
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] ?? '').toLowerCase();
    const value = req.rawHeaders[i + 1] ?? '';
    if (name === 'authorization') continue; // the token stays out of handler logs
    if (name === 'cookie') {
      cookies = [
        ...(cookies ?? []),
        ...value
          .split(';')
          .map((c) => c.trim())
          .filter((c) => c !== ''),
      ];
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }

  const query: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(rawQueryString)) {
    query[key] = query[key] === undefined ? value : `${query[key]},${value}`;
  }

  const host = headers.host ?? 'localhost';
  const apiId = host.split('.')[0]?.split(':')[0] ?? 'local';
  const text = isTextContentType(headers['content-type']);
  const event: APIGatewayProxyEventV2WithIAMAuthorizer = {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId,
      authorizer: {
        iam: {
          accessKey: caller?.accessKeyId ?? 'LOCALBEARERTOKEN',
          accountId: lambda.accountId,
          callerId: caller === undefined ? 'local-bearer-token' : 'local-sigv4',
          cognitoIdentity: null,
          principalOrgId: '',
          userArn: `arn:aws:iam::${lambda.accountId}:user/local`,
          userId: caller === undefined ? 'local-bearer-token' : 'local-sigv4',
        },
      },
      domainName: host,
      domainPrefix: apiId,
      http: {
        method: req.method ?? 'GET',
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: requestTime(epochMs),
      timeEpoch: epochMs,
    },
    isBase64Encoded: false,
  };
  if (cookies !== undefined) event.cookies = cookies;
  if (Object.keys(query).length > 0) event.queryStringParameters = query;
  if (body.length > 0) {
    event.body = text ? body.toString('utf8') : body.toString('base64');
    event.isBase64Encoded = !text;
  }
  return event;
}

/** An HTTP response as a function URL would send it. */
export interface FunctionUrlResponse {
  status: number;
  headers: Record<string, string>;
  cookies: string[];
  body: Buffer;
}

function json(status: number, value: unknown): FunctionUrlResponse {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    cookies: [],
    body: Buffer.from(JSON.stringify(value)),
  };
}

/**
 * Maps an invocation outcome to the HTTP response: a result with a numeric `statusCode` is used
 * as is (headers, cookies, body, isBase64Encoded); any other value is a 200 JSON body (a string
 * verbatim, anything else serialized); a function error or timeout is a 502, a throttle a 429.
 */
export function toFunctionUrlResponse(outcome: InvokeOutcome): FunctionUrlResponse {
  if (outcome.kind === 'throttled') return json(429, { message: 'Rate Exceeded.' });
  if (outcome.kind !== 'ok') return json(502, { message: 'Internal Server Error' });
  const result = outcome.result;
  if (typeof result === 'string') {
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      cookies: [],
      body: Buffer.from(result),
    };
  }
  const shaped =
    result !== null && typeof result === 'object' ? (result as Record<string, unknown>) : undefined;
  if (shaped === undefined || typeof shaped.statusCode !== 'number') {
    return json(200, result === undefined ? null : result);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries((shaped.headers as Record<string, unknown> | undefined) ?? {})) {
    headers[name.toLowerCase()] = String(value);
  }
  headers['content-type'] ??= 'application/json';
  const raw = shaped.body === undefined || shaped.body === null ? '' : String(shaped.body);
  return {
    status: shaped.statusCode,
    headers,
    cookies: Array.isArray(shaped.cookies) ? shaped.cookies.map(String) : [],
    body: shaped.isBase64Encoded === true ? Buffer.from(raw, 'base64') : Buffer.from(raw),
  };
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (match === null) return false;
  const given = Buffer.from(match[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function send(res: ServerResponse, response: FunctionUrlResponse): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  if (response.cookies.length > 0) res.setHeader('set-cookie', response.cookies);
  res.setHeader('content-length', response.body.length);
  res.end(response.body);
}

/** Serves one function at `http://host:port/`. */
export class FunctionUrlServer {
  /** The bearer token requests must carry (also set with `authType: 'NONE'`, then unused). */
  readonly token: string;
  readonly #options: FunctionUrlServerOptions;
  #server: Server | undefined;
  #url = '';

  constructor(options: FunctionUrlServerOptions) {
    this.#options = options;
    this.token = options.token ?? randomBytes(32).toString('hex');
  }

  /** Base URL, without a trailing slash; empty before {@link FunctionUrlServer.start}. */
  get url(): string {
    return this.#url;
  }

  async start(): Promise<string> {
    const host = this.#options.host ?? '127.0.0.1';
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, json(500, { message: String(error) }));
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    const { port } = server.address() as AddressInfo;
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return this.#url;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const iam = (this.#options.authType ?? 'AWS_IAM') === 'AWS_IAM';
    const key = iam ? this.#options.sigv4 : undefined;
    if (key !== undefined && !/^AWS4-HMAC-SHA256 /.test(req.headers.authorization ?? '')) {
      req.resume();
      send(res, json(403, { Message: 'Forbidden' }));
      return;
    }
    if (iam && key === undefined && !tokenMatches(req.headers.authorization, this.token)) {
      req.resume();
      send(
        res,
        json(401, { message: 'Missing or wrong bearer token (the local stand-in for AWS_IAM signing)' }),
      );
      return;
    }
    const limit = this.#options.maxBodyBytes ?? LAMBDA_PAYLOAD_LIMIT;
    const chunks: Buffer[] = [];
    let size = 0;
    // Read to the end even past the limit, so the 413 reaches a client still sending.
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size <= limit) chunks.push(chunk as Buffer);
    }
    if (size > limit) {
      send(
        res,
        json(413, {
          message: `Request must be smaller than ${limit} bytes for the InvokeFunction operation`,
        }),
      );
      return;
    }
    const body = Buffer.concat(chunks);
    if (key !== undefined) {
      const refusal = await verifySigV4(
        { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body },
        key,
        this.#options.lambda.region,
      );
      if (refusal !== undefined) {
        send(res, json(403, { Message: refusal }));
        return;
      }
    }
    const event = toFunctionUrlEvent(
      req,
      body,
      this.#options.lambda,
      Date.now(),
      key === undefined ? undefined : { accessKeyId: key.accessKeyId },
    );
    send(res, toFunctionUrlResponse(await this.#options.lambda.invoke(event)));
  }
}
