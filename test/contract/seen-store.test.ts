import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DynamoSeenStore } from '../../functions/adapters/aws/dynamo-seen-store.ts';
import type { SeenStore } from '../../functions/core/ports.ts';
import { MemoryCloud } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, type LocalBackend, openAwsBackend, openLocalBackend } from './backends.ts';
import { ownedSeenStoreContract, seenStoreContract } from './seen-store.contract.ts';

describe("SeenStore contract: MemorySeenStore (the unit tests' fake of the UrlTable)", () => {
  const cloud = new MemoryCloud();
  // Two containers' views of one crawl's claims.
  seenStoreContract(async () => ({ a: cloud.seen('crawl-1'), b: cloud.seen('crawl-1') }));
  ownedSeenStoreContract(async () => ({ a: cloud.seen('crawl-1'), b: cloud.seen('crawl-1') }));
});

describe('SeenStore contract: StepUnit (the embedded crawler, one step per call)', () => {
  let local: LocalBackend;
  before(() => {
    local = openLocalBackend();
  });
  after(() => local.close());
  const store = (): SeenStore => ({
    claim: (fps, owner) => local.step((unit) => unit.claim(fps, owner)),
    has: (fp) => local.step((unit) => unit.has(fp)),
  });
  seenStoreContract(async () => ({ a: store(), b: store() }));
});

for (const readFirst of [true, false]) {
  describe(`SeenStore contract: DynamoSeenStore (readFirst ${readFirst})`, () => {
    let aws: AwsBackend;
    let table: string;
    before(async () => {
      aws = await openAwsBackend();
      table = await aws.urlTable();
    });
    after(() => aws.close());
    seenStoreContract(async () => ({
      a: new DynamoSeenStore(aws.clients.doc, table, 'crawl-1', { readFirst }),
      b: new DynamoSeenStore(aws.clients.doc, table, 'crawl-1', { readFirst }),
    }));
    // The worker reads first (the default): the gate sees only what is unclaimed; without, every one is put.
    if (readFirst)
      ownedSeenStoreContract(async () => ({
        a: new DynamoSeenStore(aws.clients.doc, table, 'crawl-1', { readFirst }),
        b: new DynamoSeenStore(aws.clients.doc, table, 'crawl-1', { readFirst }),
      }));

    it('keeps crawls apart: a URL seen in one crawl is new in another', async () => {
      const one = new DynamoSeenStore(aws.clients.doc, table, 'crawl-a', { readFirst });
      const two = new DynamoSeenStore(aws.clients.doc, table, 'crawl-b', { readFirst });
      assert.deepEqual(await one.claim(['00000000000000aa'], 'ffffffffffffffff'), [true]);
      assert.deepEqual(await two.claim(['00000000000000aa'], 'eeeeeeeeeeeeeeee'), [true]);
      assert.equal(await two.has('00000000000000bb'), false);
    });
  });
}
