import { createHash, hash } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (upper case, no padding: a 20-byte SHA-1 is exactly 32 characters). */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < bytes.length; i++) {
    buffer = ((buffer << 8) | bytes[i]!) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * `sha1:<BASE32>` over the concatenation of `parts`: the digest form that Heritrix, wget, warcio
 * and pywb write and check in WARC-Block-Digest / WARC-Payload-Digest. The parts are hashed in
 * place, so a record's head and body need not be joined first.
 */
export function sha1Base32(...parts: readonly Uint8Array[]): string {
  // One part (a payload, a request head): one-shot, no Hash object.
  if (parts.length === 1) return `sha1:${base32(hash('sha1', parts[0]!, 'buffer'))}`;
  const sha1 = createHash('sha1');
  for (const part of parts) sha1.update(part);
  return `sha1:${base32(sha1.digest())}`;
}
