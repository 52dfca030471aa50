import { after, before, describe } from 'node:test';
import { DynamoHostBacklog } from '../../functions/adapters/aws/dynamo-host-backlog.ts';
import { KEEP_FOREVER } from '../../functions/adapters/aws/retention.ts';
import { MemoryHostBacklog } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, openAwsBackend } from './backends.ts';
import { hostBacklogContract } from './host-backlog.contract.ts';

describe("HostBacklog contract: MemoryHostBacklog (the unit tests' fake)", () => {
  // One backlog: the fake has no per-container state to tell two instances apart.
  hostBacklogContract(async () => {
    const backlog = new MemoryHostBacklog();
    return { a: backlog, b: backlog };
  });
});

describe('HostBacklog contract: DynamoHostBacklog', () => {
  let aws: AwsBackend;
  let table: string;
  before(async () => {
    aws = await openAwsBackend();
    table = await aws.crawlTable();
  });
  after(() => aws.close());
  hostBacklogContract(async () => ({
    a: new DynamoHostBacklog(aws.clients.doc, table, KEEP_FOREVER),
    b: new DynamoHostBacklog(aws.clients.doc, table, KEEP_FOREVER),
  }));
});
