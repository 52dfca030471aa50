/**
 * The records the cloud crawl keeps (crawl, host ledger, page record) as plain data, and the pure
 * arithmetic over them: a crawl's counters are the sum of its host ledgers plus its seeds.
 */
import type { CrawlConfig } from '../../core/config.ts';
import type { ExtractedValue } from '../../core/dataset/extract-fields.ts';
import type { ProbeAnswer } from '../../core/quality/soft-404.ts';
import {
  addOutcomeCounts,
  countOutcome,
  emptyOutcomeCounts,
  type FinishedOutcome,
  type OutcomeCounts,
} from '../../core/step/page-record.ts';
import type {
  DroppedCounts,
  Fingerprint,
  PageRecord,
  RevisitVerdict,
  SitemapFileRecord,
} from '../../core/types.ts';

/** Life of a crawl: `running` until the scheduler sees nothing left, or DELETE cancels it. */
export type CrawlStatus = 'running' | 'done' | 'cancelled' | 'failed';

/** The crawl item: what was asked for and where it stands. */
export interface CrawlRecord {
  id: string;
  status: CrawlStatus;
  /** ISO 8601. */
  createdAt: string;
  config: CrawlConfig;
  /** Seed tasks claimed and queued when the crawl started (the first `discovered` URLs). */
  seeds: number;
  /** Hosts added to the scope because a seed redirected there (shared by every worker). */
  allowedHosts?: string[];
  /** ISO 8601, set when the crawl left `running` for good. */
  finishedAt?: string;
  /** Counters frozen when the crawl finished. */
  counters?: CrawlCounters;
  /** URLs that left the queue without being finished (e.g. redriven to the DLQ by SQS itself). */
  lost?: number;
  /** What the scheduler saw on earlier ticks (see complete-crawls.ts). */
  watch?: CompletionWatch;
  /** AOPIC state the scheduler publishes for the workers (see redistribute-credit.ts). */
  aopic?: CloudAopicState;
  /** Set on a recrawl round: the archive it revisits (see archive-records.ts). */
  recrawl?: RecrawlOf;
}

/** What makes a crawl a recrawl round: the archive it revisits and its place in it. */
export interface RecrawlOf {
  /** The archive's id: the id of the first crawl of the archive. */
  archive: string;
  /** The round's number (1 for the first recrawl; the first crawl is round 0). */
  round: number;
  /** The crawl `POST /crawls/{id}/recrawl` named (the archive's crawl or one of its rounds). */
  from: string;
  /** How the round chose its pages, and how many it knew and planned. */
  schedule: string;
  budget?: number;
  known: number;
  planned: number;
}

/**
 * The crawl-wide AOPIC numbers, written by the scheduler each tick and read by every batch with
 * the crawl item. Cash a page receives from the lambda page is `bonus` minus the bonus when it
 * became known (see functions/core/scheduling/aopic.ts); parked URLs keep `cash - bonus` as their key.
 */
export interface CloudAopicState {
  /** Cash every known page has received from redistributions so far. */
  bonus: number;
  /** The host ledgers' lambda total already redistributed. */
  lambdaSpent: number;
  /** Parked URLs the scheduler sent to the frontier (best effort: counted after each unpark). */
  admitted: number;
  /** Sum of the cash of all fetched pages (normalizes importance estimates). */
  history: number;
  /** Pages fetched when this state was written (the next step's "fetched since"). */
  fetched: number;
}

/**
 * The scheduler's memory between ticks: since when the counters have said "nothing left"
 * (`settled`), or since when the whole queue has been empty while they did not (`idle`).
 */
export interface CompletionWatch {
  kind: 'settled' | 'idle' | 'quiet';
  /** `finished/discovered` when the watch started; a change restarts it. */
  signature: string;
  /** Epoch ms. */
  since: number;
  /** Ticks that saw the same thing. */
  ticks: number;
  /**
   * Set once the running totals said "settled" and the exact sum of the ledgers did not (the
   * totals are short of a batch that died between its ledgers and its shard write): the exact
   * sum's own watch, so that a crawl that also lost a URL still ends on its own.
   */
  exact?: { signature: string; since: number; ticks: number };
}

