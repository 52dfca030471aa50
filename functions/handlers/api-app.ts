/**
 * The HTTP API as a Hono app, independent of Lambda (tests call `app.request()`):
 *
 *   POST   /crawls                 body = crawl config (the CLI's schema)  -> 201 { id }
 *   GET    /crawls                 ?limit=1..100&cursor=   every crawl, newest first
 *   GET    /crawls/{id}            status, config, counters, URL-seen hit rate
 *   GET    /crawls/{id}/pages      ?limit=1..1000&cursor=   page records (from the S3 index), where
 *                                                            each body is stored
 *   DELETE /crawls/{id}            cancel: queued URLs are dropped without fetching
 *
 * Errors are JSON: `{ "error": "...", "problems": [...] }` (problems only for 400).
 */

import { Hono } from 'hono';
import type { CrawlTableStore, ObjectReader } from '../cloud/ports/cloud-ports.ts';
import { crawlProgress } from '../cloud/use-cases/crawl-progress.ts';
import {
  decodePageCursor,
  encodePageCursor,
  InvalidCursorError,
  listPages,
} from '../cloud/use-cases/list-pages.ts';
import { type StartCrawlDeps, startCrawl } from '../cloud/use-cases/start-crawl.ts';
import { sortRuleRecords } from '../core/quality/duplicate-url-rules.ts';
import { METRICS } from '../metrics.ts';

/** What the API touches. */
export interface ApiDeps extends StartCrawlDeps {
  table: CrawlTableStore;
  /** The page bucket: the crawl's index objects. */
  pages: ObjectReader;
  log?: (line: string) => void;
  /**
   * Publishes a count of a custom metric (functions/metrics.ts). A 500 is counted here, so the
   * alarm sees what Hono's error handler turns into a normal response.
   */
  metric?: (name: string, value: number) => void;
}

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_PAGE_LIMIT = 100;
const MAX_PAGE_LIMIT = 1000;
const MAX_CRAWL_LIMIT = 100;

/** Crawl ids are UUIDs (`startCrawl`): anything else names no crawl, and is never sent to a store (a 3,000-character id is over DynamoDB's key size). */
const CRAWL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function limitOf(text: string | undefined, fallback: number, max: number): number | string {
  const limit = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    return `limit: expected an integer from 1 to ${max}, got ${JSON.stringify(text)}`;
  }
  return limit;
}

/** Builds the app. */
export function createApiApp(deps: ApiDeps): Hono {
  const app = new Hono();
  const log = deps.log ?? (() => {});

  app.post('/crawls', async (c) => {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > MAX_BODY_BYTES) return c.json({ error: `body over ${MAX_BODY_BYTES} bytes` }, 413);
    const text = await c.req.text();
    if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) {
      return c.json({ error: `body over ${MAX_BODY_BYTES} bytes` }, 413);
    }
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch (error) {
      return c.json({ error: 'body is not valid JSON', problems: [(error as Error).message] }, 400);
    }
    const outcome = await startCrawl(deps, input);
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

  app.get('/crawls/:id/pages', async (c) => {
    const id = c.req.param('id');
    const limit = limitOf(c.req.query('limit'), DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT);
    const problems: string[] = typeof limit === 'string' ? [limit] : [];
    const cursorText = c.req.query('cursor');
    const cursor = cursorText === undefined ? undefined : decodePageCursor(cursorText, id);
    if (cursorText !== undefined && cursor === undefined)
      problems.push('cursor: not a cursor this API returned');
    if (problems.length > 0) return c.json({ error: 'invalid query', problems }, 400);
    if ((await deps.table.getCrawl(id)) === undefined) return c.json({ error: 'no such crawl' }, 404);
    let list: Awaited<ReturnType<typeof listPages>>;
    try {
      list = await listPages(deps.pages, id, limit as number, cursor);
    } catch (error) {
      if (error instanceof InvalidCursorError)
        return c.json({ error: 'invalid query', problems: [error.message] }, 400);
      throw error;
    }
    return c.json({
      pages: list.pages.map(({ messageId: _m, enqueued: _e, ...page }) => page),
      ...(list.cursor === undefined ? {} : { cursor: encodePageCursor(list.cursor) }),
    });
  });

  // The duplicate-URL rules the crawl's workers learned, as the embedded crawler's rules.json.
  app.get('/crawls/:id/rules', async (c) => {
    const id = c.req.param('id');
    if ((await deps.table.getCrawl(id)) === undefined) return c.json({ error: 'no such crawl' }, 404);
    const rules = await deps.table.crawlRules(id);
    return c.json({ rules: sortRuleRecords(rules) });
  });

  app.delete('/crawls/:id', async (c) => {
    const id = c.req.param('id');
    const status = await deps.table.cancelCrawl(id);
    if (status === undefined) return c.json({ error: 'no such crawl' }, 404);
    if (status !== 'cancelled') return c.json({ error: `crawl is already ${status}`, id, status }, 409);
    log(`crawl ${id} cancelled`);
    return c.json({ id, status });
  });

  for (const path of ['/crawls', '/crawls/:id', '/crawls/:id/pages', '/crawls/:id/rules']) {
    app.all(path, (c) => c.json({ error: `method ${c.req.method} not allowed on ${c.req.path}` }, 405));
  }
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    log(`API error on ${c.req.method} ${c.req.path}: ${error.stack ?? error.message}`);
    deps.metric?.(METRICS.apiInternalErrors, 1);
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
