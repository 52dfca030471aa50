import { after, before, describe } from 'node:test';
import { DynamoArchiveStore } from '../../functions/adapters/aws/dynamo-archive-store.ts';
import { MemoryArchiveStore } from '../unit/cloud/memory-cloud.ts';
import { archiveStoreContract } from './archive-store.contract.ts';
import { type AwsBackend, openAwsBackend } from './backends.ts';

describe("ArchiveStore contract: MemoryArchiveStore (the unit tests' fake)", () => {
  const store = new MemoryArchiveStore();
  archiveStoreContract(async () => store);
});

describe('ArchiveStore contract: DynamoArchiveStore', () => {
  let aws: AwsBackend;
  let store: DynamoArchiveStore;
  before(async () => {
    aws = await openAwsBackend();
    store = new DynamoArchiveStore(aws.clients.doc, await aws.crawlTable());
  });
  after(() => aws.close());
  archiveStoreContract(async () => store);
});
