import { after, before, describe } from 'node:test';
import { DynamoContentSeenStore } from '../../functions/adapters/aws/dynamo-content-seen-store.ts';
import { LocalContentSeenStore } from '../../functions/adapters/local/local-content-seen-store.ts';
import { type AwsBackend, type LocalBackend, openAwsBackend, openLocalBackend } from './backends.ts';
import { contentSeenStoreContract } from './content-seen-store.contract.ts';

describe('ContentSeenStore contract: LocalContentSeenStore', () => {
  let local: LocalBackend;
  before(() => {
    local = openLocalBackend();
  });
  after(() => local.close());
  contentSeenStoreContract(async () => ({
    a: new LocalContentSeenStore(local.db),
    b: new LocalContentSeenStore(local.db),
  }));
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
