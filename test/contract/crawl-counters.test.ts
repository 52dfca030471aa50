import { crawlCountersContract } from './crawl-counters.contract.ts';
import { onEveryCrawlTable } from './crawl-table-suites.ts';

onEveryCrawlTable('crawl counters', crawlCountersContract);
