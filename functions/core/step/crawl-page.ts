/**
 * The crawl step, shared by the embedded runtime and the cloud worker: one task, at most one
 * request to the task's host (robots.txt or the page itself), then the outcome as a value, with
 * the step's effects (the page record, the tasks to queue, the link record, the robots.txt entry
 * to store, the responses to archive, the defences' lessons: step-effects.ts) for the runtime to
 * commit in its own order.
 *
 * Doing exactly one request per step keeps politeness in one place: the caller (the embedded
 * scheduler, or SQS message visibility in the cloud) decides when the host's next request may
 * start, from the feedback returned here.
 */

import type { CrawlConfig } from '../config.ts';
import { extractSelectors, shapeExtracted } from '../dataset/extract-fields.ts';
import { decodeBody, isHtml, mediaType } from '../html/charset.ts';
import { classifyLink } from '../html/classify.ts';
import { extractPage, type PageFacts } from '../html/extract.ts';
import { parseXRobotsTag } from '../html/x-robots-tag.ts';
import type { Capture, FetchFailure, FetchRequest, FetchResponse, RobotsEntry } from '../ports.ts';
import { contentHash } from '../quality/content-hash.ts';
import { type RuleRewrite, ruleKey } from '../quality/duplicate-url-rule.ts';
import { DUPLICATE_URL_RULE_REASON } from '../quality/duplicate-url-rules.ts';
import { judgeRevisit, type PreviousFetch, type RevisitVerdict } from '../recrawl/revisit-verdict.ts';
import { conditionalHeaders, validatorsOf } from '../recrawl/validators.ts';
import { decodeRobotsBody } from '../robots/body.ts';
import type { ParsedRobots } from '../robots/parse.ts';
import {
  type RobotsFetchOutcome,
  robotsEntryFromResponse,
  robotsUrlFor,
  rulesFromEntry,
} from '../robots/policy.ts';
import { type CashFlow, pathShape, SELF_LINK_SHARE, splitCash } from '../scheduling/aopic.ts';
import { type RequestFeedback, retryAfterMs, retryBackoffMs } from '../scheduling/politeness.ts';
import { rootCashSplit } from '../sitemap/sitemap-cash.ts';
import type { SitemapFetch } from '../sitemap/sitemap-plan.ts';
import {
  admitRootSitemaps,
  queueSitemaps,
  readSitemapFile,
  rootSitemaps,
  type SitemapQueueDeps,
} from '../sitemap/sitemap-step.ts';
import type { CrawlTask, DroppedCounts, Fingerprint, LinkKind, OutLink, PageRecord } from '../types.ts';
import type { UrlCanonicalizer } from '../url/canonicalize.ts';
import { fingerprint } from '../url/fingerprint.ts';
import {
  type Admission,
  admitUrls,
  type Followed,
  knownForm,
  linkSkip,
  type UrlRuleChecks,
} from './admit-urls.ts';
import { RETRIED_FETCH_ERRORS } from './error-policy.ts';
import { type FinishReason, unfetchedRecord } from './page-record.ts';
import { type ReadmitDeps, type Readmitted, readmitted, readmitUrls } from './readmit-urls.ts';
import type {
  AdmissionDeps,
  CrawlPageDeps,
  DefenceDeps,
  FetchDeps,
  LinkPathDeps,
  RobotsDeps,
  StepBasics,
} from './step-deps.ts';
import type { DefenceLesson, StepEffects } from './step-effects.ts';

/** Everything a crawl step touches, by group (step-deps.ts); each part below takes only what it uses. */
export type { CrawlPageDeps } from './step-deps.ts';

/** What following a page's links (or a redirect's target) touches: the link path, and the rules' lessons. */
type FollowDeps = LinkPathDeps & Pick<DefenceDeps, 'urlRules'>;

/** What ending a task that failed (a retry, or a record of the failure) reads. */
type RetryDeps = Pick<StepBasics, 'config'>;

/** What the runtime needs to schedule the host's next request (defined with the politeness rules). */
export type { RequestFeedback } from '../scheduling/politeness.ts';
/** What the step changes, returned with every outcome (step-effects.ts). */
export type { StepEffects } from './step-effects.ts';

/** A fetched page handed to an optional observer (the `hunt` command, saving bodies). */
export interface FetchedPage {
  task: CrawlTask;
  /** The page's record as the step built it: without `warc`, which the runtime's commit adds. */
  record: PageRecord;
  body: Uint8Array;
  /** Decoded HTML, when the page is HTML. */
  html?: string;
  /** Visible text, one line per block, when `wantText` was asked for. */
  text?: string;
}

export interface CrawlPageOptions {
  /** Extract visible text (costs CPU; `hunt` needs it). */
  wantText?: boolean;
  onPage?: (page: FetchedPage) => void;
}

/** What a crawl step decided, with its effects (every kind carries {@link StepEffects}). */
export type CrawlPageOutcome = StepEffects &
  /**
   * The origin was prepared with this step's request — robots.txt fetched (`entry`, also in
   * `storeRobots`) or the site's soft-404 probe made (`probe`); run the same task again after
   * the host's gap. (An unreachable robots.txt comes back as 'retry' or 'done' instead.)
   * `enqueued`: the site's sitemap files, queued when its robots.txt was first read.
   */
  (
    | { kind: 'robots'; feedback: RequestFeedback; entry: RobotsEntry; probe?: string }
    /**
     * The URL is finished: fetched, skipped or failed for good; `record` is its page record, to
     * write. `feedback` is absent when no request was made. `cashFlow`: where the task's AOPIC
     * cash went (the runtime credits known out-links).
     */
    | {
        kind: 'done';
        record: PageRecord;
        feedback?: RequestFeedback;
        cashFlow?: CashFlow;
      }
    /**
     * Try the task again (as `task`, with its attempt counted) no earlier than `notBefore`.
     * `detail`: what went wrong in the failure's own words, for reports.
     */
    | {
        kind: 'retry';
        task: CrawlTask;
        reason: string;
        detail?: string;
        notBefore: number;
        feedback?: RequestFeedback;
      }
  );

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** RFC 9309 §2.3.1.2: follow at least five redirects for robots.txt. */
const MAX_ROBOTS_REDIRECTS = 5;

