import { after, before, describe } from 'node:test';
import { S3Objects } from '../../functions/adapters/aws/s3-objects.ts';
import { MemoryObjects } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, openAwsBackend } from './backends.ts';
import { objectStoreContract } from './object-store.contract.ts';

describe("ObjectStore contract: MemoryObjects (the unit tests' fake of the page bucket)", () => {
  const objects = new MemoryObjects();
  objectStoreContract(async () => objects);
});

describe('ObjectStore contract: S3Objects', () => {
  let aws: AwsBackend;
  let objects: S3Objects;
  before(async () => {
    aws = await openAwsBackend();
    objects = new S3Objects(aws.clients.s3, await aws.bucket());
  });
  after(() => aws.close());
  objectStoreContract(async () => objects);
});
