/**
 * Plain data shared by the core, the ports and every adapter. Nothing here has behaviour.
 */
import type { ExtractedValue } from './dataset/extract-fields.ts';
import type { SitemapFetch } from './sitemap/sitemap-plan.ts';

/**
 * 64-bit fingerprint of a canonical URL: the first 8 bytes of SHA-256 over the URL's UTF-8
 * bytes, as 16 lowercase hex characters. Fixed for all machines and versions (see `fingerprint`).
 */
export type Fingerprint = string;

/** What a link points at, by its element, attributes and file extension. */
export type LinkKind = 'page' | 'image' | 'document' | 'other';

/** One unit of frontier work: fetch this URL (or its robots.txt first) for this crawl. */
export interface CrawlTask {
  crawlId: string;
  /** Canonical URL. */
  url: string;
  fp: Fingerprint;
  /** Politeness key: the lowercase host name (one request in flight per key). */
  host: string;
  /** Seeds are depth 0. */
  depth: number;
  /** Fingerprint of the page that discovered this URL (the URL-seen claim owner); absent for seeds. */
  parent?: Fingerprint;
  /**
   * SimHash of the discovering page, set only when this URL has the same path pattern as it
   * (a generator's next page?): the fetched page is compared with it.
   */
  parentSimhash?: string;
  /** Redirect hops already followed to reach this URL (a redirect target is a new task). */
  redirects: number;
  /** Failed attempts so far (5xx, timeouts, robots unreachable). */
  attempt: number;
  /** AOPIC cash carried by the URL when it was queued (0 when the crawl orders breadth-first). */
  cash: number;
  /**
   * The link went from a page to its own path pattern on its own host (a generator's next page?:
   * the next month, the next listing page), and got a tenth of a share (SELF_LINK_SHARE). With a
   * page budget such URLs wait until nothing else is left (embedded) or are parked (cloud).
   */
  generated?: boolean;
  /** The URL is a sitemap file to read, with its scope and budget (docs/sitemaps.md). */
  sitemap?: SitemapFetch;
  /** The `<lastmod>` of the sitemap entry that made this URL known (recorded on its page record). */
  lastmod?: string;
  /**
   * A sitemap entry made this URL known (before any link did): the site says it is a page. The
   * embedded crawler does not hold it back for its low cash (see AopicDispatchPolicy.holdBack).
   */
  listed?: boolean;
  /**
   * Cloud only: the task was re-sent by the worker in place of a message that had waited in the
   * queue (politeness) for most of its receives; names that message, so that its re-send has its
   * own deduplication id, the same one if the re-sending batch is redone. A queued task a blocked
   * duplicate-URL rule had skipped, queued again (readmit-urls.ts), names the page whose step
   * queued it (its fingerprint).
   */
  resentFrom?: string;
  /**
   * Cloud only: the send that put the task in its host's FIFO group (a holder's refill, or the
   * start of an idle group), so that each counted send has its own deduplication id: a copy that
   * SQS dropped as a duplicate would leave the group's count above its messages (back-queues.ts).
   */
  turn?: string;
}

/** Where a page's capture is stored (a WARC record inside a file or object). */
export interface StoredRef {
  /** File name under the crawl's warc/ folder, or the S3 object key. */
  file: string;
  offset: number;
  length: number;
}

/** Reasons a URL was not fetched or a fetch did not produce a usable page. Stable strings. */
export type SkipReason =
  | 'robots'
  | 'robots-unreachable'
  | 'scope'
  | 'include'
  | 'exclude'
  | 'max-depth'
  | 'max-pages'
  | 'host-budget'
  | 'url-length'
  | 'repeated-segments'
  | 'too-many-redirects'
  | 'redirect-to-seen'
  | 'redirect-out-of-scope'
  | 'cancelled'
  | 'gave-up'
  | 'blocked-address'
  | 'calendar'
  | 'link-generator'
  | 'soft-404'
  /** A queued URL that a host's duplicate-URL rule now merges into another (docs/duplicate-urls.md). */
  | 'duplicate-url-rule';

/** One line of pages.jsonl: one record per URL attempted. */
export interface PageRecord {
  url: string;
  /** The URL the response actually came from; for a redirect, the resolved Location target. */
  finalUrl: string;
  /** HTTP status, or null when no response arrived (network error, skip). */
  status: number | null;
  contentType: string | null;
  kind: LinkKind;
  depth: number;
  /** Decoded body bytes received (after Content-Encoding). */
  bytes: number;
  /** ISO 8601 time the request started; null when no request was made. */
  fetchedAt: string | null;
  durationMs: number | null;
  title: string | null;
  /** SHA-256 (hex) of the decoded body; null when no body. */
  contentHash: string | null;
  /** Links extracted from the page (all kinds, before scope rules). */
  outLinks: number;
  /** Why the URL was skipped or failed (absent when it was fetched normally). */
  reason?: string;
  /** Details for the reason (error message, header value). */
  detail?: string;
  /** For 3xx: where it pointed (canonical). */
  redirectTo?: string;
  /** Canonical URL of the first page with the same content (exact duplicate). */
  duplicateOf?: string;
  /** SimHash of the page's visible text (HTML pages). */
  simhash?: string;
  /** Canonical URL of an earlier page whose SimHash is within the near-duplicate distance. */
  nearDuplicateOf?: string;
  /** AOPIC cash the page held when fetched (it moved to its out-links and became history). */
  cash?: number;
  /** AOPIC importance estimate when fetched: (history + cash) / total; `crawlstack rank` refines it. */
  importance?: number;
  /** Body was cut at the byte cap or total timeout. */
  truncated?: 'length' | 'time';
  /** The page asked not to be indexed (meta robots or X-Robots-Tag). */
  noindex?: boolean;
  /** Where the capture was stored. */
  warc?: StoredRef;
  /** Fields pulled by the crawl's `extract` CSS selectors (one value, all values or null each). */
  extracted?: Record<string, ExtractedValue>;
  /** What the per-page caps left out of this record, when any cap tripped (docs/safety.md). */
  dropped?: DroppedCounts;
  /** The `<lastmod>` of the sitemap entry that made this URL known (docs/sitemaps.md). */
  lastmod?: string;
  /** For a sitemap file: what reading it gave. */
  sitemap?: SitemapFileRecord;
  /** The response's ETag, sent back as If-None-Match when the page is recrawled (docs/recrawl.md). */
  etag?: string;
  /** The response's Last-Modified as an IMF-fixdate, sent back as If-Modified-Since. */
  lastModified?: string;
  /** A recrawl's verdict on the page against the archive's copy (absent on a first fetch). */
  change?: RevisitVerdict;
}

