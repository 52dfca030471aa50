/**
 * The archiver's use case: one batch of capture messages (up to thousands, gathered by the event
 * source over its batching window) becomes, per crawl, ONE WARC object and ONE index object:
 *
 *   warc/<crawl>/<yyyy>/<mm>/<dd>/<stamp>-<hash>.warc.gz   warcinfo, then each capture's request
 *                                                          and response members, concatenated
 *   index/<crawl>/<stamp>-<hash>.jsonl                     one page record per line, with
 *                                                          warc: { bucket, key, offset, length }
 *
 * `<hash>` comes from the batch's message ids and `<stamp>` from their send times, and the
 * warcinfo record from the hash: the same batch delivered again writes the same bytes to the same
 * keys. The WARC object is written before the index that points into it, so an index line always
 * points at stored bytes. A URL archived twice (the worker crashed after sending its capture and
 * before its ledger, and fetched it again) is skipped when it comes again in the same batch or to
 * the same container; see docs/cloud.md for what a reader can still see.
 */
import { LRUCache } from 'lru-cache';
import { ClockCache } from '../../core/clock-cache.ts';
import { type FaultHook, InjectedCrashError, NO_FAULTS } from '../fault-hook.ts';
import {
  type CaptureMessage,
  decodeCaptureMessage,
  type InlineRecords,
} from '../messages/capture-message.ts';
import type { PageItem } from '../messages/crawl-records.ts';
import { buildWarcObject, idsHash, indexKey, warcKey } from '../messages/warc-object.ts';
import type { DeadLetterSink, ObjectStore } from '../ports/cloud-ports.ts';

/** One capture-queue message as the handler hands it over. */
export interface CaptureRecordIn {
  messageId: string;
  body: string;
  receiveCount: number;
  /** SentTimestamp, epoch ms. */
  sentTimestamp: number;
}

/** What the archiver needs about a crawl for the warcinfo record. */
export interface CrawlInfo {
  seeds: readonly string[];
  userAgent: string;
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
  /** Bytes of the WARC objects written. */
  warcBytes: number;
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
      warcBytes: 0,
    };
    const byCrawl = new Map<string, Decoded[]>();
    for (const record of records) {
      const decoded = decodeCaptureMessage(record.body);
      if (!decoded.ok) {
        // No retry can make it a capture: to the DLQ with the reason, and acknowledged.
        await deps.deadLetters.send({
          body: record.body,
          groupId: 'capture',
          messageId: record.messageId,
          reason: 'invalid-capture',
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
    for (const [crawlId, list] of byCrawl) {
      try {
        await archiveCrawl(crawlId, list, stats);
      } catch (error) {
        if (error instanceof InjectedCrashError) throw error;
        log(
          `archiving ${list.length} captures of ${crawlId} failed, they will be redelivered: ${describe(error)}`,
        );
        failed.push(...list.map((d) => d.id));
      }
    }
    return { failed, stats };
  };

  async function archiveCrawl(crawlId: string, list: Decoded[], stats: ArchiveStats): Promise<void> {
    // Deterministic order and names: the same messages give the same objects.
    list.sort((a, b) => a.sent - b.sent || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const hash = idsHash(list.map((d) => d.id));
    const stamp = Math.max(...list.map((d) => d.sent));
    const cache = indexedOf(crawlId);
    const inBatch = new Set<string>();
    const pages: { page: PageItem; records?: InlineRecords; stored?: CaptureMessage['stored'] }[] = [];
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
    let part = 0;
    for (const p of pages) {
      const page: PageItem = { ...p.page };
      if (p.records !== undefined) {
        const where = located[part++]!;
        page.warc = { bucket: deps.objects.bucket, key, offset: where.offset, length: where.length };
      } else if (p.stored !== undefined) {
        page.warc = p.stored;
      }
      lines.push(JSON.stringify(page));
    }
    await deps.objects.put(
      indexKey(crawlId, stamp, hash),
      Buffer.from(`${lines.join('\n')}\n`, 'utf8'),
      'application/x-ndjson',
    );
    stats.indexObjects += 1;
    stats.pages += pages.length;
    for (const p of pages) cache.add(p.page.fp);
    fault('archive-after-index');
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
