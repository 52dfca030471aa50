import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { QueuedTask } from '../../../functions/adapters/local/crawl-db.ts';
import { AopicLedger } from '../../../functions/core/scheduling/aopic.ts';
import type { Fingerprint } from '../../../functions/core/types.ts';
import { AopicDispatchPolicy, type CreditSink } from '../../../functions/embedded/aopic-dispatch-policy.ts';

const task = (cash: number, extra: Partial<QueuedTask> = {}): QueuedTask => ({
  crawlId: 'c',
  url: 'http://a.test/x',
  fp: '00000000000000aa',
  host: 'a.test',
  depth: 1,
  redirects: 0,
  attempt: 0,
  cash,
  seq: 7,
  prio: 0,
  cashKey: cash,
  ...extra,
});

class Sink implements CreditSink {
  calls: [Map<Fingerprint, number>, boolean, Set<Fingerprint>][] = [];
  credit(credits: ReadonlyMap<Fingerprint, number>, byCash: boolean, ordinary: ReadonlySet<Fingerprint>) {
    this.calls.push([new Map(credits), byCash, new Set(ordinary)]);
  }
}

describe('AopicDispatchPolicy', () => {
  test('AOPIC rows are served by cash key; breadth-first rows by queue order, front first', () => {
    const ledger = new AopicLedger({ lambda: 0, bonus: 0.25, known: 4, history: 0 });
    const aopic = new AopicDispatchPolicy({ order: 'aopic', redistributeEveryMs: 1000 }, ledger, 0);
    assert.deepEqual(aopic.prioritize(task(0.5), 3, false), { prio: 0.25, cashKey: 0.25 });
    const bfs = new AopicDispatchPolicy({ order: 'bfs', redistributeEveryMs: 1000 }, ledger, 0);
    assert.deepEqual(bfs.prioritize(task(0.5), 3, false), { prio: -3, cashKey: 0.25 });
    assert.ok(bfs.prioritize(task(0.5), -2, true).prio > bfs.prioritize(task(0.5), 1, false).prio);
    assert.equal(aopic.taskOf(task(0, { cashKey: 0.1 })).cash, 0.35, 'key plus the bonus');
  });

  test('with a budget, a generated URL waits for a dry frontier, and a poor one is held back', () => {
    const ledger = new AopicLedger();
    const policy = new AopicDispatchPolicy(
      { order: 'aopic', maxPages: 100, redistributeEveryMs: 1000 },
      ledger,
      0,
    );
    assert.equal(policy.waitsForDry(task(1, { generated: true })), true);
    assert.equal(policy.waitsForDry(task(1)), false);
    assert.equal(policy.holdBack(task(1), 0), false);
    assert.equal(policy.holdBack(task(0.4), 3), true, 'under half the average while others run');
    assert.equal(policy.holdBack(task(0.4), 0), false, 'goes when nothing runs');
    const unlimited = new AopicDispatchPolicy({ order: 'aopic', redistributeEveryMs: 1000 }, ledger, 0);
    assert.equal(unlimited.waitsForDry(task(1, { generated: true })), false);
    assert.equal(unlimited.holdBack(task(0), 5), false);
  });

  test('a sitemap the site names goes before the pages of its host, a guessed one waits; neither is held back', () => {
    const ledger = new AopicLedger({ lambda: 0, bonus: 0.25, known: 4, history: 0 });
    const fetch = { scope: 'http://a.test/', granted: true, level: 0, files: 100, entries: 1000 };
    const named = task(0, { sitemap: { ...fetch, url: 'http://a.test/s.xml', from: 'robots' } });
    const child = task(0, { sitemap: { ...fetch, url: 'http://a.test/s1.xml', from: 'index', level: 1 } });
    const guessed = task(0, {
      sitemap: { ...fetch, url: 'http://a.test/sitemap.xml', from: 'default', granted: false },
    });
    for (const order of ['aopic', 'bfs'] as const) {
      const policy = new AopicDispatchPolicy({ order, maxPages: 100, redistributeEveryMs: 1000 }, ledger, 0);
      const page = policy.prioritize(task(0.9), 1, false).prio;
      assert.ok(policy.prioritize(named, 9, false).prio > page, `${order}: named sitemap first`);
      assert.ok(policy.prioritize(child, 9, false).prio > page, `${order}: an index's child first`);
      assert.ok(policy.prioritize(guessed, 9, false).prio < page, `${order}: the guessed one waits`);
      assert.equal(policy.prioritize(named, 9, false).cashKey, -0.25, 'its cash is kept as it is');
    }
    const policy = new AopicDispatchPolicy(
      { order: 'aopic', maxPages: 100, redistributeEveryMs: 1000 },
      ledger,
      0,
    );
    policy.holdBack(task(1), 0);
    assert.equal(policy.holdBack(named, 5), false);
    assert.equal(policy.holdBack(guessed, 5), false, 'a sitemap is never held back');
    assert.equal(policy.holdBack(task(0.001), 5), true, 'a poor URL waits while others run');
    assert.equal(policy.holdBack(task(0.001, { listed: true }), 5), false, 'not one a sitemap lists');
    // ...and a rich one does not raise the bar for the pages after it
    for (let i = 0; i < 20; i++) policy.holdBack(task(100, { sitemap: guessed.sitemap! }), 5);
    assert.equal(policy.holdBack(task(0.9), 5), false);
  });

  test('books a step, applies credits in batches and redistributes the lambda page on time', () => {
    const ledger = new AopicLedger();
    ledger.discovered(1);
    const policy = new AopicDispatchPolicy({ order: 'aopic', redistributeEveryMs: 1000 }, ledger, 0);
    const finished = policy.book(
      2,
      {
        cash: 1,
        toLambda: 0.1,
        credits: [
          { fp: 'f1', amount: 0.3, host: 'a.test' },
          { fp: 'f1', amount: 0.2, host: 'a.test' },
          { fp: 'f2', amount: 0.01, host: 'b.test', generated: true },
        ],
      },
      true,
    );
    assert.deepEqual(finished, { history: 1, key: 0 });
    assert.equal(ledger.state.known, 3);
    assert.equal(ledger.state.lambda, 0.1);
    assert.equal(policy.book(0, undefined, false), undefined);
    const sink = new Sink();
    assert.equal(policy.maintain(10, sink), undefined, 'credits wait up to 50 ms');
    assert.deepEqual(policy.maintain(50, sink), new Set(['a.test', 'b.test']), 'the hosts credited');
    assert.deepEqual(sink.calls, [
      [
        new Map([
          ['f1', 0.5],
          ['f2', 0.01],
        ]),
        true,
        new Set(['f1']),
      ],
    ]);
    assert.equal(policy.maintain(60, sink), undefined, 'nothing left to apply');
    policy.maintain(1000, sink);
    assert.equal(ledger.state.lambda, 0, 'redistributed');
    assert.ok(Math.abs(ledger.state.bonus - 0.1 / 3) < 1e-12);
  });
});
