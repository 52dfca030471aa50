/**
 * Ports: the small interfaces through which the pure core touches the world. Each has a local
 * adapter (functions/adapters/local) and an AWS adapter (functions/adapters/aws); the contract
 * suites in test/contract check the semantics written here against both.
 */
import type { CrawlTask, Fingerprint, PreviousFetch, StoredRef } from './types.ts';

/** Wall-clock time in epoch milliseconds. */
export interface Clock {
  now(): number;
}

// ---------------------------------------------------------------------------------------------
// Fetching

/** One HTTP GET, one hop: the fetcher never follows redirects (the core checks every hop). */
export interface FetchRequest {
  url: string;
  /** Cap on the decoded body; the transfer is aborted once it is exceeded. */
  maxBytes: number;
  /** Extra request headers (the adapter adds User-Agent, Accept, Accept-Encoding). */
  headers?: Record<string, string>;
}

/** Stable codes for a fetch that produced no HTTP response. */
export type FetchErrorCode =
  | 'blocked-address' // SSRF guard: the address connected to (or resolved) is not public
  | 'dns' // name did not resolve
  | 'connect' // refused, unreachable, reset before a response
  | 'timeout-connect'
  | 'timeout-headers'
  | 'timeout-idle'
  | 'timeout-total'
  | 'tls'
  | 'protocol' // malformed HTTP
  | 'unsupported-scheme';

/** Headers as received, in order, names lowercased. Repeated headers stay repeated. */
export type HeaderList = [name: string, value: string][];

export interface FetchTimings {
  /** Epoch ms when the request started. */
  startedAt: number;
  /** ms until response headers arrived (absent if they never did). */
  headersMs?: number;
  /** ms until the body ended or the request failed. */
  totalMs: number;
}

export interface FetchResponse {
  ok: true;
  url: string;
  status: number;
  statusText: string;
  httpVersion: string;
  headers: HeaderList;
  /** Request line pieces and headers actually sent (for the WARC request record). */
  request: { method: string; target: string; headers: HeaderList };
  /** Decoded body (Content-Encoding removed), at most `maxBytes`. */
  body: Uint8Array;
  /** Set when the body was cut: at the byte cap, or by the total timeout or minimum rate while trickling. */
  truncated?: 'length' | 'time';
  /** Why the body was cut, in words (which limit, and what arrived), when `truncated` is set. */
  truncatedDetail?: string;
  /**
   * The response headers as received, for the WARC record: names in their original case, values
   * as Latin-1 strings (one character per byte received, so obs-text bytes survive), in order,
   * repeats kept. `headers` is the same list normalized for reading (names lowercased).
   */
  rawHeaders?: HeaderList;
  /** The address actually connected to (already checked by the SSRF guard). */
  remoteAddress?: string;
  timings: FetchTimings;
}

export interface FetchFailure {
  ok: false;
  url: string;
  error: FetchErrorCode;
  message: string;
  remoteAddress?: string;
  timings: FetchTimings;
}

export type FetchResult = FetchResponse | FetchFailure;

/** Performs single-hop GETs with the SSRF guard, timeouts and decoded-byte cap of the crawl. */
export interface Fetcher {
  /** Never throws for network or HTTP problems: they come back as `FetchFailure`. */
  fetch(request: FetchRequest): Promise<FetchResult>;
  close(): Promise<void>;
}

/** What inflating a gzip file gave: at most the cap, or why the bytes are not gzip. */
export type GunzipResult =
  | { ok: true; bytes: Uint8Array; truncated: boolean }
  | { ok: false; message: string };

/**
 * Inflates a gzip file that came as it is (a `.xml.gz` sitemap served as `application/gzip`:
 * no Content-Encoding for the fetcher to undo), keeping at most `maxBytes` of output and
 * stopping there (a gzip bomb costs the cap, never its expansion). Never throws: corrupt input
 * comes back as `{ ok: false }`; what was inflated before a cut is kept.
 */
export type Gunzip = (gzipped: Uint8Array, maxBytes: number) => Promise<GunzipResult>;

// ---------------------------------------------------------------------------------------------
// State

