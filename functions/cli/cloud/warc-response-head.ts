/**
 * What a CDXJ line needs of a response record, read from the record itself in a downloaded WARC
 * file: only its gzip member is read, and only until the end of the HTTP head is inflated (a page
 * body is never held in memory).
 */
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import type { CdxjEntry } from '../../core/warc/cdxj.ts';

/** Longest WARC header block plus HTTP head read (records are written by us: far below this). */
const HEAD_LIMIT = 256 * 1024;

/** The CDXJ entry of the response record at `offset` (its gzip member is `length` bytes). */
export async function responseEntry(
  path: string,
  filename: string,
  offset: number,
  length: number,
): Promise<CdxjEntry | undefined> {
  const head = await readHeads(path, offset, length);
  if (head === undefined) return undefined;
  const [warcBlock, httpBlock] = head;
  const warc = fields(warcBlock);
  if (warc.get('warc-type') !== 'response') return undefined;
  const url = warc.get('warc-target-uri');
  const date = warc.get('warc-date');
  const digest = warc.get('warc-payload-digest');
  const status = Number(/^HTTP\/\S+ (\d{3})/.exec(httpBlock)?.[1]);
  if (url === undefined || date === undefined || digest === undefined || !Number.isInteger(status))
    return undefined;
  const type = fields(httpBlock.slice(httpBlock.indexOf('\r\n') + 2)).get('content-type');
  const mime = type?.split(';', 1)[0]?.trim() || undefined;
  return { url, date, mime, status, payloadDigest: digest, offset, length, filename };
}

/** The WARC header block and the HTTP head of the record, as latin1 text; undefined if cut short. */
function readHeads(path: string, offset: number, length: number): Promise<[string, string] | undefined> {
  return new Promise((resolve, reject) => {
    const file = createReadStream(path, { start: offset, end: offset + length - 1 });
    const gunzip = createGunzip();
    let text = '';
    let settled = false;
    const finish = (value: [string, string] | undefined) => {
      if (settled) return;
      settled = true;
      file.destroy();
      gunzip.destroy();
      resolve(value);
    };
    gunzip.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const warcEnd = text.indexOf('\r\n\r\n');
      const httpEnd = warcEnd < 0 ? -1 : text.indexOf('\r\n\r\n', warcEnd + 4);
      if (httpEnd >= 0) finish([text.slice(0, warcEnd), text.slice(warcEnd + 4, httpEnd)]);
      else if (text.length > HEAD_LIMIT) finish(undefined);
    });
    gunzip.on('end', () => finish(undefined));
    gunzip.on('error', (error) => {
      if (!settled) {
        settled = true;
        file.destroy();
        reject(error);
      }
    });
    file.on('error', (error) => {
      if (!settled) {
        settled = true;
        gunzip.destroy();
        reject(error);
      }
    });
    file.pipe(gunzip);
  });
}

/** Header lines as a map of lowercased names (the first of repeated names). */
function fields(block: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!out.has(name)) out.set(name, line.slice(colon + 1).trim());
  }
  return out;
}
