/**
 * The cloud PageStore: the captures of one batch become ONE WARC object in S3 (one PUT per batch,
 * not per page): `warc/<crawlId>/<yyyy>/<mm>/<dd>/<timestamp>-<uuid>.warc.gz`, a warcinfo record
 * then a request and a response record per capture, each its own gzip member, so a reader fetches
 * one page with a ranged GET of the StoredRef's offset and length.
 */
import { randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { BatchPageStore } from '../../cloud/cloud-ports.ts';
import type { StoredRef } from '../../core/types.ts';
import { captureToWarcRecords } from '../../core/warc/capture-records.ts';
import { DEFAULT_WARC_GZIP_LEVEL, gzipMember } from '../../core/warc/gzip-member.ts';
import { warcDate } from '../../core/warc/warc-date.ts';
import { warcinfoRecord } from '../../core/warc/warcinfo-record.ts';
import type { Capture, Clock } from '../../ports.ts';

/** Options of {@link S3WarcPageStore}. */
export interface S3WarcPageStoreOptions {
  clock?: Clock;
  newId?: () => string;
  gzipLevel?: number;
  /** warcinfo `software`. */
  software?: string;
  /** Extra warcinfo fields (crawl id, seeds, user agent). */
  warcinfo?: Record<string, string>;
}

/** The key of a new object for `crawlId` at `now` (epoch ms). */
export function warcObjectKey(crawlId: string, now: number, uuid: string): string {
  const iso = new Date(now).toISOString(); // 2026-11-22T10:00:01.250Z
  const stamp = iso.replace(/[-:TZ.]/g, ''); // 20261122100001250
  return `warc/${crawlId}/${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}/${stamp}-${uuid}.warc.gz`;
}

/**
 * Buffers captures in memory and writes them with one `PutObject` on `flush`. `put` returns the
 * reference the record will have; nothing is durable (or readable) before `flush` resolves. After
 * a flush the next `put` starts a new object. One instance per crawl and batch.
 */
export class S3WarcPageStore implements BatchPageStore {
  readonly #s3: S3Client;
  readonly #bucket: string;
  readonly #crawlId: string;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #gzipLevel: number;
  readonly #software: string;
  readonly #fields: Record<string, string>;
  #key: string | undefined;
  #warcinfoId = '';
  #parts: Buffer[] = [];
  #size = 0;
  #captures = 0;
  #objects = 0;

  constructor(s3: S3Client, bucket: string, crawlId: string, options: S3WarcPageStoreOptions = {}) {
    this.#s3 = s3;
    this.#bucket = bucket;
    this.#crawlId = crawlId;
    this.#clock = options.clock ?? { now: () => Date.now() };
    this.#newId = options.newId ?? randomUUID;
    this.#gzipLevel = options.gzipLevel ?? DEFAULT_WARC_GZIP_LEVEL;
    this.#software = options.software ?? 'crawlstack';
    this.#fields = { 'crawl-id': crawlId, ...options.warcinfo };
  }

  /** The bucket objects go to. */
  get bucket(): string {
    return this.#bucket;
  }

  /** Captures waiting for `flush`. */
  get pending(): number {
    return this.#captures;
  }

  /** Objects written so far. */
  get objectsWritten(): number {
    return this.#objects;
  }

  async put(capture: Capture): Promise<StoredRef> {
    if (this.#key === undefined) this.#start();
    const records = captureToWarcRecords(capture, {
      requestUuid: this.#newId(),
      responseUuid: this.#newId(),
      warcinfoId: this.#warcinfoId,
    });
    const request = gzipMember(records.request, this.#gzipLevel);
    const response = gzipMember(records.response, this.#gzipLevel);
    const ref: StoredRef = {
      file: this.#key as string,
      offset: this.#size + request.length,
      length: response.length,
    };
    this.#parts.push(request, response);
    this.#size += request.length + response.length;
    this.#captures += 1;
    return ref;
  }

  async flush(): Promise<void> {
    if (this.#key === undefined || this.#captures === 0) return;
    const body = Buffer.concat(this.#parts, this.#size);
    await this.#s3.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: this.#key,
        Body: body,
        ContentType: 'application/warc',
        ContentLength: body.length,
      }),
    );
    this.#objects += 1;
    this.#key = undefined;
    this.#parts = [];
    this.#size = 0;
    this.#captures = 0;
  }

  #start(): void {
    const now = this.#clock.now();
    const key = warcObjectKey(this.#crawlId, now, this.#newId());
    const { record, id } = warcinfoRecord({
      uuid: this.#newId(),
      date: warcDate(new Date(now).toISOString()),
      filename: key.slice(key.lastIndexOf('/') + 1),
      software: this.#software,
      fields: this.#fields,
    });
    const info = gzipMember(record, this.#gzipLevel);
    this.#key = key;
    this.#warcinfoId = id;
    this.#parts = [info];
    this.#size = info.length;
  }
}
