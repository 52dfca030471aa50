/**
 * The archiver's use case: one batch of capture messages (up to thousands, gathered by the event
 * source over its batching window) becomes, per crawl, ONE WARC object and ONE index object:
 *
 *   warc/<crawl>/<yyyy>/<mm>/<dd>/<stamp>-<hash>.warc.gz   warcinfo, then each capture's request
 *                                                          and response members, concatenated
 *   links/<crawl>/<stamp>-<hash>.jsonl                     the link graph: one links.jsonl
 *                                                          line { from, links } per HTML page
 *                                                          (only when the batch has any)
 *   index/<crawl>/<stamp>-<hash>-<n>.jsonl                 one page record per line (n lines),
 *                                                          with warc: { bucket, key, offset, length }
 *   trace/<crawl>/<stamp>-<hash>.bin                       the batch's URL-seen trace messages
 *                                                          (trace-message.ts), 8 bytes per look-up,
 *                                                          in the order the workers sent them
 *
 * `<hash>` comes from the batch's message ids and `<stamp>` from their send times, and the
 * warcinfo record from the hash: the same batch delivered again writes the same bytes to the same
 * keys. The WARC and links objects are written before the index, so an index line always points
 * at stored bytes and its page's links are stored. A URL archived twice (the worker crashed after sending its capture and
 * before its ledger, and fetched it again) is skipped when it comes again in the same batch or to
 * the same container; see docs/cloud.md for what a reader can still see.
 */
import { LRUCache } from 'lru-cache';
import { ClockCache } from '../../core/url-seen/clock-cache.ts';
import { type FaultHook, InjectedCrashError, NO_FAULTS } from '../fault-hook.ts';
import {
  type CaptureMessage,
  decodeCaptureMessage,
  type InlineRecords,
} from '../messages/capture-message.ts';
import type { PageItem, RecrawlOf } from '../messages/crawl-records.ts';
import { decodeTraceMessage, isTraceBody, type TraceMessage, traceKey } from '../messages/trace-message.ts';
import { buildWarcObject, idsHash, indexKey, linksKey, warcKey } from '../messages/warc-object.ts';
import type { ArchiveStore, DeadLetterSink, ObjectStore } from '../ports/cloud-ports.ts';
import { type ArchivedVisit, foldVisits } from './archive-visits.ts';

/** One capture-queue message as the handler hands it over. */
export interface CaptureRecordIn {
  messageId: string;
  body: string;
  receiveCount: number;
  /** SentTimestamp, epoch ms. */
  sentTimestamp: number;
}

/** What the archiver needs about a crawl for the warcinfo record (and the archive it adds to). */
export interface CrawlInfo {
  seeds: readonly string[];
  userAgent: string;
  /** Set for a recrawl round: its pages are folded into this archive's state. */
  recrawl?: Pick<RecrawlOf, 'archive'>;
  /** The crawl keeps its pages' archive state (`keepArchive`): it can be recrawled. */
  keepArchive?: boolean;
}

/** What the archiver touches. */
export interface ArchiverDeps {
  objects: ObjectStore;
  /** The capture dead-letter queue (messages that are not captures). */
  deadLetters: DeadLetterSink;
  /** warcinfo fields of a crawl (undefined: only its id is written). */
  crawlInfo: (crawlId: string) => Promise<CrawlInfo | undefined>;
  /** warcinfo `software`. */
  software?: string;
  fault?: FaultHook;
  log?: (line: string) => void;
  /** Fingerprints per crawl this container remembers as indexed (duplicate captures). Default 2^18. */
  indexedCacheSize?: number;
  /**
   * The archives' per-URL state (archive-visits.ts): every indexed page is folded into its
   * crawl's archive, so that any finished crawl can be recrawled. Absent: none is kept.
   */
  archive?: ArchiveStore;
}

/** What one batch did. */
export interface ArchiveStats {
  messages: number;
  /** Pages indexed. */
  pages: number;
  /** Captures of URLs already indexed (skipped). */
  duplicates: number;
  deadLettered: number;
  warcObjects: number;
  indexObjects: number;
  /** Links objects written (the link graph). */
  linksObjects: number;
  /** Bytes of the WARC objects written. */
  warcBytes: number;
  /** URL-seen trace objects written, and the look-ups in them. */
  traceObjects: number;
  traceLookups: number;
  /** Pages folded into their archive's state. */
  archived: number;
}

