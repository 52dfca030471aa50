import { onEveryCrawlTable } from './crawl-table-suites.ts';
import { hostRulesContract } from './host-rules.contract.ts';

onEveryCrawlTable('host rules', hostRulesContract);
