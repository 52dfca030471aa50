/**
 * The deployed crawler's HTTP API as the CLI calls it: JSON in and out over `fetch`, signed with
 * SigV4 for service `lambda` by the AWS SDK's own signer (`@smithy/signature-v4`) with credentials
 * from the SDK's default chain (profiles, SSO, environment, roles), or with the local stand-in's
 * bearer token. Every failure becomes a {@link CloudCliError} that says what to do about it.
 */
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { MAX_JSON_ANSWER_BYTES, readAnswerText } from './answer-bounds.ts';
import { CloudCliError } from './cloud-cli-error.ts';
import { type CloudTarget, noCredentials, regionOfUrl } from './cloud-target.ts';

/** An answer of the API. */
export interface ApiAnswer {
  status: number;
  /** The parsed JSON body (undefined for an empty or non-JSON body). */
  json: unknown;
}

/** How long one API call may take. */
const CALL_TIMEOUT_MS = 60_000;
/** Answers worth a retry of an idempotent call: throttled, or the function failed or timed out. */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const RETRY_DELAYS_MS = [500, 1000, 2000];

/** Network error codes that mean "nothing answers at this URL". */
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
};

/** The network error code inside a `fetch` failure, if any. */
export function networkCode(error: unknown): string | undefined {
  let current = error as { code?: unknown; cause?: unknown; name?: string } | undefined;
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    if (typeof current.code === 'string') return current.code;
    if (current.name === 'TimeoutError') return 'ETIMEDOUT';
    current = current.cause as typeof current;
  }
  return undefined;
}

/** "cannot reach ..." for a network failure of a request to `url`. */
export function unreachable(url: string, from: string, error: unknown): CloudCliError {
  const code = networkCode(error);
  const what = code === undefined ? (error as Error).message : (UNREACHABLE[code] ?? code);
  const hint = from.endsWith('cloud-local.json') ? ' (is npm run cloud:local still running?)' : '';
  return new CloudCliError('UNREACHABLE', `cannot reach the API at ${url} (from ${from}): ${what}${hint}`, {
    cause: error,
  });
}

/** The client. */
export class CloudApi {
  readonly target: CloudTarget;
  #credentials: AwsCredentialIdentityProvider | undefined;
  #signer: Promise<{ sign: (request: SignableRequest) => Promise<SignableRequest> }> | undefined;
  /** The access key id requests were last signed with (for messages). */
  #accessKeyId: string | undefined;
  /** The most bytes of a JSON answer. */
  readonly maxAnswerBytes: number;
  /** How long one call may take, its answer read whole included. */
  readonly callTimeoutMs: number;

  /** `credentials`: instead of the default chain (tests); the bounds: smaller ones (tests). */
  constructor(
    target: CloudTarget,
    options: {
      credentials?: AwsCredentialIdentityProvider;
      maxAnswerBytes?: number;
      callTimeoutMs?: number;
    } = {},
  ) {
    this.target = target;
    this.#credentials = options.credentials;
    this.maxAnswerBytes = options.maxAnswerBytes ?? MAX_JSON_ANSWER_BYTES;
    this.callTimeoutMs = options.callTimeoutMs ?? CALL_TIMEOUT_MS;
  }

  /** GET `path`; the JSON body of a 2xx answer, or the error it means. */
  async get<T>(path: string, context: ErrorContext = {}): Promise<T> {
    return this.#expect<T>(await this.call('GET', path), 'GET', path, context);
  }

  /** POST `body` as JSON. */
  async post<T>(path: string, body: unknown, context: ErrorContext = {}): Promise<T> {
    return this.#expect<T>(await this.call('POST', path, body), 'POST', path, context);
  }

  /** DELETE `path`: resolves the answer (the caller judges 409). */
  async delete(path: string, context: ErrorContext = {}): Promise<ApiAnswer> {
    const answer = await this.call('DELETE', path);
    if (answer.status === 409) return answer;
    await this.#expect(answer, 'DELETE', path, context);
    return answer;
  }

