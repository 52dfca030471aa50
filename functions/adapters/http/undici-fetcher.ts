/**
 * The crawler's HTTP client: one GET, one hop, over undici's keep-alive pools, with the SSRF guard,
 * four timeouts and a cap on the decoded body. It never follows redirects and never throws for a
 * network or HTTP problem; those come back as a `FetchFailure` with a stable code.
 */

import { Buffer } from 'node:buffer';
import { subscribe } from 'node:diagnostics_channel';
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Agent as AgentType, buildConnector as BuildConnector, Dispatcher } from 'undici';
// undici's files, not its package index, which loads far more than these (see undici-lib.d.ts).
import buildConnector from 'undici/lib/core/connect.js';
import Agent from 'undici/lib/dispatcher/agent.js';
import { type AddressAllowance, addressAllowance, checkAddress } from '../../core/net/address-policy.ts';
import type {
  FetchErrorCode,
  Fetcher,
  FetchFailure,
  FetchRequest,
  FetchResponse,
  FetchResult,
  HeaderList,
} from '../../core/ports.ts';
import { BlockedAddressError, guardConnector, guardLookup, type LookupFunction } from './address-guard.ts';
import type { BodyBudget } from './body-budget.ts';
import { type BodyShareScope, currentBodyShareScope } from './body-share-scope.ts';
import { type BodyShares, type BodyStop, DecodedBody } from './decoded-body.ts';
import { describeError, fetchErrorCode } from './fetch-error-code.ts';

/** How the fetcher connects, identifies itself and gives up. */
export interface FetcherOptions {
  userAgent: string;
  /**
   * Non-public addresses the SSRF guard lets through: none (`false`), loopback and private networks
   * (`true`, never cloud metadata), or the networks named (`["127.0.0.0/8", "link-local"]`); see
   * `addressAllowance` in core/net/address-policy.ts.
   */
  allowPrivate: boolean | readonly string[];
  /** DNS lookup plus TCP connect plus TLS handshake. */
  connectTimeoutMs: number;
  /** From the request being sent to the response headers being complete. */
  headersTimeoutMs: number;
  /** Longest silence between two body chunks. */
  idleTimeoutMs: number;
  /** The whole fetch, queueing and body included. */
  totalTimeoutMs: number;
  /**
   * The minimum transfer rate, bytes per second (curl's `--speed-limit`): a body that brings fewer
   * wire bytes than this rate over `minTransferRateTimeMs` is cut there (`truncated: 'time'`).
   * Absent or 0: no such rule (the total timeout still applies).
   */
  minTransferRate?: number;
  /** The window over which `minTransferRate` is measured (curl's `--speed-time`), ms. */
  minTransferRateTimeMs?: number;
  /**
   * Keep-alive connections per origin (default 1: the crawler sends one request per host at a time,
   * and with more, undici opens a second connection for a request that follows right after another).
   */
  maxConnections?: number;
  /** DNS lookup (default `dns.lookup`); tests inject one to stage DNS answers. */
  lookup?: LookupFunction;
  /**
   * Also check DNS answers before connecting (default true). Only tests turn this off, to show that
   * the connect-time check alone stops a name that resolves to a blocked address.
   */
  lookupGuard?: boolean;
  /**
   * The large-body budget this fetcher shares with the process's other fetches (body-budget.ts):
   * a body past its threshold is paused until it holds a share as large as its cap. Absent: every
   * body may grow to its cap at once.
   */
  bodyBudget?: BodyBudget;
}

const ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const ACCEPT_ENCODING = 'gzip, deflate, br';

/** What one request actually put on the wire, filled in by the diagnostics channel below. */
interface SentRequest {
  path: string;
  headerBlock?: string;
  remoteAddress?: string;
}

// undici publishes the exact request head, with its socket, synchronously inside the same call that
// invokes the handler's onRequestStart; the request being started is parked here for that moment.
// This is how the fetcher learns the peer address and the headers undici added (host, connection).
let starting: SentRequest | undefined;
subscribe('undici:client:sendHeaders', (message) => {
  const sent = starting;
  if (sent === undefined) return;
  const { request, headers, socket } = message as {
    request: { path: string };
    headers: string;
    socket: { remoteAddress?: string };
  };
  if (request.path !== sent.path) return;
  starting = undefined;
  sent.headerBlock = headers;
  sent.remoteAddress = socket.remoteAddress;
});

function parseHeaderBlock(block: string): { target?: string; headers: HeaderList } {
  const lines = block.split('\r\n');
  const target = lines[0]?.split(' ')[1];
  const headers: HeaderList = [];
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon > 0) headers.push([line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { target, headers };
}

function toHeaderList(raw: unknown): HeaderList {
  const headers: HeaderList = [];
  if (!Array.isArray(raw)) return headers;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    headers.push([String(raw[i]).toLowerCase(), String(raw[i + 1])]);
  }
  return headers;
}

