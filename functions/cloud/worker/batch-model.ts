/**
 * The frontier worker's data model: the messages it gets, the verdict it returns for each, what a
 * batch holds per crawl and per FIFO group while it runs, and what it depends on. The phases
 * (intake, the per-record step, the commit) pass these between them explicitly.
 */
import type { CrawlConfig } from '../../core/config.ts';
import type { Clock, Fetcher, Frontier, Gunzip } from '../../core/ports.ts';
import type { ProbeAnswer } from '../../core/quality/soft-404.ts';
import type { CrawlTask, Fingerprint } from '../../core/types.ts';
import type { FaultHook } from '../fault-hook.ts';
import type { BackQueueDeps, GroupHints } from '../frontier/back-queues.ts';
import type { CaptureMessage } from '../messages/capture-message.ts';
import type { CrawlRecord, HostCounts, HostGroup } from '../messages/crawl-records.ts';
import type {
  AllowedHosts,
  ArchiveStore,
  BatchStateReader,
  CaptureSink,
  CrawlAopicStore,
  CrawlCounterStore,
  CrawlStores,
  DeadLetterSink,
  FrontierReceiver,
  HostBacklog,
  HostItems,
  HostRulesStore,
  MessageVisibility,
  ObjectStore,
  ParkedUrls,
  ReceivedMessage,
} from '../ports/cloud-ports.ts';
import type { CaptureBuffer } from './capture-buffer.ts';
import type { CrawlContext } from './container-state.ts';

/** One frontier message, as the handler hands it over (or the worker's own receive). */
export type FrontierMessage = ReceivedMessage;

/** What happens to a message: deleted, or left on the queue, invisible for `seconds`. */
export type MessageVerdict = { kind: 'ack' } | { kind: 'retry'; seconds: number; why: string };

/** The batch's outcome: a verdict per message id, and what the batch did. */
export interface BatchOutcome {
  verdicts: Map<string, MessageVerdict>;
  stats: BatchStats;
}

/** Counts for logs and tests. */
export interface BatchStats {
  records: number;
  crawled: number;
  deferred: number;
  /** Re-sent as new messages instead of deferred (few receives were left). */
  resent: number;
  /** Deferred from this container's memory of the host, without reading its item. */
  deferredWarm: number;
  duplicates: number;
  deadLettered: number;
  errors: number;
  /** Capture messages sent to the archiver. */
  captures: number;
  /**
   * Bytes of those messages (what SQS bills, in 64 KiB chunks), and of them the WARC records
   * carried inline (their base64): what the capture row of the bill is made of.
   */
  captureBytes: number;
  captureRecordBytes: number;
  /** URL-seen trace messages sent to the archiver (seenTrace), and the look-ups they hold. */
  traceMessages: number;
  traceLookups: number;
  /** Captures too big for a message, stored by the worker as their own WARC object. */
  storedCaptures: number;
  /** Out-links too many for a message, stored by the worker as their own links object. */
  storedLinks: number;
  /** Content hashes registered in the store (pages with new links). */
  contentClaims: number;
  /** New URLs parked by AOPIC instead of queued, and credit writes to parked URLs. */
  parked: number;
  credits: number;
  /** Hosts whose root page this batch's pages credited (one write each: aopic-admission.ts, flushRootCredits). */
  rootCredits: number;
  /** Parked URLs this batch admitted, having found a crawl's frontier dry (dry-admission.ts). */
  admitted: number;
  /** New links that went to a back queue (their host's group was full, or held by another batch). */
  backlogged: number;
  /** Records held by AOPIC's hold-back (aopic-admission.ts, heldBack), and of them given back to their back queue. */
  heldBack: number;
  heldBackReturned: number;
  /** 1 when the batch's writes failed (its records are retried; see batch-commit.ts). */
  commitsFailed: number;
  /** URL-seen look-ups of the batch's pages, and those the container's cache answered. */
  seenLookups: number;
  seenCacheHits: number;
  /**
   * Where the batch's time went, in ms of wall time summed over its records (groups run side by
   * side, so the sums can exceed the batch's wall time): the crawl steps (from the request to the
   * page's outcome, politeness waits excluded), the requests in them, and the URL-seen store's
   * claims in them; and the commit. The worker's bill is its wall time (docs/cloud.md).
   */
  stepMs: number;
  fetchMs: number;
  urlSeenMs: number;
  commitMs: number;
}