/**
 * The effects the step gathers on its way, whichever outcome it ends with: the responses to
 * archive and the defences' lessons (returned as the outcome's `capture`, `robotsCaptures` and
 * `lessons`).
 */
interface Gathered {
  capture?: Capture;
  robotsCaptures: Capture[];
  lessons: DefenceLesson[];
}

/** Runs one crawl step for `task`. Never throws for network or HTTP trouble; adapters' failures propagate. */
export async function crawlPage(
  deps: CrawlPageDeps,
  task: CrawlTask,
  options: CrawlPageOptions = {},
): Promise<CrawlPageOutcome> {
  const gathered: Gathered = { robotsCaptures: [], lessons: [] };
  const outcome = await stepTask(deps, task, options, gathered);
  if (gathered.capture !== undefined) outcome.capture = gathered.capture;
  if (gathered.robotsCaptures.length > 0) outcome.robotsCaptures = gathered.robotsCaptures;
  if (gathered.lessons.length > 0) outcome.lessons = gathered.lessons;
  return outcome;
}

/** `crawlPage`'s work; the captures and lessons it gathers go into `gathered`. */
async function stepTask(
  deps: CrawlPageDeps,
  task: CrawlTask,
  options: CrawlPageOptions,
  gathered: Gathered,
): Promise<CrawlPageOutcome> {
  const { config } = deps;
  const origin = new URL(task.url).origin;

  // 0. A queued form that a host's duplicate-URL rules merged since it was queued: no request.
  const urlRules = queuedUnderRules(deps, task);
  if (urlRules !== undefined) {
    // queued: its URL is claimed, so only a proven rule may skip it (it could not be queued again)
    const merged = urlRules.rewrite(task.url, { queued: true });
    if (merged !== undefined) return mergeQueued(deps, task, merged);
    const skipped = skippedByRule(urlRules, task);
    if (skipped !== undefined) {
      const record = unfetchedRecord(task, DUPLICATE_URL_RULE_REASON);
      record.detail = skipped;
      return finish(record, undefined, task.cash);
    }
  }

  // 1. robots.txt before any other request to the origin.
  const entry = await deps.robots.get(origin);
  if (entry === undefined || entry.expiresAt <= deps.clock.now()) {
    return fetchRobots(deps, task, origin, entry, gathered.robotsCaptures);
  }
  const rules = robotsRules(entry, config);
  if (entry.status === 'disallow-all') {
    // 5xx or unreachable robots.txt: RFC 9309 says disallow everything, and we try again later.
    return robotsUnavailable(deps, task, entry);
  }
  if (!rules.isAllowed(task.url)) {
    return finish(unfetchedRecord(task, 'robots'), undefined, task.cash);
  }
  const crawlDelayMs = rules.crawlDelayMs;
  const sitemap = task.sitemap;
  const trap = sitemap === undefined ? deps.quality?.checkTask(task) : undefined;
  if (trap !== undefined) return finish(unfetchedRecord(task, trap), undefined, task.cash);
  const probe = deps.quality?.probeFor(origin);
  if (probe !== undefined) {
    if (rules.isAllowed(probe)) return probeSite(deps, probe, entry, crawlDelayMs, gathered.lessons);
    // Not read back by this step: status 0 is no answer to the detector (step-effects.ts). A step
    // of the origin that starts before this one is committed (the embedded crawler's early
    // release) draws another probe path, refused alike (no rule names its random part).
    gathered.lessons.push({ kind: 'probe', probe, answer: { status: 0 } });
  }

  // 2. The page itself.
  const maxBytes = sitemap === undefined ? config.maxBodyBytes : config.maxSitemapBytes;
  const previous = sitemap === undefined ? await deps.revisits?.previous(task.url) : undefined;
  const request: FetchRequest = { url: task.url, maxBytes };
  if (previous !== undefined) {
    const conditional = conditionalHeaders(previous.validators);
    if (Object.keys(conditional).length > 0) request.headers = conditional;
  }
  const response = await deps.fetcher.fetch(request);
  if (!response.ok) return fetchFailed(deps, task, response, crawlDelayMs);
  const feedback: RequestFeedback = { responseMs: response.timings.totalMs, crawlDelayMs };
  const status = response.status;

  if (status === 429 || status === 503) {
    const now = deps.clock.now();
    const wait =
      retryAfterMs(header(response, 'retry-after'), now, config.maxRetryAfterMs) ??
      retryBackoffMs(config, task.attempt + 1, deps.random);
    feedback.blockedUntil = now + wait;
    if (task.attempt < config.maxRetries) {
      return {
        kind: 'retry',
        task: { ...task, attempt: task.attempt + 1 },
        reason: `http-${status}`,
        notBefore: now + wait,
        feedback,
        enqueued: [],
      };
    }
  } else if (status >= 500 && task.attempt < config.maxRetries) {
    const notBefore = deps.clock.now() + retryBackoffMs(config, task.attempt + 1, deps.random);
    feedback.blockedUntil = notBefore;
    return {
      kind: 'retry',
      task: { ...task, attempt: task.attempt + 1 },
      reason: `http-${status}`,
      notBefore,
      feedback,
      enqueued: [],
    };
  }

  if (feedback.blockedUntil === undefined) await deps.hostReleased?.(feedback);
  const hash = response.body.length > 0 ? contentHash(response.body) : null;
  const change = previous === undefined ? undefined : judgeRevisit(previous, status, hash);
  const capture = captureOf(response);
  if (previous !== undefined && change !== undefined) revisitCapture(capture, previous, change);
  // Archived by the runtime, which puts the reference into the record (commit-effects.ts).
  gathered.capture = capture;
  const record = baseRecord(task, response);
  if (change !== undefined) record.change = change;
  record.cash = task.cash;
  if (deps.importanceOf) record.importance = deps.importanceOf(task.cash);
  if (status >= 500 || status === 429) {
    record.reason = 'gave-up';
    record.detail = `HTTP ${status} after ${task.attempt + 1} attempts`;
  }

  if (REDIRECT_STATUSES.has(status)) {
    const { enqueued, cashFlow } = await followRedirect(deps, task, response, record);
    return { kind: 'done', record, feedback, enqueued, cashFlow };
  }

  const body = response.body;
  if (sitemap !== undefined) {
    if (body.length > 0) record.contentHash = contentHash(body);
    const followed = await readSitemapFile(deps, task, sitemap, response, record);
    return done(record, feedback, followed);
  }
  if (task.lastmod !== undefined) record.lastmod = task.lastmod;
  if (previous !== undefined && change === 'not-modified')
    return notModified(deps, task, record, previous, feedback);

  let followed: Followed = { enqueued: [], cashFlow: dropCash(task) };
  if (hash !== null) {
    record.contentHash = hash;
    if (status >= 200 && status < 300) {
      const original = await deps.contentSeen.claim(hash, task.url);
      if (original !== undefined) record.duplicateOf = original;
    }
  }
  const html = isHtml(record.contentType, body);
  if (html && status >= 200 && status < 300) {
    const decoded = decodeBody(body, record.contentType);
    const facts = extractPage(decoded.text, task.url, {
      text: options.wantText === true || (deps.quality?.wantsText(task.url) ?? false),
      agent: config.robotsAgent,
      maxLinks: config.maxLinksPerPage,
      maxUrlLength: config.maxUrlLength,
    });
    const xRobots = parseXRobotsTag(headers(response, 'x-robots-tag'), config.robotsAgent);
    record.title = facts.title;
    record.outLinks = facts.linkCount;
    countDropped(record, 'links', facts.linksDropped);
    countDropped(record, 'base', facts.baseIgnored ? 1 : 0);
    if (facts.robots.noindex || xRobots.noindex) record.noindex = true;
    if (Object.keys(config.extract).length > 0) {
      // linkedom builds a DOM (~10x the cost of link extraction): loaded only for crawls that ask.
      const { selectFields } = await import('../html/select.ts');
      const selected = selectFields(decoded.text, extractSelectors(config.extract), {
        maxValues: config.maxExtractValues,
        maxChars: config.maxExtractChars,
      });
      record.extracted = shapeExtracted(config.extract, selected.fields);
      countDropped(record, 'extractValues', selected.droppedValues);
      countDropped(record, 'extractChars', selected.droppedChars);
      countDropped(record, 'extractNesting', selected.droppedNesting);
    }
    const genuine = (await deps.quality?.assess(task, record, facts.text)) ?? true;
    // Before the links: a rule this page proves already rewrites them.
    const declared = declaredCanonical(deps, task, facts);
    const readmit = observePage(deps, task, record, genuine, declared);
    const canonical = declared?.url === task.url ? undefined : declared?.url;
    // An exact duplicate's links were already followed from the original; a soft 404 has none.
    if (record.duplicateOf === undefined && genuine) {
      const nofollowPage = config.respectNofollow && (facts.robots.nofollow || xRobots.nofollow);
      followed = await followLinks(
        deps,
        task,
        facts,
        nofollowPage,
        record.nearDuplicateOf,
        record.simhash,
        rootSitemaps(deps, task, origin, entry),
      );
      countDropped(record, 'longUrls', followed.longUrls ?? 0);
      if (canonical !== undefined && knownBefore(followed, canonical))
        readmit.push(...readmitted(deps.urlRules?.observeDeclared(task.url, canonical)));
    }
    followed = await withReadmitted(deps, task, readmit, followed);
    options.onPage?.({ task, record, body, html: decoded.text, text: facts.text });
  } else {
    followed = await withReadmitted(deps, task, observePage(deps, task, record, true), followed);
    options.onPage?.({ task, record, body });
  }
  return done(record, feedback, followed);
}

