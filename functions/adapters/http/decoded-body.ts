/**
 * A response body being received: removes the Content-Encoding with node:zlib streams and keeps at
 * most `maxBytes` DECODED bytes, stopping the decoders as soon as the cap is crossed (so a 10 KB
 * gzip bomb costs ~maxBytes of work and memory, never its full expansion).
 */
import { Buffer } from 'node:buffer';
import type { Transform } from 'node:stream';
import {
  constants,
  createBrotliDecompress,
  createInflate,
  createInflateRaw,
  inflateRawSync,
  inflateSync,
} from 'node:zlib';
import type { BodyBudget, ReleaseShare } from './body-budget.ts';
import type { BodyShareScope } from './body-share-scope.ts';
import { ByteBlocks } from './byte-blocks.ts';
import { GunzipMembers, gunzipMembersSync } from './gunzip-members.ts';

/** Why receiving stopped: the stream ended, or the decoded cap was crossed. */
export type BodyStop = 'end' | 'length';

/** What the owner of a `DecodedBody` hears back. */
export interface DecodedBodyEvents {
  /** Receiving is over ('length': the cap was crossed; stop the transfer). Called at most once. */
  done(stop: BodyStop): void;
  /** The encoded body is corrupt. Called at most once, never after `done`. */
  failed(error: Error): void;
  /** The decoders caught up after `write` returned false: resume the transfer. */
  drain(): void;
}

type Coding = 'gzip' | 'deflate' | 'br';

/** The large-body budget a body draws on, and the crawl step that keeps its share, if any. */
export interface BodyShares {
  budget: BodyBudget;
  /** Given the share when the body is over, to give back when its step ends. */
  scope?: BodyShareScope | undefined;
}

/**
 * Extra wire bytes allowed beyond `maxBytes` when the body is encoded. Incompressible data grows a
 * little when compressed; the wire cap only exists to stop streams that decode to nothing.
 */
const WIRE_SLACK = 64 * 1024;

/**
 * An encoded body up to this many wire bytes is kept whole and decoded in one synchronous call
 * when it ends. Streams hand every chunk to libuv's thread pool and back: on a crawl of the
 * PostgreSQL docs (about 4 KB gzipped per page) that round trip was a quarter of the main
 * thread's time spent waiting, plus the stream machinery. Larger bodies, and any body that
 * decodes past the cap, take the streaming path, which stops as soon as the cap is crossed.
 */
const WHOLE_DECODE_WIRE_BYTES = 256 * 1024;
/**
 * ...and in at most this many chunks. A page's compressed body comes in one or a few reads; a
 * body that comes in many small writes (a compression bomb pumped out unit by unit) is decoded as
 * it comes, so it is cut at the cap without waiting for the sender to finish.
 */
const WHOLE_DECODE_CHUNKS = 8;

/**
 * Wire bytes for the streaming decoders are gathered up to this size (or the end of the current
 * turn of the event loop) before a write. Each write is a round trip to libuv's thread pool: a
 * body sent in 1-byte chunks would otherwise cost one per byte.
 */
const DECODER_WRITE_BYTES = 16 * 1024;

// Lenient at the end of input, as browsers are: a body cut short still yields what it decoded.
const ZLIB_OPTIONS = { finishFlush: constants.Z_SYNC_FLUSH };
const BROTLI_OPTIONS = { finishFlush: constants.BROTLI_OPERATION_FLUSH };

/**
 * Parses a Content-Encoding value into the codings to undo, outermost (last applied) first.
 * `[]` means nothing to undo; `undefined` means a coding we cannot undo, so the bytes are kept as
 * they came (the header still says what they are).
 */
export function parseContentEncoding(value: string | undefined): Coding[] | undefined {
  if (value === undefined) return [];
  const codings: Coding[] = [];
  for (const raw of value.split(',')) {
    const token = raw.trim().toLowerCase();
    if (token === '' || token === 'identity') continue;
    if (token === 'gzip' || token === 'x-gzip') codings.push('gzip');
    else if (token === 'deflate') codings.push('deflate');
    else if (token === 'br') codings.push('br');
    else return undefined;
  }
  return codings.reverse();
}