  /**
   * Sends one request (retried on throttling and 502-504 when it is a GET) and resolves the answer
   * whatever its status; throws only when there is no answer (no credentials, unreachable) or
   * one over {@link maxAnswerBytes} (read as it streams, refused past the bound).
   */
  async call(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const response = await this.send(method, path, body);
    let text: string;
    try {
      text = await readAnswerText(response, `${method} ${path}`, { max: this.maxAnswerBytes });
    } catch (error) {
      if (error instanceof CloudCliError) throw error;
      throw this.stalled(`${method} ${path}`, error);
    }
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  }

  /** The raw `fetch` response (a streamed body, e.g. the dataset), after the same retries. */
  async send(method: string, path: string, body?: unknown): Promise<Response> {
    const url = `${this.target.api}${path}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      const headers = await this.#headers(method, url, payload);
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          ...(payload === undefined ? {} : { body: payload }),
          signal: AbortSignal.timeout(this.callTimeoutMs),
        });
      } catch (error) {
        if (method === 'GET' && attempt < RETRY_DELAYS_MS.length && networkCode(error) === 'ECONNRESET') {
          await sleep(RETRY_DELAYS_MS[attempt]!);
          continue;
        }
        throw unreachable(this.target.api, this.target.from, error);
      }
      if (method === 'GET' && RETRY_STATUSES.has(response.status) && attempt < RETRY_DELAYS_MS.length) {
        await response.body?.cancel();
        await sleep(RETRY_DELAYS_MS[attempt]!);
        continue;
      }
      return response;
    }
  }

  /** The error of an answer whose body stopped (the call's time ran out) or broke off. */
  stalled(request: string, error: unknown): CloudCliError {
    if (networkCode(error) === 'ETIMEDOUT') {
      return new CloudCliError(
        'TIMEOUT',
        `the API at ${this.target.api} did not finish its answer to ${request} within ${this.callTimeoutMs / 1000} s: run the same command again`,
        { cause: error },
      );
    }
    return unreachable(this.target.api, this.target.from, error);
  }

  /**
   * The headers that authenticate a GET of `url` (the bearer token, or its SigV4 signature): the
   * cloud dashboard's server calls the API with them.
   */
  authenticate(request: { method: string; url: string }): Promise<Record<string, string>> {
    return this.#headers(request.method, request.url, undefined);
  }

  /** The request's headers: the bearer token, or the SigV4 signature of the whole request. */
  async #headers(method: string, url: string, payload: string | undefined): Promise<Record<string, string>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const auth = this.target.auth;
    if (auth.kind === 'bearer') return { ...headers, authorization: `Bearer ${auth.token}` };
    const parsed = new URL(url);
    const query: Record<string, string> = {};
    for (const [name, value] of parsed.searchParams) query[name] = value;
    const signer = await this.#signerOf(auth.region, auth.profile);
    const signed = await signer.sign({
      method,
      protocol: parsed.protocol,
      hostname: parsed.hostname,
      ...(parsed.port === '' ? {} : { port: Number(parsed.port) }),
      path: parsed.pathname,
      query,
      // Host as fetch sends it (with a non-default port): it is one of the signed headers.
      headers: { ...headers, host: parsed.host },
      ...(payload === undefined ? {} : { body: payload }),
    });
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
      if (name.toLowerCase() !== 'host') out[name] = value;
    }
    return out;
  }

  #signerOf(region: string, profile: string | undefined) {
    this.#signer ??= (async () => {
      const [{ SignatureV4 }, { Hash }, { fromNodeProviderChain }] = await Promise.all([
        import('@smithy/signature-v4'),
        import('@smithy/core/serde'),
        import('@aws-sdk/credential-providers'),
      ]);
      const chain = this.#credentials ?? fromNodeProviderChain(profile === undefined ? {} : { profile });
      // Resolved once here, so "no credentials" is said before any request.
      let credentials: AwsCredentialIdentity;
      try {
        credentials = await chain();
      } catch (error) {
        throw noCredentials(error);
      }
      this.#accessKeyId = credentials.accessKeyId;
      const signer = new SignatureV4({
        service: 'lambda',
        region,
        credentials: async () => {
          const fresh = await chain();
          this.#accessKeyId = fresh.accessKeyId;
          return fresh;
        },
        sha256: Hash.bind(null, 'sha256'),
      });
      return { sign: (request: SignableRequest) => signer.sign(request) as Promise<SignableRequest> };
    })();
    return this.#signer;
  }

  async #expect<T>(answer: ApiAnswer, method: string, path: string, context: ErrorContext): Promise<T> {
    if (answer.status >= 200 && answer.status < 300) return answer.json as T;
    throw apiError(answer, {
      request: `${method} ${path}`,
      target: this.target,
      ...(this.#accessKeyId === undefined ? {} : { accessKeyId: this.#accessKeyId }),
      ...context,
    });
  }
}

/** A request as the signer takes it. */
interface SignableRequest {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: string;
}

/** What a message about a failed call can name. */
export interface ErrorContext {
  /** The crawl the call was about (a 404 names it). */
  crawlId?: string;
}

/** The error an unsuccessful answer means. */
export function apiError(
  answer: ApiAnswer,
  where: ErrorContext & { request: string; target: CloudTarget; accessKeyId?: string },
): CloudCliError {
  const body = (answer.json ?? {}) as {
    error?: string;
    problems?: string[];
    code?: string;
    detail?: string;
    Message?: string;
    message?: string;
  };
  const { target } = where;
  switch (answer.status) {
    case 400:
      return new CloudCliError(
        'INVALID',
        [
          `the API refused the request: ${body.error ?? 'invalid'}`,
          ...(body.problems ?? []).map((p) => `  ${p}`),
        ].join('\n'),
      );
    case 401:
      return new CloudCliError(
        'ACCESS_DENIED',
        `the API at ${target.api} refused the bearer token (401: ${body.message ?? body.Message ?? 'unauthorized'}): ` +
          'give the token npm run cloud:local printed (--token or CRAWLSTACK_TOKEN), or run this from the project folder',
      );
    case 403: {
      const message = body.Message ?? body.message ?? 'Forbidden';
      if (/scoped to a valid region/i.test(message) && target.auth.kind === 'sigv4') {
        const expected = /expected '([^']+)'/.exec(message)?.[1] ?? regionOfUrl(target.api);
        return new CloudCliError(
          'WRONG_REGION',
          `requests were signed for region ${target.auth.region} (from ${target.auth.regionFrom}), but the API at ` +
            `${target.api} is ${expected === undefined ? 'in another region' : `in ${expected}`}: ` +
            `pass --region ${expected ?? '<its region>'} (403: ${message})`,
        );
      }
      const who =
        where.accessKeyId === undefined ? 'the caller' : `the caller (access key ${where.accessKeyId})`;
      return new CloudCliError(
        'ACCESS_DENIED',
        `access denied by the API's function URL ${target.api} (403: ${message}). ${who} needs ` +
          "lambda:InvokeFunctionUrl on the stack's Api function, and requests signed with its right secret " +
          'access key (an IAM policy: Action lambda:InvokeFunctionUrl, Resource the function ARN)',
      );
    }
    case 404:
      return new CloudCliError(
        'NOT_FOUND',
        where.crawlId === undefined
          ? `the API at ${target.api} has no ${where.request} (404: ${body.error ?? 'not found'})`
          : `no crawl ${where.crawlId} at ${target.api} (crawlstack cloud list shows the crawls there)`,
      );
    case 409:
      return new CloudCliError(
        'CONFLICT',
        `the API cannot do ${where.request} now (409): ${body.error ?? 'conflict'}`,
      );
    default: {
      if (body.code === 'access-denied') {
        const action = /perform: (\S+) on resource: (\S+)/.exec(body.detail ?? '');
        return new CloudCliError(
          'API_ACCESS_DENIED',
          `the API's own role may not ${action === null ? 'make an AWS call it needs' : `call ${action[1]} on ${action[2]}`} ` +
            `(AWS: ${body.detail ?? 'access denied'}). The deployed stack's grants do not match its code: deploy this ` +
            'version again (npx cdk deploy)',
        );
      }
      return new CloudCliError(
        'SERVER',
        `the API answered ${answer.status} to ${where.request}: ${body.error ?? body.message ?? body.Message ?? 'no message'}` +
          (answer.status >= 500 ? ' (its logs are in CloudWatch, log group /aws/lambda/<stack>-Api...)' : ''),
      );
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
