import { after, before, describe } from 'node:test';
import { DynamoCrawlTable } from '../../functions/adapters/aws/dynamo-crawl-table.ts';
import { MemoryCrawlTable } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, openAwsBackend } from './backends.ts';
import { hostGroupContract } from './host-group.contract.ts';

describe('host group contract: MemoryCrawlTable', () => {
  hostGroupContract(async () => new MemoryCrawlTable());
});

describe('host group contract: DynamoCrawlTable', () => {
  let aws: AwsBackend;
  before(async () => {
    aws = await openAwsBackend();
  });
  after(() => aws.close());
  hostGroupContract(async () => new DynamoCrawlTable(aws.clients.doc, await aws.crawlTable()));
});
