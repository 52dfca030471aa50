import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3WarcPageStore, warcObjectKey } from '../../functions/adapters/aws/s3-warc-page-store.ts';
import { LocalWarcPageStore } from '../../functions/adapters/local/warc-page-store.ts';
import { makeCapture } from '../unit/warc/warc-test-kit.ts';
import { type AwsBackend, type LocalBackend, openAwsBackend, openLocalBackend } from './backends.ts';
import { pageStoreContract } from './page-store.contract.ts';

describe('PageStore contract: LocalWarcPageStore', () => {
  let local: LocalBackend;
  const stores: LocalWarcPageStore[] = [];
  before(() => {
    local = openLocalBackend();
  });
  after(() => {
    for (const store of stores) store.close();
    local.close();
  });
  pageStoreContract(async () => {
    const dir = join(local.dir, `warc${stores.length}`);
    const store = LocalWarcPageStore.open(dir);
    stores.push(store);
    return {
      store,
      async readSlice(ref) {
        const fd = openSync(join(dir, ref.file), 'r');
        try {
          const buffer = Buffer.alloc(ref.length);
          readSync(fd, buffer, 0, ref.length, ref.offset);
          return buffer;
        } finally {
          closeSync(fd);
        }
      },
      readFile: async (file) => readFileSync(join(dir, file)),
    };
  });
});

describe('PageStore contract: S3WarcPageStore', () => {
  let aws: AwsBackend;
  let bucket: string;
  before(async () => {
    aws = await openAwsBackend();
    bucket = await aws.bucket();
  });
  after(() => aws.close());

  async function get(key: string, range?: string): Promise<Uint8Array> {
    const response = await aws.clients.s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, ...(range === undefined ? {} : { Range: range }) }),
    );
    return response.Body!.transformToByteArray();
  }

  pageStoreContract(async () => ({
    store: new S3WarcPageStore(aws.clients.s3, bucket, 'crawl-1'),
    readSlice: (ref) => get(ref.file, `bytes=${ref.offset}-${ref.offset + ref.length - 1}`),
    readFile: (file) => get(file),
  }));

  it('writes one object per flush under warc/<crawlId>/<yyyy>/<mm>/<dd>/, nothing before', async () => {
    const store = new S3WarcPageStore(aws.clients.s3, bucket, 'crawl-objects', {
      clock: { now: () => Date.UTC(2026, 10, 22, 10, 0, 1, 250) },
    });
    const list = async () =>
      (await aws.clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'warc/crawl-objects/' })))
        .Contents ?? [];
    await store.flush();
    for (let i = 0; i < 10; i++) await store.put(makeCapture(i));
    assert.equal((await list()).length, 0, 'nothing is written before flush');
    await store.flush();
    const objects = await list();
    assert.equal(objects.length, 1, 'ten captures, one PUT');
    assert.match(
      objects[0]!.Key!,
      /^warc\/crawl-objects\/2026\/11\/22\/20261122100001250-[0-9a-f-]{36}\.warc\.gz$/,
    );
    assert.equal(store.objectsWritten, 1);
    assert.match(warcObjectKey('c', 0, 'u'), /^warc\/c\/1970\/01\/01\/19700101000000000-u\.warc\.gz$/);
  });
});
