import { hash } from 'node:crypto';
import type { Fingerprint } from '../types.ts';

/**
 * 64-bit fingerprint of a canonical URL: the first 8 bytes of SHA-256 over its UTF-8 bytes, as
 * 16 lowercase hex characters. The URL-seen set stores these instead of URL text (Mercator's
 * 8-byte checksums). The definition is part of the stored format: the same URL gives the same
 * fingerprint on every machine and version, so changing it would orphan every seen-set.
 */
export function fingerprint(canonicalUrl: string): Fingerprint {
  let fp = recent.get(canonicalUrl);
  if (fp === undefined) {
    // one-shot `hash` (Node >= 21.7) is ~2x faster than createHash for short inputs; the hex of
    // the whole digest then a slice beats asking for a Buffer and encoding 8 bytes of it
    fp = hash('sha256', canonicalUrl, 'hex').slice(0, 16);
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(canonicalUrl, fp);
  }
  return fp;
}

/**
 * Fingerprints of URLs seen lately: every page of a site links the same navigation targets, whose
 * URLs would be hashed again on each (about 25 links per page on the PostgreSQL docs, most of them
 * known). Bounded; a hit costs a Map lookup instead of a SHA-256.
 */
const recent = new Map<string, Fingerprint>();
const RECENT_MAX = 4096;

const FINGERPRINT_PATTERN = /^[0-9a-f]{16}$/;

/**
 * A value that is no fingerprint was given where one was needed: a string that is not 16
 * lowercase hex characters, or an integer outside the signed 64-bit range.
 */
export class FingerprintFormatError extends Error {
  readonly code = 'FINGERPRINT_FORMAT';
  constructor(value: string) {
    super(
      `not a fingerprint (16 lowercase hex characters or a signed 64-bit integer): ${value.slice(0, 40)}`,
    );
    this.name = 'FingerprintFormatError';
  }
}

/**
 * The fingerprint as a signed 64-bit integer (two's complement of its 8 bytes, big-endian), the
 * range of an SQLite INTEGER or a BigInt64Array slot. Inverse of {@link fingerprintFromInt64}.
 * @throws FingerprintFormatError when `fp` is not 16 lowercase hex characters.
 */
export function fingerprintToInt64(fp: Fingerprint): bigint {
  if (!FINGERPRINT_PATTERN.test(fp)) throw new FingerprintFormatError(JSON.stringify(fp));
  return BigInt.asIntN(64, BigInt(`0x${fp}`));
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The fingerprint whose {@link fingerprintToInt64} is `value`.
 * @throws FingerprintFormatError when `value` is outside the signed 64-bit range.
 */
export function fingerprintFromInt64(value: bigint): Fingerprint {
  if (value < INT64_MIN || value > INT64_MAX) throw new FingerprintFormatError(`${value}n`);
  return BigInt.asUintN(64, value).toString(16).padStart(16, '0');
}