/** RFC 1950 header check: "deflate" is meant to be zlib-wrapped, but some servers send raw deflate. */
function isZlibHeader(first: number, second: number): boolean {
  return (first & 0x0f) === 8 && first >> 4 <= 7 && ((first << 8) | second) % 31 === 0;
}

function decoderFor(coding: Coding, sniffed: 'zlib' | 'raw'): Transform {
  // Not zlib's gunzip: it drops a decoded page when bytes that are not gzip follow it.
  if (coding === 'gzip') return new GunzipMembers();
  if (coding === 'br') return createBrotliDecompress(BROTLI_OPTIONS);
  return sniffed === 'zlib' ? createInflate(ZLIB_OPTIONS) : createInflateRaw(ZLIB_OPTIONS);
}

/**
 * Collects one response body. Feed it wire bytes with `write` (honour a `false` return by pausing
 * until `events.drain`), then `end`. The owner reads `bytes()` after `done`, or at any moment when
 * it gives up (total timeout) to keep what was decoded so far.
 *
 * With a {@link BodyBudget}, a body whose cap is above the budget's threshold keeps at most the
 * threshold until it holds a share of the budget as large as its cap: past it, the decoded bytes
 * wait (the decoders are paused, so `write` returns false and the owner pauses the socket) until
 * the share is granted. The share is given back when the body is done, failed or destroyed, after
 * the owner has taken the bytes (`done` and `failed` are called first), so it also covers the one
 * copy `bytes()` makes; or, in a crawl step's scope, when that step ends.
 */
export class DecodedBody {
  readonly #codings: Coding[];
  readonly #maxBytes: number;
  readonly #events: DecodedBodyEvents;
  /** The decoded bytes, copied: never one Buffer per piece the wire delivered. */
  readonly #kept = new ByteBlocks();
  #wireLength = 0;
  #head: Transform | undefined;
  #streams: Transform[] = [];
  /** Wire bytes held back until the first two are known (to tell zlib from raw deflate). */
  #pending: Buffer[] = [];
  #pendingLength = 0;
  /** Wire bytes gathered for the next decoder write (see DECODER_WRITE_BYTES). */
  #gathered = new ByteBlocks();
  #flushScheduled = false;
  #over = false;
  readonly #budget: BodyBudget | undefined;
  readonly #scope: BodyShareScope | undefined;
  /** Whether this body holds a share of the budget, waits for one, or has not needed one. */
  #share: 'none' | 'waiting' | 'held' = 'none';
  #releaseShare: ReleaseShare | undefined;
  /** Decoded bytes past the threshold that wait for the share (copies). */
  #parked: Buffer[] = [];
  /** The wire ended while the body waited for its share (identity coding). */
  #endPending = false;
  #shareWaits = 0;

  /**
   * `contentEncoding` is the response's Content-Encoding header (all values joined with ", ");
   * `shares`, the process's large-body budget, if any.
   */
  constructor(
    contentEncoding: string | undefined,
    maxBytes: number,
    events: DecodedBodyEvents,
    shares?: BodyShares,
  ) {
    this.#codings = parseContentEncoding(contentEncoding) ?? [];
    this.#maxBytes = maxBytes;
    this.#events = events;
    // A cap within the threshold never needs a share.
    const budget = shares?.budget;
    this.#budget = budget !== undefined && maxBytes > budget.thresholdBytes ? budget : undefined;
    this.#scope = shares?.scope;
  }

  /** Whether the body is paused waiting for a share of the budget. */
  get waitingForShare(): boolean {
    return this.#share === 'waiting';
  }

  /** How many times the body has begun to wait for a share (0 or 1). */
  get shareWaits(): number {
    return this.#shareWaits;
  }

  /** Decoded bytes received so far (at most `maxBytes`). */
  get length(): number {
    return this.#kept.length;
  }

  /** Bytes received from the wire so far. */
  get wireLength(): number {
    return this.#wireLength;
  }