/** The batch's outcome: ids of messages to retry (their crawl's objects could not be written). */
export interface ArchiveOutcome {
  failed: string[];
  stats: ArchiveStats;
}

interface Decoded {
  id: string;
  sent: number;
  capture: CaptureMessage;
}

/** Builds the batch processor; its closure is the container's memory of indexed URLs. */
export function createCaptureArchiver(
  deps: ArchiverDeps,
): (records: readonly CaptureRecordIn[]) => Promise<ArchiveOutcome> {
  const fault = deps.fault ?? NO_FAULTS;
  const log = deps.log ?? (() => {});
  const software = deps.software ?? 'crawlstack';
  const indexed = new LRUCache<string, ClockCache>({ max: 8 });
  const infos = new LRUCache<string, { info: CrawlInfo | undefined }>({ max: 64 });

  function indexedOf(crawlId: string): ClockCache {
    let cache = indexed.get(crawlId);
    if (cache === undefined) {
      cache = new ClockCache(deps.indexedCacheSize ?? 262_144);
      indexed.set(crawlId, cache);
    }
    return cache;
  }

  async function infoOf(crawlId: string): Promise<CrawlInfo | undefined> {
    let entry = infos.get(crawlId);
    if (entry === undefined) {
      entry = { info: await deps.crawlInfo(crawlId) };
      infos.set(crawlId, entry);
    }
    return entry.info;
  }

  return async function archive(records) {
    const stats: ArchiveStats = {
      messages: records.length,
      pages: 0,
      duplicates: 0,
      deadLettered: 0,
      warcObjects: 0,
      indexObjects: 0,
      linksObjects: 0,
      warcBytes: 0,
      traceObjects: 0,
      traceLookups: 0,
      archived: 0,
    };
    const traces = new Map<string, { id: string; sent: number; trace: TraceMessage }[]>();
    const byCrawl = new Map<string, Decoded[]>();
    for (const record of records) {
      const trace = isTraceBody(record.body) ? decodeTraceMessage(record.body) : undefined;
      if (trace?.ok === true) {
        const list = traces.get(trace.message.crawlId) ?? [];
        list.push({ id: record.messageId, sent: record.sentTimestamp, trace: trace.message });
        traces.set(trace.message.crawlId, list);
        continue;
      }
      const decoded = trace === undefined ? decodeCaptureMessage(record.body) : trace;
      if (!decoded.ok) {
        // No retry can make it a capture (or a trace): to the DLQ with the reason, and acknowledged.
        await deps.deadLetters.send({
          body: record.body,
          groupId: 'capture',
          messageId: record.messageId,
          reason: trace === undefined ? 'invalid-capture' : 'invalid-trace',
          detail: decoded.problem,
          receiveCount: record.receiveCount,
        });
        stats.deadLettered += 1;
        continue;
      }
      const list = byCrawl.get(decoded.message.crawlId) ?? [];
      list.push({ id: record.messageId, sent: record.sentTimestamp, capture: decoded.message });
      byCrawl.set(decoded.message.crawlId, list);
    }

    const failed: string[] = [];
    for (const crawlId of new Set([...byCrawl.keys(), ...traces.keys()])) {
      const list = byCrawl.get(crawlId) ?? [];
      const traceList = traces.get(crawlId) ?? [];
      try {
        // The trace first: archiveCrawl may find nothing new to index and write nothing.
        await archiveTrace(crawlId, traceList, stats);
        await archiveCrawl(crawlId, list, stats);
      } catch (error) {
        if (error instanceof InjectedCrashError) throw error;
        log(
          `archiving ${list.length} captures of ${crawlId} failed, they will be redelivered: ${describe(error)}`,
        );
        failed.push(...list.map((d) => d.id), ...traceList.map((t) => t.id));
      }
    }
    return { failed, stats };
  };

  /**
   * One object of the crawl's trace messages, in the order they were sent (a worker batch's
   * look-ups stay in order; batches of different containers interleave by send time). Named like
   * the other objects from the messages' ids and send times: a redelivered batch writes the same
   * bytes to the same key.
   */
  async function archiveTrace(
    crawlId: string,
    list: { id: string; sent: number; trace: TraceMessage }[],
    stats: ArchiveStats,
  ): Promise<void> {
    if (list.length === 0) return;
    list.sort((a, b) => a.sent - b.sent || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const body = Buffer.concat(list.map((t) => t.trace.lookups));
    const key = traceKey(crawlId, Math.max(...list.map((t) => t.sent)), idsHash(list.map((t) => t.id)));
    await deps.objects.put(key, body, 'application/octet-stream');
    stats.traceObjects += 1;
    stats.traceLookups += body.length / 8;
  }

  async function archiveCrawl(crawlId: string, list: Decoded[], stats: ArchiveStats): Promise<void> {
    // Deterministic order and names: the same messages give the same objects.
    list.sort((a, b) => a.sent - b.sent || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const hash = idsHash(list.map((d) => d.id));
    const stamp = Math.max(...list.map((d) => d.sent));
    const cache = indexedOf(crawlId);
    const inBatch = new Set<string>();
    const pages: CaptureMessage[] = [];
    for (const { capture } of list) {
      const fp = capture.page.fp;
      if (inBatch.has(fp) || cache.has(fp)) {
        stats.duplicates += 1;
        continue;
      }
      inBatch.add(fp);
      pages.push(capture);
    }
    if (pages.length === 0) return;

    const parts = pages.filter((p) => p.records !== undefined);
    const lines: string[] = [];
    let located: { offset: number; length: number }[] = [];
    const key = warcKey(crawlId, stamp, hash);
    if (parts.length > 0) {
      const info = await infoOf(crawlId);
      const fields: Record<string, string> = { 'crawl-id': crawlId };
      if (info !== undefined) {
        fields['crawl-seeds'] = info.seeds.join(' ');
        fields['user-agent'] = info.userAgent;
      }
      const object = buildWarcObject({
        key,
        hash,
        date: stamp,
        software,
        fields,
        parts: parts.map((p) => p.records as InlineRecords),
      });
      await deps.objects.put(key, object.body, 'application/warc');
      stats.warcObjects += 1;
      stats.warcBytes += object.body.length;
      located = object.responses;
      fault('archive-after-warc');
    }
    // The link graph of the pages indexed here (a page whose links the worker stored itself has
    // its own links object already).
    const graph = pages.filter((p) => p.links !== undefined);
    if (graph.length > 0) {
      const text = graph.map((p) => `${JSON.stringify({ from: p.page.url, links: p.links })}\n`).join('');
      await deps.objects.put(
        linksKey(crawlId, stamp, hash),
        Buffer.from(text, 'utf8'),
        'application/x-ndjson',
      );
      stats.linksObjects += 1;
    }
    let part = 0;
    const visits: ArchivedVisit[] = [];
    for (const p of pages) {
      const page: PageItem = { ...p.page };
      if (p.records !== undefined) {
        const where = located[part++]!;
        page.warc = { bucket: deps.objects.bucket, key, offset: where.offset, length: where.length };
      } else if (p.stored !== undefined) {
        page.warc = p.stored;
      }
      lines.push(JSON.stringify(page));
      const visit: ArchivedVisit = { page };
      if (p.links !== undefined) visit.links = p.links;
      if (p.payloadDigest !== undefined) visit.payloadDigest = p.payloadDigest;
      visits.push(visit);
    }
    await deps.objects.put(
      indexKey(crawlId, stamp, hash, lines.length),
      Buffer.from(`${lines.join('\n')}\n`, 'utf8'),
      'application/x-ndjson',
    );
    stats.indexObjects += 1;
    stats.pages += pages.length;
    // After the index (the state names stored copies), before the container's memory (a
    // redelivery of a batch that died here folds again, from the same states).
    const info = deps.archive === undefined ? undefined : await infoOf(crawlId);
    if (deps.archive !== undefined && (info?.keepArchive || info?.recrawl !== undefined)) {
      const archive = info?.recrawl?.archive ?? crawlId;
      stats.archived += await foldVisits(deps.archive, archive, crawlId, visits, archive === crawlId);
      fault('archive-after-fold');
    }
    for (const p of pages) cache.add(p.page.fp);
    fault('archive-after-index');
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
