import { describe } from 'node:test';
import { DynamoParkedUrls } from '../../functions/adapters/aws/dynamo-parked-urls.ts';
import { MemoryCloud } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { parkedUrlsContract } from './parked-urls.contract.ts';

describe("ParkedUrls contract: MemoryParkedUrls (the unit tests' fake)", () => {
  const cloud = new MemoryCloud();
  parkedUrlsContract(async () => ({
    parked: cloud.parked,
    setNow: (ms) => {
      cloud.parked.now = () => ms;
    },
  }));
});

describe('ParkedUrls contract: DynamoParkedUrls', () => {
  const backend = awsSuite(async (aws) => ({ doc: aws.clients.doc, table: await aws.urlTable() }));
  let now = 0;
  parkedUrlsContract(async () => {
    const { doc, table } = await backend();
    return {
      parked: new DynamoParkedUrls(doc, table, () => now),
      setNow: (ms) => {
        now = ms;
      },
    };
  });
});
