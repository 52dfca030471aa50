/**
 * What a warm worker container remembers between invocations: per crawl, its parsed settings,
 * URL-seen cache, content hashes, trap defences and AOPIC credits (a {@link CrawlContext}); per
 * host, its next allowed time and its ledger position as last written or read; per message, its
 * processing errors. Lambda keeps a container's module state while it is warm, so one instance
 * lives as long as the handler built at cold start.
 */
import { LRUCache } from 'lru-cache';
import { type CrawlConfig, parseCrawlConfig } from '../../core/config.ts';
import type { Clock } from '../../core/ports.ts';
import { CrawlQuality } from '../../core/quality/crawl-quality.ts';
import { DuplicateUrlRules } from '../../core/quality/duplicate-url-rules.ts';
import { UrlCanonicalizer } from '../../core/url/canonicalize.ts';
import { ScopeRules } from '../../core/url/scope.ts';
import { ClockCache } from '../../core/url-seen/clock-cache.ts';
import { cloudExtractSettings } from '../extract-budget.ts';
import { WORKER_MEMORY_MODEL } from '../lambda-settings.ts';
import type { CrawlRecord } from '../messages/crawl-records.ts';
import { RecentNearDuplicates } from './recent-near-duplicates.ts';

/** What the worker keeps per crawl in a warm container. */
export interface CrawlContext {
  config: CrawlConfig;
  canonicalizer: UrlCanonicalizer;
  scope: ScopeRules;
  /** Hosts added to the scope (a seed redirected there), as far as this container knows. */
  allowed: Set<string>;
  cache: ClockCache;
  /**
   * URL fingerprint -> the owner of its claim, for claims by pages not known to be finished (so
   * not in `cache`): another page's look-up is answered "seen" from here; the owner's own retry
   * still goes to the store (record-step.ts, `cacheable`).
   */
  pendingClaims: LRUCache<string, string>;
  /** Content hash -> first URL this container saw with it (see StepContentSeen). */
  contentHashes: LRUCache<string, string>;
  /** Trap and near-duplicate defences, with this container's memory of the crawl. */
  quality: CrawlQuality;
  /** URLs known to be parked: credits to them are kept on their items, not sent to the lambda page. */
  parked: LRUCache<string, true>;
  /** Credits for parked URLs, summed in memory and written every few seconds. */
  credits: Map<string, number>;
  creditsSince: number;
  /**
   * A budgeted crawl's credits to other hosts' root pages, by host, written at the end of each
   * batch (aopic-admission.ts, `flushRootCredits`); and hosts whose root needs no more (handled).
   */
  rootCredits: Map<string, number>;
  rootsHandled: LRUCache<string, true>;
  /**
   * The richest batch mean this container has seen its crawl fetch lately (its batches' own and
   * the budget item's as read), halved every 2 s: a budgeted crawl's groups are weighed by it.
   */
  fetchPeak?: { cash: number; at: number };
  /** The near-duplicate memory inside `quality` (for the context's size). */
  nearDuplicates?: RecentNearDuplicates;
  /**
   * The hosts' duplicate-URL rules: learned from this container's pages (bounded memory) and
   * merged with what other containers stored (see host-rules-sync.ts); undefined when off.
   */
  urlRules?: DuplicateUrlRules;
  /** Per origin: the stored version of its rules this container merged, when, and its revision then. */
  ruleSync: LRUCache<string, RuleSync>;
}

/** Where a container stands with one origin's stored rules (see host-rules-sync.ts). */
export interface RuleSync {
  /** The stored item's version as last read or written (0: none stored). */
  version: number;
  /** When it was last read, ms. */
  readAt: number;
  /** The learner's revision of the host once it held exactly what is stored. */
  revision: number;
  /** URLs of the held forms the store has, as last read or written (see host-rules-sync.ts). */
  held: ReadonlySet<string>;
  /** The learner's `heldRevision` of the host when `held` was last compared with its memory. */
  heldRevision: number;
  /** The stored rules' names and statuses as last read or written (`rulesShape`): a write that changes them is announced. */
  shape: string;
  /** When this container last saw that shape change (read or written), ms; 0: never. */
  changedAt: number;
}

/**
 * The learning memory of a container's duplicate-URL rules per crawl: URLs with a content digest
 * and the rules' image indexes, about 210 bytes an entry (docs/duplicate-urls.md), so 4 MB of the
 * contexts' 88 MB; rules themselves are kept for up to 100,000 hosts (a few hundred bytes each).
 */
const RULE_LEARNING_ENTRIES = 20_000;
const RULE_ENTRY_BYTES = 210;

/**
 * Memory a container gives to crawl contexts, of the worker's memory (the runtime and one body
 * per host in flight take the rest: lambda-settings.ts, WORKER_MEMORY_MODEL). Contexts are
 * weighed, not counted: the first build kept eight, and a ninth crawl evicted one whose re-built
 * context probed its sites again and again.
 */
export const CONTEXT_MEMORY_BYTES = WORKER_MEMORY_MODEL.contextsMb * 1024 * 1024;
/** What a context costs before any entry: settings, scope rules, detectors' tables. */
const CONTEXT_BASE_BYTES = 512 * 1024;

/**
 * A context's estimated size: its URL-seen cache's typed arrays (allocated whole: 9 bytes per
 * entry plus a slot table of 2-4 bytes per entry rounded up to a power of two), and its warm maps
 * by their entries (hashes and URLs of a few hundred bytes each with the map's own overhead).
 */
