/**
 * Ports of the cloud mode only (the crawl table, the queue's message controls, the dead-letter
 * queue, the capture queue and the page bucket). The shared ports (SeenStore, Frontier,
 * PageStore, ...) are in functions/core/ports.ts. The AWS adapters implement these; the handlers take
 * them as `deps`.
 */

import type {
  ContentSeenStore,
  Frontier,
  RobotsCache,
  RobotsEntry,
  SeenClaimOptions,
  SeenStore,
} from '../../core/ports.ts';
import type { HeldForm, HostRuleRecord, RuleRecord } from '../../core/quality/duplicate-url-rules.ts';
import type { ProbeAnswer } from '../../core/quality/soft-404.ts';
import type { ArchivedPage } from '../../core/recrawl/archived-page.ts';
import type { CrawlTask, Fingerprint } from '../../core/types.ts';
import type { ArchiveEntry, ArchiveRounds } from '../messages/archive-records.ts';
import type {
  BacklogCredits,
  CloudAopicState,
  CompletionWatch,
  CounterShard,
  CrawlCounters,
  CrawlRecord,
  CrawlStatus,
  HostCounts,
  HostGroup,
  HostRecord,
} from '../messages/crawl-records.ts';

/** What a batch of the worker reads before it starts. */
export interface BatchStateRequest {
  crawlIds: string[];
  /** Crawls whose `budget` item (pages fetched so far, for maxPages) is wanted. */
  budgets: string[];
  hosts: { crawlId: string; host: string }[];
  robots: { crawlId: string; origin: string }[];
  /** Origins whose stored duplicate-URL rules are wanted (read eventually consistent, with the rest). */
  rules?: { crawlId: string; origin: string }[];
  /** Crawls whose rules news (see `announceHostRules`) is wanted (read eventually consistent, with the rest). */
  rulesNews?: string[];
}

/**
 * The cash a budgeted crawl has been fetching, across its workers (AOPIC's hold-back: heldBack in
 * functions/cloud/worker/aopic-admission.ts): the mean cash of the last batch that fetched, and
 * when it wrote it (epoch ms). Kept on the crawl's budget item.
 */
export interface CrawlDispatch {
  cash: number;
  at: number;
}

/** The items found; maps are keyed `<crawlId> <host|origin>` (see `stateKey`), crawls by id. */
export interface BatchState {
  crawls: Map<string, CrawlRecord>;
  budgets: Map<string, number>;
  /** The budget items' dispatch cash, by crawl id (crawls whose batches wrote one). */
  dispatch: Map<string, CrawlDispatch>;
  hosts: Map<string, HostRecord>;
  robots: Map<string, RobotsEntry>;
  /** Stored duplicate-URL rules of the requested origins that have any. */
  rules: Map<string, StoredHostRules>;
  /** Rules news of the requested crawls that have any: crawl id -> origin -> stored version announced. */
  rulesNews: Map<string, Map<string, number>>;
}

/** A BatchState with nothing found yet. */
export function emptyBatchState(): BatchState {
  return {
    crawls: new Map(),
    budgets: new Map(),
    dispatch: new Map(),
    hosts: new Map(),
    robots: new Map(),
    rules: new Map(),
    rulesNews: new Map(),
  };
}

/** Slots of a crawl's rules news: at most this many origins' latest rule changes are announced at once. */
export const RULES_NEWS_SLOTS = 64;

/** The rules-news slot of an origin (FNV-1a of `scheme://host[:port]`). */
export function rulesNewsSlot(origin: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < origin.length; i++) h = Math.imul(h ^ origin.charCodeAt(i), 0x01000193);
  return (h >>> 0) % RULES_NEWS_SLOTS;
}

/** Key of a BatchState entry. */
export function stateKey(crawlId: string, part: string): string {
  return `${crawlId} ${part}`;
}