/** A finished URL's outcome: its record, and what its links (or a sitemap's entries) gave. */
function done(record: PageRecord, feedback: RequestFeedback, followed: Followed): CrawlPageOutcome {
  const outcome: CrawlPageOutcome = {
    kind: 'done',
    record,
    feedback,
    enqueued: followed.enqueued,
    cashFlow: followed.cashFlow,
  };
  if (followed.links !== undefined) outcome.links = followed.links;
  return outcome;
}

/**
 * A 304 to a recrawl's conditional GET: the archive's copy is current. The record keeps what the
 * last fetch found (hash, type, title, validators unless the 304 sent new ones), and the links of
 * the last fetch are followed again: a page reachable only through unchanged pages is reached.
 */
async function notModified(
  deps: FollowDeps & Pick<DefenceDeps, 'contentSeen'>,
  task: CrawlTask,
  record: PageRecord,
  previous: PreviousFetch,
  feedback: RequestFeedback,
): Promise<CrawlPageOutcome> {
  record.contentHash = previous.contentHash;
  record.contentType ??= previous.contentType;
  record.kind = mediaKind(mediaType(record.contentType), record.kind);
  record.title = previous.title;
  if (record.etag === undefined && previous.validators.etag !== undefined)
    record.etag = previous.validators.etag;
  if (record.lastModified === undefined && previous.validators.lastModified !== undefined) {
    record.lastModified = previous.validators.lastModified;
  }
  if (previous.contentHash !== null) await deps.contentSeen.claim(previous.contentHash, task.url);
  let followed: Followed = { enqueued: [], cashFlow: dropCash(task) };
  const links = previous.links ?? [];
  if (links.length > 0) {
    record.outLinks = links.length;
    const carried = links.map((link) => ({
      href: link.linkedAs ?? link.url,
      kind: link.kind,
      tag: 'a',
      nofollow: link.skipped === 'nofollow',
    }));
    followed = await followLinks(deps, task, { links: carried, base: task.url }, false, undefined);
  }
  observePage(deps, task, record, true);
  return done(record, feedback, followed);
}

