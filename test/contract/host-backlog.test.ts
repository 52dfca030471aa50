import { describe } from 'node:test';
import { DynamoHostBacklog } from '../../functions/adapters/aws/dynamo-host-backlog.ts';
import { KEEP_FOREVER } from '../../functions/adapters/aws/retention.ts';
import { MemoryHostBacklog } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { hostBacklogContract } from './host-backlog.contract.ts';

describe("HostBacklog contract: MemoryHostBacklog (the unit tests' fake)", () => {
  // One backlog: the fake has no per-container state to tell two instances apart.
  hostBacklogContract(async () => {
    const backlog = new MemoryHostBacklog();
    return { a: backlog, b: backlog };
  });
});

describe('HostBacklog contract: DynamoHostBacklog', () => {
  const backend = awsSuite(async (aws) => ({ doc: aws.clients.doc, table: await aws.crawlTable() }));
  hostBacklogContract(async () => {
    const { doc, table } = await backend();
    return {
      a: new DynamoHostBacklog(doc, table, KEEP_FOREVER),
      b: new DynamoHostBacklog(doc, table, KEEP_FOREVER),
    };
  });
});
