/**
 * The HTTP API as a Hono app, independent of Lambda (tests call `app.request()`):
 *
 *   POST   /crawls                 body = crawl config (the CLI's schema)  -> 201 { id }
 *   GET    /crawls                 ?limit=1..100&cursor=   every crawl, newest first
 *   GET    /crawls/{id}            status, config, counters, URL-seen hit rate
 *   GET    /crawls/{id}/pages      ?limit=1..1000&cursor=   page records (from the S3 index), where
 *                                                            each body is stored
 *   GET    /crawls/{id}/objects    ?kind=warc|index|links|trace&limit=1..1000&cursor=   the
 *                                  archive's objects with sizes and presigned GET URLs (downloads)
 *   GET    /crawls/{id}/dataset    ?limit=1..10000&cursor=  the `extract` rows as JSON Lines; the
 *                                                            next answer in `Link: <...>; rel="next"`
 *   GET    /crawls/{id}/snapshot   the dashboard's view of the crawl (bounded reads)
 *   DELETE /crawls/{id}            cancel: queued URLs are dropped without fetching
 *   POST   /crawls/{id}/recrawl    body = settings of the round (recrawlSchedule, recrawlBudget,
 *                                  ...; may be empty)  -> 201 { id, recrawl }: the next round of
 *                                  the crawl's archive, a crawl of its own (docs/recrawl.md)
 *   POST   /crawls/{id}/schedule   body = { every: "7 days" | rate(...) | cron(...), settings of the
 *                                  rounds }  -> 201 (200 replaced) the archive's recurring recrawl
 *   GET    /crawls/{id}/schedule   the schedule, its next run and what its runs did (404: none)
 *   DELETE /crawls/{id}/schedule   removes it (404: none)
 *
 * Errors are JSON: `{ "error": "...", "problems": [...] }` (problems only for 400). An AWS call the
 * API's own role may not make is a 500 with `code: "access-denied"` and AWS's message, which
 * names the action (a stack whose grants do not match its code).
 */
import { type Context, Hono } from 'hono';
import { sortRuleRecords } from '../../../core/quality/duplicate-url-rules.ts';
import { METRICS } from '../../metrics.ts';
import type { ArchiveStore, HostRulesStore, ObjectLinks, ObjectReader } from '../../ports/cloud-ports.ts';
import { crawlProgress, type ProgressTable } from '../../use-cases/crawl-progress.ts';
import { cloudCrawlSnapshot } from '../../use-cases/crawl-snapshot.ts';
import {
  ARCHIVE_KINDS,
  type ArchiveKind,
  DOWNLOAD_URL_SECONDS,
  decodeArchiveCursor,
  encodeArchiveCursor,
  listArchive,
} from '../../use-cases/list-archive.ts';
import { listDataset } from '../../use-cases/list-dataset.ts';
import {
  decodePageCursor,
  encodePageCursor,
  InvalidCursorError,
  listPages,
  type PageCursor,
} from '../../use-cases/list-pages.ts';
import {
  type RecrawlScheduleDeps,
  removeRecrawlSchedule,
  scheduleRecrawl,
  showRecrawlSchedule,
} from '../../use-cases/recrawl-schedule.ts';
import { type StartCrawlDeps, startCrawl } from '../../use-cases/start-crawl.ts';
import { type RecrawlRefusal, startRecrawl } from '../../use-cases/start-recrawl.ts';

/** What the API touches. */
export interface ApiDeps extends StartCrawlDeps {
  /** The archives' per-URL state (recrawl rounds); absent: POST /crawls/{id}/recrawl answers 501. */
  archives?: ArchiveStore;
  /** Recurring recrawls (EventBridge Scheduler); absent: /crawls/{id}/schedule answers 501. */
  recrawlSchedules?: Pick<RecrawlScheduleDeps, 'schedules' | 'runs' | 'minIntervalMinutes'>;
  /** Crawls (start, list, show, cancel), their progress and host table, their rules (rules.json). */
  table: ProgressTable & HostRulesStore;
  /** The page bucket: the crawl's index objects. */
  pages: ObjectReader;
  /** The page bucket's objects as download links (listings and presigned GETs). */
  archive: ObjectLinks;
  log?: (line: string) => void;
  /**
   * Publishes a count of a custom metric (functions/cloud/metrics.ts). A 500 is counted here, so the
   * alarm sees what Hono's error handler turns into a normal response.
   */
  metric?: (name: string, value: number) => void;
}

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_PAGE_LIMIT = 100;
const MAX_PAGE_LIMIT = 1000;
const MAX_CRAWL_LIMIT = 100;
const DEFAULT_DATASET_LIMIT = 1000;
const MAX_DATASET_LIMIT = 10_000;

