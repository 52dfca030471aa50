/**
 * Politeness per IP address (config `politenessPerIp`): hosts that resolve to one address share a
 * gate, so one server reached through many host names gets one request at a time, with the gap
 * after each, like one host. A host's address is resolved once, before its first request (a DNS
 * query, no connection; an IP literal needs none); a name that does not resolve has no gate (its
 * fetch fails on its own). Host-level rules stay per host: Retry-After, retry backoff, robots.txt
 * and its Crawl-delay, the page budget.
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from '../adapters/http/address-guard.ts';
import type { HostSlot } from './host-heap.ts';

/** One address's politeness: one request in flight, and when the next may start. */
interface AddressGate {
  address: string;
  /** The host whose request is in flight, if any. */
  holder: HostSlot | undefined;
  nextAt: number;
  /** Hosts that were ready while the gate was held: offered again when it frees. */
  waiting: Set<HostSlot>;
}

/** What a ready host must do before its request. */
export type GateVerdict =
  /** Send it. */
  | 'go'
  /** Its address is being resolved; the host is offered again when it is known. */
  | 'resolving'
  /** Another host of its address has a request in flight; offered again when it ends. */
  | 'busy'
  /** Its address's gap has not passed: the host's `nextAt` was moved to it. */
  | 'gap';

export class AddressGates {
  readonly #lookup: LookupFunction;
  readonly #onResolved: (slot: HostSlot) => void;
  /** host -> its gate, null when it has none (no address), 'pending' while resolving. */
  readonly #byHost = new Map<string, AddressGate | null | 'pending'>();
  readonly #byAddress = new Map<string, AddressGate>();
  #resolving = 0;

  /** @param onResolved called with a host whose address became known (to offer it again). */
  constructor(onResolved: (slot: HostSlot) => void, lookup: LookupFunction = dnsLookup as LookupFunction) {
    this.#lookup = lookup;
    this.#onResolved = onResolved;
  }

  /** Lookups in progress (the crawl is not done while a host waits for its address). */
  get resolving(): number {
    return this.#resolving;
  }

  /** The address a host's requests go to, when known. */
  addressOf(host: string): string | undefined {
    const gate = this.#byHost.get(host);
    return typeof gate === 'object' && gate !== null ? gate.address : undefined;
  }

  /** Whether the host taken from the scheduler may send its request now; see GateVerdict. */
  check(slot: HostSlot, now: number): GateVerdict {
    let gate = this.#byHost.get(slot.host);
    if (gate === undefined) {
      const literal = slot.host.replace(/^\[(.*)\]$/, '$1');
      if (isIP(literal) === 0) {
        this.#resolve(slot);
        return 'resolving';
      }
      gate = this.#gate(literal);
      this.#byHost.set(slot.host, gate);
    }
    if (gate === 'pending') return 'resolving';
    if (gate === null) return 'go';
    if (gate.holder !== undefined && gate.holder !== slot) {
      gate.waiting.add(slot);
      return 'busy';
    }
    if (gate.nextAt > now) {
      slot.nextAt = Math.max(slot.nextAt, gate.nextAt);
      return 'gap';
    }
    return 'go';
  }

  /** The host's request starts: its address is held. */
  acquire(slot: HostSlot): void {
    const gate = this.#byHost.get(slot.host);
    if (typeof gate === 'object' && gate !== null) gate.holder = slot;
  }

  /**
   * The host's request ended: its address's next request waits until `nextAt` (the gap the
   * response asked for, not a Retry-After meant for the host). Returns the hosts to offer again.
   */
  release(slot: HostSlot, nextAt: number): HostSlot[] {
    const gate = this.#byHost.get(slot.host);
    if (typeof gate !== 'object' || gate === null || gate.holder !== slot) return [];
    gate.holder = undefined;
    gate.nextAt = Math.max(gate.nextAt, nextAt);
    const waiting = [...gate.waiting];
    gate.waiting.clear();
    return waiting;
  }

  #gate(address: string): AddressGate {
    let gate = this.#byAddress.get(address);
    if (gate === undefined) {
      gate = { address, holder: undefined, nextAt: 0, waiting: new Set() };
      this.#byAddress.set(address, gate);
    }
    return gate;
  }

  #resolve(slot: HostSlot): void {
    this.#byHost.set(slot.host, 'pending');
    this.#resolving++;
    this.#lookup(slot.host, { all: false }, (error, address) => {
      this.#resolving--;
      const resolved =
        error === null && typeof address === 'string' && address.length > 0 ? address : undefined;
      this.#byHost.set(slot.host, resolved === undefined ? null : this.#gate(resolved));
      this.#onResolved(slot);
    });
  }
}