/**
 * undici's raw headers (Buffers of the bytes llhttp parsed, names as sent) as Latin-1 strings: one
 * character per byte, so writing them back as Latin-1 gives the bytes received, obs-text included.
 */
function toRawHeaderList(raw: unknown): HeaderList {
  const headers: HeaderList = [];
  if (!Array.isArray(raw)) return headers;
  const latin1 = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v));
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([latin1(raw[i]), latin1(raw[i + 1])]);
  return headers;
}

function headerValue(headers: HeaderList, name: string): string | undefined {
  let value: string | undefined;
  for (const [key, v] of headers) {
    if (key === name) value = value === undefined ? v : `${value}, ${v}`;
  }
  return value;
}

/** Fetches with undici; see docs/safety.md for what the guard, timeouts and caps do. */
export class UndiciFetcher implements Fetcher {
  readonly #options: FetcherOptions;
  readonly #agent: AgentType;
  readonly #allowance: AddressAllowance | undefined;
  #closed = false;

  constructor(options: FetcherOptions) {
    this.#options = options;
    // The guard is always on: allowPrivate widens what it lets through, it never lifts it.
    const allowance = addressAllowance(options.allowPrivate);
    this.#allowance = allowance;
    const lookup = options.lookup ?? (dnsLookup as LookupFunction);
    const connector = buildConnector({
      timeout: options.connectTimeoutMs,
      lookup: options.lookupGuard !== false ? guardLookup(lookup, allowance) : lookup,
    } as BuildConnector.BuildOptions);
    this.#agent = new Agent({
      connect: guardConnector(connector, allowance),
      connections: options.maxConnections ?? 1,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      pipelining: 1,
      allowH2: false,
    });
  }

  /** One GET, one hop; resolves within `totalTimeoutMs` and never rejects for network or HTTP problems. */
  async fetch(request: FetchRequest): Promise<FetchResult> {
    const startedAt = Date.now();
    const t0 = performance.now();
    const failNow = (error: FetchErrorCode, message: string, remoteAddress?: string): FetchFailure => ({
      ok: false,
      url: request.url,
      error,
      message,
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
      timings: { startedAt, totalMs: Math.round(performance.now() - t0) },
    });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return failNow('unsupported-scheme', `not an absolute URL: ${request.url}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return failNow('unsupported-scheme', `${url.protocol} URLs are not fetched (only http: and https:)`);
    }
    // An IP-literal URL is refused before any socket exists (the connect-time check would stop
    // it too, but only after a TCP connect, and for https after the TLS handshake).
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) {
      const checked = checkAddress(host, this.#allowance);
      if (!checked.allowed) {
        return failNow('blocked-address', new BlockedAddressError(host, checked.addressClass).message, host);
      }
    }
    if (this.#closed) return failNow('connect', 'the fetcher is closed');
    const budget = this.#options.bodyBudget;
    let shares: BodyShares | undefined;
    if (budget !== undefined) {
      // Read here, in the caller's async context: the crawl step this fetch belongs to, if any.
      const scope: BodyShareScope | undefined = currentBodyShareScope();
      scope?.fetchStarts();
      shares = { budget, scope };
    }
    return new Promise<FetchResult>((resolve) => {
      new Attempt(url, request, this.#options, shares, startedAt, t0, resolve).start(this.#agent);
    });
  }

  /** Closes the keep-alive pools; fetches in flight finish first (each is bounded by its timeouts). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#agent.close();
  }
}

/** Raised into undici to stop a transfer the fetcher has already settled (cap, total timeout). */
class TransferStoppedError extends Error {
  override readonly name = 'TransferStoppedError';
  readonly code = 'TRANSFER_STOPPED';
}

/** One request in flight: the undici dispatch handler, the body being decoded and the total timer. */
class Attempt implements Dispatcher.DispatchHandler {
  readonly #url: URL;
  readonly #request: FetchRequest;
  readonly #options: FetcherOptions;
  readonly #shares: BodyShares | undefined;
  readonly #startedAt: number;
  readonly #t0: number;
  readonly #resolve: (result: FetchResult) => void;
  readonly #sent: SentRequest;
  readonly #headersToSend: string[];
  #timer: NodeJS.Timeout | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #status = 0;
  #statusText = '';
  #headers: HeaderList = [];
  #rawHeaders: HeaderList = [];
  #headersMs: number | undefined;
  #body: DecodedBody | undefined;
  /** The server finished sending the body (as opposed to our cutting it short). */
  #wireEnded = false;
  /** Checks the minimum transfer rate once per window while the body arrives. */
  #rateTimer: NodeJS.Timeout | undefined;

  constructor(
    url: URL,
    request: FetchRequest,
    options: FetcherOptions,
    shares: BodyShares | undefined,
    startedAt: number,
    t0: number,
    resolve: (result: FetchResult) => void,
  ) {
    this.#url = url;
    this.#request = request;
    this.#options = options;
    this.#shares = shares;
    this.#startedAt = startedAt;
    this.#t0 = t0;
    this.#resolve = resolve;
    this.#sent = { path: `${url.pathname}${url.search}` };
    const headers = new Map<string, [string, string]>([
      ['user-agent', ['user-agent', options.userAgent]],
      ['accept', ['accept', ACCEPT]],
      ['accept-encoding', ['accept-encoding', ACCEPT_ENCODING]],
    ]);
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      headers.set(name.toLowerCase(), [name.toLowerCase(), value]);
    }
    this.#headersToSend = [...headers.values()].flat();
  }

  start(agent: AgentType): void {
    this.#timer = setTimeout(() => this.#onTotalTimeout(), this.#options.totalTimeoutMs);
    try {
      agent.dispatch(
        { origin: this.#url.origin, path: this.#sent.path, method: 'GET', headers: this.#headersToSend },
        this,
      );
    } catch (error) {
      this.#fail(error);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#settled) {
      controller.abort(new TransferStoppedError('the fetch was already settled'));
      return;
    }
    this.#controller = controller;
    starting = this.#sent;
    const sent = this.#sent;
    queueMicrotask(() => {
      if (starting === sent) starting = undefined;
    });
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    _headers: unknown,
    statusMessage?: string,
  ): void {
    if (this.#settled || statusCode < 200) return; // 1xx: informational, the real response follows
    this.#headersMs = Math.round(performance.now() - this.#t0);
    this.#status = statusCode;
    this.#statusText = statusMessage ?? '';
    this.#headers = toHeaderList(controller.rawHeaders);
    this.#rawHeaders = toRawHeaderList(controller.rawHeaders);
    // A body waiting for a share of the budget is paused: undici's idle (body) timeout does not
    // run while the parser is paused, and the total timeout still ends the wait.
    this.#body = new DecodedBody(
      headerValue(this.#headers, 'content-encoding'),
      this.#request.maxBytes,
      {
        done: (stop) => this.#onBodyDone(stop),
        failed: (error) => this.#onBodyFailed(error),
        drain: () => this.#controller?.resume(),
      },
      this.#shares,
    );
    this.#watchTransferRate(this.#body);
  }

  /**
   * curl's low-speed rule: at the end of every window, the body must have brought at least
   * `minTransferRate` bytes per second during it, or it is cut as a trickle (the total timeout
   * would end it too, but only after the whole budget).
   */
  #watchTransferRate(body: DecodedBody): void {
    const rate = this.#options.minTransferRate ?? 0;
    const windowMs = this.#options.minTransferRateTimeMs ?? 0;
    if (rate <= 0 || windowMs <= 0) return;
    const needed = Math.ceil((rate * windowMs) / 1000);
    let atWindowStart = 0;
    let waitsAtWindowStart = 0;
    this.#rateTimer = setInterval(() => {
      const received = body.wireLength - atWindowStart;
      atWindowStart = body.wireLength;
      // A window in which we paused the body for a share of the budget says nothing of the server.
      const waited = body.waitingForShare || body.shareWaits !== waitsAtWindowStart;
      waitsAtWindowStart = body.shareWaits;
      if (received >= needed || waited || this.#settled) return;
      body.destroy();
      this.#respond(
        'time',
        `the body arrived slower than the minimum transfer rate of ${rate} bytes/s: ` +
          `${received} bytes in the last ${windowMs} ms (${body.wireLength} in all)`,
      );
      this.#stopTransfer('the body was slower than the minimum transfer rate');
    }, windowMs);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled || this.#body === undefined) return;
    // Backpressure from the decoders: undici stops reading the socket until they drain.
    if (!this.#body.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.#wireEnded = true;
    if (this.#settled) return;
    if (this.#body === undefined) {
      this.#fail(new Error('the response ended without a final status'));
      return;
    }
    this.#body.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#settled) return;
    this.#body?.destroy();
    this.#fail(error);
  }

  #onBodyDone(stop: BodyStop): void {
    if (stop === 'length') {
      this.#respond('length', `the decoded body reached the byte cap of ${this.#request.maxBytes} bytes`);
      this.#stopTransfer('the body reached the byte cap');
      return;
    }
    this.#respond(undefined);
    // The decoded stream ended before the wire did (bytes after a gzip member): read no further.
    if (!this.#wireEnded) this.#stopTransfer('the encoded body ended before the response did');
  }

  #onBodyFailed(error: Error): void {
    const encoding = headerValue(this.#headers, 'content-encoding') ?? '';
    this.#settle({
      ok: false,
      url: this.#request.url,
      error: 'protocol',
      message:
        `could not decode the "${encoding}" body of a ${this.#status} response after ` +
        `${this.#body?.length ?? 0} decoded bytes: ${describeError(error)}`,
      ...this.#remote(),
      timings: this.#timings(),
    });
    this.#stopTransfer('the body could not be decoded');
  }

  #onTotalTimeout(): void {
    if (this.#settled) return;
    if (this.#body !== undefined) {
      // Headers arrived and the body is trickling: keep what was decoded, mark it cut by time.
      this.#body.destroy();
      this.#respond(
        'time',
        `the total timeout of ${this.#options.totalTimeoutMs} ms expired during the body ` +
          `(${this.#body.wireLength} bytes received)`,
      );
    } else {
      this.#settle(
        this.#failure(
          'timeout-total',
          `no response within the total timeout of ${this.#options.totalTimeoutMs} ms`,
        ),
      );
    }
    this.#stopTransfer('the total timeout expired');
  }

  #stopTransfer(why: string): void {
    // Without a controller the request is still queued or connecting; onRequestStart aborts it.
    this.#controller?.abort(new TransferStoppedError(why));
  }

  #respond(truncated: 'length' | 'time' | undefined, detail?: string): void {
    const body = this.#body?.bytes() ?? new Uint8Array(0);
    const sent = this.#sent.headerBlock === undefined ? undefined : parseHeaderBlock(this.#sent.headerBlock);
    const response: FetchResponse = {
      ok: true,
      url: this.#request.url,
      status: this.#status,
      statusText: this.#statusText,
      httpVersion: '1.1',
      headers: this.#headers,
      rawHeaders: this.#rawHeaders,
      request: {
        method: 'GET',
        target: sent?.target ?? this.#sent.path,
        headers: sent?.headers ?? this.#fallbackRequestHeaders(),
      },
      body,
      ...(truncated === undefined ? {} : { truncated }),
      ...(truncated === undefined || detail === undefined ? {} : { truncatedDetail: detail }),
      ...this.#remote(),
      timings: this.#timings(),
    };
    this.#settle(response);
  }

  /** What was handed to undici, with the Host header undici derives from the origin. */
  #fallbackRequestHeaders(): HeaderList {
    const headers: HeaderList = [['host', this.#url.host]];
    for (let i = 0; i + 1 < this.#headersToSend.length; i += 2) {
      headers.push([this.#headersToSend[i]!, this.#headersToSend[i + 1]!]);
    }
    return headers;
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    const code = fetchErrorCode(error);
    const failure = this.#failure(code, this.#messageFor(code, error));
    if (error instanceof BlockedAddressError) failure.remoteAddress = error.address;
    this.#settle(failure);
  }

  #messageFor(code: FetchErrorCode, error: unknown): string {
    const o = this.#options;
    const received =
      this.#body === undefined
        ? ''
        : ` (status ${this.#status}, ${this.#body.wireLength} body bytes received)`;
    switch (code) {
      case 'blocked-address':
        return describeError(error);
      case 'timeout-connect':
        return `no connection to ${this.#url.host} within ${o.connectTimeoutMs} ms`;
      case 'timeout-headers':
        return `no response headers within ${o.headersTimeoutMs} ms of sending the request`;
      case 'timeout-idle':
        return `the body stalled: no data for ${o.idleTimeoutMs} ms${received}`;
      case 'dns':
        return `DNS lookup failed for ${this.#url.hostname}: ${describeError(error)}`;
      case 'tls':
        return `TLS with ${this.#url.host} failed: ${describeError(error)}`;
      case 'protocol':
        return `malformed HTTP response from ${this.#url.host}: ${describeError(error)}${received}`;
      default:
        return this.#body === undefined
          ? `connection to ${this.#url.host} failed: ${describeError(error)}`
          : `connection lost during the body: ${describeError(error)}${received}`;
    }
  }

  #failure(error: FetchErrorCode, message: string): FetchFailure {
    return { ok: false, url: this.#request.url, error, message, ...this.#remote(), timings: this.#timings() };
  }

  #remote(): { remoteAddress?: string } {
    const address = this.#sent.remoteAddress;
    return address === undefined ? {} : { remoteAddress: address };
  }

  #timings(): FetchResponse['timings'] {
    return {
      startedAt: this.#startedAt,
      ...(this.#headersMs === undefined ? {} : { headersMs: this.#headersMs }),
      totalMs: Math.round(performance.now() - this.#t0),
    };
  }

  #settle(result: FetchResult): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    clearInterval(this.#rateTimer);
    this.#resolve(result);
  }
}