/**
 * Turns a revisit's capture into a WARC revisit record when the archive's copy still holds its
 * payload: a 304 (`server-not-modified`), or the same body again (`identical-payload-digest`).
 */
function revisitCapture(capture: Capture, previous: PreviousFetch, change: RevisitVerdict): void {
  if (previous.copy === undefined) return;
  const refers = { refersToTargetUri: previous.url, refersToDate: previous.copy.date };
  if (change === 'not-modified') {
    capture.revisit = { profile: 'server-not-modified', ...refers };
    if (previous.copy.payloadDigest !== undefined)
      capture.revisit.payloadDigest = previous.copy.payloadDigest;
  } else if (change === 'unchanged' && capture.response.truncated === undefined) {
    capture.revisit = { profile: 'identical-payload-digest', ...refers };
  }
}

/** Builds the tasks for the seeds of a crawl (depth 0, equal shares of the initial cash). */
export function seedTasks(
  crawlId: string,
  seeds: readonly string[],
  canonicalizer: UrlCanonicalizer,
): { tasks: CrawlTask[]; problems: string[] } {
  const tasks: CrawlTask[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const seed of seeds) {
    const canonical = canonicalizer.canonicalize(seed);
    if (!canonical.ok) {
      problems.push(`${seed}: ${canonical.message}`);
      continue;
    }
    if (seen.has(canonical.url)) continue;
    seen.add(canonical.url);
    tasks.push({
      crawlId,
      url: canonical.url,
      fp: fingerprint(canonical.url),
      host: canonical.host,
      depth: 0,
      redirects: 0,
      attempt: 0,
      cash: 0,
    });
  }
  for (const task of tasks) task.cash = 1 / tasks.length;
  return { tasks, problems };
}

/** The owner recorded for seeds in the SeenStore (they have no parent page). */
export const SEED_OWNER: Fingerprint = '0000000000000000';

// ---------------------------------------------------------------------------------------------

/**
 * Fetches the origin's robots.txt; the entry comes back as the outcome's `storeRobots`, after
 * the site's sitemap files it queued (`enqueued`): a runtime that stores the entry only once
 * they are sent reads robots.txt again after a crash in between. Each response received goes
 * into `captures`, for a runtime that archives robots.txt.
 */
async function fetchRobots(
  deps: StepBasics & Pick<FetchDeps, 'fetcher' | 'random'> & RobotsDeps & SitemapQueueDeps,
  task: CrawlTask,
  origin: string,
  previous: RobotsEntry | undefined,
  captures: Capture[],
): Promise<CrawlPageOutcome> {
  const { config } = deps;
  let url = robotsUrlFor(task.url);
  let entry: RobotsEntry | undefined;
  let failure: FetchFailure | undefined;
  let responseMs = 0;
  for (let hop = 0; entry === undefined; hop++) {
    const response = await deps.fetcher.fetch({ url, maxBytes: config.maxRobotsBytes });
    responseMs += response.timings.totalMs;
    const now = deps.clock.now();
    if (response.ok) captures.push(captureOf(response));
    if (!response.ok) {
      failure = response;
      entry = robotsEntryFromResponse({ error: response.error }, now, config);
      // Only the origin's own address blocks its pages; a robots.txt redirected to a blocked
      // address is merely unreachable.
      if (hop > 0 && response.error === 'blocked-address') entry.detail = `blocked-address at ${url}`;
      if (hop === 0 && response.error !== 'blocked-address' && neverAnswered(previous)) {
        // No answer from this origin yet (a closed port, a wrong name, a server not started): retry
        // as a failed page would, in seconds, as Scrapy and Crawlee do; robotsErrorTtlMs (minutes)
        // is for an origin that answered before and is down for a while.
        entry.neverAnswered = true;
        entry.expiresAt = Math.min(
          entry.expiresAt,
          now + retryBackoffMs(config, task.attempt + 1, deps.random),
        );
      }
      break;
    }
    const location = header(response, 'location');
    if (REDIRECT_STATUSES.has(response.status) && location !== undefined) {
      if (hop >= MAX_ROBOTS_REDIRECTS) {
        entry = robotsEntryFromResponse({ error: 'too-many-redirects' }, now, config);
        break;
      }
      try {
        url = new URL(location, url).href;
      } catch {
        entry = robotsEntryFromResponse({ error: 'protocol' }, now, config);
      }
      continue;
    }
    // RFC 9309 §2.3: robots.txt is UTF-8; the result applies to the origin first asked for.
    const outcome: RobotsFetchOutcome = { status: response.status, body: decodeRobotsBody(response.body) };
    if (response.truncated !== undefined) outcome.truncated = response.truncated;
    entry = robotsEntryFromResponse(outcome, now, config);
  }
  // The site's sitemaps, once (a robots.txt read again a day later names files already known),
  // and queued before the entry is stored (see storeRobots).
  let enqueued: CrawlTask[] = [];
  if (previous?.sitemapsQueued === true) entry.sitemapsQueued = true;
  else if (deps.config.sitemaps && entry.status !== 'disallow-all') {
    enqueued = await queueSitemaps(deps, task, origin, entry);
    entry.sitemapsQueued = true;
  }
  const storeRobots = { origin, entry };
  const feedback: RequestFeedback = { responseMs };
  if (entry.status === 'disallow-all') {
    // Counted as a failed attempt of this task now rather than on its next step: when the host's
    // gap outlasts robotsErrorTtlMs, the next step would find the entry expired and refetch
    // robots.txt without ever counting an attempt, forever.
    const outcome = robotsUnavailable(
      deps,
      task,
      entry,
      entry.detail === 'blocked-address' ? undefined : feedback,
      failure,
    );
    return { ...outcome, storeRobots };
  }
  if (entry.status === 'rules') feedback.crawlDelayMs = robotsRules(entry, config).crawlDelayMs;
  return { kind: 'robots', feedback, entry, enqueued, storeRobots };
}