/** Crawl ids are UUIDs (`startCrawl`): anything else names no crawl, and is never sent to a store (a 3,000-character id is over DynamoDB's key size). */
const CRAWL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function limitOf(text: string | undefined, fallback: number, max: number): number | string {
  const limit = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    return `limit: expected an integer from 1 to ${max}, got ${JSON.stringify(text)}`;
  }
  return limit;
}

/** What the AWS SDK names an authorization failure (S3 and SQS, DynamoDB and others). */
const ACCESS_DENIED = new Set(['AccessDenied', 'AccessDeniedException']);

/** Builds the app. */
export function createApiApp(deps: ApiDeps): Hono {
  const app = new Hono();
  const log = deps.log ?? (() => {});

  /** The request's JSON body (`empty` when there is none), or the answer: 413 over the limit, 400 not JSON. */
  async function jsonBody(c: Context, empty?: unknown): Promise<{ value: unknown } | Response> {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > MAX_BODY_BYTES) return c.json({ error: `body over ${MAX_BODY_BYTES} bytes` }, 413);
    const text = await c.req.text();
    if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) {
      return c.json({ error: `body over ${MAX_BODY_BYTES} bytes` }, 413);
    }
    if (empty !== undefined && text.trim() === '') return { value: empty };
    try {
      return { value: JSON.parse(text) };
    } catch (error) {
      return c.json({ error: 'body is not valid JSON', problems: [(error as Error).message] }, 400);
    }
  }

  app.post('/crawls', async (c) => {
    const body = await jsonBody(c);
    if (body instanceof Response) return body;
    const outcome = await startCrawl(deps, body.value);
    if (outcome.kind === 'invalid') {
      return c.json({ error: 'invalid crawl configuration', problems: outcome.problems }, 400);
    }
    log(`crawl ${outcome.id} started with ${outcome.seeds} seeds`);
    c.header('location', `/crawls/${outcome.id}`);
    return c.json({ id: outcome.id }, 201);
  });

  app.get('/crawls', async (c) => {
    const limit = limitOf(c.req.query('limit'), 20, MAX_CRAWL_LIMIT);
    const cursorText = c.req.query('cursor');
    const after =
      cursorText === undefined ? undefined : Buffer.from(cursorText, 'base64url').toString('utf8');
    const problems: string[] = typeof limit === 'string' ? [limit] : [];
    const listed = problems.length > 0 ? undefined : await deps.table.listCrawls(limit as number, after);
    if (listed === undefined) problems.push('cursor: not a cursor this API returned');
    if (problems.length > 0 || listed === undefined) return c.json({ error: 'invalid query', problems }, 400);
    return c.json({
      crawls: listed.crawls.map((crawl) => ({
        id: crawl.id,
        status: crawl.status,
        createdAt: crawl.createdAt,
        ...(crawl.finishedAt === undefined ? {} : { finishedAt: crawl.finishedAt }),
        seeds: crawl.config.seeds,
      })),
      ...(listed.next === undefined
        ? {}
        : { cursor: Buffer.from(listed.next, 'utf8').toString('base64url') }),
    });
  });

  // Any other id names no crawl: 404 before a store sees it.
  app.use('/crawls/:id/*', async (c, next) => {
    if (!CRAWL_ID.test(c.req.param('id') ?? '')) return c.json({ error: 'no such crawl' }, 404);
    await next();
  });
  app.use('/crawls/:id', async (c, next) => {
    if (!CRAWL_ID.test(c.req.param('id') ?? '')) return c.json({ error: 'no such crawl' }, 404);
    await next();
  });

  app.get('/crawls/:id', async (c) => {
    const progress = await crawlProgress(deps.table, c.req.param('id'));
    if (progress === undefined) return c.json({ error: 'no such crawl' }, 404);
    return c.json(progress.view);
  });

  /**
   * The /pages and /dataset contract: `limit` and `cursor` from the query, then `read` from the
   * crawl's index at the cursor. Resolves the read, or the answer: 400 naming a bad limit or a
   * cursor this API did not return, 404 for an unknown crawl.
   */
  async function readIndex<T>(
    c: Context,
    limits: { fallback: number; max: number },
    read: (id: string, limit: number, cursor: PageCursor | undefined) => Promise<T>,
  ): Promise<{ id: string; limit: number; value: T } | Response> {
    const id = c.req.param('id') ?? '';
    const limit = limitOf(c.req.query('limit'), limits.fallback, limits.max);
    const problems: string[] = typeof limit === 'string' ? [limit] : [];
    const cursorText = c.req.query('cursor');
    const cursor = cursorText === undefined ? undefined : decodePageCursor(cursorText, id);
    if (cursorText !== undefined && cursor === undefined)
      problems.push('cursor: not a cursor this API returned');
    if (problems.length > 0) return c.json({ error: 'invalid query', problems }, 400);
    if ((await deps.table.getCrawl(id)) === undefined) return c.json({ error: 'no such crawl' }, 404);
    try {
      return { id, limit: limit as number, value: await read(id, limit as number, cursor) };
    } catch (error) {
      if (error instanceof InvalidCursorError)
        return c.json({ error: 'invalid query', problems: [error.message] }, 400);
      throw error;
    }
  }

  app.get('/crawls/:id/pages', async (c) => {
    const read = await readIndex(
      c,
      { fallback: DEFAULT_PAGE_LIMIT, max: MAX_PAGE_LIMIT },
      (id, limit, cursor) => listPages(deps.pages, id, limit, cursor),
    );
    if (read instanceof Response) return read;
    const list = read.value;
    return c.json({
      pages: list.pages.map(({ messageId: _m, enqueued: _e, ...page }) => page),
      ...(list.cursor === undefined ? {} : { cursor: encodePageCursor(list.cursor) }),
    });
  });

  app.get('/crawls/:id/objects', async (c) => {
    const id = c.req.param('id');
    const limit = limitOf(c.req.query('limit'), DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT);
    const problems: string[] = typeof limit === 'string' ? [limit] : [];
    const kind = c.req.query('kind') as ArchiveKind | undefined;
    if (kind === undefined || !ARCHIVE_KINDS.includes(kind))
      problems.push(`kind: expected one of ${ARCHIVE_KINDS.join(', ')}, got ${JSON.stringify(kind ?? null)}`);
    const cursorText = c.req.query('cursor');
    const after =
      cursorText === undefined || kind === undefined || !ARCHIVE_KINDS.includes(kind)
        ? undefined
        : decodeArchiveCursor(cursorText, kind, id);
    if (cursorText !== undefined && after === undefined && problems.length === 0)
      problems.push('cursor: not a cursor this API returned');
    if (problems.length > 0) return c.json({ error: 'invalid query', problems }, 400);
    if ((await deps.table.getCrawl(id)) === undefined) return c.json({ error: 'no such crawl' }, 404);
    const listing = await listArchive(deps.archive, id, kind as ArchiveKind, limit as number, after);
    return c.json({
      kind,
      expiresInSeconds: DOWNLOAD_URL_SECONDS,
      objects: listing.objects,
      ...(listing.next === undefined ? {} : { cursor: encodeArchiveCursor(listing.next) }),
    });
  });

  // The dataset as JSON Lines (the embedded mode's dataset.jsonl rows); the next answer's URL is
  // in the Link header (RFC 8288), absent on the last.
  app.get('/crawls/:id/dataset', async (c) => {
    const read = await readIndex(
      c,
      { fallback: DEFAULT_DATASET_LIMIT, max: MAX_DATASET_LIMIT },
      (id, limit, cursor) => listDataset(deps.pages, id, limit, cursor),
    );
    if (read instanceof Response) return read;
    const { id, limit, value: listing } = read;
    c.header('content-type', 'application/x-ndjson; charset=utf-8');
    if (listing.cursor !== undefined) {
      const next = `/crawls/${id}/dataset?limit=${limit}&cursor=${encodePageCursor(listing.cursor)}`;
      c.header('link', `<${next}>; rel="next"`);
    }
    return c.body(listing.lines, 200);
  });

  // What the dashboard shows (functions/dashboard): counters, a bounded host table, the rate
  // and the most important pages from the newest index objects.
  app.get('/crawls/:id/snapshot', async (c) => {
    const snapshot = await cloudCrawlSnapshot(deps, c.req.param('id'));
    if (snapshot === undefined) return c.json({ error: 'no such crawl' }, 404);
    return c.json(snapshot);
  });

  // The duplicate-URL rules the crawl's workers learned, as the embedded crawler's rules.json.
  app.get('/crawls/:id/rules', async (c) => {
    const id = c.req.param('id');
    if ((await deps.table.getCrawl(id)) === undefined) return c.json({ error: 'no such crawl' }, 404);
    const rules = await deps.table.crawlRules(id);
    return c.json({ rules: sortRuleRecords(rules) });
  });

  /** The 404, 400 (`invalid`: what was) or 409 of a refused round or schedule. */
  const refused = (c: Context, outcome: RecrawlRefusal, invalid: string) => {
    switch (outcome.kind) {
      case 'not-found':
        return c.json({ error: 'no such crawl' }, 404);
      case 'invalid':
        return c.json({ error: invalid, problems: outcome.problems }, 400);
      case 'conflict':
        return c.json({ error: outcome.problem }, 409);
    }
  };

  app.post('/crawls/:id/recrawl', async (c) => {
    if (deps.archives === undefined) return c.json({ error: 'recrawls are not wired in this API' }, 501);
    const body = await jsonBody(c, {});
    if (body instanceof Response) return body;
    const outcome = await startRecrawl({ ...deps, archives: deps.archives }, c.req.param('id'), body.value);
    if (outcome.kind !== 'started') return refused(c, outcome, 'invalid recrawl settings');
    log(
      `recrawl round ${outcome.recrawl.round} of ${outcome.recrawl.archive} started as ${outcome.id}: ${outcome.recrawl.planned} of ${outcome.recrawl.known} pages`,
    );
    c.header('location', `/crawls/${outcome.id}`);
    return c.json({ id: outcome.id, recrawl: outcome.recrawl }, 201);
  });

  /** The schedule routes' deps, or the 501 of a stack without them. */
  const scheduleDeps = (c: Context): RecrawlScheduleDeps | Response =>
    deps.recrawlSchedules === undefined
      ? c.json({ error: 'recurring recrawls are not wired in this API' }, 501)
      : { ...deps.recrawlSchedules, table: deps.table, clock: deps.clock };

  app.post('/crawls/:id/schedule', async (c) => {
    const using = scheduleDeps(c);
    if (using instanceof Response) return using;
    const body = await jsonBody(c);
    if (body instanceof Response) return body;
    const outcome = await scheduleRecrawl(using, c.req.param('id'), body.value);
    if (outcome.kind !== 'scheduled') return refused(c, outcome, 'invalid recrawl schedule');
    log(
      `recrawl schedule of ${outcome.view.archive} ${outcome.replaced ? 'replaced' : 'created'}: ${outcome.view.expression}`,
    );
    return c.json(outcome.view, outcome.replaced ? 200 : 201);
  });

  /** The 404 of GET and DELETE: no crawl, or a crawl whose archive has no schedule. */
  const noSchedule = (c: Context, outcome: { kind: 'not-found' } | { kind: 'none'; archive: string }) =>
    outcome.kind === 'not-found'
      ? c.json({ error: 'no such crawl' }, 404)
      : c.json(
          { error: `the archive ${outcome.archive} has no recrawl schedule`, archive: outcome.archive },
          404,
        );

  app.get('/crawls/:id/schedule', async (c) => {
    const using = scheduleDeps(c);
    if (using instanceof Response) return using;
    const shown = await showRecrawlSchedule(using, c.req.param('id'));
    if (shown.kind !== 'schedule') return noSchedule(c, shown);
    return c.json(shown.view);
  });

  app.delete('/crawls/:id/schedule', async (c) => {
    const using = scheduleDeps(c);
    if (using instanceof Response) return using;
    const removed = await removeRecrawlSchedule(using, c.req.param('id'));
    if (removed.kind !== 'removed') return noSchedule(c, removed);
    log(`recrawl schedule of ${removed.archive} removed`);
    return c.json({ archive: removed.archive, removed: true });
  });

  app.delete('/crawls/:id', async (c) => {
    const id = c.req.param('id');
    const status = await deps.table.cancelCrawl(id);
    if (status === undefined) return c.json({ error: 'no such crawl' }, 404);
    if (status !== 'cancelled') return c.json({ error: `crawl is already ${status}`, id, status }, 409);
    log(`crawl ${id} cancelled`);
    return c.json({ id, status });
  });

  for (const path of [
    '/crawls',
    '/crawls/:id',
    '/crawls/:id/pages',
    '/crawls/:id/objects',
    '/crawls/:id/dataset',
    '/crawls/:id/snapshot',
    '/crawls/:id/rules',
    '/crawls/:id/recrawl',
    '/crawls/:id/schedule',
  ]) {
    app.all(path, (c) => c.json({ error: `method ${c.req.method} not allowed on ${c.req.path}` }, 405));
  }
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    log(`API error on ${c.req.method} ${c.req.path}: ${error.stack ?? error.message}`);
    deps.metric?.(METRICS.apiInternalErrors, 1);
    // The role lacks a grant its code needs: AWS's message names the action and the resource,
    // which is what the operator must fix (callers are IAM principals of the account).
    if (ACCESS_DENIED.has(error.name))
      return c.json({ error: 'internal error', code: 'access-denied', detail: error.message }, 500);
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
