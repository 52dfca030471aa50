import { surt } from './surt.ts';
import { cdxTimestamp } from './warc-date.ts';

/** One response record in the CDXJ index. */
export interface CdxjEntry {
  url: string;
  /** WARC-Date of the record. */
  date: string;
  /** Media type without parameters; the field is left out when the response had none. */
  mime?: string | undefined;
  status: number;
  /** WARC-Payload-Digest (`sha1:<BASE32>`); written without the `sha1:` label, as pywb and warcio do. */
  payloadDigest: string;
  /** Offset and length of the record's gzip member in its file. */
  offset: number;
  length: number;
  filename: string;
}

/**
 * One CDXJ line (with its `\n`) in the form pywb and `warcio cdx-index` write:
 * `<SURT> <14-digit timestamp> {"url":..,"mime":..,"status":"200","digest":"<BASE32>","length":"..","offset":"..","filename":".."}`.
 */
export function cdxjLine(entry: CdxjEntry): string {
  const colon = entry.payloadDigest.indexOf(':');
  const json = JSON.stringify({
    url: entry.url,
    mime: entry.mime,
    status: String(entry.status),
    digest: colon >= 0 ? entry.payloadDigest.slice(colon + 1) : entry.payloadDigest,
    length: String(entry.length),
    offset: String(entry.offset),
    filename: entry.filename,
  });
  return `${surt(entry.url)} ${cdxTimestamp(entry.date)} ${json}\n`;
}