/**
 * What a host's records contributed: the core's outcome counts (finished, fetched, bytes, failed,
 * duplicates, by status and reason; `fetched` is what the per-host and per-crawl page budgets
 * count) plus the cloud's own. Every number is counted exactly once per URL: it is written in the
 * same conditional write that advances the host's ledger (see `HostRecord.doneSeq`).
 */
export interface HostCounts extends OutcomeCounts {
  /** New URLs (claimed and queued, or parked) found on this host's pages. */
  enqueued: number;
  /** Of `enqueued`, those parked in the URL table for the scheduler to admit by cash (AOPIC). */
  parked: number;
  /** AOPIC cash this host's pages sent to the lambda page (taxes, dropped and stray credits). */
  lambda: number;
  /** AOPIC cash this host's fetched pages held when fetched. */
  history: number;
  retries: number;
  /** HTTP requests, robots.txt included (robots.txt requests are counted best effort). */
  requests: number;
  /** Sent to the dead-letter queue by the worker. */
  dlq: number;
  /** URL-seen look-ups and those the warm cache answered. */
  lookups: number;
  cacheHits: number;
  /** Out-links not followed, by reason (scope, max-depth, calendar, link-generator, ...). */
  linksSkipped: Record<string, number>;
  /**
   * A recrawl round's pages by what the revisit found: `not-modified`, `unchanged`, `changed`,
   * `gone` (RevisitVerdict), and `new` for a page the archive did not hold.
   */
  byChange: Record<string, number>;
}

/**
 * A crawl's running totals, split over a few items (`counts#<n>`) so no item is hot: each batch
 * adds what its counted host ledgers added, plus the hosts that got their first request. Summing
 * the shards is O(1) in the number of hosts. A batch that dies between its host ledgers and its
 * shard write leaves the shards short of it (never over: a redelivered batch's ledger says
 * "counted" and it adds nothing); the scheduler sums the host ledgers, exactly, before it ends a
 * crawl.
 */
export interface CounterShard extends HostCounts {
  /** Hosts that got their first request. */
  hosts: number;
}

/** Shards of a crawl's running totals. */
export const COUNTER_SHARDS = 8;

/** The host item: politeness state plus the host's ledger. */
export interface HostRecord extends HostCounts {
  host: string;
  /**
   * SQS sequence number of the last message of this host's group whose effects are counted.
   * FIFO gives a group's messages increasing sequence numbers and hands them to one consumer at
   * a time, so "seq <= doneSeq" means "already handled" and the counts need no other ledger.
   */
  doneSeq?: string;
  /** Epoch ms before which no request may start (gap after the last one, Retry-After, backoff). */
  nextAllowedAt: number;
  /** The robots.txt Crawl-delay that applies to us, ms. */
  crawlDelayMs?: number;
  /**
   * Soft-404 probe answers of the host's sites (by origin): kept with the crawl, not only in a
   * container, so a container that forgot the crawl (or a new one) never probes a site again.
   */
  probes?: Record<string, ProbeAnswer>;
  /** The host's group: messages in SQS and the back queue's versions (see HostGroup). */
  group?: HostGroup;
  /**
   * The host's last FETCHES_REMEMBERED fetched URLs, oldest first, as its ledger counted them: a
   * message of one of them is a copy (see FETCHES_REMEMBERED) and is dropped unfetched.
   */
  recentlyFetched?: Fingerprint[];
  /**
   * AOPIC credit that other hosts' pages gave this host's root page while it waited (a budgeted
   * crawl: docs/cloud.md, "Credits to another host's root"), and whether the root was handled
   * (then no more is written).
   */
  rootCredit?: number;
  rootHandled?: boolean;
}

/**
 * Fetched URLs a host item remembers (8 bytes each, written with the ledger: no write of its own).
 * A crash can leave a URL in two messages of its host's group: a redone commit whose pick or
 * verdicts differ from its first try's (the time, the container's peak), a redelivered page that
 * offers its links again after a holder took the first ones out (docs/cloud.md, "Bounded back
 * queues"). The copy comes within a few batches of the first, so the batch that meets it finds
 * the URL here and acknowledges it as a duplicate, as it does a copy within one batch; a copy
 * further behind is fetched once more (never lost).
 */
