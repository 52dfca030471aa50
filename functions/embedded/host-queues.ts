/**
 * The embedded crawler's per-host view of the frontier: one slot per host (how many tasks it has
 * queued, whether a request is in flight, when the next may start), the scheduler that picks the
 * next host, and the head task of each host read from the frontier when the host is offered.
 */
import type { QueuedTask } from '../adapters/local/crawl-db.ts';
import type { CrawlTask } from '../core/types.ts';
import { HostScheduler, type HostSlot, hasWaitingTask, newHostSlot } from './host-heap.ts';

/** Where the head of a host's queue is read: the frontier (CrawlDb in the crawler). */
export interface FrontierHeads {
  /** The host's next task, passing over the row `taken` (held by a finishing step). */
  head(host: string, taken?: number): QueuedTask | undefined;
}

/** A host the scheduler chose, with its next task as the frontier holds it. */
export interface TakenHost {
  slot: HostSlot;
  head: QueuedTask;
}

export class HostQueues {
  readonly #frontier: FrontierHeads;
  readonly #hosts = new Map<string, HostSlot>();
  readonly #scheduler = new HostScheduler();
  #queued = 0;
  /**
   * The head task the last offer read, for the take that usually follows at once (so it is not
   * read twice). One entry: a cache per host would hold a task for every waiting host.
   */
  #offered: { slot: HostSlot; head: QueuedTask | undefined } | undefined;

  constructor(frontier: FrontierHeads) {
    this.#frontier = frontier;
  }

  /** Tasks queued over all hosts (the running ones included). */
  get queued(): number {
    return this.#queued;
  }

  /** Hosts known to this run. */
  get size(): number {
    return this.#hosts.size;
  }

  /** Every host's slot, for reports; callers must not change them. */
  slots(): IterableIterator<HostSlot> {
    return this.#hosts.values();
  }

  /** The slot of a host, created empty on first use. */
  slot(host: string): HostSlot {
    let slot = this.#hosts.get(host);
    if (slot === undefined) {
      slot = newHostSlot(host);
      this.#hosts.set(host, slot);
    }
    return slot;
  }

  /** Rebuilds the slots from the frontier's counts when a crawl opens (a fresh one holds just the seeds). */
  restore(
    queuedByHost: ReadonlyMap<string, number>,
    fetchedByHost: ReadonlyMap<string, number>,
    now: number,
  ) {
    for (const [host, count] of queuedByHost) {
      const slot = this.slot(host);
      slot.queued = count;
      slot.fetched = fetchedByHost.get(host) ?? 0;
      this.#queued += count;
      this.offer(slot, now);
    }
  }

  /** Queues a host for dispatch with the priority of its current head task. */
  offer(slot: HostSlot, now: number): void {
    if (slot.busy || !hasWaitingTask(slot)) return;
    const head = this.#frontier.head(slot.host, slot.finishing);
    // Every change to a host's rows is followed by its offer, credit flushes aside.
    this.#offered = { slot, head };
    slot.best = head?.prio ?? Number.NEGATIVE_INFINITY;
    this.#scheduler.offer(slot, now);
  }

  /** Reads a known host's head again and queues it under that (its URLs' priorities changed). */
  reoffer(host: string, now: number): void {
    const slot = this.#hosts.get(host);
    if (slot !== undefined) this.offer(slot, now);
  }

  /** Puts a host back as it is (no new head read): it was taken but not dispatched. */
  putBack(slot: HostSlot, now: number): void {
    this.#scheduler.offer(slot, now);
  }

  /** Forgets the head read by the last offer (credits changed priorities, or the host moved on). */
  forgetOffered(slot?: HostSlot): void {
    if (slot === undefined || this.#offered?.slot === slot) this.#offered = undefined;
  }

  /**
   * Takes the ready host whose head has the highest priority, with that head; undefined when no
   * host is ready. A host whose count says it has tasks but whose queue is empty is corrected.
   */
  take(now: number): TakenHost | undefined {
    for (;;) {
      const slot = this.#scheduler.pop(now);
      if (slot === undefined) return undefined;
      const offered = this.#offered;
      this.#offered = undefined;
      const head = offered?.slot === slot ? offered.head : this.#frontier.head(slot.host, slot.finishing);
      if (head !== undefined) return { slot, head };
      // The count drifted (should not happen); trust the frontier.
      const drift = slot.queued - (slot.finishing === undefined ? 0 : 1);
      this.#queued -= drift;
      slot.queued -= drift;
    }
  }

  /** A step finished its task (it left the frontier). */
  finished(slot: HostSlot): void {
    slot.queued -= 1;
    this.#queued -= 1;
  }

  /** A step queued new tasks: their hosts count them; returns the hosts to offer. */
  added(tasks: readonly CrawlTask[], into: Set<HostSlot>): void {
    for (const task of tasks) {
      const target = this.slot(task.host);
      target.queued += 1;
      this.#queued += 1;
      into.add(target);
    }
  }

  /** When the earliest host waiting for its gap becomes ready (undefined when none waits). */
  nextWakeAt(): number | undefined {
    return this.#scheduler.nextWakeAt();
  }

  /** True when some host has work queued and is not running. */
  hasWork(): boolean {
    return this.#scheduler.hasWork();
  }
}
