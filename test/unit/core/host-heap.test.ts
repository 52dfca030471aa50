import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostHeap, type HostSlot } from '../../../functions/local/host-heap.ts';

function slot(host: string, nextAt: number, queued = 1): HostSlot {
  return { host, queued, busy: false, nextAt, fetched: 0, heapKey: Number.NaN };
}

function drain(heap: HostHeap): string[] {
  const out: string[] = [];
  for (let s = heap.pop(); s !== undefined; s = heap.pop()) out.push(s.host);
  return out;
}

describe('HostHeap', () => {
  test('pops hosts by their next allowed time', () => {
    const heap = new HostHeap();
    for (const [host, at] of [
      ['c', 30],
      ['a', 10],
      ['d', 40],
      ['b', 20],
      ['e', 5],
    ] as const) {
      heap.offer(slot(host, at));
    }
    assert.equal(heap.peek()?.host, 'e');
    assert.equal(heap.peek()?.host, 'e', 'peek does not remove');
    assert.deepEqual(drain(heap), ['e', 'a', 'b', 'c', 'd']);
    assert.equal(heap.peek(), undefined);
    assert.equal(heap.pop(), undefined);
  });

  test('busy hosts and hosts with nothing queued are not offered', () => {
    const heap = new HostHeap();
    const busy = slot('busy', 1);
    busy.busy = true;
    heap.offer(busy);
    heap.offer(slot('empty', 2, 0));
    assert.equal(heap.length, 0);
    assert.equal(heap.peek(), undefined);
  });

  test('a host offered again with a new time: the old entry is stale and skipped', () => {
    const heap = new HostHeap();
    const a = slot('a', 10);
    const b = slot('b', 20);
    heap.offer(a);
    heap.offer(b);
    a.nextAt = 30;
    heap.offer(a);
    assert.deepEqual(drain(heap), ['b', 'a']);
  });

  test('a host offered twice with the same time comes out once', () => {
    const heap = new HostHeap();
    const a = slot('a', 10);
    heap.offer(a);
    heap.offer(a);
    heap.offer(slot('b', 20));
    assert.deepEqual(drain(heap), ['a', 'b']);
  });

  test('a host that became busy or ran out of work after its offer is skipped', () => {
    const heap = new HostHeap();
    const a = slot('a', 10);
    const b = slot('b', 20);
    const c = slot('c', 30);
    for (const s of [a, b, c]) heap.offer(s);
    a.busy = true;
    b.queued = 0;
    assert.equal(heap.peek()?.host, 'c');
    assert.deepEqual(drain(heap), ['c']);
  });

  test('random offers and pops match a sorted reference', () => {
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
      return seed / 2 ** 32;
    };
    const heap = new HostHeap();
    const slots = Array.from({ length: 50 }, (_, i) => slot(`h${i}`, 0, 0));
    const inHeap = new Map<HostSlot, number>();
    for (let step = 0; step < 5000; step++) {
      if (random() < 0.6) {
        const s = slots[Math.floor(random() * slots.length)]!;
        s.queued = 1;
        s.nextAt = Math.floor(random() * 1000);
        heap.offer(s);
        inHeap.set(s, s.nextAt);
      } else {
        const popped = heap.pop();
        const min = Math.min(...inHeap.values());
        if (inHeap.size === 0) {
          assert.equal(popped, undefined);
          continue;
        }
        assert.ok(popped, `step ${step}: the heap lost a host`);
        assert.equal(
          inHeap.get(popped),
          min,
          `step ${step}: popped ${popped.host} at ${popped.nextAt}, min ${min}`,
        );
        inHeap.delete(popped);
        popped.queued = 0;
      }
    }
  });
});
