/**
 * Inflates a gzip file that arrived as it is (a `.xml.gz` sitemap served as `application/gzip`),
 * with the fetcher's own decoder: at most `maxBytes` of output, the decoders stopped as soon as
 * the cap is crossed, so a gzip bomb costs the cap and never its expansion.
 */
import { Buffer } from 'node:buffer';
import type { Gunzip, GunzipResult } from '../../core/ports.ts';
import { DecodedBody } from './decoded-body.ts';

/** The `Gunzip` port over node:zlib (see ports.ts). */
export const gunzipFile: Gunzip = (gzipped, maxBytes) =>
  new Promise<GunzipResult>((resolve) => {
    const body: DecodedBody = new DecodedBody('gzip', maxBytes, {
      done: (stop) => resolve({ ok: true, bytes: body.bytes(), truncated: stop === 'length' }),
      failed: (error) => resolve({ ok: false, message: `not a gzip file: ${error.message}` }),
      drain: () => {},
    });
    body.write(Buffer.from(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength));
    body.end();
  });