/** A host item write at the end of a batch. */
export interface HostUpdate {
  nextAllowedAt: number;
  crawlDelayMs?: number;
  /** Deltas to add. */
  counts: HostCounts;
  /** Sequence numbers of the first and last records handled; absent when none was. */
  ledger?: { firstSeq: string; lastSeq: string };
  /** Soft-404 probe answers learned in this batch, by origin (see HostRecord.probes). */
  probes?: Record<string, ProbeAnswer>;
  /**
   * The host's last fetched URLs after this batch (see HostRecord.recentlyFetched): replaces the
   * stored ones, written only with the counts.
   */
  recentlyFetched?: Fingerprint[];
  /**
   * The host's root page was handled in this batch (fetched, finished, or sent again with its
   * credit in its cash): `used`, the root credit the batch added to it, is taken off the stored
   * one, and the root is marked handled (see HostRecord.rootCredit); written only with the counts.
   */
  root?: { used: number };
  /**
   * The group this batch holds (see HostGroup): messages it sent to the group less those it
   * finished (added with the ledger, so exactly once), the back-queue version it found drained,
   * and, when the write leaves the group idle, the version it saw: an offer since then fails the
   * write (`moved`), so the holder reads the back queue again before letting the group go idle.
   * `added`: the holder put some of its own links in the back queue (its version moves).
   * `credits`: the credits the back queue is owed now (replaces the stored ones; written only
   * with the counts, so a redelivered batch does not add its credits twice).
   * `ended`: the starts ended, this write's (the starter it read) last (replaces the stored list).
   */
  group?: {
    queuedDelta: number;
    drained?: number;
    added?: boolean;
    idleAt?: number;
    credits?: BacklogCredits;
    ended?: string[];
  };
}

/** What a host item write did. */
export interface HostUpdateResult {
  counted: boolean;
  /** The host had no request counted before this write, and has now. */
  firstRequest: boolean;
  /** Nothing was written: the back queue's version moved since `group.idleAt` (read it again). */
  moved?: HostGroup;
}

/**
 * One origin's duplicate-URL rules as stored per crawl and origin (docs/duplicate-urls.md), with
 * the version the next write must find (0: no item yet).
 */
export interface StoredHostRules {
  records: HostRuleRecord[];
  version: number;
  /** Pages of the host fetched under a form its rules (active or candidate) rewrite (`heldForms`), newest first. */
  held?: HeldForm[];
}

/** What a conditional write of a host's rules did: written (the new version), or the stored item it met. */
export type HostRulesWrite = { written: true; version: number } | { written: false; stored: StoredHostRules };

/**
 * The crawl items (`sk` crawl) with the registry of running crawls (pk `crawls`) and the catalog of
 * every crawl (pk `catalog`): how the API starts, lists, shows and cancels crawls, and how the
 * scheduler watches and ends them.
 */
export interface CrawlRegistry {
  /** Writes a new crawl item (rejects if the id exists), its registry entry and its catalog entry. */
  createCrawl(crawl: CrawlRecord): Promise<void>;
  getCrawl(id: string): Promise<CrawlRecord | undefined>;
  /** Running -> cancelled; resolves the status afterwards, undefined for an unknown crawl. */
  cancelCrawl(id: string): Promise<CrawlStatus | undefined>;
  /**
   * Running -> `status` (a cancelled crawl stays cancelled), freezes the counters, leaves the
   * registry.
   */
  finishCrawl(
    id: string,
    end: { status: 'done' | 'failed'; finishedAt: string; counters: CrawlCounters; lost: number },
  ): Promise<void>;
  /** Crawls in the registry (running, or cancelled and still draining). */
  registeredCrawls(): Promise<string[]>;
  /**
   * Every crawl, newest first, `limit` at a time; `after` is the `next` of the previous page
   * (a page may carry a `next` whose page is empty). Resolves undefined for an `after` this store
   * did not hand out.
   */
  listCrawls(limit: number, after?: string): Promise<{ crawls: CrawlRecord[]; next?: string } | undefined>;
  /** Stores (or clears, with undefined) the scheduler's watch of a crawl. */
  setWatch(id: string, watch: CompletionWatch | undefined): Promise<void>;
}

