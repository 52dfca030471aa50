import { onEveryCrawlTable } from './crawl-table-suites.ts';
import { hostLedgerContract } from './host-ledger.contract.ts';

onEveryCrawlTable('host ledger', hostLedgerContract);