export const FETCHES_REMEMBERED = 32;

/**
 * A host's FIFO group and its back queue (the rest of its frontier, in DynamoDB). `queued` counts
 * the host's messages in SQS (visible, delayed or in flight): it is changed by the batches that
 * hold the group, in their ledger write (exactly once), and by the one writer that starts an idle
 * group (`starter`). `version` counts additions to the back queue by others; `drained` is the
 * version at which the holder last found the back queue empty (a holder skips the read while they
 * agree).
 */
export interface HostGroup {
  queued: number;
  version: number;
  drained: number;
  /** Who started the group while it was idle; cleared by the group's next ledger write. */
  starter?: string;
  /**
   * The last STARTS_REMEMBERED starters whose starts a holder's ledger write ended: an offer made
   * again in one of these names (a redelivered page) was made, and its tasks were sent.
   */
  ended?: string[];
  /** AOPIC credits owed to URLs waiting in the back queue (see back-queues.ts, `refillPlan`). */
  credits?: BacklogCredits;
}

/** Ended starts a host item remembers (see HostGroup.ended): a redelivery comes within minutes. */
export const STARTS_REMEMBERED = 4;

/**
 * Cash owed to URLs of a host's back queue by pages that linked to them after they were queued,
 * by fingerprint, with the refills that looked for the URL in vain (`misses`).
 */
export type BacklogCredits = Map<Fingerprint, { amount: number; misses: number }>;

/**
 * SQS FIFO sequence numbers are decimal strings of up to 128 bits: padded to 40 digits they
 * compare as strings the way they compare as numbers (DynamoDB compares strings bytewise).
 */
export function sequenceKey(seq: string): string {
  return seq.padStart(40, '0');
}

/** A crawl's counters, as the API reports them: the core's outcome counts, summed, plus the crawl's own. */
export interface CrawlCounters extends OutcomeCounts {
  /** URLs claimed as new: seeds plus every URL queued (or parked) from a page. */
  discovered: number;
  /** In the frontier queue: discovered, not finished, not parked. */
  queued: number;
  /** Parked by AOPIC (cash too low to queue yet), waiting for the scheduler to admit them. */
  parked: number;
  /** Out-links not followed, by reason (the trap defences' work: calendar, link-generator, ...). */
  linksSkipped: Record<string, number>;
  /** A recrawl round's pages by verdict (see HostCounts.byChange); empty for a first crawl (absent on older items). */
  byChange?: Record<string, number>;
  /** Hosts that got at least one request. */
  hosts: number;
  retries: number;
  requests: number;
  dlq: number;
}

/** URL-seen statistics of a crawl. */
export interface UrlSeenCounters {
  lookups: number;
  cacheHits: number;
  /** cacheHits / lookups, 0 before any look-up. */
  hitRate: number;
}

/** All-zero counts. */
export function emptyHostCounts(): HostCounts {
  return {
    ...emptyOutcomeCounts(),
    enqueued: 0,
    parked: 0,
    lambda: 0,
    history: 0,
    retries: 0,
    requests: 0,
    dlq: 0,
    lookups: 0,
    cacheHits: 0,
    linksSkipped: {},
    byChange: {},
  };
}

/** Adds `add` into `into` (numbers and per-key maps). */
export function addHostCounts(into: HostCounts, add: HostCounts): void {
  for (const key of Object.keys(add) as (keyof HostCounts)[]) {
    const value = add[key];
    if (typeof value === 'number') (into[key] as number) += value;
    else {
      const target = into[key] as Record<string, number>;
      for (const [k, n] of Object.entries(value)) target[k] = (target[k] ?? 0) + n;
    }
  }
}

/** What a finished URL adds to its host's counts. */
export interface FinishedUrl extends FinishedOutcome {
  /** New URLs its page queued or parked, and of those the parked ones. */
  enqueued: number;
  parked?: number;
}

/** Adds one finished URL to `counts`: the core's outcome counts, plus the cloud's own. */
export function countFinished(counts: HostCounts, finished: FinishedUrl): void {
  countOutcome(counts, finished);
  counts.enqueued += finished.enqueued;
  counts.parked += finished.parked ?? 0;
  if (finished.reason === 'dlq') counts.dlq += 1;
}

