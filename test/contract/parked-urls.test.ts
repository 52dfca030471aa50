import { after, before, describe } from 'node:test';
import { DynamoParkedUrls } from '../../functions/adapters/aws/dynamo-parked-urls.ts';
import { DynamoSeenStore } from '../../functions/adapters/aws/dynamo-seen-store.ts';
import { MemoryCloud } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, openAwsBackend } from './backends.ts';
import { parkedUrlsContract } from './parked-urls.contract.ts';

describe("ParkedUrls contract: MemoryParkedUrls (the unit tests' fake)", () => {
  const cloud = new MemoryCloud();
  parkedUrlsContract(async () => ({
    parked: cloud.parked,
    claim: async (crawlId, fps, owner) => {
      await cloud.seen(crawlId).claim(fps, owner);
    },
    setNow: (ms) => {
      cloud.parked.now = () => ms;
    },
  }));
});

describe('ParkedUrls contract: DynamoParkedUrls', () => {
  let aws: AwsBackend;
  let table: string;
  let now = 0;
  before(async () => {
    aws = await openAwsBackend();
    table = await aws.urlTable();
  });
  after(() => aws.close());
  parkedUrlsContract(async () => ({
    parked: new DynamoParkedUrls(aws.clients.doc, table, () => now),
    claim: async (crawlId, fps, owner) => {
      await new DynamoSeenStore(aws.clients.doc, table, crawlId).claim(fps, owner);
    },
    setNow: (ms) => {
      now = ms;
    },
  }));
});