/** All-zero stats of a batch of `records` messages. */
export function emptyBatchStats(records: number): BatchStats {
  return {
    records,
    crawled: 0,
    deferred: 0,
    resent: 0,
    deferredWarm: 0,
    duplicates: 0,
    deadLettered: 0,
    errors: 0,
    captures: 0,
    captureBytes: 0,
    captureRecordBytes: 0,
    traceMessages: 0,
    traceLookups: 0,
    storedCaptures: 0,
    storedLinks: 0,
    contentClaims: 0,
    parked: 0,
    credits: 0,
    rootCredits: 0,
    admitted: 0,
    backlogged: 0,
    heldBack: 0,
    heldBackReturned: 0,
    commitsFailed: 0,
    seenLookups: 0,
    seenCacheHits: 0,
    stepMs: 0,
    fetchMs: 0,
    urlSeenMs: 0,
    commitMs: 0,
  };
}

/**
 * The crawl table's families the worker uses: the batch read, the host items (ledger, politeness,
 * groups), the counter shards and budget, the crawl's allowed hosts and admitted count (a dry
 * frontier's admission), the duplicate-URL rules.
 */
export type WorkerTable = BatchStateReader &
  HostItems &
  CrawlCounterStore &
  AllowedHosts &
  CrawlAopicStore &
  HostRulesStore;

/** Everything the worker touches; the wiring (functions/cloud/lambdas/aws-wiring.ts) passes the AWS adapters. */
export interface FrontierWorkerDeps {
  clock: Clock;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  table: WorkerTable;
  frontier: Frontier;
  messages: MessageVisibility;
  /**
   * The frontier queue, for the runner (frontier-runner.ts): an invocation that has time left
   * after its event batch receives more hosts' messages itself. Absent: one batch per invocation.
   */
  receiver?: FrontierReceiver;
  deadLetters: DeadLetterSink;
  /** The URL-table and robots stores of one crawl. */
  stores: (crawlId: string) => CrawlStores;
  /** The capture queue (to the archiver). */
  captures: CaptureSink;
  /** The page bucket, for captures too big for a message. */
  objects: ObjectStore;
  /** URLs parked by AOPIC (cash too low to queue yet). */
  parked: ParkedUrls;
  /** The hosts' back queues: their frontiers beyond their FIFO groups (see back-queues.ts). */
  backlog: HostBacklog;
  /** The archives' per-URL state: a recrawl round's step looks its pages up here (archive-visits.ts). */
  archive?: ArchiveStore;
  /** A host's FIFO group is refilled while it holds fewer messages than this (default FRONTIER_GROUP_LIMIT). */
  groupLimit?: number;
  /** Groups this container saw busy lately (back-queues.ts); absent: every offer tries a start first. */
  groupHints?: GroupHints;
  /**
   * Runs one crawl step: the wiring's keeps a large body's share of the container's body budget
   * until the step is done with it (adapters/http/body-share-scope.ts). Absent: the step as is.
   */
  stepScope?: <T>(step: () => Promise<T>) => Promise<T>;
  /** The fetcher for a crawl's settings (the worker keeps one per distinct settings). */
  fetcher: (config: CrawlConfig) => Fetcher;
  /** Inflates gzipped sitemap files (`.xml.gz`); absent: they are recorded, not read. */
  gunzip?: Gunzip;
  /** UUIDs of WARC records (default: crypto.randomUUID). */
  newId?: () => string;
  /** warcinfo `software` of objects the worker writes itself. */
  software?: string;
  /** Test seam (see fault-hook.ts); production passes nothing. */
  fault?: FaultHook;
  log?: (line: string) => void;
  /**
   * Waits up to this long per host being served are waited inside the invocation; longer ones
   * defer the message. Default 1000.
   */
  inlineWaitMs?: number;
  /** Credits to parked URLs are written at most this often, ms. Default 10 s. */
  creditFlushMs?: number;
  /** Processing errors of one message in this container before it goes to the DLQ. Default 3. */
  errorAttempts?: number;
  /**
   * The frontier redrive's maxReceiveCount (default 10). The worker finishes every message before
   * SQS would move it to the DLQ unrecorded: one that only waited (politeness) is re-sent as a new
   * message when few receives are left, one that kept failing is recorded as `dlq` on its last.
   */
  maxReceives?: number;
}

/** A decoded message: the message and the task its body holds. */
export interface Entry {
  message: FrontierMessage;
  task: CrawlTask;
}