/**
 * Reasons of the URLs the worker finishes without a page record (record-step.ts `finish`: no
 * capture goes to the archive): every other finished URL has one.
 */
export const UNRECORDED_REASONS = ['cancelled', 'max-pages', 'host-budget'] as const;

/** Finished URLs whose page record goes to the archive. */
export function recordedPages(counters: Pick<CrawlCounters, 'finished' | 'byReason'>): number {
  let unrecorded = 0;
  for (const reason of UNRECORDED_REASONS) unrecorded += counters.byReason[reason] ?? 0;
  return counters.finished - unrecorded;
}

/** AOPIC totals of a crawl's host ledgers. */
export interface AopicTotals {
  /** URLs ever parked. */
  parked: number;
  lambda: number;
  history: number;
}

/**
 * Sums the host ledgers of a crawl into its counters. `admitted`: parked URLs the scheduler has
 * sent to the frontier since (the crawl item's `aopic.admitted`).
 */
export function aggregateCounters(
  seeds: number,
  hosts: Iterable<HostCounts & { hosts?: number }>,
  admitted = 0,
): { counters: CrawlCounters; urlSeen: UrlSeenCounters; aopic: AopicTotals } {
  const aopic: AopicTotals = { parked: 0, lambda: 0, history: 0 };
  const counters: CrawlCounters = {
    discovered: seeds,
    queued: 0,
    parked: 0,
    ...emptyOutcomeCounts(),
    linksSkipped: {},
    byChange: {},
    hosts: 0,
    retries: 0,
    requests: 0,
    dlq: 0,
  };
  let lookups = 0;
  let cacheHits = 0;
  for (const h of hosts) {
    counters.discovered += h.enqueued;
    addOutcomeCounts(counters, h);
    counters.retries += h.retries;
    counters.requests += h.requests;
    counters.dlq += h.dlq;
    // A host item counts itself once it got a request; a counter shard carries its own count.
    counters.hosts += h.hosts ?? (h.requests > 0 ? 1 : 0);
    for (const [k, n] of Object.entries(h.linksSkipped))
      counters.linksSkipped[k] = (counters.linksSkipped[k] ?? 0) + n;
    const byChange = counters.byChange ?? {};
    for (const [k, n] of Object.entries(h.byChange ?? {})) byChange[k] = (byChange[k] ?? 0) + n;
    counters.byChange = byChange;
    lookups += h.lookups;
    cacheHits += h.cacheHits;
    aopic.parked += h.parked;
    aopic.lambda += h.lambda;
    aopic.history += h.history;
  }
  counters.parked = Math.max(0, aopic.parked - admitted);
  counters.queued = Math.max(0, counters.discovered - counters.finished - counters.parked);
  return {
    counters,
    urlSeen: { lookups, cacheHits, hitRate: lookups === 0 ? 0 : cacheHits / lookups },
    aopic,
  };
}

/** Where a page's capture is: a WARC response record inside an S3 object. */
export interface WarcLocation {
  bucket: string;
  key: string;
  offset: number;
  length: number;
}

/**
 * The page record: the URL's outcome, one line of the crawl's index objects in S3 (written by the
 * archiver; the API lists them). `messageId` is the frontier message that finished the URL, and
 * `enqueued` the new URLs its page queued.
 */
export interface PageItem {
  fp: Fingerprint;
  url: string;
  host: string;
  finalUrl?: string;
  status: number | null;
  contentType?: string;
  kind: string;
  depth: number;
  bytes: number;
  fetchedAt?: string;
  durationMs?: number;
  title?: string;
  contentHash?: string;
  outLinks: number;
  reason?: string;
  detail?: string;
  redirectTo?: string;
  duplicateOf?: string;
  truncated?: string;
  noindex?: boolean;
  /** SimHash of the visible text, and an earlier page it nearly duplicates. */
  simhash?: string;
  nearDuplicateOf?: string;
  /** AOPIC cash the page held when fetched, and the importance estimate it gave. */
  cash?: number;
  importance?: number;
  /** The `<lastmod>` of the sitemap entry that made the URL known. */
  lastmod?: string;
  /** For a sitemap file: what reading it gave. */
  sitemap?: SitemapFileRecord;
  /** The response's validators, and a recrawl's verdict against the archive's copy (docs/recrawl.md). */
  etag?: string;
  lastModified?: string;
  change?: RevisitVerdict;
  warc?: WarcLocation;
  /** The crawl's `extract` fields of the page (the dataset row, see functions/core/dataset/). */
  extracted?: Record<string, ExtractedValue>;
  /** What the per-page caps left out (links, extract values and characters), when any tripped. */
  dropped?: DroppedCounts;
  /** The SQS message whose processing wrote this record. */
  messageId: string;
  /** New URLs this page queued. */
  enqueued: number;
}

