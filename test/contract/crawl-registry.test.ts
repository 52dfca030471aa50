import { describe } from 'node:test';
import { DynamoCrawlTable } from '../../functions/adapters/aws/dynamo-crawl-table.ts';
import { MemoryCrawlTable } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { crawlItemFieldsContract, crawlRegistryContract } from './crawl-registry.contract.ts';

describe('crawl registry contract: MemoryCrawlTable', () => {
  crawlRegistryContract(async () => new MemoryCrawlTable());
  crawlItemFieldsContract(async () => new MemoryCrawlTable());
});

describe('crawl registry contract: DynamoCrawlTable', () => {
  const aws = awsSuite(async (backend) => backend);
  const open = async () => {
    const backend = await aws();
    return new DynamoCrawlTable(backend.clients.doc, await backend.crawlTable());
  };
  crawlRegistryContract(open);
  crawlItemFieldsContract(open);
});
