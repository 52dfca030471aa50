import { describe } from 'node:test';
import { S3Objects } from '../../functions/adapters/aws/s3-objects.ts';
import { MemoryObjects } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { objectStoreContract } from './object-store.contract.ts';

describe("ObjectStore contract: MemoryObjects (the unit tests' fake of the page bucket)", () => {
  const objects = new MemoryObjects();
  objectStoreContract(async () => objects);
});

describe('ObjectStore contract: S3Objects', () => {
  objectStoreContract(awsSuite(async (aws) => new S3Objects(aws.clients.s3, await aws.bucket())));
});
