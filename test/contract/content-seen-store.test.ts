import { after, before, describe } from 'node:test';
import { DynamoContentSeenStore } from '../../functions/adapters/aws/dynamo-content-seen-store.ts';
import type { ContentSeenStore } from '../../functions/core/ports.ts';
import { MemoryCloud } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, type LocalBackend, openAwsBackend, openLocalBackend } from './backends.ts';
import { contentSeenStoreContract } from './content-seen-store.contract.ts';

describe("ContentSeenStore contract: MemoryContentSeen (the unit tests' fake)", () => {
  const cloud = new MemoryCloud();
  // Two containers' stores over one crawl's hashes.
  contentSeenStoreContract(async () => ({
    a: cloud.forContainer()('crawl-1').contentSeen,
    b: cloud.forContainer()('crawl-1').contentSeen,
  }));
});

describe('ContentSeenStore contract: StepUnit (the embedded crawler, one step per call)', () => {
  let local: LocalBackend;
  before(() => {
    local = openLocalBackend();
  });
  after(() => local.close());
  const store = (): ContentSeenStore => ({
    claim: (hash, url) => local.step((unit) => unit.contentSeen().claim(hash, url)),
  });
  contentSeenStoreContract(async () => ({ a: store(), b: store() }));
});

describe('ContentSeenStore contract: DynamoContentSeenStore', () => {
  let aws: AwsBackend;
  let table: string;
  before(async () => {
    aws = await openAwsBackend();
    table = await aws.urlTable();
  });
  after(() => aws.close());
  contentSeenStoreContract(async () => ({
    a: new DynamoContentSeenStore(aws.clients.doc, table, 'crawl-1'),
    b: new DynamoContentSeenStore(aws.clients.doc, table, 'crawl-1'),
  }));
});
