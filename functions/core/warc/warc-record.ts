import { sha1Base32 } from './sha1-base32.ts';

/** One named WARC header field, in the order it is written. */
export type WarcField = readonly [name: string, value: string];

const CRLF2 = Buffer.from('\r\n\r\n', 'latin1');

/** `<urn:uuid:...>`, the WARC-Record-ID form, for a UUID from the caller's id generator. */
export function warcRecordId(uuid: string): string {
  return `<urn:uuid:${uuid}>`;
}

/**
 * Serializes one uncompressed WARC/1.1 record: the version line, `fields` in order, then the
 * computed `WARC-Block-Digest` and `Content-Length`, a blank line, the block (its parts joined in
 * one copy, never through strings), and the closing CRLF CRLF. Field values are written as UTF-8,
 * which WARC 1.1 allows; CR and LF in values are replaced by spaces so that no caller-given text
 * can end the header early.
 */
export function serializeWarcRecord(fields: readonly WarcField[], block: readonly Uint8Array[]): Buffer {
  let blockLength = 0;
  for (const part of block) blockLength += part.length;
  let head = 'WARC/1.1\r\n';
  for (const [name, value] of fields) head += `${name}: ${cleanValue(value)}\r\n`;
  head += `WARC-Block-Digest: ${sha1Base32(...block)}\r\nContent-Length: ${blockLength}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), ...block, CRLF2]);
}

function cleanValue(value: string): string {
  return value.includes('\r') || value.includes('\n') ? value.replace(/[\r\n]+/g, ' ') : value;
}
