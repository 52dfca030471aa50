import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CrawlDb } from '../../../functions/adapters/local/crawl-db.ts';
import { LocalRobotsCache } from '../../../functions/adapters/local/local-robots-cache.ts';
import { PendingClaims, StepUnit } from '../../../functions/adapters/local/step-unit.ts';
import { tempDir } from '../../e2e/helpers.ts';

const A = '00000000000000a1';
const B = '00000000000000b2';
const OWNER = '1111111111111111';

describe('StepUnit: claims of steps that have not committed', () => {
  test('a running step holds its claims against the others until it commits or is abandoned', async () => {
    const db = new CrawlDb(join(tempDir(), 'state.sqlite'));
    const pending = new PendingClaims();
    const one = new StepUnit(db, pending);
    const two = new StepUnit(db, pending);
    assert.deepEqual(await one.claim([A, B], OWNER), [true, true]);
    assert.deepEqual(await two.claim([A], '2222222222222222'), [false], 'held by the running step');
    assert.equal(await two.has(A), true);
    assert.equal(db.seenHas(A), false, 'nothing written before the commit');
    // one is abandoned (its step threw): its claims go, as if never made
    one.release();
    assert.deepEqual(await two.claim([A], '2222222222222222'), [true]);
    db.commit({ ...two.write(), checkpoint: null });
    two.release();
    assert.equal(db.seenHas(A), true);
    assert.equal(db.seenHas(B), false);
    const three = new StepUnit(db, pending);
    assert.deepEqual(await three.claim([A], OWNER), [false], 'committed by another owner');
    assert.deepEqual(await three.claim([A], '2222222222222222'), [true], 'its owner claims it again');
    db.close();
  });

  test('write() carries what the step claimed, queued and hashed, with its owner', async () => {
    const db = new CrawlDb(join(tempDir(), 'state.sqlite'));
    const unit = new StepUnit(db, new PendingClaims());
    assert.deepEqual(unit.write(), { claimed: [], enqueue: [], contentHashes: [] });
    await unit.claim([A], OWNER);
    const task = {
      crawlId: 'c',
      url: 'http://a.test/',
      fp: A,
      host: 'a.test',
      depth: 1,
      redirects: 0,
      attempt: 0,
      cash: 0,
    };
    await unit.enqueue([task]);
    assert.equal(await unit.contentSeen().claim('ab'.repeat(32), 'http://a.test/'), undefined);
    assert.deepEqual(unit.write(), {
      claimed: [A],
      claimOwner: OWNER,
      enqueue: [task],
      contentHashes: [{ hash: 'ab'.repeat(32), url: 'http://a.test/' }],
    });
    db.close();
  });
});

describe('StepUnit: robots.txt entries', () => {
  test('an entry the step fetched is written with its commit, and read back through the unit before it', async () => {
    const path = join(tempDir(), 'state.sqlite');
    const db = new CrawlDb(path);
    const shared = new LocalRobotsCache(db);
    const unit = new StepUnit(db, new PendingClaims());
    const robots = unit.robotsCache(shared);
    const entry = {
      status: 'allow-all' as const,
      detail: '404',
      fetchedAt: 1,
      expiresAt: 2,
      sitemapsQueued: true,
    };
    unit.take({ enqueued: [], storeRobots: { origin: 'http://a.test', entry } });
    assert.deepEqual(await robots.get('http://a.test'), entry, 'the unit reads what it takes');
    assert.equal(await shared.get('http://a.test'), undefined, 'the crawl does not, before the commit');
    assert.equal(db.robots('http://a.test'), undefined);
    // a step killed here leaves no entry: the next run reads robots.txt (and queues its sitemaps) again
    db.commit({ ...unit.write(), checkpoint: null });
    assert.deepEqual(db.robots('http://a.test'), entry);
    db.close();
    const reopened = new CrawlDb(path);
    assert.deepEqual(reopened.robots('http://a.test'), entry, 'committed');
    reopened.close();
  });
});
