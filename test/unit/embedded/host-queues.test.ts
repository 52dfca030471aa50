import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { QueuedTask } from '../../../functions/adapters/local/crawl-db.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';
import { type FrontierHeads, HostQueues } from '../../../functions/embedded/host-queues.ts';

/** An in-memory frontier: per host, rows by priority (highest first). */
class MemoryHeads implements FrontierHeads {
  readonly rows = new Map<string, QueuedTask[]>();
  reads = 0;
  add(host: string, seq: number, prio: number): QueuedTask {
    const row: QueuedTask = {
      crawlId: 'c',
      url: `http://${host}/${seq}`,
      fp: seq.toString(16).padStart(16, '0'),
      host,
      depth: 1,
      redirects: 0,
      attempt: 0,
      cash: prio,
      seq,
      prio,
      cashKey: prio,
    };
    const list = this.rows.get(host) ?? [];
    list.push(row);
    list.sort((a, b) => b.prio - a.prio || a.seq - b.seq);
    this.rows.set(host, list);
    return row;
  }
  remove(row: QueuedTask) {
    const list = this.rows.get(row.host) ?? [];
    list.splice(list.indexOf(row), 1);
  }
  head(host: string, taken?: number) {
    this.reads++;
    return this.rows.get(host)?.find((r) => r.seq !== taken);
  }
}

describe('HostQueues', () => {
  test('restores hosts from the frontier counts and takes the best ready head first', () => {
    const heads = new MemoryHeads();
    heads.add('a', 1, 0.2);
    heads.add('b', 2, 0.7);
    heads.add('b', 3, 0.1);
    const queues = new HostQueues(heads);
    queues.restore(
      new Map([
        ['a', 1],
        ['b', 2],
      ]),
      new Map([['b', 5]]),
      0,
    );
    assert.equal(queues.queued, 3);
    assert.equal(queues.size, 2);
    assert.equal(queues.slot('b').fetched, 5);
    const first = queues.take(0);
    assert.equal(first?.slot.host, 'b');
    assert.equal(first?.head.seq, 2);
    first!.slot.busy = true;
    assert.equal(queues.take(0)?.head.seq, 1, 'a busy host is not offered again');
    assert.equal(queues.take(0), undefined);
  });

  test('the head read by an offer serves the take that follows, and is forgotten when told', () => {
    const heads = new MemoryHeads();
    heads.add('a', 1, 1);
    const queues = new HostQueues(heads);
    queues.restore(new Map([['a', 1]]), new Map(), 0);
    const reads = heads.reads;
    assert.equal(queues.take(0)?.head.seq, 1);
    assert.equal(heads.reads, reads, 'no second read');
    const slot = queues.slot('a');
    queues.putBack(slot, 0);
    queues.forgetOffered();
    queues.take(0);
    assert.equal(heads.reads, reads + 1, 'read again after forgetOffered');
  });

  test('a host whose URLs were credited is queued again under its new head', () => {
    const heads = new MemoryHeads();
    const poor = heads.add('a', 1, 0.1);
    heads.add('b', 2, 0.5);
    const queues = new HostQueues(heads);
    queues.restore(
      new Map([
        ['a', 1],
        ['b', 1],
      ]),
      new Map(),
      0,
    );
    // Credits make a's URL the richest; without a new read a waits under its old key, behind b.
    poor.prio = 0.9;
    queues.reoffer('a', 0);
    queues.reoffer('unknown.test', 0);
    assert.equal(queues.take(0)?.slot.host, 'a');
    assert.equal(queues.take(0)?.slot.host, 'b');
  });

  test('counts added and finished tasks, and corrects a count the frontier does not back', () => {
    const heads = new MemoryHeads();
    const queues = new HostQueues(heads);
    const targets = new Set<ReturnType<typeof queues.slot>>();
    const tasks: CrawlTask[] = [heads.add('x', 1, 1), heads.add('y', 2, 1), heads.add('y', 3, 2)];
    queues.added(tasks, targets);
    assert.deepEqual([...targets].map((s) => s.host).sort(), ['x', 'y']);
    assert.equal(queues.queued, 3);
    for (const slot of targets) queues.offer(slot, 0);
    const y = queues.take(0);
    assert.equal(y?.head.seq, 3);
    heads.remove(y!.head);
    queues.finished(y!.slot);
    assert.equal(queues.queued, 2);
    // x claims a task that is gone: take() drops the host and fixes the totals
    heads.rows.set('x', []);
    queues.putBack(y!.slot, 0);
    const next = queues.take(0);
    assert.equal(next?.slot.host, 'y');
    assert.equal(queues.take(0), undefined);
    assert.equal(queues.queued, 1);
    assert.equal(queues.slot('x').queued, 0);
  });

  test('a host inside its gap waits; nextWakeAt says until when', () => {
    const heads = new MemoryHeads();
    heads.add('a', 1, 1);
    const queues = new HostQueues(heads);
    queues.slot('a').nextAt = 500;
    queues.restore(new Map([['a', 1]]), new Map(), 100);
    assert.equal(queues.take(100), undefined);
    assert.equal(queues.nextWakeAt(), 500);
    assert.equal(queues.hasWork(), true);
    assert.equal(queues.take(500)?.slot.host, 'a');
  });
});