/** The AOPIC state a crawl item carries (the scheduler's step publishes it; parked admissions count into it). */
export interface CrawlAopicStore {
  /**
   * Publishes the crawl's AOPIC state (the scheduler's step), all but `admitted`, which only
   * {@link addAdmitted} changes: two overlapping steps must not overwrite each other's count.
   */
  setAopic(id: string, aopic: CloudAopicState): Promise<void>;
  /** Adds to the crawl's count of admitted parked URLs (an atomic increment). */
  addAdmitted(id: string, admitted: number): Promise<void>;
}

/** The crawl's scope beyond its seeds' hosts, kept on the crawl item (a worker adds a seed's redirect target). */
export interface AllowedHosts {
  /** Adds hosts to the crawl item's `allowedHosts` (a set: adding one twice keeps one). */
  addAllowedHosts(crawlId: string, hosts: readonly string[]): Promise<void>;
}

/**
 * The host items (`sk` host#<host>): each host's politeness state, its ledger (exact counters, counted
 * once per message sequence) and its FIFO group (HostGroup: size, starter, back queue version).
 */
export interface HostItems {
  /**
   * Every host item of a crawl, read after every write that completed before the call (strongly
   * consistent: the scheduler ends a crawl on what it reads): O(hosts), for the exact sum before a
   * crawl ends.
   */
  hosts(crawlId: string): Promise<HostRecord[]>;
  /**
   * At most `limit` host items of a crawl (the first by host name: one bounded read, whatever the
   * number of hosts), for the dashboard's host table.
   */
  someHosts(crawlId: string, limit: number): Promise<HostRecord[]>;
  /**
   * The ledger position (`doneSeq`, padded) of some hosts of a crawl, read eventually consistent:
   * a stale answer is an older position, which only makes the caller more careful.
   */
  doneSeqs(crawlId: string, hosts: readonly string[]): Promise<Map<string, string>>;
  /**
   * Resolves whether the counts were added (false: the ledger had counted these records already),
   * and whether this write gave the host its first request.
   */
  updateHost(crawlId: string, host: string, update: HostUpdate): Promise<HostUpdateResult>;
  /**
   * Adds AOPIC credit to a host's root page while it waits unhandled (HostRecord.rootCredit; one
   * UpdateItem). Resolves false, writing nothing, when the root was handled already or the host
   * has no item: the caller stops crediting it.
   */
  addRootCredit(crawlId: string, host: string, amount: number): Promise<boolean>;
  /**
   * Notes that tasks were added to the host's back queue by someone who does not hold its group:
   * bumps the back queue's version and resolves the group as it is now (one UpdateItem).
   */
  noteBacklog(crawlId: string, host: string): Promise<HostGroup>;
  /** The host's group as it stands (strongly consistent; idle when the host has no item). */
  hostGroup(crawlId: string, host: string): Promise<HostGroup>;
  /**
   * Starts an idle group: sets `queued` to `queued` and `starter` when the group holds no message,
   * or when `starter` started it already (a redelivered starter that died before its sends).
   * Resolves whether this caller may send. With `noted`, the same write bumps the back queue's
   * version (the starter added what did not fit there first).
   */
  startGroup(
    crawlId: string,
    host: string,
    queued: number,
    starter: string,
    options?: { noted?: boolean },
  ): Promise<boolean>;
}

/**
 * A crawl's running totals: the counter shards (`sk` counts#<n>, O(1) sums of what the ledgers
 * counted) and the `budget` item (pages fetched so far, for maxPages; read with the batch state).
 */
export interface CrawlCounterStore {
  /**
   * The crawl's counter shards (see CounterShard): O(1) running totals, read after every write
   * that completed before the call (a worker judges from them that a crawl's frontier is dry).
   */
  counterShards(crawlId: string): Promise<CounterShard[]>;
  /** Adds to one counter shard (`shard` in 0 .. COUNTER_SHARDS - 1). */
  addToShard(crawlId: string, shard: number, counts: CounterShard): Promise<void>;
  /**
   * Adds to the crawl's `budget` item (created by the first addition; adding 0 writes nothing),
   * and sets its dispatch cash when given (the batch's: the last writer's stands).
   */
  addBudget(crawlId: string, fetched: number, dispatch?: CrawlDispatch): Promise<void>;
}