/** What one sitemap file gave, on its page record (docs/sitemaps.md). */
export interface SitemapFileRecord {
  /** `urlset` (page URLs), `index` (child sitemaps), or `not-a-sitemap` (an HTML page, an empty body, a corrupt gzip). */
  kind: 'urlset' | 'index' | 'not-a-sitemap';
  /** Why it is not a sitemap. */
  reason?: string;
  /** The file came gzipped (`.xml.gz`) and was inflated. */
  gzip?: boolean;
  /** Entries read (page URLs of a urlset, child sitemaps of an index). */
  entries: number;
  /** Of those, URLs new to the crawl and queued (pages or child sitemaps). */
  queued: number;
  /** Entries outside the sitemap's own scope (the protocol's rule) or the crawl's scope and trap rules. */
  outOfScope: number;
  /** Entries without a usable `<loc>`. */
  invalid: number;
  /** Entries past the file's share of the site's budget, or children of an index too deep. */
  dropped: number;
  /** Elements nested deeper than the reader's cap (32), skipped with what they hold; absent when none. */
  tooDeep?: number;
  /** A limit cut the file short: the byte cap, the entry limit, or a tag longer than 1 MiB (`markup`). */
  truncated?: 'bytes' | 'entries' | 'markup';
}

/**
 * What per-page caps left out of a page's record, so that one hostile page costs a bounded share
 * and the record still says what was not kept. Only the counts that are not zero are present.
 */
export interface DroppedCounts {
  /**
   * Links found once the page had `maxLinksPerPage` distinct ones, to other targets (each
   * occurrence counted): neither recorded in links.jsonl nor followed.
   */
  links?: number;
  /** Links whose URL, resolved, is longer than `maxUrlLength`: neither recorded nor followed. */
  longUrls?: number;
  /** 1 when `<base href>` resolved to a URL longer than `maxUrlLength` and was ignored. */
  base?: number;
  /** `extract` values beyond `maxExtractValues`. */
  extractValues?: number;
  /** `extract` characters beyond `maxExtractChars` (cut from the last value kept, and from those dropped). */
  extractChars?: number;
  /** `extract`: start tags nested deeper than the DOM's depth bound, left out (their content kept). */
  extractNesting?: number;
}

/** One out-link of a page in the link graph. */
export interface OutLink {
  /** Canonical target URL. */
  url: string;
  kind: LinkKind;
  /** Why the target is not followed: 'nofollow', 'kind' (a kind the crawl does not follow) or a SkipReason. */
  skipped?: string;
  /** The canonical URL as the page linked it, when a host's duplicate-URL rule rewrote it into `url`. */
  linkedAs?: string;
  /** A sitemap entry's `<lastmod>` (a recrawl takes it as a hint that the page changed). */
  lastmod?: string;
}

/** One line of links.jsonl: a page and its distinct out-links (the link graph). */
export interface LinkRecord {
  from: string;
  links: OutLink[];
}

/** What a later request needs to ask "changed since?". */
export interface Validators {
  /** The ETag, quotes and `W/` included, as received. */
  etag?: string;
  /** Last-Modified as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`). */
  lastModified?: string;
}

/** The verdict of one revisit, recorded as `change` on the page record. */
export type RevisitVerdict =
  /** 304 Not Modified: the archive's copy is current; a `server-not-modified` revisit record. */
  | 'not-modified'
  /** 2xx with the same payload as the archive's copy: an `identical-payload-digest` revisit record. */
  | 'unchanged'
  /** Another payload, status or redirect: stored in full. */
  | 'changed'
  /** 404 or 410 now: the page was removed. */
  | 'gone';

/** What the archive holds of a page's last fetch: all a revisit of it needs (both runtimes). */
export interface PreviousFetch {
  url: string;
  status: number;
  /** Validators of the last response that carried the page (a 304 keeps the earlier ones unless it sends new). */
  validators: Validators;
  /** SHA-256 (hex) of the last full copy's body; null when it had none. */
  contentHash: string | null;
  contentType: string | null;
  title: string | null;
  /** The last full copy in the archive: its WARC-Date and payload digest, which a revisit record refers to. */
  copy?: { date: string; payloadDigest?: string };
  /** Out-links of the last full fetch: a 304 follows them again (an unchanged page links what it linked). */
  links?: OutLink[];
}
