/**
 * Download links to the page bucket's objects for the API: ListObjectsV2 with sizes, and presigned
 * GetObject URLs signed with the API function's own credentials, so a caller of the API needs no
 * S3 permission of its own (the presigned request is the API role's request to S3). Its own file:
 * the presigner is bundled into the API only.
 */
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ObjectLinks, StoredObject } from '../../cloud/ports/cloud-ports.ts';

/** One bucket's objects as download links. */
export class S3ObjectLinks implements ObjectLinks {
  readonly #s3: S3Client;
  readonly #bucket: string;

  constructor(s3: S3Client, bucket: string) {
    this.#s3 = s3;
    this.#bucket = bucket;
  }

  async list(prefix: string, startAfter: string | undefined, max: number): Promise<StoredObject[]> {
    const response = await this.#s3.send(
      new ListObjectsV2Command({
        Bucket: this.#bucket,
        Prefix: prefix,
        MaxKeys: max,
        ...(startAfter === undefined ? {} : { StartAfter: startAfter }),
      }),
    );
    return (response.Contents ?? []).map((o) => ({ key: o.Key as string, size: o.Size ?? 0 }));
  }

  presignGet(key: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.#s3, new GetObjectCommand({ Bucket: this.#bucket, Key: key }), {
      expiresIn: expiresInSeconds,
    });
  }
}