/** A robots.txt outcome cached for one origin (`scheme://host:port`). */
export interface RobotsEntry {
  /** What the fetch produced: rules to apply, allow everything (4xx), or disallow everything (5xx, network). */
  status: 'rules' | 'allow-all' | 'disallow-all';
  /** robots.txt body (capped) when `status` is 'rules'; parsed again on load. */
  body?: string;
  /** HTTP status or fetch error code, for reports. */
  detail: string;
  fetchedAt: number;
  /** Epoch ms after which the entry must be fetched again. */
  expiresAt: number;
  /** The site's sitemap files were queued when a robots.txt was read (kept when it is read again). */
  sitemapsQueued?: boolean;
  /**
   * A network failure, and the origin has never answered robots.txt (this entry and all before it
   * failed): it expires after the short retry backoff rather than `robotsErrorTtlMs`.
   */
  neverAnswered?: boolean;
}

/** Per-origin robots.txt cache. Entries past `expiresAt` are still returned; the caller refetches. */
export interface RobotsCache {
  get(origin: string): Promise<RobotsEntry | undefined>;
  put(origin: string, entry: RobotsEntry): Promise<void>;
}

/** What a claim may say besides its fingerprints. */
export interface SeenClaimOptions {
  /** Each fingerprint's host, in the same order: a store kept by host (the cloud's) needs them. */
  hosts?: readonly string[];
}

/**
 * The durable half of the URL-seen test: a set of 64-bit fingerprints.
 */
export interface SeenStore {
  /**
   * Inserts each fingerprint not yet present, recording `owner` (the fingerprint of the page whose
   * links these are) with it. Resolves, in input order, `true` for a fingerprint this call
   * inserted, or one already inserted by the same owner (so a retried page re-enqueues the
   * children it claimed before it died), and `false` otherwise. Idempotent per (fp, owner).
   */
  claim(fps: readonly Fingerprint[], owner: Fingerprint, options?: SeenClaimOptions): Promise<boolean[]>;
}

/** Content-seen test: exact body hashes. */
export interface ContentSeenStore {
  /**
   * Registers `hash` for `url` if the hash is new and resolves `undefined`; otherwise resolves the
   * URL that registered it first. A repeat call with the same url and hash resolves `undefined`.
   */
  claim(hash: string, url: string): Promise<string | undefined>;
}

/** Where new URLs go. */
export interface Frontier {
  /**
   * Queues tasks. Tasks of one host are served one at a time and, within a host, in the
   * order of the crawl's selection policy. At-least-once: a task may be delivered twice, never lost.
   */
  enqueue(tasks: readonly CrawlTask[]): Promise<void>;
}

/** Raw captures (WARC request/response records). */
export interface Capture {
  url: string;
  fetchedAt: string;
  remoteAddress?: string;
  request: { method: string; target: string; httpVersion: string; headers: HeaderList };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    headers: HeaderList;
    /** The headers as received (see `FetchResponse.rawHeaders`); the WARC record prefers them. */
    rawHeaders?: HeaderList;
    body: Uint8Array;
    truncated?: 'length' | 'time';
  };
  /**
   * Store a WARC `revisit` record (headers only) instead of a `response`: the archive already
   * holds this payload, in the capture of `refersToTargetUri` at `refersToDate`.
   */
  revisit?: CaptureRevisit;
}

/** What a revisit record refers to (WARC 1.1 §6.7), and why the payload is not stored again. */
export interface CaptureRevisit {
  /** `server-not-modified` (a 304 to a conditional GET) or `identical-payload-digest` (same body). */
  profile: 'server-not-modified' | 'identical-payload-digest';
  refersToTargetUri: string;
  /** WARC-Date (or ISO time) of the capture that holds the payload. */
  refersToDate: string;
  /** WARC-Payload-Digest of that capture (`sha1:<BASE32>`), when known (a 304 carries no body to hash). */
  payloadDigest?: string;
}

export interface PageStore {
  /**
   * Appends a capture and returns where it will be; it is durable only after `flush`. Resolves
   * `undefined` when the store keeps no captures (`--no-warc`): the page record then has no `warc`.
   */
  put(capture: Capture): Promise<StoredRef | undefined>;
  /** Makes every capture put so far durable (one write per batch in the cloud). */
  flush(): Promise<void>;
}

/**
 * What an archive holds of each page's last fetch, for a recrawl: the step sends the page's
 * validators back, judges the response against the last copy, and carries its links forward.
 */
export interface RevisitLookup {
  /** The page's last fetch, or undefined when the archive does not hold the URL (a new page). */
  previous(url: string): Promise<PreviousFetch | undefined>;
}
