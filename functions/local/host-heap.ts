/** Scheduling state of one host (politeness key) in the embedded crawler. */
export interface HostSlot {
  host: string;
  /** Tasks of this host in the frontier (including the one running). */
  queued: number;
  /** A step of this host is running: the one-request-in-flight rule. */
  busy: boolean;
  /** Epoch ms before which no request may start. */
  nextAt: number;
  crawlDelayMs?: number;
  /** Page requests made (the per-host budget). */
  fetched: number;
  /** Set when the host is given up (robots.txt unreachable): remaining tasks are recorded, not fetched. */
  dead?: string;
  /** The nextAt this slot was pushed with; older heap entries for it are stale. */
  heapKey: number;
}

/**
 * Min-heap of hosts by next allowed time. Entries are never removed in place: a host pushed again
 * gets a new key, and `pop` drops entries whose key no longer matches (lazy deletion).
 */
export class HostHeap {
  #items: { at: number; slot: HostSlot }[] = [];

  get length(): number {
    return this.#items.length;
  }

  /** Queues the host if it has work and is idle. */
  offer(slot: HostSlot): void {
    if (slot.busy || slot.queued <= 0) return;
    // Already queued under this key (e.g. another link to an idle host): one entry is enough.
    if (slot.heapKey === slot.nextAt) return;
    slot.heapKey = slot.nextAt;
    this.#push({ at: slot.nextAt, slot });
  }

  /** The earliest valid host, without removing it. */
  peek(): HostSlot | undefined {
    this.#dropStale();
    return this.#items[0]?.slot;
  }

  pop(): HostSlot | undefined {
    this.#dropStale();
    const top = this.#items[0];
    if (top === undefined) return undefined;
    this.#removeTop();
    top.slot.heapKey = Number.NaN;
    return top.slot;
  }

  #dropStale(): void {
    for (;;) {
      const top = this.#items[0];
      if (top === undefined) return;
      const { slot } = top;
      if (top.at === slot.heapKey) {
        if (!slot.busy && slot.queued > 0) return;
        slot.heapKey = Number.NaN; // its only entry goes: a later offer must push again
      }
      this.#removeTop();
    }
  }

  #push(item: { at: number; slot: HostSlot }): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.at <= item.at) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = item;
  }

  #removeTop(): void {
    const items = this.#items;
    const last = items.pop()!;
    if (items.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && items[right]!.at < items[left]!.at ? right : left;
      if (items[child]!.at >= last.at) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
  }
}
