/**
 * The URL-seen trace: the fingerprints a crawl looked up in its URL-seen test, in order, for the
 * URL-caching study (Broder, Najork and Wiener, WWW 2003). Format: each look-up is its 64-bit
 * fingerprint as 8 bytes, big-endian (the 16 hex digits of the fingerprint, as bytes), no header
 * and no separator, so a trace is any whole number of 8-byte records and traces concatenate: the
 * embedded crawl appends each step's look-ups to one file, a cloud container can write one object
 * per batch, and the study reads them back to back. `od -An -tx1 -w8 -v` prints the fingerprints.
 */
import type { Fingerprint } from '../types.ts';

/** Bytes per look-up. */
export const TRACE_RECORD_BYTES = 8;

/** A trace that is not a whole number of records, or a fingerprint that is not 16 hex digits. */
export class TraceFormatError extends Error {
  override readonly name = 'TraceFormatError';
  readonly code = 'TRACE_FORMAT';
}

const FINGERPRINT = /^[0-9a-f]{16}$/;

/** The look-ups as trace bytes (8 per fingerprint). */
export function encodeTrace(fps: readonly Fingerprint[]): Uint8Array {
  const bytes = new Uint8Array(fps.length * TRACE_RECORD_BYTES);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < fps.length; i++) {
    const fp = fps[i]!;
    if (!FINGERPRINT.test(fp)) throw new TraceFormatError(`look-up ${i}: "${fp}" is not a fingerprint`);
    view.setUint32(i * 8, Number.parseInt(fp.slice(0, 8), 16));
    view.setUint32(i * 8 + 4, Number.parseInt(fp.slice(8), 16));
  }
  return bytes;
}

/** The fingerprints of trace bytes, in order (the inverse of {@link encodeTrace}). */
export function decodeTrace(bytes: Uint8Array): Fingerprint[] {
  const view = viewOf(bytes);
  const out: Fingerprint[] = [];
  for (let offset = 0; offset < bytes.length; offset += TRACE_RECORD_BYTES) {
    out.push(hex8(view.getUint32(offset)) + hex8(view.getUint32(offset + 4)));
  }
  return out;
}

/** A trace with each distinct fingerprint replaced by a small integer, for the cache simulations. */
export interface DenseTrace {
  /** Look-up i is of URL ids[i]; ids count up from 0 in order of first look-up. */
  ids: Int32Array;
  /** Distinct URLs (the largest id + 1). */
  distinct: number;
}

/**
 * Numbers the distinct fingerprints of a trace 0, 1, 2, ... in order of first look-up (an
 * open-addressing table on the two 32-bit halves: exact, no string per look-up).
 * @throws TraceFormatError when the length is not a multiple of 8.
 */
export function denseTrace(bytes: Uint8Array): DenseTrace {
  const view = viewOf(bytes);
  const n = bytes.length / TRACE_RECORD_BYTES;
  const ids = new Int32Array(n);
  let capacity = 1024;
  let hi = new Uint32Array(capacity);
  let lo = new Uint32Array(capacity);
  let slots = new Int32Array(capacity * 2).fill(-1);
  let mask = slots.length - 1;
  let distinct = 0;
  for (let i = 0; i < n; i++) {
    const h = view.getUint32(i * 8);
    const l = view.getUint32(i * 8 + 4);
    // Fingerprints are SHA-256 bits: the low word is already a good hash.
    let slot = l & mask;
    let id = slots[slot]!;
    while (id >= 0 && (lo[id] !== l || hi[id] !== h)) {
      slot = (slot + 1) & mask;
      id = slots[slot]!;
    }
    if (id < 0) {
      id = distinct++;
      if (id === capacity) {
        capacity *= 2;
        hi = grow(hi, capacity);
        lo = grow(lo, capacity);
        slots = new Int32Array(capacity * 2).fill(-1);
        mask = slots.length - 1;
        for (let j = 0; j < id; j++) {
          let s = lo[j]! & mask;
          while (slots[s]! >= 0) s = (s + 1) & mask;
          slots[s] = j;
        }
        slot = l & mask;
        while (slots[slot]! >= 0) slot = (slot + 1) & mask;
      }
      hi[id] = h;
      lo[id] = l;
      slots[slot] = id;
    }
    ids[i] = id;
  }
  return { ids, distinct };
}

function viewOf(bytes: Uint8Array): DataView {
  if (bytes.length % TRACE_RECORD_BYTES !== 0) {
    throw new TraceFormatError(
      `a trace is a whole number of ${TRACE_RECORD_BYTES}-byte records; got ${bytes.length} bytes`,
    );
  }
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function grow(array: Uint32Array, capacity: number): Uint32Array<ArrayBuffer> {
  const out = new Uint32Array(capacity);
  out.set(array);
  return out;
}

function hex8(word: number): string {
  return word.toString(16).padStart(8, '0');
}
