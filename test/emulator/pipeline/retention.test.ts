/**
 * Every item a crawl writes carries `expiresAt` (epoch seconds, the tables' TTL attribute): the
 * stack's retention after its last write, so tables and their point-in-time recovery stop growing
 * forever (issue 8, item 7: TTL was enabled and never written). A finished crawl's item expires
 * the retention after its end; a running crawl's item and the registry do not expire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoContentSeenStore } from '../../../functions/adapters/aws/dynamo-content-seen-store.ts';
import { DynamoCrawlTable } from '../../../functions/adapters/aws/dynamo-crawl-table.ts';
import { DynamoParkedUrls } from '../../../functions/adapters/aws/dynamo-parked-urls.ts';
import { DynamoRobotsCache } from '../../../functions/adapters/aws/dynamo-robots-cache.ts';
import {
  DynamoSeenLog,
  seenLogPartition,
  seenUrlKey,
} from '../../../functions/adapters/aws/dynamo-seen-log.ts';
import { retentionOf } from '../../../functions/adapters/aws/retention.ts';
import { emptyHostCounts } from '../../../functions/cloud/messages/crawl-records.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { type AwsBackend, openAwsBackend } from '../../contract/backends.ts';

const NOW = Date.UTC(2026, 10, 26, 12);
const DAYS = 30;
const EXPIRES = Math.floor(NOW / 1000) + DAYS * 86_400;

describe('retention: expiresAt on every item', () => {
  let aws: AwsBackend;
  let urlTable: string;
  let crawlTable: string;
  before(async () => {
    aws = await openAwsBackend();
    [urlTable, crawlTable] = await Promise.all([aws.urlTable(), aws.crawlTable()]);
  });
  after(() => aws?.close());

  const get = async (table: string, key: Record<string, string>) =>
    (await aws.clients.doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

  it('URL claims, content hashes, robots entries, host ledgers, budgets and finished crawls expire', async () => {
    const retention = retentionOf(DAYS, { now: () => NOW });
    const crawlId = 'retention-crawl';
    await new DynamoSeenLog(aws.clients.doc, crawlTable, crawlId, { retention }).claim(
      ['00000000000000aa'],
      'owner',
      { hosts: ['x'] },
    );
    assert.equal(
      (await get(crawlTable, { pk: seenLogPartition(crawlId, 'x'), sk: '0000000000' }))?.expiresAt,
      EXPIRES,
      'URL claims',
    );
    // A host past its log's limit: its URLs' own claim items expire too.
    await new DynamoSeenLog(aws.clients.doc, crawlTable, crawlId, { retention, logLimit: 1 }).claim(
      ['00000000000000a1', '00000000000000a2'],
      'owner',
      { hosts: ['big', 'big'] },
    );
    assert.equal(
      (await get(crawlTable, seenUrlKey(crawlId, '00000000000000a2')))?.expiresAt,
      EXPIRES,
      'URL claim',
    );
    const parkedTask = {
      crawlId,
      url: 'http://x/p',
      fp: '00000000000000bb',
      host: 'x',
      depth: 1,
      redirects: 0,
      attempt: 0,
      cash: 0,
    };
    await new DynamoParkedUrls(aws.clients.doc, urlTable, () => NOW, retention).park(crawlId, [
      { task: parkedTask, owner: 'owner', key: 0 },
    ]);
    assert.equal(
      (await get(urlTable, { pk: `${crawlId}#00000000000000bb` }))?.expiresAt,
      EXPIRES,
      'parked URL',
    );
    await new DynamoContentSeenStore(aws.clients.doc, urlTable, crawlId, { retention }).claim(
      'abc',
      'http://x/',
    );
    assert.equal((await get(urlTable, { pk: `${crawlId}#c#abc` }))?.expiresAt, EXPIRES, 'content hash');
    await new DynamoRobotsCache(aws.clients.doc, crawlTable, crawlId, { retention }).put('http://x', {
      status: 'allow-all',
      detail: '404',
      fetchedAt: NOW,
      expiresAt: NOW + 1000,
    });
    assert.equal(
      (await get(crawlTable, { pk: crawlId, sk: 'robots#http://x' }))?.expiresAt,
      EXPIRES,
      'robots',
    );
    const table = new DynamoCrawlTable(aws.clients.doc, crawlTable, { retention });
    const parsed = parseCrawlConfig({ seeds: ['http://x/'] });
    assert.ok(parsed.ok);
    await table.createCrawl({
      id: crawlId,
      status: 'running',
      createdAt: new Date(NOW).toISOString(),
      config: parsed.config,
      seeds: 1,
    });
    assert.equal(
      (await get(crawlTable, { pk: crawlId, sk: 'crawl' }))?.expiresAt,
      undefined,
      'a running crawl stays',
    );
    await table.updateHost(crawlId, 'x', {
      nextAllowedAt: NOW,
      counts: { ...emptyHostCounts(), finished: 1 },
    });
    assert.equal((await get(crawlTable, { pk: crawlId, sk: 'host#x' }))?.expiresAt, EXPIRES, 'host ledger');
    await table.addBudget(crawlId, 1);
    assert.equal((await get(crawlTable, { pk: crawlId, sk: 'budget' }))?.expiresAt, EXPIRES, 'budget');
    // the crawl's rules news: one slot per origin, the latest version announced, read with a batch's state
    await table.announceHostRules(crawlId, 'http://x', 3);
    await table.announceHostRules(crawlId, 'https://y.example:8443', 1);
    await table.announceHostRules(crawlId, 'http://x', 4);
    assert.equal(
      (await get(crawlTable, { pk: crawlId, sk: 'rules-news' }))?.expiresAt,
      EXPIRES,
      'rules news',
    );
    const state = await table.loadBatchState({
      crawlIds: [],
      budgets: [],
      hosts: [],
      robots: [],
      rulesNews: [crawlId],
    });
    assert.deepEqual(
      state.rulesNews.get(crawlId),
      new Map([
        ['http://x', 4],
        ['https://y.example:8443', 1],
      ]),
    );
    await table.finishCrawl(crawlId, {
      status: 'done',
      finishedAt: new Date(NOW).toISOString(),
      counters: (await table.getCrawl(crawlId))!.counters ?? ({} as never),
      lost: 0,
    });
    assert.equal((await get(crawlTable, { pk: crawlId, sk: 'crawl' }))?.expiresAt, EXPIRES, 'finished crawl');
  });
});
