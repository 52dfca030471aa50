/**
 * gzip decoding that keeps what a browser keeps. Node's gunzip reads the bytes after a gzip member
 * as the next member and fails when they are not one, throwing away the page it just decoded; a
 * server that appends a stray `\r\n` (or log noise) to its gzip body loses the whole page. curl
 * and browsers keep the decoded member(s) and ignore what follows. This module reads the gzip
 * framing itself (RFC 1952: header, raw deflate data, CRC-32 and size trailer) and inflates each
 * member with a raw inflater, so it knows where a member ends and can look at what follows:
 * another member (decoded too, as RFC 1952 allows), zero padding (skipped), anything else
 * (ignored, and the stream ends there). Corrupt deflate data, a wrong checksum and a body that is
 * not gzip at all still fail.
 */
import { Buffer } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';
import { constants, crc32, createInflateRaw, type InflateRaw, inflateRawSync } from 'node:zlib';

/** A gzip header, not counting its variable fields, and the trailer after the deflate data. */
const FIXED_HEADER = 10;
const TRAILER = 8;
/** A header longer than this (a file name that never ends) is refused as corrupt. */
const MAX_HEADER = 64 * 1024;
const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;
const RESERVED_FLAGS = 0xe0;

// Lenient at the end of input, as browsers are: a member cut short still yields what it decoded.
const INFLATE_OPTIONS = { finishFlush: constants.Z_SYNC_FLUSH };

/** Raised for bytes that are not gzip where gzip is required, or a member whose trailer does not match. */
export class GzipFormatError extends Error {
  readonly code = 'GZIP_FORMAT';
  override readonly name = 'GzipFormatError';
}

/**
 * The length of the gzip header at `offset`: 0 when more bytes are needed to tell, -1 when the
 * bytes there are not a gzip header (wrong magic, method or reserved flags).
 */
export function gzipHeaderLength(bytes: Uint8Array, offset = 0): number {
  const available = bytes.length - offset;
  if (available >= 1 && bytes[offset] !== 0x1f) return -1;
  if (available >= 2 && bytes[offset + 1] !== 0x8b) return -1;
  if (available >= 3 && bytes[offset + 2] !== 8) return -1;
  if (available >= 4 && (bytes[offset + 3]! & RESERVED_FLAGS) !== 0) return -1;
  if (available < FIXED_HEADER) return 0;
  const flags = bytes[offset + 3]!;
  let at = offset + FIXED_HEADER;
  if ((flags & FEXTRA) !== 0) {
    if (bytes.length < at + 2) return 0;
    at += 2 + (bytes[at]! | (bytes[at + 1]! << 8));
  }
  for (const field of [FNAME, FCOMMENT]) {
    if ((flags & field) === 0) continue;
    const end = at < bytes.length ? bytes.indexOf(0, at) : -1;
    if (end < 0) return 0;
    at = end + 1;
  }
  if ((flags & FHCRC) !== 0) at += 2;
  return at > bytes.length ? 0 : at - offset;
}

