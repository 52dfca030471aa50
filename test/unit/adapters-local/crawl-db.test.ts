import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { CrawlDb, fpToInt } from '../../../functions/adapters/local/crawl-db.ts';
import type { RobotsEntry } from '../../../functions/core/ports.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-db-'));
  dirs.push(dir);
  return join(dir, 'state.sqlite');
}

/**
 * The database files as a kill -9 leaves them, copied while the connection is still open (its
 * exclusive lock keeps a second connection off the original files).
 */
function crashCopy(path: string): string {
  const copy = dbPath();
  copyFileSync(path, copy);
  if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
  return copy;
}

const fp = (n: number) => n.toString(16).padStart(16, '0');
function task(n: number, host = 'a.test', extra: Partial<CrawlTask> = {}): CrawlTask {
  return {
    crawlId: 'c1',
    url: `http://${host}/p/${n}`,
    fp: fp(n),
    host,
    depth: 1,
    redirects: 0,
    attempt: 0,
    cash: 0,
    ...extra,
  };
}

function queue(db: CrawlDb, host: string): number[] {
  // drains a copy of the host's queue by reading heads and finishing them
  const out: number[] = [];
  for (let head = db.head(host); head !== undefined; head = db.head(host)) {
    out.push(Number.parseInt(head.fp, 16));
    db.commit({ claimed: [], enqueue: [], contentHashes: [], finished: head.fp, checkpoint: null });
  }
  return out;
}

describe('fpToInt', () => {
  test('maps 16 hex digits onto signed 64-bit integers, one to one', () => {
    assert.equal(fpToInt('0000000000000000'), 0n);
    assert.equal(fpToInt('0000000000000001'), 1n);
    assert.equal(fpToInt('7fffffffffffffff'), 2n ** 63n - 1n);
    assert.equal(fpToInt('8000000000000000'), -(2n ** 63n));
    assert.equal(fpToInt('ffffffffffffffff'), -1n);
  });
});