export function contextBytes(ctx: CrawlContext): number {
  let slots = 2;
  while (slots < ctx.cache.capacity * 2) slots *= 2;
  return (
    CONTEXT_BASE_BYTES +
    ctx.cache.capacity * 9 +
    slots * 4 +
    ctx.contentHashes.size * 250 +
    ctx.pendingClaims.size * 200 +
    ctx.parked.size * 150 +
    (ctx.nearDuplicates?.size ?? 0) * 200 +
    (ctx.urlRules?.learningEntries ?? 0) * RULE_ENTRY_BYTES
  );
}
/** Pages whose SimHash a container remembers per crawl (two generations of this many). */
const NEAR_DUPLICATE_MEMORY = 20_000;

/** A host's ledger position as this container last knew it, and when it learned it. */
export interface KnownLedger {
  seq: string;
  at: number;
}

/** The warm state of one worker container. */
export class WorkerContainer {
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #contexts: LRUCache<string, CrawlContext>;
  readonly #errors = new LRUCache<string, number>({ max: 10_000 });
  // `<crawl> <host>` -> the host's nextAllowedAt as this container last wrote or read it. Another
  // container can only have moved it later, so "still too early" needs no read.
  readonly #hostClocks = new LRUCache<string, number>({ max: 50_000 });
  // `<crawl> <host>` -> the host's ledger position (padded doneSeq) as last known, and when read.
  readonly #ledgers = new LRUCache<string, KnownLedger>({ max: 50_000 });

  constructor(options: { clock: Clock; random: () => number; memoryBytes?: number }) {
    this.#clock = options.clock;
    this.#random = options.random;
    this.#contexts = new LRUCache({
      maxSize: options.memoryBytes ?? CONTEXT_MEMORY_BYTES,
      sizeCalculation: contextBytes,
    });
  }

  /** Crawls whose context this container holds. */
  get crawls(): number {
    return this.#contexts.size;
  }

  /** Weighs a crawl's context again (its warm maps grew during a batch); may evict others. */
  reweigh(crawlId: string): void {
    const ctx = this.#contexts.peek(crawlId);
    if (ctx !== undefined) this.#contexts.set(crawlId, ctx);
  }

  /** The crawl's context, built on first use; scope widened to the crawl's allowed hosts. */
  contextFor(crawl: CrawlRecord): CrawlContext {
    let ctx = this.#contexts.get(crawl.id);
    if (ctx === undefined) {
      ctx = this.#newContext(crawl);
      this.#contexts.set(crawl.id, ctx);
    }
    for (const host of crawl.allowedHosts ?? []) {
      if (!ctx.allowed.has(host)) {
        ctx.allowed.add(host);
        ctx.scope.allowHost(host);
      }
    }
    return ctx;
  }

  /** The context of a crawl this container holds, without building one. */
  knownContext(crawlId: string): CrawlContext | undefined {
    return this.#contexts.peek(crawlId);
  }

  /** How long the host must still wait, as far as this container knows (<= 0: maybe allowed). */
  hostWait(key: string, now: number): number {
    return (this.#hostClocks.get(key) ?? 0) - now;
  }

  /** Remembers a host's next allowed time (read from or written to its item). */
  rememberHost(key: string, nextAllowedAt: number): void {
    this.#hostClocks.set(key, nextAllowedAt);
  }

  /** The host's ledger position as last known. */
  ledger(key: string): KnownLedger | undefined {
    return this.#ledgers.get(key);
  }

  /** True when the host's ledger is known to cover `seq` (padded). */
  ledgerCovers(key: string, seq: string): boolean {
    const known = this.#ledgers.get(key);
    return known !== undefined && known.seq >= seq;
  }

  rememberLedger(key: string, seq: string, at: number): void {
    this.#ledgers.set(key, { seq, at });
  }

  /** Counts one more processing error of a message in this container; resolves the count. */
  countError(messageId: string): number {
    const errors = (this.#errors.get(messageId) ?? 0) + 1;
    this.#errors.set(messageId, errors);
    return errors;
  }

  forgetErrors(messageId: string): void {
    this.#errors.delete(messageId);
  }

  #newContext(crawl: CrawlRecord): CrawlContext {
    // The item holds a validated config; parsing again fills defaults added since it was written.
    const parsed = parseCrawlConfig(crawl.config);
    const config = cloudExtractSettings(parsed.ok ? parsed.config : crawl.config);
    const canonicalizer = new UrlCanonicalizer(config);
    const seeds: string[] = [];
    for (const seed of config.seeds) {
      const c = canonicalizer.canonicalize(seed);
      if (c.ok) seeds.push(c.url);
    }
    const index =
      config.nearDuplicateDistance > 0
        ? new RecentNearDuplicates(config.nearDuplicateDistance, NEAR_DUPLICATE_MEMORY)
        : undefined;
    return {
      config,
      canonicalizer,
      scope: new ScopeRules(config, seeds),
      allowed: new Set(),
      cache: new ClockCache(config.seenCacheSize),
      contentHashes: new LRUCache({ max: 20_000 }),
      pendingClaims: new LRUCache({ max: 20_000 }),
      quality: new CrawlQuality(config, { ...(index ? { index } : {}), random: this.#random }),
      parked: new LRUCache({ max: 50_000 }),
      credits: new Map(),
      creditsSince: this.#clock.now(),
      rootCredits: new Map(),
      rootsHandled: new LRUCache({ max: 50_000 }),
      ...(index === undefined ? {} : { nearDuplicates: index }),
      ...(config.duplicateUrlRules
        ? {
            urlRules: new DuplicateUrlRules({
              minSupport: config.duplicateUrlRuleSupport,
              auditShare: config.duplicateUrlRuleAudit,
              maxObservations: RULE_LEARNING_ENTRIES,
              maxObservationsPerHost: 500,
              // the URLs rules merged, to queue them again if a rule is blocked: ~1 MB
              maxMergeLogs: 5_000,
            }),
          }
        : {}),
      ruleSync: new LRUCache({ max: 50_000 }),
    };
  }
}