  /** The decoded bytes kept so far, copied into one buffer. */
  bytes(): Buffer {
    return this.#kept.toBuffer();
  }

  /** Feeds wire bytes; returns `false` when the producer should pause until `events.drain`. */
  write(chunk: Buffer): boolean {
    if (this.#over) return true;
    this.#wireLength += chunk.length;
    if (this.#codings.length === 0) {
      this.#accept(chunk);
      return this.#share !== 'waiting';
    }
    if (this.#wireLength > this.#maxBytes + WIRE_SLACK) {
      this.#finish('length');
      return true;
    }
    if (this.#head === undefined) {
      // A copy: the chunk may be a view of a larger socket buffer, or one of millions of tiny ones.
      this.#pending.push(Buffer.from(chunk));
      this.#pendingLength += chunk.length;
      if (this.#decodesWhole()) return true;
      if (this.#codings[0] === 'deflate' && this.#pendingLength < 2) return true;
      return this.#start();
    }
    this.#gathered.append(chunk);
    if (this.#gathered.length >= DECODER_WRITE_BYTES) return this.#flushGathered();
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => {
        this.#flushScheduled = false;
        this.#flushGathered();
      });
    }
    return true;
  }

  /** Writes the gathered wire bytes to the head decoder; returns its backpressure answer. */
  #flushGathered(): boolean {
    if (this.#over || this.#head === undefined || this.#gathered.length === 0) return true;
    const bytes = this.#gathered.toBuffer();
    this.#gathered = new ByteBlocks();
    return this.#head.write(bytes);
  }

  /** The wire body is complete. */
  end(): void {
    if (this.#over) return;
    if (this.#codings.length === 0 && this.#share === 'waiting') {
      this.#endPending = true;
      return;
    }
    if (this.#codings.length === 0 || this.#wireLength === 0) {
      this.#finish('end');
      return;
    }
    if (this.#head === undefined) {
      if (this.#decodeWhole()) return;
      this.#start();
    }
    this.#flushGathered();
    this.#head?.end();
  }

  /**
   * Whether the body so far may still be decoded whole at its end: one gzip or deflate coding,
   * small, in few chunks. Not brotli: its decoder fills a window of up to 16 MiB before it
   * checks an output limit, so a brotli bomb costs a whole window either way (40-290 ms here),
   * and decoding it twice (whole, then streamed to keep the capped part) doubles that.
   */
  #decodesWhole(): boolean {
    return (
      this.#codings.length === 1 &&
      this.#codings[0] !== 'br' &&
      this.#pendingLength <= WHOLE_DECODE_WIRE_BYTES &&
      this.#pending.length <= WHOLE_DECODE_CHUNKS
    );
  }

  /**
   * Decodes a small gzip or deflate body in one call. Returns false, keeping the wire bytes, when
   * it decodes past the cap: the streaming path then keeps exactly `maxBytes` of it.
   */
  #decodeWhole(): boolean {
    if (!this.#decodesWhole()) return false;
    const wire = Buffer.concat(this.#pending, this.#pendingLength);
    // Without a share, at most the threshold: a larger result takes the streaming path, which waits.
    const limit = this.#budget === undefined ? this.#maxBytes : this.#budget.thresholdBytes;
    const options = { maxOutputLength: Math.max(1, limit) };
    let decoded: Buffer;
    try {
      if (this.#codings[0] === 'gzip') decoded = gunzipMembersSync(wire, options.maxOutputLength).decoded;
      else if (wire.length >= 2 && isZlibHeader(wire[0]!, wire[1]!))
        decoded = inflateSync(wire, { ...ZLIB_OPTIONS, ...options });
      else decoded = inflateRawSync(wire, { ...ZLIB_OPTIONS, ...options });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return false;
      this.#fail(error as Error);
      return true;
    }
    this.#pending = [];
    this.#accept(decoded);
    this.#finish('end');
    return true;
  }

  /** Stops the decoders (the owner gave up on the body); no further events. */
  destroy(): void {
    this.#over = true;
    this.#teardown();
    this.#giveShareBack();
  }

  #start(): boolean {
    const wire = Buffer.concat(this.#pending, this.#pendingLength);
    this.#pending = [];
    const sniffed = wire.length >= 2 && isZlibHeader(wire[0]!, wire[1]!) ? 'zlib' : 'raw';
    this.#streams = this.#codings.map((coding, i) => decoderFor(coding, i === 0 ? sniffed : 'zlib'));
    for (const stream of this.#streams) stream.on('error', (error: Error) => this.#fail(error));
    for (let i = 0; i + 1 < this.#streams.length; i += 1) this.#streams[i]!.pipe(this.#streams[i + 1]!);
    const tail = this.#streams[this.#streams.length - 1]!;
    tail.on('data', (chunk: Buffer) => this.#accept(chunk));
    tail.on('end', () => this.#finish('end'));
    const head = this.#streams[0]!;
    head.on('drain', () => {
      if (!this.#over) this.#events.drain();
    });
    this.#head = head;
    return head.write(wire);
  }

  #accept(chunk: Buffer): void {
    if (this.#over) return;
    if (this.#share === 'waiting') {
      this.#parked.push(Buffer.from(chunk));
      return;
    }
    if (this.#share === 'none' && this.#budget !== undefined) {
      const below = this.#budget.thresholdBytes - this.#kept.length;
      if (chunk.length > below) {
        this.#kept.append(chunk.subarray(0, below));
        this.#parked.push(Buffer.from(chunk.subarray(below)));
        this.#waitForShare(this.#budget);
        return;
      }
    }
    const room = this.#maxBytes - this.#kept.length;
    if (chunk.length > room) {
      if (room > 0) this.#kept.append(chunk.subarray(0, room));
      this.#finish('length');
      return;
    }
    this.#kept.append(chunk);
  }

  /**
   * Past the threshold without a share: stop the decoders' output (their backpressure then stops
   * the wire) and claim a share of the cap. The claim may be granted inside this call.
   */
  #waitForShare(budget: BodyBudget): void {
    this.#share = 'waiting';
    this.#shareWaits += 1;
    this.#tail()?.pause();
    let claiming = true;
    this.#releaseShare = budget.claim(this.#maxBytes, () => {
      // A later grant comes from inside another body's events, often inside undici's parser of
      // another socket, which cannot resume this one's there: continue once that call is over.
      if (claiming) this.#onShare(true);
      else queueMicrotask(() => this.#onShare(false));
    });
    claiming = false;
  }

  #onShare(synchronous: boolean): void {
    if (this.#over) return;
    this.#share = 'held';
    const parked = this.#parked;
    this.#parked = [];
    for (const chunk of parked) this.#accept(chunk);
    if (this.#over) return;
    this.#tail()?.resume();
    if (this.#endPending) {
      this.#finish('end');
      return;
    }
    // A share granted later: the owner paused on our `false`, and the decoders may not drain.
    if (!synchronous) this.#events.drain();
  }

  #tail(): Transform | undefined {
    return this.#streams[this.#streams.length - 1];
  }

  #giveShareBack(): void {
    this.#parked = [];
    const release = this.#releaseShare;
    this.#releaseShare = undefined;
    if (release === undefined) return;
    // A share held to the end goes to the step, whose copies of the body it also pays for.
    if (this.#share === 'held' && this.#scope !== undefined) this.#scope.keep(release);
    else release();
  }

  #finish(stop: BodyStop): void {
    this.#end(() => this.#events.done(stop));
  }

  #fail(error: Error): void {
    this.#end(() => this.#events.failed(error));
  }

  /** Ends the body once, done or failed: streams torn down before `tell` reports, the share given back after. */
  #end(tell: () => void): void {
    if (this.#over) return;
    this.#over = true;
    this.#teardown();
    tell();
    this.#giveShareBack();
  }

  #teardown(): void {
    // A destroyed zlib stream stops mid-chunk: no more output is produced after this returns.
    for (const stream of this.#streams) stream.destroy();
  }
}
