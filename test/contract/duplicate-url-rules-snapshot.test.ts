import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { DynamoCrawlTable } from '../../functions/adapters/aws/dynamo-crawl-table.ts';
import { CrawlDb } from '../../functions/adapters/local/crawl-db.ts';
import type { HostRulesStore } from '../../functions/cloud/ports/cloud-ports.ts';
import {
  type DuplicateUrlRuleOptions,
  DuplicateUrlRules,
  type DuplicateUrlRulesSnapshot,
} from '../../functions/core/quality/duplicate-url-rules.ts';
import { MemoryCrawlTable } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { uniqueName } from './backends.ts';
import { type RuleSnapshotStore, ruleSnapshotContract } from './duplicate-url-rules-snapshot.contract.ts';

describe('duplicate-URL rules snapshot contract: the snapshot as JSON', () => {
  ruleSnapshotContract(async () => {
    let text: string | undefined;
    return {
      async save(rules) {
        text = JSON.stringify(rules.snapshot());
      },
      async restore(options) {
        return new DuplicateUrlRules(options, text === undefined ? undefined : JSON.parse(text));
      },
    };
  });
});

describe("duplicate-URL rules snapshot contract: CrawlDb (the embedded crawler's state file, reopened as a resumed crawl)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'crawlstack-rules-contract-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  ruleSnapshotContract(async () => {
    const path = join(dir, `${uniqueName('state')}.sqlite`);
    // The state file is locked while open: each call opens it, as a crawl (then its resumption) does.
    const withDb = <T>(work: (db: CrawlDb) => T): T => {
      const db = new CrawlDb(path);
      try {
        return work(db);
      } finally {
        db.close();
      }
    };
    return {
      async save(rules) {
        // what CrawlState.saveQuality stores: the detectors' state with the rules' snapshot
        withDb((db) => db.saveQuality({ duplicateUrlRules: rules.snapshot() }));
      },
      async restore(options) {
        const saved = withDb((db) =>
          db.getMeta<{ duplicateUrlRules?: DuplicateUrlRulesSnapshot }>('quality'),
        );
        return new DuplicateUrlRules(options, saved?.duplicateUrlRules);
      },
    };
  });
});

/**
 * The cloud's way: each origin's rule records and held forms written to the crawl table under a
 * version (as host-rules-sync.ts `saveHostRules` does), and merged into a new container's learner
 * (`mergeStoredRules`: `mergeHost`, then `importHeld`).
 */
function crawlTableStore(table: HostRulesStore, crawlId: string): RuleSnapshotStore {
  return {
    async save(rules) {
      for (const origin of new Set(rules.report().map((r) => r.origin))) {
        const version = (await table.hostRules(crawlId, origin))?.version ?? 0;
        const records = rules.hostRecords(origin) ?? [];
        const written = await table.putHostRules(crawlId, origin, records, version, rules.heldForms(origin));
        if (!written.written) throw new Error(`rules of ${origin} not written: the version moved`);
      }
    },
    async restore(options: DuplicateUrlRuleOptions) {
      const rules = new DuplicateUrlRules(options);
      const origins = new Set((await table.crawlRules(crawlId)).map((r) => r.origin));
      for (const origin of origins) {
        const stored = await table.hostRules(crawlId, origin);
        if (stored === undefined) continue;
        rules.mergeHost(origin, stored.records);
        rules.importHeld(origin, stored.held ?? []);
      }
      return rules;
    },
  };
}

describe("duplicate-URL rules snapshot contract: MemoryCrawlTable (the unit tests' fake of the crawl table)", () => {
  ruleSnapshotContract(async () => crawlTableStore(new MemoryCrawlTable(), uniqueName('crawl')));
});

describe('duplicate-URL rules snapshot contract: DynamoCrawlTable', () => {
  const table = awsSuite(async (aws) => new DynamoCrawlTable(aws.clients.doc, await aws.crawlTable()));
  ruleSnapshotContract(async () => crawlTableStore(await table(), uniqueName('crawl')));
});
