/**
 * How `crawlstack cloud download` fetches one archive object through a presigned URL, against the
 * stand-in's S3: an expired URL is replaced by listing again, a refused one names what the
 * signer's role lacks, a whole object lands under its name.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { type AwsClients, createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import { CloudCliError } from '../../../functions/cli/cloud/cloud-cli-error.ts';
import { fetchArchiveObject } from '../../../functions/cli/cloud/cloud-download.ts';
import { tempDir } from '../../e2e/helpers.ts';
import { EXTERNAL_ENDPOINT, openTestEndpoint, type TestEndpoint, uniquePrefix } from './helpers.ts';

describe('download of one archive object by a presigned URL', () => {
  let ep: TestEndpoint;
  const bucket = `${uniquePrefix()}-pages`.toLowerCase();
  const body = Buffer.from('WARC/1.1 ... the bytes of an object\n'.repeat(100));
  before(async () => {
    ep = await openTestEndpoint();
    await ep.clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await ep.clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'warc/c/a.warc.gz', Body: body }));
  });
  after(() => ep?.close());

  const url = (clients: AwsClients, key: string, signingDate?: Date) =>
    getSignedUrl(clients.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
      expiresIn: 60,
      ...(signingDate === undefined ? {} : { signingDate }),
    });

  it('lists again when its URL expired, and writes the object whole', async () => {
    const expired = await url(ep.clients, 'warc/c/a.warc.gz', new Date(Date.now() - 120_000));
    const relisted: string[] = [];
    const path = join(tempDir(), 'a.warc.gz');
    await fetchArchiveObject(
      { key: 'warc/c/a.warc.gz', size: body.length, url: expired },
      path,
      async (key) => {
        relisted.push(key);
        return url(ep.clients, key);
      },
    );
    assert.deepEqual(relisted, ['warc/c/a.warc.gz']);
    assert.deepEqual(readFileSync(path), body);
    assert.equal(existsSync(`${path}.part`), false);
  });

  it("names what the signer's role lacks when S3 refuses the URL", {
    skip: EXTERNAL_ENDPOINT && 'stand-in IAM',
  }, async () => {
    ep.standIn?.iam.register('ASIANOREADKEY', {
      name: 'Api',
      sessionArn: 'arn:aws:sts::000000000000:assumed-role/api-role/Api',
      roleArn: 'arn:aws:iam::000000000000:role/api-role',
      accountId: '000000000000',
      policies: [],
    });
    const api = createAwsClients({
      AWS_ENDPOINT_URL: ep.url,
      AWS_ACCESS_KEY_ID: 'ASIANOREADKEY',
      AWS_SECRET_ACCESS_KEY: 'secret',
    });
    try {
      const refused = await url(api, 'warc/c/a.warc.gz');
      await assert.rejects(
        fetchArchiveObject(
          { key: 'warc/c/a.warc.gz', size: body.length, url: refused },
          join(tempDir(), 'x'),
          async () => assert.fail('a refusal is not an expiry: no second listing'),
        ),
        (error: unknown) =>
          error instanceof CloudCliError &&
          error.code === 'API_ACCESS_DENIED' &&
          error.exitCode === 2 &&
          /S3 refused the download URL the API signed for warc\/c\/a\.warc\.gz \(403: User: arn:aws:sts::000000000000:assumed-role\/api-role\/Api is not authorized to perform: s3:GetObject on resource: "arn:aws:s3:::[^"]+\/warc\/c\/a\.warc\.gz"/.test(
            error.message,
          ),
      );
    } finally {
      api.destroy();
    }
  });
});
