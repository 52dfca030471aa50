/**
 * The page bucket as the cloud crawl uses it: the archiver (and, for an oversize capture, the
 * worker) PUTs WARC and index objects; the API lists and reads index objects.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ObjectReader, ObjectStore } from '../../cloud/ports/cloud-ports.ts';

/** One bucket: PutObject, ListObjectsV2 (in key order), ranged GetObject. */
export class S3Objects implements ObjectStore, ObjectReader {
  readonly #s3: S3Client;
  readonly bucket: string;

  constructor(s3: S3Client, bucket: string) {
    this.#s3 = s3;
    this.bucket = bucket;
  }

  async put(key: string, body: Uint8Array, contentType: string): Promise<void> {
    await this.#s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        ContentLength: body.length,
      }),
    );
  }

  async keys(prefix: string, startAfter: string | undefined, max: number): Promise<string[]> {
    const response = await this.#s3.send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: prefix,
        MaxKeys: max,
        ...(startAfter === undefined ? {} : { StartAfter: startAfter }),
      }),
    );
    return (response.Contents ?? []).map((o) => o.Key as string);
  }

  async read(key: string, from: number): Promise<Uint8Array> {
    try {
      const response = await this.#s3.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(from > 0 ? { Range: `bytes=${from}-` } : {}),
        }),
      );
      return await response.Body!.transformToByteArray();
    } catch (error) {
      // A range that starts at the end: nothing left to read.
      if ((error as { name?: string }).name === 'InvalidRange') return new Uint8Array(0);
      throw error;
    }
  }
}