/**
 * The duplicate-URL rules per crawl and origin (`sk` rules#<origin>, versioned: conditional writes)
 * and the crawl's rules news (`sk` rules-news): docs/duplicate-urls.md.
 */
export interface HostRulesStore {
  /** An origin's duplicate-URL rules (eventually consistent); undefined when none were stored. */
  hostRules(crawlId: string, origin: string): Promise<StoredHostRules | undefined>;
  /**
   * Writes an origin's rules when the stored version is still `version` (0: no item yet);
   * otherwise writes nothing and resolves the stored item (read consistently), for the caller to merge.
   */
  putHostRules(
    crawlId: string,
    origin: string,
    records: readonly HostRuleRecord[],
    version: number,
    held?: readonly HeldForm[],
  ): Promise<HostRulesWrite>;
  /**
   * Tells the crawl's workers that an origin's rules changed (a rule added, activated or blocked):
   * one small item per crawl, a slot per origin hash (`RULES_NEWS_SLOTS`; an origin sharing its
   * slot overwrites it: news is a hint), read with every batch's state. A container that holds
   * pages of the origin reads its rules and shares the pages they make held forms (host-rules-sync.ts).
   */
  announceHostRules(crawlId: string, origin: string, version: number): Promise<void>;
  /** Every origin's rules of a crawl (the lines of rules.json): O(origins with rules). */
  crawlRules(crawlId: string): Promise<RuleRecord[]>;
}

/**
 * The worker's one read before a batch, across families: crawl items, budgets, host items (strongly
 * consistent), robots entries, rules and rules news (eventually consistent).
 */
export interface BatchStateReader {
  /** The items the request names that exist (absent ones are missing from the maps). */
  loadBatchState(request: BatchStateRequest): Promise<BatchState>;
}

/**
 * The whole crawl table (page records live in S3): every item family. Only the wiring and the
 * adapter need all of it; each caller takes the families it uses.
 */
export interface CrawlTableStore
  extends CrawlRegistry,
    CrawlAopicStore,
    AllowedHosts,
    HostItems,
    CrawlCounterStore,
    HostRulesStore,
    BatchStateReader {}

/** Messages in the frontier queue, by state (approximate), and its visibility timeout. */
export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
  visibilityTimeoutSeconds: number;
}

/**
 * A turn of a host's back queue: tasks written together (at most BACKLOG_TURN, richest first) and
 * taken out together. `key` says where it is stored.
 */
export interface BacklogTurn {
  key: string;
  tasks: CrawlTask[];
}

/**
 * Each host's back queue: the part of its frontier that is not in its FIFO group, as turns,
 * richest first (Mercator's back queues; SQS cannot reorder a group, so only the refill can follow
 * AOPIC cash). Tasks carry their message key as `cash` (see aopic-admission.ts), as messages do.
 */
export interface HostBacklog {
  /**
   * Adds tasks to a host's back queue, as turns of at most BACKLOG_TURN tasks cut from them
   * richest first. Adding the same tasks again adds nothing (a turn's key follows its tasks).
   */
  add(crawlId: string, host: string, tasks: readonly CrawlTask[]): Promise<void>;
  /**
   * Up to `turns` turns of the host, the one with the richest first task first. Strongly
   * consistent: every resolved `add` is seen.
   */
  richest(crawlId: string, host: string, turns: number): Promise<BacklogTurn[]>;
  /** Takes turns out (they were sent to the group), as `richest` returned them. Idempotent. */
  remove(crawlId: string, host: string, turns: readonly BacklogTurn[]): Promise<void>;
}

/** The frontier as the API and scheduler see it. */
export interface CloudFrontier extends Frontier {
  depth(): Promise<QueueDepth>;
}