/**
 * A task whose origin's robots.txt is unreachable: retried when the entry expires, then given up as
 * 'robots-unreachable'. An origin whose address the SSRF guard refuses is 'blocked-address' at once:
 * no retry can succeed, and nothing was sent.
 */
function robotsUnavailable(
  deps: RetryDeps,
  task: CrawlTask,
  entry: RobotsEntry,
  feedback?: RequestFeedback,
  failure?: FetchFailure,
): CrawlPageOutcome {
  if (entry.detail === 'blocked-address') {
    const record = unfetchedRecord(task, 'blocked-address');
    record.detail = failure?.message ?? 'robots.txt: blocked-address';
    return finish(record, undefined, task.cash);
  }
  // The fetch error's own words ("connect ECONNREFUSED 127.0.0.1:8080") when this step fetched it.
  const detail = `robots.txt: ${failure === undefined ? entry.detail : `${failure.error}: ${failure.message}`}`;
  return retryOrGiveUp(deps, task, 'robots-unreachable', detail, entry.expiresAt, feedback);
}

/** The origin has given no HTTP answer to a robots.txt request yet (none asked, or only failures). */
function neverAnswered(previous: RobotsEntry | undefined): boolean {
  return previous === undefined || previous.neverAnswered === true;
}

function robotsRules(entry: RobotsEntry, config: CrawlConfig): ParsedRobots {
  return rulesFromEntry(entry, config.robotsAgent, config.maxRobotsBytes);
}

function fetchFailed(
  deps: StepBasics & Pick<FetchDeps, 'random'>,
  task: CrawlTask,
  failure: FetchFailure,
  crawlDelayMs: number | undefined,
): CrawlPageOutcome {
  const { config } = deps;
  const feedback: RequestFeedback = { responseMs: failure.timings.totalMs, crawlDelayMs };
  if (RETRIED_FETCH_ERRORS.has(failure.error) && task.attempt < config.maxRetries) {
    const notBefore = deps.clock.now() + retryBackoffMs(config, task.attempt + 1, deps.random);
    return {
      kind: 'retry',
      task: { ...task, attempt: task.attempt + 1 },
      reason: failure.error,
      detail: failure.message,
      notBefore,
      feedback: { ...feedback, blockedUntil: notBefore },
      enqueued: [],
    };
  }
  const record = unfetchedRecord(task, failure.error);
  record.detail = failure.message;
  record.fetchedAt = new Date(failure.timings.startedAt).toISOString();
  record.durationMs = Math.round(failure.timings.totalMs);
  return finish(record, feedback, task.cash);
}

/** Finishes a URL that ends without a page to follow; its cash goes to the lambda page. */
function finish(record: PageRecord, feedback?: RequestFeedback, cash = 0): CrawlPageOutcome {
  const cashFlow: CashFlow = { cash, toLambda: cash, credits: [] };
  return feedback === undefined
    ? { kind: 'done', record, enqueued: [], cashFlow }
    : { kind: 'done', record, feedback, enqueued: [], cashFlow };
}

/** Adds `n` to one of the record's dropped counts (the object exists only when something was dropped). */
function countDropped(record: PageRecord, key: keyof DroppedCounts, n: number): void {
  if (n <= 0) return;
  record.dropped ??= {};
  record.dropped[key] = (record.dropped[key] ?? 0) + n;
}

/** A fetched page whose links are not followed: all its cash goes to the lambda page. */
function dropCash(task: CrawlTask): CashFlow {
  return { cash: task.cash, toLambda: task.cash, credits: [] };
}

/**
 * Asks the site once for a URL that cannot exist (the soft-404 probe); how it answered is a
 * lesson for the defences (`lessons`). Like robots.txt, it is the step's one request and the task
 * runs again after the gap.
 */
