/**
 * The dashboard's HTTP server: the page (plain HTML, CSS and JavaScript, no build step), uPlot
 * from node_modules, the current view as JSON (`/api/view`) and as server-sent events
 * (`/api/events`, one event per second). Bound to 127.0.0.1 by default, and it answers only
 * requests addressed to a loopback name, so a web page elsewhere cannot read it through DNS
 * rebinding.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DashboardView } from '../core/dashboard-snapshot.ts';
import { ERROR_REASONS } from '../core/step/page-record.ts';

/** An answer of an extra route. */
export interface DashboardReply {
  status: number;
  type: string;
  body: string;
}

export interface DashboardServerOptions {
  /**
   * The crawl now (called once per second while a page is open, and per /api/view), given the
   * query of the page's request (the cloud dashboard reads `crawl` there).
   */
  view: (query: URLSearchParams) => DashboardView | Promise<DashboardView>;
  /** More GET routes (the cloud dashboard's crawl list and API proxy); undefined: not one of them. */
  routes?: (path: string, query: URLSearchParams) => Promise<DashboardReply | undefined>;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** Interval of the server-sent events, ms (default 1000). */
  everyMs?: number;
}

export interface DashboardServer {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  close(): Promise<void>;
}

/** The server could not listen (port taken, address not here). */
export class DashboardListenError extends Error {
  override readonly name = 'DashboardListenError';
  readonly code = 'DASHBOARD_LISTEN';
}

/** A blue dot, so the browser's request for an icon finds one. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#0b63c5"/></svg>';

interface Asset {
  type: string;
  body: Buffer;
}

/** Starts the server; resolves once it listens. */
export async function startDashboard(options: DashboardServerOptions): Promise<DashboardServer> {
  const assets = loadAssets();
  const host = options.host ?? '127.0.0.1';
  const everyMs = options.everyMs ?? 1000;
  /** Open event streams, with the query each asked for. */
  const clients = new Map<ServerResponse, string>();
  let timer: NodeJS.Timeout | undefined;
  let pushing: Promise<void> | undefined;

  const viewJson = async (query: string) => {
    try {
      return JSON.stringify(await options.view(new URLSearchParams(query)));
    } catch (error) {
      return JSON.stringify({ error: (error as Error).message });
    }
  };
  // One view per distinct query, written to every stream that asked for it; a push still
  // running (a slow cloud API) is not started again.
  const push = () => {
    pushing ??= (async () => {
      const byQuery = new Map<string, Promise<string>>();
      for (const [client, query] of clients) {
        let json = byQuery.get(query);
        if (json === undefined) {
          json = viewJson(query);
          byQuery.set(query, json);
        }
        const data = await json;
        if (!client.writableEnded) client.write(`event: view\ndata: ${data}\n\n`);
      }
    })().finally(() => {
      pushing = undefined;
    });
    return pushing;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!addressedToLoopback(req))
      return send(res, 403, 'text/plain', 'dashboard answers on loopback only\n');
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    if (req.method !== 'GET') return send(res, 405, 'text/plain', 'GET only\n');
    if (path === '/api/view') return send(res, 200, 'application/json', await viewJson(query));
    if (path === '/favicon.ico') return send(res, 200, 'image/svg+xml', FAVICON);
    if (path === '/api/events') {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      res.write('retry: 2000\n\n');
      clients.set(res, query);
      res.write(`event: view\ndata: ${await viewJson(query)}\n\n`);
      if (timer === undefined) {
        timer = setInterval(push, everyMs);
        timer.unref();
      }
      req.on('close', () => {
        clients.delete(res);
        if (clients.size === 0) {
          clearInterval(timer);
          timer = undefined;
        }
      });
      return;
    }
    const routed = await options.routes?.(path, new URLSearchParams(query));
    if (routed !== undefined) return send(res, routed.status, routed.type, routed.body);
    const asset = assets.get(path === '/' ? '/index.html' : path);
    if (asset === undefined) return send(res, 404, 'text/plain', 'not found\n');
    send(res, 200, asset.type, asset.body);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', `dashboard: ${(error as Error).message}\n`);
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new DashboardListenError(`dashboard: cannot listen on ${host}:${options.port ?? 0} (${error.code})`),
      ),
    );
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        // The last view (the crawl's end), then `end`: the page stops reconnecting.
        void push().finally(() => {
          for (const client of clients.keys()) client.end('event: end\ndata: {}\n\n');
          server.close(() => resolve());
          server.closeAllConnections();
        });
      }),
  };
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    'content-type': type.startsWith('text/') || type.endsWith('json') ? `${type}; charset=utf-8` : type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // Scripts and styles from this server only (uPlot sets element styles from script, allowed).
    'content-security-policy':
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  });
  res.end(body);
}

/** True when the Host header names a loopback address or localhost (any port). */
function addressedToLoopback(req: IncomingMessage): boolean {
  const host = (req.headers.host ?? '').toLowerCase();
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

let cachedAssets: Map<string, Asset> | undefined;

/**
 * The page's files and uPlot's, read once from the installed package: functions/dashboard/static
 * and node_modules/uplot/dist (no build step; the bundle in dist/ finds them beside it).
 */
function loadAssets(): Map<string, Asset> {
  if (cachedAssets !== undefined) return cachedAssets;
  const root = findPackageRoot();
  const staticDir = join(root, STATIC_DIR);
  const uplotDir = dirname(createRequire(join(root, 'package.json')).resolve('uplot/package.json'));
  const assets = new Map<string, Asset>();
  const add = (path: string, file: string, type: string) =>
    assets.set(path, { type, body: readFileSync(file) });
  add('/index.html', join(staticDir, 'index.html'), 'text/html');
  add('/app.js', join(staticDir, 'app.js'), 'text/javascript');
  add('/app.css', join(staticDir, 'app.css'), 'text/css');
  // The reasons the page shows as errors: the core's list, not a copy in app.js that drifts.
  assets.set('/reasons.js', {
    type: 'text/javascript',
    body: Buffer.from(`window.crawlstackErrorReasons = ${JSON.stringify([...ERROR_REASONS])};\n`),
  });
  add('/vendor/uPlot.iife.min.js', join(uplotDir, 'dist', 'uPlot.iife.min.js'), 'text/javascript');
  add('/vendor/uPlot.min.css', join(uplotDir, 'dist', 'uPlot.min.css'), 'text/css');
  cachedAssets = assets;
  return assets;
}

const STATIC_DIR = join('functions', 'dashboard', 'static');

/**
 * The folder holding functions/dashboard/static: up from this module (the source tree, or the
 * bundle in dist/), else up from the working directory (a bundle built elsewhere, as the tests do).
 */
function findPackageRoot(): string {
  for (const start of [dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    let dir = start;
    for (;;) {
      if (existsSync(join(dir, STATIC_DIR, 'index.html'))) return dir;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  throw new Error(`dashboard: ${STATIC_DIR} not found above ${fileURLToPath(import.meta.url)}`);
}
