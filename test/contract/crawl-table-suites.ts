/**
 * The crawl table's contract suites (one per item family) run against both of its
 * implementations: the unit tests' MemoryCrawlTable and DynamoCrawlTable on the stand-in (a fresh
 * table per test).
 */
import { describe } from 'node:test';
import { DynamoCrawlTable } from '../../functions/adapters/aws/dynamo-crawl-table.ts';
import { retentionOf } from '../../functions/adapters/aws/retention.ts';
import type { CrawlTableStore } from '../../functions/cloud/ports/cloud-ports.ts';
import { MemoryCrawlTable } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';

/** Registers `contracts` (each given a fresh table per call of `open`) once per implementation. */
export function onEveryCrawlTable(
  title: string,
  ...contracts: ((open: () => Promise<CrawlTableStore>) => void)[]
): void {
  describe(`${title} contract: MemoryCrawlTable`, () => {
    for (const contract of contracts) contract(async () => new MemoryCrawlTable());
  });
  describe(`${title} contract: DynamoCrawlTable`, () => {
    const aws = awsSuite(async (backend) => backend);
    const open = async () => {
      const backend = await aws();
      // With the stack's retention, as deployed: every write also sets the item's expiry.
      return new DynamoCrawlTable(backend.clients.doc, await backend.crawlTable(), {
        retention: retentionOf(90, { now: () => Date.now() }),
      });
    };
    for (const contract of contracts) contract(open);
  });
}