async function probeSite(
  deps: Pick<StepBasics, 'config'> & Pick<FetchDeps, 'fetcher'> & Pick<AdmissionDeps, 'canonicalizer'>,
  probe: string,
  entry: RobotsEntry,
  crawlDelayMs: number | undefined,
  lessons: DefenceLesson[],
): Promise<CrawlPageOutcome> {
  const response = await deps.fetcher.fetch({ url: probe, maxBytes: deps.config.maxBodyBytes });
  const feedback: RequestFeedback = { responseMs: response.timings.totalMs, crawlDelayMs };
  if (!response.ok) {
    lessons.push({ kind: 'probe', probe, answer: { status: 0 } });
  } else {
    const location = header(response, 'location');
    const target = location === undefined ? undefined : deps.canonicalizer.canonicalize(location, probe);
    const contentType = header(response, 'content-type') ?? null;
    let text: string | undefined;
    if (response.status >= 200 && response.status < 300 && isHtml(contentType, response.body)) {
      text = extractPage(decodeBody(response.body, contentType).text, probe, { text: true }).text;
    }
    lessons.push({
      kind: 'probe',
      probe,
      answer: {
        status: response.status,
        ...(text === undefined ? {} : { text }),
        ...(target?.ok ? { location: target.url } : {}),
      },
    });
  }
  return { kind: 'robots', feedback, entry, probe, enqueued: [] };
}

function retryOrGiveUp(
  deps: RetryDeps,
  task: CrawlTask,
  reason: FinishReason,
  detail: string,
  notBefore: number,
  feedback?: RequestFeedback,
): CrawlPageOutcome {
  if (task.attempt < deps.config.maxRetries) {
    const next = { ...task, attempt: task.attempt + 1 };
    return feedback === undefined
      ? { kind: 'retry', task: next, reason, detail, notBefore, enqueued: [] }
      : { kind: 'retry', task: next, reason, detail, notBefore, feedback, enqueued: [] };
  }
  const record = unfetchedRecord(task, reason);
  record.detail = detail;
  return finish(record, feedback, task.cash);
}

/**
 * Follows a redirect as a new URL (its own host's robots.txt and politeness); the target inherits
 * the cash. The URLs of a rule the redirect blocked are queued again.
 */
async function followRedirect(
  deps: FollowDeps,
  task: CrawlTask,
  response: FetchResponse,
  record: PageRecord,
): Promise<Followed> {
  const readmit: Readmitted[] = [];
  const followed = await followRedirectTarget(deps, task, response, record, readmit);
  return withReadmitted(deps, task, readmit, followed);
}

/** `followRedirect`'s work; `readmit` receives the URLs of a rule the redirect blocked. */
async function followRedirectTarget(
  deps: FollowDeps,
  task: CrawlTask,
  response: FetchResponse,
  record: PageRecord,
  readmit: Readmitted[],
): Promise<Followed> {
  const none: Followed = { enqueued: [], cashFlow: dropCash(task) };
  const location = header(response, 'location');
  if (location === undefined) {
    record.detail = 'redirect without Location';
    return none;
  }
  const target = deps.canonicalizer.canonicalize(location, task.url);
  if (!target.ok) {
    record.detail = `bad Location ${JSON.stringify(location)}: ${target.message}`;
    return none;
  }
  record.redirectTo = target.url;
  record.finalUrl = target.url;
  // The server says both name one page: evidence for the host's rules (never rewritten: the
  // server named the target's form). A sitemap's redirect says nothing about the site's pages.
  if (task.sitemap === undefined)
    readmit.push(...readmitted(deps.urlRules?.observeRedirect(task.url, target.url)));
  if (task.redirects + 1 > deps.config.maxRedirects) {
    record.reason = 'too-many-redirects';
    return none;
  }
  if (deps.quality?.isSoft404Redirect(task, response.status, target.url)) {
    record.reason = 'soft-404';
    return none;
  }
  // A seed that moves (example.com -> www.example.com) takes the crawl's scope with it.
  if (task.depth === 0) deps.scope.allowHost(target.host);
  const skip = deps.scope.check(target.url, target.host, task.depth);
  if (skip !== undefined) {
    record.reason = skip === 'scope' ? 'redirect-out-of-scope' : skip;
    return none;
  }
  const { share, toLambda } = splitCash(task.cash, 1, deps.config.aopicTax);
  // The target is a new URL at the same depth, one hop further; the one admission of the link path.
  const fields: Admission['fields'] = { redirects: task.redirects + 1 };
  // A moved sitemap is still a sitemap, with the scope and budget it had.
  if (task.sitemap !== undefined) fields.sitemap = { ...task.sitemap, url: target.url };
  if (task.lastmod !== undefined) fields.lastmod = task.lastmod;
  const admission: Admission = {
    url: target.url,
    host: target.host,
    fp: fingerprint(target.url),
    cash: share,
    fields,
  };
  const { enqueued, credits } = await admitUrls(deps, task, task.depth, [admission]);
  if (enqueued.length === 0) record.detail = 'redirect target already seen';
  return { enqueued, cashFlow: { cash: task.cash, toLambda, credits } };
}

/**
 * The duplicate-URL rules a queued task answers to (a rule that became active since it was
 * queued may merge or skip it): none for a redirect's target (the server named that form) nor a
 * sitemap file.
 */
function queuedUnderRules(deps: Pick<DefenceDeps, 'urlRules'>, task: CrawlTask): UrlRuleChecks | undefined {
  return task.redirects > 0 || task.sitemap !== undefined ? undefined : deps.urlRules;
}

/**
 * Why the host's rules skip a queued task without passing it on: its page was already fetched
 * under another form (`heldAs`), or its URL is in an alias namespace (`aliasNamespace`).
 */
function skippedByRule(rules: UrlRuleChecks, task: CrawlTask): string | undefined {
  const held = rules.heldAs(task.url, { queued: true });
  if (held !== undefined) return `already fetched as ${held}, which the host's rules merge into this URL`;
  const alias = rules.aliasNamespace(task.url, { queued: true });
  return alias === undefined ? undefined : `an alias of a page the site names otherwise (${ruleKey(alias)})`;
}

