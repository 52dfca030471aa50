/**
 * Content-seen for one crawl step of the cloud worker, without a write per page.
 *
 * An exact duplicate matters to the crawl in one case only: its links must not be queued again.
 * So the content hash is registered (a conditional put, one write unit) only when the page is about
 * to claim at least one URL nobody has claimed: the URL-seen store calls {@link gate} between
 * reading its fingerprints and claiming the unclaimed ones. If the hash turns out to be another
 * URL's, nothing is claimed and the page is a duplicate. A page whose links are all known (or that
 * has none, or is not HTML) registers nothing; a warm per-container map of hashes still marks it
 * as a duplicate when this container saw the same bytes before.
 *
 * `crawlPage` calls {@link claim} first (before link extraction): it answers from the warm map,
 * or "not a duplicate (yet)" and remembers the hash for the gate.
 *
 * With `everyPage` (the page's host has a duplicate-URL rule, candidate or active, other than an
 * active alias namespace: `DuplicateUrlRules.learnsFrom`), the hash is
 * registered at `claim` for every page the warm map does not know: the rules learn from exact
 * duplicates of one host, and a duplicate whose original registered nothing (its links were
 * known) goes unseen by every container but the one that fetched the original, so a rule gained
 * its support late while the host's other forms were fetched (docs/cloud.md, "Content-seen").
 */
import type { LRUCache } from 'lru-cache';
import type { ContentSeenStore } from '../../core/ports.ts';
import type { Fingerprint } from '../../core/types.ts';
import type { CheckedContentSeenStore } from '../ports/cloud-ports.ts';

/** The content-seen state of one step. */
export class StepContentSeen implements ContentSeenStore {
  readonly #warm: LRUCache<string, string>;
  readonly #store: CheckedContentSeenStore;
  #pending: { hash: string; url: string } | undefined;
  #hash: string | undefined;
  #duplicateOf: string | undefined;
  #registered = false;

  readonly #everyPage: boolean;

  /** `warm`: hash -> first URL seen with it, shared by the steps of a crawl in this container. */
  constructor(
    warm: LRUCache<string, string>,
    store: CheckedContentSeenStore,
    options: { everyPage?: boolean } = {},
  ) {
    this.#warm = warm;
    this.#store = store;
    this.#everyPage = options.everyPage ?? false;
  }

  /** The original's URL when this step's page turned out a duplicate (by the map or the gate). */
  get duplicateOf(): string | undefined {
    return this.#duplicateOf;
  }

  /** Whether the hash was written to the store by this step (for the cost numbers). */
  get registered(): boolean {
    return this.#registered;
  }

  async claim(hash: string, url: string): Promise<string | undefined> {
    this.#hash = hash;
    const known = this.#warm.get(hash);
    if (known !== undefined && known !== url) {
      this.#duplicateOf = known;
      return known;
    }
    this.#pending = { hash, url };
    if (this.#everyPage && !(await this.#register())) return this.#duplicateOf;
    return undefined;
  }

  /** The URL-seen gate: registers the pending hash before new URLs are claimed; false = duplicate. */
  readonly gate = async (unclaimed: readonly Fingerprint[]): Promise<boolean> => {
    if (unclaimed.length === 0) return true;
    return this.#register();
  };

  /** Registers the pending hash (once); false when it was another URL's: this page is a duplicate. */
  async #register(): Promise<boolean> {
    const pending = this.#pending;
    if (pending === undefined) return this.#duplicateOf === undefined;
    this.#pending = undefined;
    const original = await this.#store.claim(pending.hash, pending.url);
    this.#registered = original === undefined;
    if (original !== undefined) {
      this.#duplicateOf = original;
      this.#warm.set(pending.hash, original);
      return false;
    }
    this.#warm.set(pending.hash, pending.url);
    return true;
  }

  /**
   * After the step, for a page that registered nothing (it queued no new URL) and that this
   * container had not seen: one read of the store (0.5 read units) tells whether another URL
   * registered the same bytes, so the page is recorded as its duplicate whichever container
   * fetched the original.
   */
  async check(url: string): Promise<void> {
    const pending = this.#pending;
    if (pending === undefined || this.#duplicateOf !== undefined) return;
    const original = await this.#store.find(pending.hash);
    if (original !== undefined && original !== url) {
      this.#duplicateOf = original;
      this.#warm.set(pending.hash, original);
    }
  }

  /** Once the step finished: a hash this container had not seen is remembered for later pages. */
  finish(url: string): void {
    if (this.#hash !== undefined && this.#duplicateOf === undefined && !this.#warm.has(this.#hash)) {
      this.#warm.set(this.#hash, url);
    }
  }
}