/** Whether every byte from `offset` on is zero (padding some servers add, which gunzip skips). */
function onlyZeros(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

function checkTrailer(trailer: Uint8Array, crc: number, size: number): void {
  const view = Buffer.from(trailer.buffer, trailer.byteOffset, TRAILER);
  if (view.readUInt32LE(0) !== crc >>> 0 || view.readUInt32LE(4) !== size >>> 0) {
    throw new GzipFormatError('gzip member checksum or length does not match its data');
  }
}

/** What `gunzipMembersSync` decoded. */
export interface GunzipResult {
  decoded: Buffer;
  /** Bytes after the last member that were neither a member nor zero padding, and were ignored. */
  ignoredBytes: number;
}

/**
 * Decodes a complete gzip body in memory. Throws `GzipFormatError` when it does not start with a
 * gzip header or a member's trailer does not match, zlib's error for corrupt deflate data, and
 * zlib's `ERR_BUFFER_TOO_LARGE` when the output would exceed `maxOutputLength`.
 */
export function gunzipMembersSync(wire: Buffer, maxOutputLength: number): GunzipResult {
  const parts: Buffer[] = [];
  let produced = 0;
  let at = 0;
  for (let member = 0; at < wire.length; member++) {
    if (member > 0 && onlyZeros(wire, at))
      return { decoded: Buffer.concat(parts, produced), ignoredBytes: 0 };
    const header = gzipHeaderLength(wire, at);
    if (header < 0) {
      if (member === 0) throw new GzipFormatError('the body is not gzip (incorrect header check)');
      return { decoded: Buffer.concat(parts, produced), ignoredBytes: wire.length - at };
    }
    if (header === 0) break; // cut inside a header: nothing more to decode
    const data = wire.subarray(at + header);
    const { buffer, engine } = inflateRawSync(data, {
      ...INFLATE_OPTIONS,
      maxOutputLength: Math.max(1, maxOutputLength - produced),
      info: true,
    }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    parts.push(buffer);
    produced += buffer.length;
    at += header + engine.bytesWritten;
    if (wire.length - at < TRAILER) break; // cut before the end of the trailer: keep what decoded
    checkTrailer(wire.subarray(at, at + TRAILER), crc32(buffer), buffer.length);
    at += TRAILER;
  }
  return { decoded: Buffer.concat(parts, produced), ignoredBytes: 0 };
}

type State = 'header' | 'data' | 'trailer' | 'next' | 'ignore';

/**
 * The streaming form of `gunzipMembersSync`, as a Transform: gzip in, decoded bytes out. When the
 * bytes after a member are not another member, the readable side ends there and later input is
 * dropped (`ignoredBytes` counts it).
 */
export class GunzipMembers extends Transform {
  #state: State = 'header';
  /** Header or trailer bytes gathered across chunks. */
  #pending: Buffer = Buffer.alloc(0);
  #inflater: InflateRaw | undefined;
  /** Bytes written to the current member's inflater, to tell where its deflate data ended. */
  #written = 0;
  #crc = 0;
  #size = 0;
  #members = 0;
  #ignored = 0;

  /** Bytes that followed the last member and were neither a member nor zero padding. */
  get ignoredBytes(): number {
    return this.#ignored;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#consume(chunk, callback);
  }

  override _flush(callback: TransformCallback): void {
    const inflater = this.#inflater;
    if (this.#state !== 'data' || inflater === undefined) {
      callback();
      return;
    }
    // Cut inside the deflate data: keep what it decodes to.
    inflater.once('end', () => callback());
    inflater.end();
  }

  override _read(size: number): void {
    // The reader wants more: let the member's inflater produce again (see #startMember).
    this.#inflater?.resume();
    super._read(size);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#inflater?.destroy();
    callback(error);
  }

  #consume(chunk: Buffer, callback: TransformCallback): void {
    let rest = chunk;
    while (rest.length > 0) {
      switch (this.#state) {
        case 'ignore':
          this.#ignored += rest.length;
          callback();
          return;
        case 'data':
          this.#inflate(rest, callback);
          return;
        case 'next':
          if (onlyZeros(rest, 0)) {
            callback();
            return;
          }
          this.#state = 'header';
          break;
        case 'header': {
          const bytes = this.#gather(rest);
          const header = gzipHeaderLength(bytes);
          if (header < 0) {
            if (this.#members === 0) {
              callback(new GzipFormatError('the body is not gzip (incorrect header check)'));
              return;
            }
            this.#pending = Buffer.alloc(0);
            this.#state = 'ignore';
            this.push(null);
            rest = bytes;
            break;
          }
          if (header === 0) {
            if (bytes.length > MAX_HEADER) {
              callback(new GzipFormatError(`gzip header longer than ${MAX_HEADER} bytes`));
              return;
            }
            this.#pending = bytes;
            callback();
            return;
          }
          this.#pending = Buffer.alloc(0);
          this.#startMember();
          rest = bytes.subarray(header);
          break;
        }
        case 'trailer': {
          const bytes = this.#gather(rest);
          if (bytes.length < TRAILER) {
            this.#pending = bytes;
            callback();
            return;
          }
          this.#pending = Buffer.alloc(0);
          try {
            checkTrailer(bytes.subarray(0, TRAILER), this.#crc, this.#size);
          } catch (error) {
            callback(error as Error);
            return;
          }
          this.#state = 'next';
          rest = bytes.subarray(TRAILER);
          break;
        }
      }
    }
    callback();
  }

  /** Pending header or trailer bytes followed by `chunk`, as one buffer. */
  #gather(chunk: Buffer): Buffer {
    return this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
  }

  #startMember(): void {
    this.#members += 1;
    this.#crc = 0;
    this.#size = 0;
    this.#written = 0;
    const inflater = createInflateRaw(INFLATE_OPTIONS);
    inflater.on('data', (data: Buffer) => {
      this.#crc = crc32(data, this.#crc);
      this.#size += data.length;
      // Backpressure: a reader that is full pauses the inflater (a bomb stays a bounded buffer).
      if (!this.push(data)) inflater.pause();
    });
    inflater.on('error', (error: Error) => this.destroy(error));
    this.#inflater = inflater;
    this.#state = 'data';
  }

  /**
   * Feeds deflate data to the member's inflater. zlib stops taking input at the end of the deflate
   * stream, so when the inflater has taken less than it was given, the member's data ended inside
   * this chunk and the rest is its trailer and whatever follows.
   */
  #inflate(chunk: Buffer, callback: TransformCallback): void {
    const inflater = this.#inflater!;
    this.#written += chunk.length;
    inflater.write(chunk, (error) => {
      if (error) return; // reported through the 'error' event
      const left = this.#written - inflater.bytesWritten;
      if (left === 0) {
        callback();
        return;
      }
      // The checksum covers all the member's output: wait until the inflater has emitted it.
      const trailerOnward = chunk.subarray(chunk.length - left);
      const next = () => {
        inflater.destroy();
        this.#inflater = undefined;
        this.#state = 'trailer';
        this.#consume(trailerOnward, callback);
      };
      if (inflater.readableEnded) next();
      else inflater.once('end', next);
    });
  }
}