/** One received message's new visibility. */
export interface VisibilityChange {
  receiptHandle: string;
  /** Seconds from now (SQS rounds nothing: whole seconds, 0-43200). */
  seconds: number;
}

/** Controls received messages: how the worker defers a host without waiting. */
export interface MessageVisibility {
  /** Resolves how many changes SQS refused. */
  changeVisibility(changes: readonly VisibilityChange[]): Promise<number>;
}

/** A frontier message as received (what the event source hands over, or the worker's own receive). */
export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  /** FIFO MessageGroupId. */
  groupId?: string;
  /** FIFO SequenceNumber (increasing within a group). */
  sequenceNumber?: string;
  /** ApproximateReceiveCount. */
  receiveCount: number;
}

/**
 * The worker's own hand on the frontier queue: after its event batch, an invocation receives
 * more messages (other hosts) and deletes those it finished (see frontier-runner.ts).
 */
export interface FrontierReceiver {
  /** One short-polled receive of up to `max` (at most 10) messages; [] when none is visible. */
  receive(max: number): Promise<ReceivedMessage[]>;
  /** Deletes received messages; resolves how many deletions SQS refused. */
  remove(receiptHandles: readonly string[]): Promise<number>;
}

/** A message given up on, with why. */
export interface DeadLetter {
  body: string;
  /** The source message's group (`invalid` when it had none). */
  groupId: string;
  messageId: string;
  reason: string;
  detail?: string;
  receiveCount: number;
}

/** Where the worker puts messages it gives up on. */
export interface DeadLetterSink {
  send(letter: DeadLetter): Promise<void>;
}

/** A robots cache with a warm in-container map the worker can fill from its batch read. */
export interface WarmRobotsCache extends RobotsCache {
  isWarm(origin: string): boolean;
  prime(origin: string, entry: RobotsEntry): void;
}

/**
 * Called by {@link OwnedSeenStore.claim} with the fingerprints it found unclaimed, just before it
 * claims them; `false` claims none of them (they are answered `false` and stay unclaimed). The
 * worker uses it to register a page's content hash only when the page has new links to queue.
 */
export type ClaimGate = (unclaimed: readonly Fingerprint[]) => Promise<boolean>;

/** A ContentSeenStore that can also be asked without registering. */
export interface CheckedContentSeenStore extends ContentSeenStore {
  /** The URL that registered `hash`, read eventually consistent; undefined when none did. */
  find(hash: string): Promise<string | undefined>;
}

/** A claim's options in the cloud: the hosts, and the gate between finding and claiming. */
export interface ClaimOptions extends SeenClaimOptions {
  gate?: ClaimGate;
}

/** A SeenStore that remembers who claimed the fingerprints it answered about. */
export interface OwnedSeenStore extends SeenStore {
  /** The claim owner last seen for `fp`, if this instance knows it. */
  ownerOf(fp: Fingerprint): string | undefined;
  /** True when the store's last answer about `fp` showed it parked (see {@link ParkedUrls}). */
  isParked(fp: Fingerprint): boolean;
  /** {@link SeenStore.claim}, with a gate between finding the unclaimed ones and claiming them. */
  claim(fps: readonly Fingerprint[], owner: string, options?: ClaimOptions): Promise<boolean[]>;
}

/**
 * Where the worker sends its finished pages: one message per page (its record, and its WARC
 * records or where they are), drained by the archiver. See capture-message.ts.
 */
export interface CaptureSink {
  /** Sends the bodies (batched); resolves once every one was accepted, throws otherwise. */
  send(bodies: readonly string[]): Promise<void>;
}

/** Writes objects into the page bucket (WARC files, index objects). */
export interface ObjectStore {
  readonly bucket: string;
  /** Writes (or overwrites) `key`. */
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
}

/** Reads objects of the page bucket: how the API lists a crawl's index objects. */
export interface ObjectReader {
  /** Keys under `prefix` strictly after `startAfter`, in key order, at most `max` of them. */
  keys(prefix: string, startAfter: string | undefined, max: number): Promise<string[]>;
  /** The object's bytes from `from` to its end (empty when `from` is at or past the end). */
  read(key: string, from: number): Promise<Uint8Array>;
}