/**
 * Skips a queued task that a rule merges (`duplicate-url-rule`, no request) and passes it on to
 * the URL it is merged into: queued with the task's cash when new, credited when known.
 */
async function mergeQueued(
  deps: Pick<AdmissionDeps, 'scope' | 'seen'>,
  task: CrawlTask,
  merged: RuleRewrite,
): Promise<CrawlPageOutcome> {
  const record = unfetchedRecord(task, DUPLICATE_URL_RULE_REASON);
  record.detail = `merged into ${merged.url} by ${merged.rules.map(ruleKey).join(', ')}`;
  const skip = deps.scope.check(merged.url, task.host, task.depth);
  if (skip !== undefined) {
    record.detail += ` (${skip})`;
    return finish(record, undefined, task.cash);
  }
  const admission: Admission = {
    url: merged.url,
    host: task.host,
    fp: fingerprint(merged.url),
    cash: task.cash,
  };
  const fields: Admission['fields'] = {};
  if (task.generated) fields.generated = true;
  if (task.lastmod !== undefined) fields.lastmod = task.lastmod;
  admission.fields = fields;
  const { enqueued, credits } = await admitUrls(deps, task, task.depth, [admission]);
  return { kind: 'done', record, enqueued, cashFlow: { cash: task.cash, toLambda: 0, credits } };
}

/** A whole 2xx page (not cut at the cap, not skipped): what the duplicate-URL rules learn from. */
export function isWholePage(record: PageRecord): boolean {
  return (
    record.status !== null &&
    record.status >= 200 &&
    record.status < 300 &&
    record.truncated === undefined &&
    record.reason === undefined
  );
}

/**
 * Tells the host's rules what a fetched URL gave: its content hash when it is a genuine, whole
 * 2xx page (a miss otherwise: another status, a soft 404, a body cut at the cap).
 */
function observePage(
  deps: Pick<DefenceDeps, 'urlRules'>,
  task: CrawlTask,
  record: PageRecord,
  genuine: boolean,
  canonical?: DeclaredCanonical,
): Readmitted[] {
  const rules = deps.urlRules;
  if (rules === undefined || record.status === null) return [];
  const page = genuine && isWholePage(record);
  const observation: Parameters<UrlRuleChecks['observePage']>[0] = {
    url: task.url,
    contentHash: page ? record.contentHash : null,
  };
  if (page && record.duplicateOf !== undefined) observation.duplicateOf = record.duplicateOf;
  if (page && canonical !== undefined) {
    observation.canonical = canonical.url;
    if (canonical.fixed) observation.canonicalFixed = true;
  }
  // with what rules blocked elsewhere (another container's, merged since) gave back
  return readmitted([...rules.observePage(observation), ...rules.takeGivenBack(new URL(task.url).origin)]);
}

/** `followed` with the tasks `readmitUrls` queued added. */
async function withReadmitted(
  deps: ReadmitDeps,
  task: CrawlTask,
  urls: readonly Readmitted[],
  followed: Followed,
): Promise<Followed> {
  if (urls.length === 0) return followed;
  const back = await readmitUrls(deps, task, urls);
  return { ...followed, enqueued: [...followed.enqueued, ...back.enqueued] };
}

/**
 * Whether the page's links found `url` already claimed (credited, not queued): the crawl had
 * reached it before this page, through other pages' links.
 */
function knownBefore(followed: Followed, url: string): boolean {
  const fp = fingerprint(url);
  return followed.cashFlow?.credits.some((credit) => credit.fp === fp) ?? false;
}

/** A page's `<link rel=canonical>`: the URL (canonicalized), and whether its href is fixed. */
interface DeclaredCanonical {
  url: string;
  /** Absolute or from the root: the same bytes under any URL of the origin name this URL. */
  fixed: boolean;
}

/** The URL of the page's host its `<link rel=canonical>` names, if any. */
function declaredCanonical(
  deps: Pick<AdmissionDeps, 'canonicalizer'> & Pick<DefenceDeps, 'urlRules'>,
  task: CrawlTask,
  facts: PageFacts,
): DeclaredCanonical | undefined {
  if (deps.urlRules === undefined || facts.canonical === null) return undefined;
  const declared = deps.canonicalizer.canonicalize(facts.canonical, facts.base);
  if (!declared.ok || declared.host !== task.host) return undefined;
  // An absolute href, or one from the root, names this URL from any page of the origin with
  // these bytes; a relative one names another URL from another path.
  const href = facts.canonical.trim();
  const fixed = /^([a-z][a-z0-9+.-]*:|\/)/i.test(href);
  return { url: declared.url, fixed };
}

/**
 * Reads the page's out-links (returned as `links`), claims the new in-scope ones and returns them to queue. The page's cash
 * goes in equal shares to every in-scope out-link (new ones carry it in their task, known ones
 * are listed for the runtime to credit), less the tax; a site's root page also links its guessed
 * sitemap (`sitemaps`), which takes `sitemapShare` of a link's share and is queued after the links.
 */
