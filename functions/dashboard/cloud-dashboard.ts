/**
 * The dashboard for cloud crawls: the embedded dashboard's page, served on this machine, showing
 * the snapshots the cloud API answers (`GET /crawls/{id}/snapshot`). A browser cannot sign the
 * API's requests (its function URL uses AWS_IAM), so this local server calls the API with the
 * caller's auth (a bearer token for the local stand-in, SigV4 for AWS) and the page talks only to
 * it. It keeps each crawl's chart ({@link RateHistory}): pages per second over the whole crawl
 * from the pages counter of every view, not only the archive's last minutes. Bound to 127.0.0.1 and answering only requests addressed to loopback, like the embedded one.
 *
 *   /                          the page (a crawl list to pick from, `?crawl=<id>` shows one)
 *   /api/events?crawl=<id>     the view, as server-sent events, every `everyMs`
 *   /api/view?crawl=<id>       the view once
 *   /api/crawls                the API's crawl list (newest first)
 *   /crawls/<id>/snapshot      the API's snapshot, passed through
 */

import type { DashboardCrawl, DashboardSnapshot, DashboardView } from '../core/dashboard-snapshot.ts';
import { type DashboardServer, startDashboard } from './dashboard-server.ts';
import { RateHistory } from './rate-history.ts';

/** A request to the API, before it is authenticated. */
export interface ApiRequest {
  method: 'GET';
  /** The full URL. */
  url: string;
  headers: Record<string, string>;
}

/**
 * Authenticates a request to the API: resolves the headers to send (the given ones plus
 * `authorization`, or SigV4's `authorization`, `x-amz-date`, ...).
 */
export type ApiAuth = (request: ApiRequest) => Promise<Record<string, string>> | Record<string, string>;

/** The local stand-in's auth: `Authorization: Bearer <token>`. */
export function bearerAuth(token: string): ApiAuth {
  return (request) => ({ ...request.headers, authorization: `Bearer ${token}` });
}

/** Options of {@link startCloudDashboard}. */
export interface CloudDashboardOptions {
  /** The API's base URL (the function URL, or the stand-in's `api=`). */
  api: string;
  /** How each request to the API is authenticated. */
  auth: ApiAuth;
  /** Port on 127.0.0.1 (default 0: any free port). */
  port?: number;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** The crawl shown when the page names none (default: the newest). */
  crawl?: string;
  /** How often an open page gets a new view, ms (default 2000: each is one API call). */
  everyMs?: number;
}

/** A running cloud dashboard. */
export interface CloudDashboard {
  /** `http://127.0.0.1:<port>/` (with `?crawl=<id>` when a crawl was given). */
  url: string;
  close(): Promise<void>;
}

/** The API answered something other than what the dashboard asked for. */
export class CloudApiError extends Error {
  readonly code = 'CLOUD_API';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'CloudApiError';
  }
}

const CRAWL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Crawls in the page's list. */
const LISTED = 20;
/** The crawl list is asked for at most this often, ms. */
const LIST_EVERY_MS = 5000;

/**
 * Starts the local dashboard for cloud crawls; resolves once it listens. Every view the page
 * gets is one `GET /crawls/{id}/snapshot` (plus the crawl list every few seconds).
 */
export async function startCloudDashboard(options: CloudDashboardOptions): Promise<CloudDashboard> {
  const base = options.api.endsWith('/') ? options.api : `${options.api}/`;
  if (options.crawl !== undefined && !CRAWL_ID.test(options.crawl)) {
    throw new CloudApiError(`not a crawl id: ${JSON.stringify(options.crawl)}`, 400);
  }

  const call = async (path: string): Promise<{ status: number; body: string }> => {
    const url = new URL(path, base).toString();
    const headers = await options.auth({ method: 'GET', url, headers: { accept: 'application/json' } });
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
    return { status: response.status, body: await response.text() };
  };
  const json = async <T>(path: string): Promise<T> => {
    const { status, body } = await call(path);
    if (status !== 200) {
      let detail = body.slice(0, 200);
      try {
        detail = (JSON.parse(body) as { error?: string }).error ?? detail;
      } catch {}
      throw new CloudApiError(`GET ${path}: ${status} ${detail}`, status);
    }
    return JSON.parse(body) as T;
  };

  let listed: { at: number; crawls: DashboardCrawl[] } | undefined;
  const crawls = async (): Promise<DashboardCrawl[]> => {
    if (listed === undefined || Date.now() - listed.at >= LIST_EVERY_MS) {
      const answer = await json<{ crawls: DashboardCrawl[] }>(`crawls?limit=${LISTED}`);
      listed = { at: Date.now(), crawls: answer.crawls };
    }
    return listed.crawls;
  };
  const seedsOf = new Map<string, string[]>();
  /** The chart of each crawl shown, over its whole crawl time (the LISTED latest crawls). */
  const histories = new Map<string, RateHistory>();
  const chartOf = (id: string, snapshot: DashboardSnapshot) => {
    let history = histories.get(id);
    if (history === undefined) {
      history = new RateHistory();
      histories.set(id, history);
      if (histories.size > LISTED) histories.delete(histories.keys().next().value!);
    }
    return history.add(snapshot);
  };

  const view = async (query: URLSearchParams): Promise<DashboardView> => {
    const list = await crawls();
    const asked = query.get('crawl') ?? options.crawl;
    if (asked !== undefined && !CRAWL_ID.test(asked))
      throw new CloudApiError(`not a crawl id: ${asked}`, 400);
    const id = asked ?? list[0]?.id;
    if (id === undefined) throw new CloudApiError('no crawl yet: start one with POST /crawls', 404);
    let seeds = list.find((c) => c.id === id)?.seeds ?? seedsOf.get(id);
    if (seeds === undefined) {
      seeds = (await json<{ config: { seeds: string[] } }>(`crawls/${id}`)).config.seeds;
      seedsOf.set(id, seeds);
    }
    const snapshot = await json<DashboardSnapshot>(`crawls/${id}/snapshot`);
    // The API's rate covers the archive's last minutes; the page gets the whole crawl.
    snapshot.rate = chartOf(id, snapshot);
    return { outDir: `crawl ${id}`, seeds, source: 'cloud', snapshot, crawls: list, crawlId: id };
  };

  const server: DashboardServer = await startDashboard({
    view,
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    everyMs: options.everyMs ?? 2000,
    routes: async (path) => {
      if (path === '/api/crawls') {
        return { status: 200, type: 'application/json', body: JSON.stringify({ crawls: await crawls() }) };
      }
      const m = /^\/crawls\/([^/]+)\/snapshot$/.exec(path);
      if (m === null) return undefined;
      if (!CRAWL_ID.test(m[1]!))
        return { status: 404, type: 'application/json', body: '{"error":"no such crawl"}' };
      const { status, body } = await call(`crawls/${m[1]}/snapshot`);
      return { status, type: 'application/json', body };
    },
  });
  return {
    url: options.crawl === undefined ? server.url : `${server.url}?crawl=${options.crawl}`,
    close: () => server.close(),
  };
}
