import { describe } from 'node:test';
import { DynamoArchiveStore } from '../../functions/adapters/aws/dynamo-archive-store.ts';
import { MemoryArchiveStore } from '../unit/cloud/memory-cloud.ts';
import { archiveStoreContract } from './archive-store.contract.ts';
import { awsSuite } from './aws-suite.ts';

describe("ArchiveStore contract: MemoryArchiveStore (the unit tests' fake)", () => {
  const store = new MemoryArchiveStore();
  archiveStoreContract(async () => store);
});

describe('ArchiveStore contract: DynamoArchiveStore', () => {
  archiveStoreContract(
    awsSuite(async (aws) => new DynamoArchiveStore(aws.clients.doc, await aws.crawlTable())),
  );
});