/** An object of the page bucket: its key and size in bytes. */
export interface StoredObject {
  key: string;
  size: number;
}

/**
 * The page bucket as the API hands it out for downloads: listings with sizes, and URLs that read
 * one object without any other credentials (S3 presigned GETs, signed with the API's role).
 */
export interface ObjectLinks {
  /** Objects under `prefix` strictly after `startAfter`, in key order, at most `max` of them. */
  list(prefix: string, startAfter: string | undefined, max: number): Promise<StoredObject[]>;
  /** A URL that GETs `key` (ranges allowed) until `expiresInSeconds` from now. */
  presignGet(key: string, expiresInSeconds: number): Promise<string>;
}

/** The per-crawl stores of the URL table and robots cache. */
export interface CrawlStores {
  seen: OwnedSeenStore;
  contentSeen: CheckedContentSeenStore;
  robots: WarmRobotsCache;
}

/** A URL waiting in the parked set: its task and its cash key (cash minus the bonus when parked). */
export interface ParkedUrl {
  task: CrawlTask;
  key: number;
}

/** How long an admission's claim on a parked URL holds before another admission may take it over. */
export const ADMISSION_CLAIM_MS = 5 * 60_000;

/**
 * URLs whose AOPIC cash was too low to queue when they were found (cloud mode; SQS has no
 * priorities). They wait on their URL-seen item, in an index ordered by cash, until the scheduler
 * sends the richest of them to the frontier. Keys are `cash - bonus`: the lambda page's
 * redistributions raise every page alike, so the order by key is the order by cash.
 */
export interface ParkedUrls {
  /**
   * Parks claimed URLs. A URL whose claim is not (any more) `owner`'s is left alone, so a late
   * copy of a page cannot park what another page queued. Idempotent.
   */
  park(crawlId: string, entries: readonly { task: CrawlTask; owner: string; key: number }[]): Promise<void>;
  /** Adds credits to parked URLs' keys; resolves the fingerprints that were not parked (any more). */
  credit(crawlId: string, credits: ReadonlyMap<Fingerprint, number>): Promise<Fingerprint[]>;
  /** Up to `limit` parked URLs of a crawl, most cash first. */
  richest(crawlId: string, limit: number): Promise<ParkedUrl[]>;
  /** Takes URLs out of the parked set (their tasks were sent); resolves how many were parked. */
  unpark(crawlId: string, fps: readonly Fingerprint[]): Promise<number>;
  /**
   * Claims parked URLs for one admission (`admitter`, unique per call): resolves those it got.
   * A URL another admission claimed less than ADMISSION_CLAIM_MS ago is not given (overlapping
   * admissions would otherwise both send it: two fetches of one page); an older claim is taken
   * over (its admission died before it sent the URL).
   */
  claimAdmission(crawlId: string, fps: readonly Fingerprint[], admitter: string): Promise<Fingerprint[]>;
}

/**
 * The per-URL state of the cloud's archives (docs/recrawl.md): an archive is named by the id of
 * its first crawl, and its rounds are crawls of their own.
 */
export interface ArchiveStore {
  /** The entries the archive holds of `urls`, by URL; strongly consistent. */
  entries(archive: string, urls: readonly string[]): Promise<Map<string, ArchiveEntry>>;
  /** Writes entries (replacing those of the same URLs). Idempotent. */
  put(archive: string, entries: readonly ArchiveEntry[]): Promise<void>;
  /** Every page of the archive (O(pages): what a round is planned from). */
  pages(archive: string): Promise<ArchivedPage[]>;
  /** The archive's rounds so far (undefined before its first recrawl). */
  rounds(archive: string): Promise<ArchiveRounds | undefined>;
  /**
   * Records round `round` as started by crawl `crawlId` when the archive holds `round - 1`
   * rounds; resolves false (and writes nothing) when another round was started meanwhile.
   */
  startRound(archive: string, round: number, crawlId: string): Promise<boolean>;
}
