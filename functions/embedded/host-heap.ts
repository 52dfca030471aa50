import type { FinishReason } from '../core/step/page-record.ts';

/** Scheduling state of one host (politeness key) in the embedded crawler. */
export interface HostSlot {
  host: string;
  /** Tasks of this host in the frontier (including the ones running). */
  queued: number;
  /** A step of this host is making its request: the one-request-in-flight rule. */
  busy: boolean;
  /**
   * Queue position of a task whose response is in and whose step is still storing and parsing it
   * (the host was released early for its next request). At most one per host.
   */
  finishing?: number;
  /** Epoch ms before which no request may start. */
  nextAt: number;
  crawlDelayMs?: number;
  /** Page requests made (the per-host budget). */
  fetched: number;
  /** Set when the host is given up (robots.txt unreachable): remaining tasks are recorded, not fetched. */
  dead?: FinishReason;
  /** Origin of its last request (where its robots.txt lives), for reports. */
  origin?: string;
  /** Duration of its last request, ms. */
  lastResponseMs?: number;
  /** Failed requests (no response, or 5xx/429), and the last failure's code. */
  errors: number;
  lastError?: string;
  /** Why `nextAt` lies past the ordinary gap (Retry-After, a retry's backoff). */
  waitingFor?: string;
  /** Priority of the host's next task (its frontier head), as last read. */
  best: number;
  /** Where the slot is queued, and under which key (older heap entries for it are stale). */
  state: 'idle' | 'waiting' | 'ready';
  key: number;
}

/** True when the host has a task that no step holds. */
export function hasWaitingTask(slot: HostSlot): boolean {
  return slot.queued - (slot.finishing === undefined ? 0 : 1) > 0;
}

/** A new slot for a host with nothing known yet. */
export function newHostSlot(host: string): HostSlot {
  return {
    host,
    queued: 0,
    busy: false,
    nextAt: 0,
    fetched: 0,
    errors: 0,
    best: Number.NEGATIVE_INFINITY,
    state: 'idle',
    key: 0,
  };
}

/**
 * Chooses the next host: among hosts whose politeness gap has passed, the one whose next task
 * has the highest priority (AOPIC cash, or discovery order for breadth-first), so the crawl's
 * order is global, not round-robin over hosts; hosts still waiting sit in a heap by next allowed
 * time. Entries are never removed in place: a slot queued again gets a new key, and entries whose
 * key no longer matches are dropped when they surface (lazy deletion).
 */
export class HostScheduler {
  readonly #waiting = new Heap((a, b) => a.key < b.key);
  readonly #ready = new Heap((a, b) => a.key > b.key);

  /** Queues the host if it has work and is idle: ready now, or waiting for its gap. */
  offer(slot: HostSlot, now: number): void {
    if (slot.busy || !hasWaitingTask(slot)) return;
    if (slot.nextAt > now) {
      if (slot.state === 'waiting' && slot.key === slot.nextAt) return;
      slot.state = 'waiting';
      slot.key = slot.nextAt;
      this.#waiting.push({ key: slot.key, slot });
    } else {
      if (slot.state === 'ready' && slot.key === slot.best) return;
      slot.state = 'ready';
      slot.key = slot.best;
      this.#ready.push({ key: slot.key, slot });
    }
  }

  /** Takes the best ready host (hosts whose gap passed by `now` become ready first). */
  pop(now: number): HostSlot | undefined {
    for (;;) {
      const waiting = this.#validTop(this.#waiting, 'waiting');
      if (waiting === undefined || waiting.nextAt > now) break;
      this.#waiting.pop();
      waiting.state = 'idle';
      this.offer(waiting, now);
    }
    const ready = this.#validTop(this.#ready, 'ready');
    if (ready === undefined) return undefined;
    this.#ready.pop();
    ready.state = 'idle';
    return ready;
  }

  /** When the earliest waiting host becomes ready (undefined when none waits). */
  nextWakeAt(): number | undefined {
    return this.#validTop(this.#waiting, 'waiting')?.nextAt;
  }

  /** True when some host has work queued and is not running. */
  hasWork(): boolean {
    return (
      this.#validTop(this.#ready, 'ready') !== undefined ||
      this.#validTop(this.#waiting, 'waiting') !== undefined
    );
  }

  #validTop(heap: Heap, state: HostSlot['state']): HostSlot | undefined {
    for (;;) {
      const top = heap.peek();
      if (top === undefined) return undefined;
      const { slot } = top;
      if (slot.state === state && slot.key === top.key && !slot.busy && hasWaitingTask(slot)) return slot;
      heap.pop();
      // Its only live entry is gone: a later offer must push again.
      if (slot.state === state && slot.key === top.key) slot.state = 'idle';
    }
  }
}

interface Entry {
  key: number;
  slot: HostSlot;
}

/** Binary heap ordered by `before` (true when a goes above b). */
class Heap {
  readonly #items: Entry[] = [];
  readonly #before: (a: Entry, b: Entry) => boolean;

  constructor(before: (a: Entry, b: Entry) => boolean) {
    this.#before = before;
  }

  peek(): Entry | undefined {
    return this.#items[0];
  }

  push(item: Entry): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(item, items[parent]!)) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = item;
  }

  pop(): Entry | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && this.#before(items[right]!, items[left]!) ? right : left;
      if (!this.#before(items[child]!, last)) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
    return top;
  }
}
