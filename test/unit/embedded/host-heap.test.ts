import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostScheduler, type HostSlot, newHostSlot } from '../../../functions/embedded/host-heap.ts';

function slot(host: string, nextAt: number, best = 0, queued = 1): HostSlot {
  return { ...newHostSlot(host), nextAt, best, queued };
}

function drain(scheduler: HostScheduler, now: number): string[] {
  const out: string[] = [];
  for (let s = scheduler.pop(now); s !== undefined; s = scheduler.pop(now)) out.push(s.host);
  return out;
}

describe('HostScheduler', () => {
  test('among ready hosts, the one whose next task has the highest priority goes first', () => {
    const scheduler = new HostScheduler();
    for (const [host, best] of [
      ['c', 0.3],
      ['a', 0.9],
      ['d', 0.1],
      ['b', 0.5],
    ] as const) {
      scheduler.offer(slot(host, 0, best), 100);
    }
    assert.deepEqual(drain(scheduler, 100), ['a', 'b', 'c', 'd']);
    assert.equal(scheduler.pop(100), undefined);
    assert.equal(scheduler.hasWork(), false);
  });

  test('a host still inside its politeness gap waits, whatever its priority', () => {
    const scheduler = new HostScheduler();
    scheduler.offer(slot('soon', 150, 10), 100);
    scheduler.offer(slot('now', 50, 1), 100);
    assert.equal(scheduler.nextWakeAt(), 150);
    assert.deepEqual(drain(scheduler, 100), ['now']);
    assert.equal(scheduler.hasWork(), true);
    assert.deepEqual(drain(scheduler, 149), []);
    assert.deepEqual(drain(scheduler, 150), ['soon']);
    assert.equal(scheduler.nextWakeAt(), undefined);
  });

  test('waiting hosts that became ready compete by priority with the ready ones', () => {
    const scheduler = new HostScheduler();
    scheduler.offer(slot('late-rich', 120, 5), 100);
    scheduler.offer(slot('ready-poor', 0, 1), 100);
    assert.deepEqual(drain(scheduler, 200), ['late-rich', 'ready-poor']);
  });

  test('busy hosts and hosts with nothing queued are not offered', () => {
    const scheduler = new HostScheduler();
    const busy = slot('busy', 0);
    busy.busy = true;
    scheduler.offer(busy, 10);
    scheduler.offer(slot('empty', 0, 0, 0), 10);
    assert.equal(scheduler.hasWork(), false);
    assert.equal(scheduler.pop(10), undefined);
  });

  test('a host offered again with a new priority: the old entry is stale and skipped', () => {
    const scheduler = new HostScheduler();
    const a = slot('a', 0, 1);
    const b = slot('b', 0, 2);
    scheduler.offer(a, 10);
    scheduler.offer(b, 10);
    a.best = 3;
    scheduler.offer(a, 10);
    assert.deepEqual(drain(scheduler, 10), ['a', 'b']);
  });

  test('a host offered twice unchanged comes out once', () => {
    const scheduler = new HostScheduler();
    const a = slot('a', 0, 1);
    scheduler.offer(a, 10);
    scheduler.offer(a, 10);
    scheduler.offer(slot('b', 0, 0), 10);
    assert.deepEqual(drain(scheduler, 10), ['a', 'b']);
  });

  test('a host that became busy or ran out of work after its offer is skipped, and can be offered again', () => {
    const scheduler = new HostScheduler();
    const a = slot('a', 0, 3);
    const b = slot('b', 0, 2);
    const c = slot('c', 0, 1);
    for (const s of [a, b, c]) scheduler.offer(s, 10);
    a.busy = true;
    b.queued = 0;
    assert.deepEqual(drain(scheduler, 10), ['c']);
    a.busy = false;
    scheduler.offer(a, 10);
    assert.deepEqual(drain(scheduler, 10), ['a']);
  });

  test('random offers and pops match a reference (earliest due first among equals is not required)', () => {
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
      return seed / 2 ** 32;
    };
    const scheduler = new HostScheduler();
    const slots = Array.from({ length: 50 }, (_, i) => slot(`h${i}`, 0, 0));
    let now = 0;
    for (let round = 0; round < 2000; round++) {
      now += Math.floor(random() * 5);
      const s = slots[Math.floor(random() * slots.length)]!;
      if (!s.busy && random() < 0.6) {
        s.nextAt = now + Math.floor(random() * 20);
        s.best = Math.floor(random() * 100);
        scheduler.offer(s, now);
      } else {
        const expected = slots
          .filter(
            (x) =>
              !x.busy && x.queued > 0 && (x.state === 'ready' || (x.state === 'waiting' && x.nextAt <= now)),
          )
          .reduce<number>((best, x) => Math.max(best, x.best), Number.NEGATIVE_INFINITY);
        const got = scheduler.pop(now);
        if (got === undefined) assert.equal(expected, Number.NEGATIVE_INFINITY);
        else {
          assert.equal(got.best, expected);
          assert.ok(got.nextAt <= now);
        }
      }
    }
  });
});