/** One crawl's share of a batch. */
export interface CrawlBatch {
  crawl: CrawlRecord;
  ctx: CrawlContext;
  buffer: CaptureBuffer;
  captures: CaptureMessage[];
  /** Fingerprints finished in this batch (a duplicate message later in the batch is acked). */
  finished: Set<string>;
  /** Pages fetched in this batch (for the maxPages budget). */
  fetched: number;
  /** Pages the crawl had fetched before this batch, as its budget item said. */
  budget: number;
  /**
   * What the crawl's batches have been fetching (AOPIC's hold-back, aopic-admission.ts): the
   * budget item's dispatch cash, then the mean of this batch's fetches; written back with the
   * budget. 0 = none.
   */
  dispatchCash: number;
  /** When a batch last set it (epoch ms); 0 = never. */
  dispatchAt: number;
  /** Pages this batch fetched (their mean replaces the dispatch cash it read). */
  dispatched: number;
  /** The dispatch cash and time as the batch read them (one input of the container's fetch peak, batch-commit.ts). */
  dispatchRead: { cash: number; at: number };
  redirectedHosts: Set<string>;
  /** URLs the batch's finished pages claimed and queued: cached once their ledgers are durable. */
  claimed: string[];
  /** New URLs to park instead of queue (written before the ledgers, like the sends). */
  parks: { task: CrawlTask; owner: string; key: number }[];
  /**
   * Fingerprints the batch's URL-seen tests looked up, in order (the crawl's `seenTrace`): sent
   * to the archiver with the captures, as trace messages (trace-message.ts).
   */
  lookups: string[];
}

/** One FIFO group's share of a batch: its host's state, kept in memory and written once. */
export interface GroupBatch {
  crawlId: string;
  host: string;
  /** The host's ledger position as read (padded), '' when none. */
  doneSeq: string;
  nextAllowedAt: number;
  crawlDelayMs: number | undefined;
  /** Pages of the host fetched so far (its ledger's `fetched` plus this batch's). */
  fetched: number;
  /** What this batch adds to the host's ledger. */
  counts: HostCounts;
  firstSeq: string | undefined;
  lastSeq: string | undefined;
  /** The host item must be written (politeness state changed or records were handled). */
  touched: boolean;
  /** Soft-404 probe answers this batch learned (persisted with the host item). */
  probes: Record<string, ProbeAnswer>;
  /** The host's FIFO group and back queue as the batch read them (see back-queues.ts). */
  state: HostGroup;
  /** AOPIC credits this batch's pages gave to other URLs of the host (for its back queue). */
  credits: Map<Fingerprint, number>;
  /**
   * Tasks the hold-back gave back to the host's back queue (their messages handled): the refill
   * sends the host's richest instead (see record-step.ts, `stepRecord`).
   */
  demoted: CrawlTask[];
  /** The richest task of the back queue's first turn, once read (null: empty). */
  backQueueHead?: CrawlTask | null;
  /** The host's last fetched URLs as read (HostRecord.recentlyFetched), oldest first. */
  recentlyFetched: readonly Fingerprint[];
  /** URLs this batch fetched for the host, in order (remembered with the ledger). */
  fetchedNow: Fingerprint[];
  /** Credit other hosts' pages gave the host's root page, as read (0 once the root was handled). */
  rootCredit: number;
  /** Set when this batch handled the root page: the root credit it added to the root's cash. */
  rootUsed?: number;
}

/** A batch after intake and its state read: its crawls, its groups, and its buffered link sends. */
export interface BatchPlan {
  crawls: Map<string, CrawlBatch>;
  groups: Map<string, { group: GroupBatch; entries: Entry[] }>;
  /** New links of the batch, sent before anything is acknowledged (keys, see aopic-admission.ts). */
  sends: CrawlTask[];
  /** Tasks of the batch's own messages sent again as new messages (retries, waits near the last receive). */
  resends: CrawlTask[];
  /** Entries of crawls that exist (the others were dead-lettered). */
  entries: Entry[];
}

/** The back queues as the worker's deps give them (its raw queue sends to the FIFO groups). */
export function backQueueDeps(deps: FrontierWorkerDeps): BackQueueDeps {
  return {
    table: deps.table,
    backlog: deps.backlog,
    queue: deps.frontier,
    ...(deps.groupLimit === undefined ? {} : { groupLimit: deps.groupLimit }),
    ...(deps.fault === undefined ? {} : { fault: deps.fault }),
    ...(deps.groupHints === undefined ? {} : { hints: deps.groupHints }),
  };
}