/** Builds a page item from the core's PageRecord. Long free-text fields are cut to keep items near 1 KB. */
export function pageItemFromRecord(
  record: PageRecord,
  where: { fp: Fingerprint; host: string; messageId: string; enqueued: number; warc?: WarcLocation },
): PageItem {
  const item: PageItem = {
    fp: where.fp,
    url: record.url,
    host: where.host,
    status: record.status,
    kind: record.kind,
    depth: record.depth,
    bytes: record.bytes,
    outLinks: record.outLinks,
    messageId: where.messageId,
    enqueued: where.enqueued,
  };
  if (record.finalUrl !== record.url) item.finalUrl = record.finalUrl;
  if (record.contentType !== null) item.contentType = record.contentType;
  if (record.fetchedAt !== null) item.fetchedAt = record.fetchedAt;
  if (record.durationMs !== null) item.durationMs = record.durationMs;
  if (record.title !== null && record.title !== '') item.title = record.title.slice(0, 300);
  if (record.contentHash !== null) item.contentHash = record.contentHash;
  if (record.reason !== undefined) item.reason = record.reason;
  if (record.detail !== undefined) item.detail = record.detail.slice(0, 300);
  if (record.redirectTo !== undefined) item.redirectTo = record.redirectTo;
  if (record.duplicateOf !== undefined) item.duplicateOf = record.duplicateOf;
  if (record.truncated !== undefined) item.truncated = record.truncated;
  if (record.noindex) item.noindex = true;
  if (record.simhash !== undefined) item.simhash = record.simhash;
  if (record.nearDuplicateOf !== undefined) item.nearDuplicateOf = record.nearDuplicateOf;
  if (record.cash !== undefined) item.cash = record.cash;
  if (record.importance !== undefined) item.importance = record.importance;
  if (record.lastmod !== undefined) item.lastmod = record.lastmod;
  if (record.sitemap !== undefined) item.sitemap = record.sitemap;
  if (record.etag !== undefined) item.etag = record.etag;
  if (record.lastModified !== undefined) item.lastModified = record.lastModified;
  if (record.change !== undefined) item.change = record.change;
  if (where.warc !== undefined) item.warc = where.warc;
  if (record.extracted !== undefined) item.extracted = record.extracted;
  if (record.dropped !== undefined) item.dropped = record.dropped;
  return item;
}

/**
 * The owner the worker records on a URL-seen claim: the claiming page's fingerprint, the SQS
 * sequence number of the message being processed, and its host (`<fp>:<seq>@<host>`). A
 * redelivery of the same message claims with the same tag, so it may claim (and queue) the same
 * children again; a later copy of the page (another message) may not, which stops a re-sent page
 * from re-queueing its whole subtree. The host and sequence number say whose ledger tells when the
 * claiming page is finished (see the worker's `cacheable`).
 */
export function ownerTag(fp: Fingerprint, seq: string, host: string): string {
  return `${fp}:${seq}@${host}`;
}

/** The parts of an {@link ownerTag}; undefined for other owners (seeds, plain fingerprints). */
export function parseOwnerTag(tag: string): { fp: Fingerprint; seq: string; host: string } | undefined {
  const colon = tag.indexOf(':');
  const at = tag.indexOf('@', colon + 1);
  if (colon !== 16 || at < 0) return undefined;
  const seq = tag.slice(colon + 1, at);
  if (!/^\d+$/.test(seq)) return undefined;
  return { fp: tag.slice(0, 16), seq, host: tag.slice(at + 1) };
}