async function followLinks(
  deps: FollowDeps,
  task: CrawlTask,
  facts: Pick<PageFacts, 'links' | 'base'>,
  nofollowPage: boolean,
  nearDuplicateOf: string | undefined,
  simhash?: string,
  sitemaps: readonly SitemapFetch[] = [],
): Promise<Followed> {
  const { config } = deps;
  const follow = new Set<LinkKind>(config.follow);
  const outLinks: OutLink[] = [];
  const inPage = new Set<string>();
  const candidates: { url: string; host: string; fp: Fingerprint }[] = [];
  const depth = task.depth + 1;
  let longUrls = 0;
  for (const link of facts.links) {
    const canonical = deps.canonicalizer.canonicalize(link.href, facts.base);
    if (!canonical.ok) continue;
    // The host's duplicate-URL rules name the form the crawl knows the page by.
    const { url, linkedAs } = knownForm(deps.urlRules, canonical);
    if (inPage.has(url)) continue;
    if (url.length > config.maxUrlLength) {
      // Counted, not kept: links.jsonl and memory hold URLs of at most maxUrlLength.
      longUrls += 1;
      continue;
    }
    inPage.add(url);
    const out: OutLink = { url, kind: link.kind };
    if (linkedAs !== undefined) out.linkedAs = linkedAs;
    if (config.respectNofollow && (nofollowPage || link.nofollow)) out.skipped = 'nofollow';
    else if (!follow.has(link.kind)) out.skipped = 'kind';
    else {
      const skip = linkSkip(deps, task, url, canonical.host, depth, nearDuplicateOf);
      if (skip !== undefined) out.skipped = skip;
      else candidates.push({ url, host: canonical.host, fp: fingerprint(url) });
    }
    outLinks.push(out);
  }
  const split = rootCashSplit(
    task.cash,
    candidates.length,
    sitemaps.length,
    config.aopicTax,
    config.sitemapShare,
  );
  const share = split.linkShare;
  const cashFlow: CashFlow = { cash: task.cash, toLambda: split.toLambda, credits: [] };
  // Links to the page's own path pattern on its own host get a tenth of a share (see
  // SELF_LINK_SHARE); a home page linking other sites' home pages is not a generator.
  const shape = pathShape(task.url);
  const admissions = candidates.map((c): Admission => {
    const admission: Admission = { ...c, cash: share };
    const fields: Admission['fields'] = {};
    if (c.host === task.host && pathShape(c.url) === shape) {
      cashFlow.toLambda += share * (1 - SELF_LINK_SHARE);
      admission.cash = share * SELF_LINK_SHARE;
      fields.generated = true;
    }
    const parentSimhash = deps.quality?.parentSimhashFor(c.url, task.url, simhash);
    if (parentSimhash !== undefined) fields.parentSimhash = parentSimhash;
    if (fields.generated || parentSimhash !== undefined) admission.fields = fields;
    return admission;
  });
  const { enqueued, credits } = await admitUrls(deps, task, depth, admissions);
  for (const credit of credits) cashFlow.credits.push(credit);
  // The guessed sitemap after the links: in the cloud's FIFO it comes after the site's first pages.
  const guessed = await admitRootSitemaps(deps, task, sitemaps, split.sitemapShare);
  cashFlow.credits.push(...guessed.credits);
  return {
    enqueued: [...enqueued, ...guessed.enqueued],
    cashFlow,
    longUrls,
    links: { from: task.url, links: outLinks },
  };
}

function baseRecord(task: CrawlTask, response: FetchResponse): PageRecord {
  const contentType = header(response, 'content-type') ?? null;
  const kind: LinkKind = classifyLink('a', task.url);
  const record: PageRecord = {
    url: task.url,
    finalUrl: response.url,
    status: response.status,
    contentType,
    kind: mediaKind(mediaType(contentType), kind),
    depth: task.depth,
    bytes: response.body.length,
    fetchedAt: new Date(response.timings.startedAt).toISOString(),
    durationMs: Math.round(response.timings.totalMs),
    title: null,
    contentHash: null,
    outLinks: 0,
  };
  if (response.truncated !== undefined) record.truncated = response.truncated;
  if (response.truncatedDetail !== undefined) record.detail = response.truncatedDetail;
  const { etag, lastModified } = validatorsOf(response.headers);
  if (etag !== undefined) record.etag = etag;
  if (lastModified !== undefined) record.lastModified = lastModified;
  return record;
}

/** The response's media type decides the kind when it is known; the URL's extension otherwise. */
function mediaKind(media: string | null, fallback: LinkKind): LinkKind {
  if (media === null) return fallback;
  if (media === 'text/html' || media === 'application/xhtml+xml') return 'page';
  if (media.startsWith('image/')) return 'image';
  if (
    media === 'application/pdf' ||
    media === 'text/plain' ||
    media === 'text/csv' ||
    media.startsWith('application/vnd.') ||
    media === 'application/msword' ||
    media === 'application/rtf' ||
    media === 'application/epub+zip'
  ) {
    return 'document';
  }
  return 'other';
}

function captureOf(response: FetchResponse): Capture {
  const capture: Capture = {
    url: response.url,
    fetchedAt: new Date(response.timings.startedAt).toISOString(),
    request: { ...response.request, httpVersion: response.httpVersion },
    response: {
      status: response.status,
      statusText: response.statusText,
      httpVersion: response.httpVersion,
      headers: response.headers,
      body: response.body,
    },
  };
  if (response.rawHeaders !== undefined) capture.response.rawHeaders = response.rawHeaders;
  if (response.remoteAddress !== undefined) capture.remoteAddress = response.remoteAddress;
  if (response.truncated !== undefined) capture.response.truncated = response.truncated;
  return capture;
}

function header(response: FetchResponse, name: string): string | undefined {
  for (const [key, value] of response.headers) if (key === name) return value;
  return undefined;
}

function headers(response: FetchResponse, name: string): string[] {
  const values: string[] = [];
  for (const [key, value] of response.headers) if (key === name) values.push(value);
  return values;
}
