/**
 * A Fetcher that answers from a table of routes in memory: for unit tests of the crawl step and
 * the worker, where the exact answers (a 503 robots.txt, a 429 with Retry-After, a redirect) are
 * the subject. Every request is logged. Network behaviour itself is tested against real servers
 * (test/unit/fetch, test/e2e).
 */
import type {
  Clock,
  FetchErrorCode,
  Fetcher,
  FetchRequest,
  FetchResult,
} from '../../../functions/core/ports.ts';

/** What a route answers. */
export type FetchedReply =
  | { status: number; headers?: Record<string, string>; body?: string; ms?: number }
  | { error: FetchErrorCode; ms?: number };

/** Routes keyed by absolute URL; a function sees the request count of its URL so far. */
export type Routes = Record<string, FetchedReply | ((n: number) => FetchedReply)>;

/** Answers 404 for a URL with no route. */
export class MemoryFetcher implements Fetcher {
  readonly requests: string[] = [];
  readonly #routes: Routes;
  readonly #clock: Clock;

  constructor(routes: Routes, clock: Clock = { now: () => 0 }) {
    this.#routes = routes;
    this.#clock = clock;
  }

  /** How many times `url` was requested. */
  count(url: string): number {
    return this.requests.filter((u) => u === url).length;
  }

  async fetch(request: FetchRequest): Promise<FetchResult> {
    const n = this.count(request.url);
    this.requests.push(request.url);
    const route = this.#routes[request.url];
    const reply: FetchedReply =
      route === undefined
        ? { status: 404, body: 'not found' }
        : typeof route === 'function'
          ? route(n)
          : route;
    const startedAt = this.#clock.now();
    const totalMs = reply.ms ?? 5;
    if ('error' in reply) {
      return {
        ok: false,
        url: request.url,
        error: reply.error,
        message: reply.error,
        timings: { startedAt, totalMs },
      };
    }
    const headers: [string, string][] = Object.entries({ 'content-type': 'text/html', ...reply.headers }).map(
      ([k, v]) => [k.toLowerCase(), v],
    );
    const body = new TextEncoder().encode(reply.body ?? '').subarray(0, request.maxBytes);
    return {
      ok: true,
      url: request.url,
      status: reply.status,
      statusText: '',
      httpVersion: '1.1',
      headers,
      request: { method: 'GET', target: new URL(request.url).pathname, headers: [] },
      body,
      timings: { startedAt, headersMs: totalMs, totalMs },
    };
  }

  async close(): Promise<void> {}
}

/** An HTML page linking `links`. */
export function page(title: string, links: readonly string[] = [], extra = ''): string {
  return `<!doctype html><html><head><title>${title}</title>${extra}</head><body><p>${title} text of the page</p>${links
    .map((l) => `<a href="${l}">${l}</a>`)
    .join(' ')}</body></html>`;
}
