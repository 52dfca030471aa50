import { describe } from 'node:test';
import { DynamoCrawlTable } from '../../functions/adapters/aws/dynamo-crawl-table.ts';
import { MemoryCrawlTable } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { hostLedgerContract } from './host-ledger.contract.ts';

describe('host ledger contract: MemoryCrawlTable', () => {
  hostLedgerContract(async () => new MemoryCrawlTable());
});

describe('host ledger contract: DynamoCrawlTable', () => {
  const aws = awsSuite(async (backend) => backend);
  hostLedgerContract(async () => {
    const backend = await aws();
    return new DynamoCrawlTable(backend.clients.doc, await backend.crawlTable());
  });
});
