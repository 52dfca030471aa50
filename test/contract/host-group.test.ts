import { onEveryCrawlTable } from './crawl-table-suites.ts';
import { hostGroupContract } from './host-group.contract.ts';

onEveryCrawlTable('host group', hostGroupContract);