describe('CrawlDb', () => {
  test('seed claims and queues the seeds; head, counts and sizes read them back', () => {
    const db = new CrawlDb(dbPath());
    db.seed([task(1, 'a.test', { depth: 0 }), task(2, 'b.test', { depth: 0 })], { at: 'seed' });
    assert.equal(db.seenHas(fp(1)), true);
    assert.equal(db.seenHas(fp(3)), false);
    assert.equal(db.seenCount(), 2);
    assert.equal(db.frontierSize(), 2);
    assert.deepEqual(
      db.hostCounts(),
      new Map([
        ['a.test', 1],
        ['b.test', 1],
      ]),
    );
    const head = db.head('a.test');
    assert.equal(head?.url, 'http://a.test/p/1');
    assert.equal(head?.depth, 0);
    assert.equal(db.head('c.test'), undefined);
    assert.deepEqual(db.getMeta('checkpoint'), { at: 'seed' });
    db.close();
  });

  test('one commit applies claims, queue, content hashes, the finished task, the host budget and the checkpoint', () => {
    const db = new CrawlDb(dbPath());
    db.seed([task(1)], 0);
    db.commit({
      claimed: [fp(2), fp(3)],
      enqueue: [task(2), task(3, 'b.test')],
      contentHashes: [{ hash: 'h1', url: 'http://a.test/p/1' }],
      finished: fp(1),
      hostFetched: 'a.test',
      checkpoint: { step: 1 },
    });
    assert.equal(db.seenHas(fp(2)) && db.seenHas(fp(3)), true);
    assert.deepEqual(
      db.hostCounts(),
      new Map([
        ['a.test', 1],
        ['b.test', 1],
      ]),
    );
    assert.equal(db.head('a.test')?.fp, fp(2));
    assert.equal(db.contentOwner('h1'), 'http://a.test/p/1');
    assert.equal(db.contentOwner('h2'), undefined);
    assert.deepEqual(db.hostFetchedCounts(), new Map([['a.test', 1]]));
    assert.deepEqual(db.getMeta('checkpoint'), { step: 1 });
    db.commit({ claimed: [], enqueue: [], contentHashes: [], hostFetched: 'a.test', checkpoint: 2 });
    assert.equal(db.hostFetchedCounts().get('a.test'), 2);
    db.close();
  });

  test('a retried task is rewritten in place and keeps its position', () => {
    const db = new CrawlDb(dbPath());
    db.seed([task(1), task(2)], 0);
    db.commit({
      claimed: [],
      enqueue: [],
      contentHashes: [],
      retried: task(1, 'a.test', { attempt: 1 }),
      checkpoint: 1,
    });
    const head = db.head('a.test');
    assert.equal(head?.fp, fp(1));
    assert.equal(head?.attempt, 1);
    assert.equal(db.frontierSize(), 2);
    db.close();
  });

  test("credits raise cash and priority; an ordinary link lifts a generated mark, a generator's keeps it", () => {
    const db = new CrawlDb(dbPath(), { prioritize: (t) => ({ prio: t.cash, cashKey: t.cash }) });
    db.seed(
      [
        task(1, 'a.test', { cash: 0.5 }),
        task(2, 'a.test', { cash: 0.01, generated: true }),
        task(3, 'a.test', { cash: 0.02, generated: true }),
      ],
      0,
    );
    db.credit(
      new Map([
        [fp(2), 0.6],
        [fp(3), 0.01],
      ]),
      true,
      new Set([fp(2)]),
    );
    const head = db.head('a.test');
    assert.equal(head?.fp, fp(2), "the credited URL is the host's best now");
    assert.ok(Math.abs(head!.prio - 0.61) < 1e-12 && Math.abs(head!.cashKey - 0.61) < 1e-12);
    assert.equal(head?.generated, undefined, "an ordinary link reaches it: no longer a generator's only");
    db.commit({ claimed: [], enqueue: [], contentHashes: [], finished: fp(2), checkpoint: 1 });
    db.commit({ claimed: [], enqueue: [], contentHashes: [], finished: fp(1), checkpoint: 2 });
    assert.equal(db.head('a.test')?.generated, true, 'credited by generated links only');
    db.close();
  });

  test('front tasks (redirect targets) go before the rest of their host queue', () => {
    const db = new CrawlDb(dbPath());
    db.seed([task(1), task(2)], 0);
    db.commit({ claimed: [fp(9)], enqueue: [task(9)], front: true, contentHashes: [], checkpoint: 1 });
    assert.deepEqual(queue(db, 'a.test'), [9, 1, 2]);
    db.close();
  });

  test('a thrown error inside commit leaves nothing behind, and the database stays usable', () => {
    const db = new CrawlDb(dbPath());
    db.seed([task(1)], { step: 0 });
    const bigint = { n: 1n }; // JSON.stringify throws on the checkpoint: the last write of the transaction
    assert.throws(
      () =>
        db.commit({
          claimed: [fp(2), fp(3)],
          enqueue: [task(2), task(3, 'b.test')],
          contentHashes: [{ hash: 'h', url: 'u' }],
          finished: fp(1),
          hostFetched: 'a.test',
          checkpoint: bigint,
        }),
      TypeError,
    );
    assert.equal(db.seenHas(fp(2)), false);
    assert.equal(db.seenHas(fp(3)), false);
    assert.equal(db.contentOwner('h'), undefined);
    assert.deepEqual(db.hostCounts(), new Map([['a.test', 1]]), 'the finished task is still queued');
    assert.equal(db.head('a.test')?.fp, fp(1));
    assert.deepEqual(db.hostFetchedCounts(), new Map());
    assert.deepEqual(db.getMeta('checkpoint'), { step: 0 });

    // an error half-way through the writes (a bad fingerprint after a good one) rolls back too
    assert.throws(() =>
      db.commit({ claimed: [fp(4), 'not-hex'], enqueue: [], contentHashes: [], checkpoint: { step: 9 } }),
    );
    assert.equal(db.seenHas(fp(4)), false);

    db.commit({ claimed: [fp(5)], enqueue: [task(5)], contentHashes: [], checkpoint: { step: 1 } });
    assert.equal(db.seenHas(fp(5)), true);
    assert.deepEqual(db.getMeta('checkpoint'), { step: 1 });
    db.close();
  });

  test('state survives close and reopen; queue order continues after it', () => {
    const path = dbPath();
    let db = new CrawlDb(path);
    db.seed([task(1), task(2)], { step: 0 });
    db.commit({
      claimed: [fp(7)],
      enqueue: [task(7)],
      front: true,
      contentHashes: [],
      checkpoint: { step: 1 },
    });
    db.setMeta('crawl', { seeds: ['http://a.test/'] });
    db.close();

    db = new CrawlDb(path);
    assert.deepEqual(db.getMeta('crawl'), { seeds: ['http://a.test/'] });
    assert.equal(db.seenCount(), 3);
    db.commit({ claimed: [fp(3)], enqueue: [task(3)], contentHashes: [], checkpoint: 2 });
    db.commit({ claimed: [fp(8)], enqueue: [task(8)], front: true, contentHashes: [], checkpoint: 3 });
    assert.deepEqual(queue(db, 'a.test'), [8, 7, 1, 2, 3]);
    db.close();
  });

  test('claims waiting in memory for their sorted merge survive a crash through their frontier rows', () => {
    const path = dbPath();
    const db = new CrawlDb(path);
    db.seed([task(1)], 0);
    db.commit({
      claimed: [fp(2), fp(3)],
      claimOwner: fp(1),
      enqueue: [task(2), task(3)],
      contentHashes: [],
      checkpoint: 1,
    });
    assert.equal(db.seenOwner(fp(2)), fp(1));
    // No close(): as after kill -9, the in-memory batch was never merged into `seen`.
    const reopened = new CrawlDb(crashCopy(path));
    assert.equal(reopened.seenOwner(fp(2)), fp(1));
    assert.equal(reopened.seenOwner(fp(3)), fp(1));
    assert.equal(reopened.seenHas(fp(1)), true);
    assert.equal(reopened.seenHas(fp(4)), false);
    // A finished task leaves the queue but stays seen.
    reopened.commit({
      claimed: [],
      enqueue: [],
      contentHashes: [],
      finished: reopened.head('a.test')!,
      checkpoint: 2,
    });
    assert.equal(reopened.seenHas(fp(1)), true);
    assert.equal(reopened.frontierSize(), 2);
    reopened.close();
    db.close();
  });

  test("a step's seen, content, host and checkpoint writes are read back at once and survive a crash", () => {
    const path = dbPath();
    const db = new CrawlDb(path);
    db.seed([task(1), task(2), task(3)], 0);
    db.commit({
      claimed: [],
      enqueue: [],
      contentHashes: [{ hash: 'h1', url: 'http://a.test/p/1' }],
      finished: db.head('a.test')!,
      finishedCash: { history: 0.5, key: 0.25 },
      hostFetched: 'a.test',
      checkpoint: { step: 1 },
    });
    db.commit({
      claimed: [],
      enqueue: [],
      contentHashes: [{ hash: 'h2', url: 'http://a.test/p/2' }],
      finished: fp(2),
      hostFetched: 'a.test',
      checkpoint: { step: 2 },
    });
    const check = (d: CrawlDb) => {
      assert.equal(d.contentOwner('h1'), 'http://a.test/p/1');
      assert.equal(d.contentOwner('h2'), 'http://a.test/p/2');
      assert.equal(d.seenHas(fp(1)) && d.seenHas(fp(2)), true);
      assert.deepEqual(d.pageCash(fp(1)), { history: 0.5, key: 0.25 });
      assert.equal(d.pageCash(fp(2)), undefined);
      assert.deepEqual(d.hostFetchedCounts(), new Map([['a.test', 2]]));
      assert.deepEqual(d.getMeta('checkpoint'), { step: 2 });
      assert.equal(d.head('a.test')?.fp, fp(3));
    };
    // The finished rows are passed over, also next to a row a running step holds.
    assert.equal(db.head('a.test', db.head('a.test')!.seq), undefined);
    const crashed = crashCopy(path);
    check(db);
    const reopened = new CrawlDb(crashed);
    check(reopened);
    reopened.close();
    db.close();
  });

  test('steps beyond what the journal holds are merged on the way; none is lost in a crash', () => {
    const path = dbPath();
    const db = new CrawlDb(path);
    const n = 100;
    db.seed(
      Array.from({ length: n }, (_, i) => task(i + 1, i % 2 === 0 ? 'a.test' : 'b.test')),
      0,
    );
    for (let i = 1; i <= n; i++) {
      db.commit({
        claimed: [],
        enqueue: [],
        contentHashes: [
          { hash: `h${i}`, url: `u${i}` },
          { hash: 'shared', url: `u${i}` },
        ],
        finished: fp(i),
        finishedCash: { history: i, key: -i },
        hostFetched: i % 2 === 1 ? 'a.test' : 'b.test',
        checkpoint: { step: i },
      });
    }
    const reopened = new CrawlDb(crashCopy(path));
    for (const d of [db, reopened]) {
      assert.equal(d.frontierSize(), 0);
      assert.equal(d.contentOwner('h77'), 'u77');
      assert.equal(d.contentOwner('shared'), 'u1', 'the first URL of a hash stays its owner');
      assert.deepEqual(d.pageCash(fp(64)), { history: 64, key: -64 });
      assert.deepEqual(
        d.hostFetchedCounts(),
        new Map([
          ['a.test', 50],
          ['b.test', 50],
        ]),
      );
      assert.deepEqual(d.getMeta('checkpoint'), { step: n });
    }
    reopened.commit({
      claimed: [],
      enqueue: [],
      contentHashes: [],
      hostFetched: 'a.test',
      checkpoint: 'after',
    });
    assert.equal(reopened.hostFetchedCounts().get('a.test'), 51);
    reopened.close();
    db.close();
  });

  test('robots entries round-trip per origin', () => {
    const db = new CrawlDb(dbPath());
    const entry: RobotsEntry = {
      status: 'rules',
      body: 'User-agent: *\nDisallow: /x\n',
      detail: '200',
      fetchedAt: 1,
      expiresAt: 2,
    };
    assert.equal(db.robots('http://a.test'), undefined);
    db.putRobots('http://a.test', entry);
    assert.deepEqual(db.robots('http://a.test'), entry);
    db.putRobots('http://a.test', { status: 'allow-all', detail: '404', fetchedAt: 3, expiresAt: 4 });
    assert.equal(db.robots('http://a.test')?.status, 'allow-all');
    assert.equal(db.robots('http://a.test:8080'), undefined);
    db.close();
  });
});
