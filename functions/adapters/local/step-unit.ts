/**
 * The embedded crawler's SeenStore, Frontier and ContentSeenStore, and the writer of a step's
 * results (pages.jsonl, links.jsonl, dataset.jsonl lines): the local adapters of one crawl step. Several steps run at once (different hosts), and SQLite transactions cannot
 * interleave, so each step buffers its writes here and the runtime commits them (`write()`) in
 * one transaction when the step ends; a step killed half-way leaves nothing behind. The step
 * claims through it while it runs and returns its effects, which `take` adds to the same commit.
 * The contract suites run these, one step per call (test/contract).
 */

import { datasetRow } from '../../core/dataset/dataset-row.ts';
import type { ContentSeenStore, Frontier, RobotsCache, RobotsEntry, SeenStore } from '../../core/ports.ts';
import type { StepEffects } from '../../core/step/step-effects.ts';
import { safeJson } from '../../core/text/safe-text.ts';
import type { CrawlTask, Fingerprint, LinkRecord, PageRecord } from '../../core/types.ts';
import type { CrawlDb, StepWrite } from './crawl-db.ts';

/** Claims made by steps that have not committed yet, shared by all running steps. */
export class PendingClaims {
  readonly fps = new Set<Fingerprint>();
  readonly hashes = new Map<string, string>();
}

export class StepUnit implements SeenStore, Frontier {
  readonly claimed: Fingerprint[] = [];
  readonly enqueued: CrawlTask[] = [];
  readonly contentHashes: { hash: string; url: string }[] = [];
  readonly pageLines: string[] = [];
  /** dataset.jsonl lines: the pages the crawl's `extract` fields were pulled from. */
  readonly datasetLines: string[] = [];
  readonly linkLines: string[] = [];
  /** Out-links not followed, by reason, for the crawl's counters. */
  readonly skippedLinks = new Map<string, number>();
  /** Fingerprints the step looked up in the URL-seen test, in order (the URL-seen trace). */
  readonly lookups: Fingerprint[] = [];
  /**
   * robots.txt entries the step stored, written with its commit: the sitemaps a robots.txt
   * queued are committed with the entry that says they were, or neither is.
   */
  readonly robotsEntries = new Map<string, RobotsEntry>();
  readonly #db: CrawlDb;
  readonly #pending: PendingClaims;
  /** Fingerprints `claim` refused because a running step claimed them (not committed yet). */
  readonly #claimedByRunning = new Set<Fingerprint>();

  constructor(db: CrawlDb, pending: PendingClaims) {
    this.#db = db;
    this.#pending = pending;
  }

  /** The owner of this step's claims (one step = one page), for `StepWrite.claimOwner`. */
  claimOwner: Fingerprint | undefined;

  /**
   * SeenStore semantics: true for a fingerprint new to the seen set and to the claims of running
   * steps, or already committed by the same owner; false otherwise.
   */
  async claim(fps: readonly Fingerprint[], owner?: Fingerprint): Promise<boolean[]> {
    if (owner !== undefined) this.claimOwner = owner;
    return fps.map((fp) => {
      if (this.#pending.fps.has(fp)) {
        this.#claimedByRunning.add(fp);
        return false;
      }
      const committed = this.#db.seenOwner(fp);
      if (committed !== undefined) return owner !== undefined && committed === owner;
      this.#pending.fps.add(fp);
      this.claimed.push(fp);
      return true;
    });
  }

  /**
   * Which of these fingerprints, refused by `claim`, were in the committed seen set then: what a
   * URL-seen cache may keep. One only another running step had claimed is not: that step may
   * fail and release it, and whoever retries it must be able to claim it again.
   */
  async committed(fps: readonly Fingerprint[]): Promise<boolean[]> {
    return fps.map((fp) => !this.#claimedByRunning.has(fp));
  }

  async has(fp: Fingerprint): Promise<boolean> {
    return this.#pending.fps.has(fp) || this.#db.seenHas(fp);
  }

  async enqueue(tasks: readonly CrawlTask[]): Promise<void> {
    this.#enqueue(tasks);
  }

  #enqueue(tasks: readonly CrawlTask[]): void {
    // Not push(...tasks): a spread passes every task as an argument, and a page with ~130,000
    // new links overflows the call stack.
    for (const task of tasks) this.enqueued.push(task);
  }

  /**
   * Adds a crawl step's effects to this unit's commit: its page record (`record`, a finished
   * URL's), its link record, the tasks it admitted and the robots.txt entry it fetched.
   */
  take(effects: StepEffects, record?: PageRecord): void {
    if (effects.links !== undefined) this.#links(effects.links);
    if (record !== undefined) this.#page(record);
    this.#enqueue(effects.enqueued);
    if (effects.storeRobots !== undefined)
      this.robotsEntries.set(effects.storeRobots.origin, effects.storeRobots.entry);
  }

  /** ContentSeenStore.claim, under its own name: SeenStore.claim has another signature. */
  async claimContent(hash: string, url: string): Promise<string | undefined> {
    const first = this.#pending.hashes.get(hash) ?? this.#db.contentOwner(hash);
    if (first !== undefined && first !== url) return first;
    if (first === undefined) {
      this.#pending.hashes.set(hash, url);
      this.contentHashes.push({ hash, url });
    }
    return undefined;
  }

  #page(record: PageRecord): void {
    this.pageLines.push(safeJson(record));
    const row = datasetRow(record);
    if (row !== undefined) this.datasetLines.push(safeJson(row));
  }

  #links(record: LinkRecord): void {
    this.linkLines.push(safeJson(record));
    for (const link of record.links) {
      if (link.skipped !== undefined)
        this.skippedLinks.set(link.skipped, (this.skippedLinks.get(link.skipped) ?? 0) + 1);
    }
  }

  /** The robots.txt cache as this step reads it: the crawl's, with what the unit stores on top. */
  robotsCache(shared: Pick<RobotsCache, 'get'>): Pick<RobotsCache, 'get'> {
    return { get: async (origin) => this.robotsEntries.get(origin) ?? shared.get(origin) };
  }

  /** The content-seen port of this step. */
  contentSeen(): ContentSeenStore {
    return { claim: (hash, url) => this.claimContent(hash, url) };
  }

  /** What this step changes in the crawl's state, for its commit (with the runtime's own parts). */
  write(): Pick<StepWrite, 'claimed' | 'claimOwner' | 'enqueue' | 'contentHashes' | 'robots'> {
    return {
      claimed: this.claimed,
      ...(this.claimOwner !== undefined ? { claimOwner: this.claimOwner } : {}),
      enqueue: this.enqueued,
      contentHashes: this.contentHashes,
      ...(this.robotsEntries.size > 0 ? { robots: [...this.robotsEntries] } : {}),
    };
  }

  /** Forgets this step's pending claims (after commit or abandonment). */
  release(): void {
    for (const fp of this.claimed) this.#pending.fps.delete(fp);
    for (const { hash } of this.contentHashes) this.#pending.hashes.delete(hash);
  }
}
