import { crawlItemFieldsContract, crawlRegistryContract } from './crawl-registry.contract.ts';
import { onEveryCrawlTable } from './crawl-table-suites.ts';

onEveryCrawlTable('crawl registry', crawlRegistryContract, crawlItemFieldsContract);
