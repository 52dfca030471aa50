import { describe } from 'node:test';
import { DynamoCrawlTable } from '../../functions/adapters/aws/dynamo-crawl-table.ts';
import { MemoryCrawlTable } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { crawlCountersContract } from './crawl-counters.contract.ts';

describe('crawl counters contract: MemoryCrawlTable', () => {
  crawlCountersContract(async () => new MemoryCrawlTable());
});

describe('crawl counters contract: DynamoCrawlTable', () => {
  const aws = awsSuite(async (backend) => backend);
  crawlCountersContract(async () => {
    const backend = await aws();
    return new DynamoCrawlTable(backend.clients.doc, await backend.crawlTable());
  });
});
