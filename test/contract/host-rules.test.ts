import { describe } from 'node:test';
import { DynamoCrawlTable } from '../../functions/adapters/aws/dynamo-crawl-table.ts';
import { MemoryCrawlTable } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { hostRulesContract } from './host-rules.contract.ts';

describe('host rules contract: MemoryCrawlTable', () => {
  hostRulesContract(async () => new MemoryCrawlTable());
});

describe('host rules contract: DynamoCrawlTable', () => {
  const aws = awsSuite(async (backend) => backend);
  hostRulesContract(async () => {
    const backend = await aws();
    return new DynamoCrawlTable(backend.clients.doc, await backend.crawlTable());
  });
});
