import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  DynamoRobotsCache,
  MAX_ROBOTS_GZIP_BYTES,
  robotsItem,
} from '../../functions/adapters/aws/dynamo-robots-cache.ts';
import { LocalRobotsCache } from '../../functions/adapters/local/local-robots-cache.ts';
import { MemoryCrawlTable, MemoryRobotsCache } from '../unit/cloud/memory-cloud.ts';
import { type AwsBackend, type LocalBackend, openAwsBackend, openLocalBackend } from './backends.ts';
import { robotsCacheContract, warmRobotsCacheContract } from './robots-cache.contract.ts';

describe("RobotsCache contract: MemoryRobotsCache (the unit tests' fake)", () => {
  const table = new MemoryCrawlTable();
  // Separate warm maps over one table, as two containers.
  robotsCacheContract(async () => ({
    a: new MemoryRobotsCache(table, 'crawl-1'),
    b: new MemoryRobotsCache(table, 'crawl-1'),
  }));
  warmRobotsCacheContract(async (clock) => ({
    a: new MemoryRobotsCache(table, 'crawl-1', clock),
    b: new MemoryRobotsCache(table, 'crawl-1', clock),
  }));
});

describe("RobotsCache contract: LocalRobotsCache (the embedded crawler's)", () => {
  let local: LocalBackend;
  before(() => {
    local = openLocalBackend();
  });
  after(() => local.close());
  robotsCacheContract(async () => ({ a: new LocalRobotsCache(local.db), b: new LocalRobotsCache(local.db) }));
});

describe('RobotsCache contract: DynamoRobotsCache', () => {
  let aws: AwsBackend;
  let table: string;
  before(async () => {
    aws = await openAwsBackend();
    table = await aws.crawlTable();
  });
  after(() => aws.close());
  // Separate warm maps: the second instance reads what the first wrote from the table.
  robotsCacheContract(async () => ({
    a: new DynamoRobotsCache(aws.clients.doc, table, 'crawl-1'),
    b: new DynamoRobotsCache(aws.clients.doc, table, 'crawl-1'),
  }));
  warmRobotsCacheContract(async (clock) => ({
    a: new DynamoRobotsCache(aws.clients.doc, table, 'crawl-1', { clock }),
    b: new DynamoRobotsCache(aws.clients.doc, table, 'crawl-1', { clock }),
  }));

  it('cuts a body that does not compress under the item limit to whole lines', async () => {
    // 600 KB of random base64 lines: gzip cannot bring it under 350 KB.
    const lines: string[] = ['User-agent: *'];
    while (lines.join('\n').length < 600_000)
      lines.push(`Disallow: /${randomBytes(60).toString('base64url')}`);
    const body = `${lines.join('\n')}\n`;
    const entry = { status: 'rules' as const, body, detail: '200', fetchedAt: 1, expiresAt: 2 };
    const item = robotsItem('crawl-1', 'https://random.example', entry);
    assert.ok((item.body as Buffer).length <= MAX_ROBOTS_GZIP_BYTES);
    assert.equal(item.truncated, true);
    const writer = new DynamoRobotsCache(aws.clients.doc, table, 'crawl-1');
    await writer.put('https://random.example', entry);
    const got = await new DynamoRobotsCache(aws.clients.doc, table, 'crawl-1').get('https://random.example');
    assert.ok(got?.body !== undefined && got.body.length < body.length && got.body.length > 100_000);
    assert.ok(body.startsWith(got.body), 'a prefix of the original');
    assert.ok(got.body.endsWith('\n'), 'ends at a line end');
  });
});
