/**
 * The worker's PageStore, where the record step archives the capture a crawl step returns
 * (commit-effects.ts): each capture becomes its WARC request and response records, each
 * compressed as its own gzip member right away (the worker has the bytes in hand; the archiver
 * only concatenates). Nothing is written here: the worker takes the records back by the returned
 * reference and sends them to the archiver in the page's capture message.
 */

import type { Capture, PageStore } from '../../core/ports.ts';
import type { StoredRef } from '../../core/types.ts';
import { captureToWarcRecords } from '../../core/warc/capture-records.ts';
import { DEFAULT_WARC_GZIP_LEVEL, gzipMember } from '../../core/warc/gzip-member.ts';
import type { InlineRecords } from '../messages/capture-message.ts';

/** Prefix of the placeholder `file` of a buffered capture's reference. */
export const BUFFERED_CAPTURE = 'buffered-capture:';

/**
 * Holds the compressed records of one batch's captures until the worker takes them. `put` returns
 * `{ file: 'buffered-capture:<n>', offset, length }`: offset and length are those of the response
 * member within the capture's own two members (the archiver adds the object offset).
 */
export class CaptureBuffer implements PageStore {
  readonly #newId: () => string;
  readonly #gzipLevel: number;
  readonly #records = new Map<string, InlineRecords>();
  #next = 0;

  constructor(options: { newId: () => string; gzipLevel?: number }) {
    this.#newId = options.newId;
    this.#gzipLevel = options.gzipLevel ?? DEFAULT_WARC_GZIP_LEVEL;
  }

  /** Captures put and not taken yet. */
  get pending(): number {
    return this.#records.size;
  }

  async put(capture: Capture): Promise<StoredRef> {
    // No WARC-Warcinfo-ID: the warcinfo record is written by the archiver, per object.
    const records = captureToWarcRecords(capture, {
      requestUuid: this.#newId(),
      responseUuid: this.#newId(),
    });
    const request = gzipMember(records.request, this.#gzipLevel);
    const response = gzipMember(records.response, this.#gzipLevel);
    const file = `${BUFFERED_CAPTURE}${this.#next++}`;
    const inline: InlineRecords = {
      members: Buffer.concat([request, response], request.length + response.length),
      requestLength: request.length,
    };
    // A revisit record's digest is the earlier copy's: the archive keeps the copy it names.
    if (capture.revisit === undefined) inline.payloadDigest = records.payloadDigest;
    this.#records.set(file, inline);
    return { file, offset: request.length, length: response.length };
  }

  /** Nothing to do: the records travel in capture messages. */
  async flush(): Promise<void> {}

  /** Removes and returns the records `ref` names (undefined for an unknown reference). */
  take(ref: Pick<StoredRef, 'file'>): InlineRecords | undefined {
    const records = this.#records.get(ref.file);
    this.#records.delete(ref.file);
    return records;
  }
}
