/**
 * The web of the scale bench (issue 21, item 6) and the figures it is judged by, shared by
 * `npm run bench:scale` and its scaled-down test (test/emulator/pipeline/scale.test.ts).
 *
 * The web: many small hosts of a few pages each and one big host, every host a real HTTP server
 * on a loopback address of its own (small hosts on 127.3.x.y, the big one on 127.2.0.1, away from
 * the 127.0.0.x and 127.0.1.x that other tests use).
 * - The big host is a tree of `bigUrls` pages, `fanout` links each (`/`, `/section/1`, ...,
 *   `/topic/21`, ...; a path pattern per level): its frontier outgrows a FIFO scan window within
 *   a few batches.
 * - Small host i has a home page linking to its `pagesPerHost - 1` pages and to the homes of small
 *   hosts 2i+1 and 2i+2, so that every small host is found from host 0 within log2(hosts) steps,
 *   while the big host's frontier is already deep: each small host's pages are queued behind it.
 * The crawl's seeds are the big host's home and small host 0's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CloudLocalMetrics } from '../../localstack/cloud-local.ts';
import { costBreakdown } from '../../localstack/cost-model.ts';
import type { PartitionKeyWrites } from '../../localstack/endpoint-metrics.ts';
import { type LoggedRequest, type SiteServer, startSite } from '../../test/fixtures/site-server.ts';

/** The shape of the web. */
export interface ScaleWebOptions {
  /** Small hosts. */
  hosts: number;
  /** Pages per small host, its home included (default 5). */
  pagesPerHost?: number;
  /** Pages of the big host. */
  bigUrls: number;
  /** Links per page of the big host's tree (default 20). */
  fanout?: number;
}

/** A running scale web. */
export interface ScaleWeb {
  /** The crawl's seeds: the big host's home and small host 0's. */
  seeds: string[];
  big: SiteServer;
  small: SiteServer[];
  /** Pages (not robots.txt) the servers have, all hosts together. */
  urls: number;
  /** Pages the servers have that no GET reached (after the crawl: what it lost). */
  unrequested(): number;
  close(): Promise<void>;
}

/** Small host i's address: 250 per /24, never .0 or .255. */
function smallAddress(i: number): string {
  return `127.3.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

const WORDS = (
  'crawl frontier queue host page link fetch robots polite budget cash credit archive index ' +
  'shard window group batch lambda table bucket record capture signal river stone cloud field ' +
  'garden market engine letter number window morning orange silver winter summer harbor valley'
).split(' ');

/**
 * Text of its own for each page (~1.5 KB): alike pages would be near-duplicates, and the crawl's
 * link-generator defence rightly stops following a template whose pages are all alike.
 */
function text(title: string): string {
  let state = 2166136261;
  for (let i = 0; i < title.length; i++) state = Math.imul(state ^ title.charCodeAt(i), 16777619);
  const words: string[] = [];
  for (let i = 0; i < 200; i++) {
    state = Math.imul(state ^ (state >>> 15), 2246822507) + i;
    words.push(WORDS[(state >>> 0) % WORDS.length]!);
  }
  return `<p>${words.join(' ')}</p>`;
}

function html(res: ServerResponse, title: string, links: string[]): void {
  const body = `<!doctype html><html><head><title>${title}</title></head><body>${links
    .map((href) => `<a href="${href}">${href}</a>`)
    .join('\n')}${text(title)}</body></html>`;
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain' });
  res.end('not found');
}

/**
 * Path segments of the big host's tree by depth: each level a path pattern of its own, as a real
 * site's sections, topics and items are. (Links to the page's own pattern get less AOPIC cash and
 * are parked until the scheduler admits them; these are queued at once, the case the group bound
 * is for.)
 */
const LEVELS = ['section', 'topic', 'item', 'page', 'part', 'note', 'leaf'];

/** Depth of the big host's page `n` in a tree of `fanout` links a page (0 is the home page). */
function depthOf(n: number, fanout: number): number {
  let depth = 0;
  for (let at = n; at > 0; at = Math.floor((at - 1) / fanout)) depth += 1;
  return depth;
}

/** Path of the big host's page `n`. */
function bigPath(n: number, fanout: number): string {
  if (n === 0) return '/';
  const depth = depthOf(n, fanout);
  return `/${LEVELS[depth - 1] ?? `level${depth}`}/${n}`;
}

/** Starts the servers; close them with `close()`. */
export async function serveScaleWeb(options: ScaleWebOptions): Promise<ScaleWeb> {
  const { hosts, bigUrls } = options;
  const pagesPerHost = options.pagesPerHost ?? 5;
  const fanout = options.fanout ?? 20;
  if (!(Number.isInteger(hosts) && hosts >= 1 && hosts <= 250 * 250))
    throw new RangeError(`hosts: expected an integer from 1 to 62,500, got ${hosts}`);
  if (!(Number.isInteger(bigUrls) && bigUrls >= 1))
    throw new RangeError(`bigUrls: expected a positive integer, got ${bigUrls}`);
  if (!(Number.isInteger(pagesPerHost) && pagesPerHost >= 1))
    throw new RangeError(`pagesPerHost: expected a positive integer, got ${pagesPerHost}`);
  const origins: string[] = [];
  let ready = false;
  const guard =
    (route: (path: string, res: ServerResponse) => void) => (req: IncomingMessage, res: ServerResponse) => {
      // Links name other servers' ports: nothing is served before every server listens.
      if (!ready) {
        res.writeHead(503);
        res.end();
        return;
      }
      const path = req.url ?? '/';
      if (path === '/robots.txt') notFound(res);
      else route(path, res);
    };
  const servers: SiteServer[] = [];
  try {
    const big = await startSite(
      guard((path, res) => {
        const n = path === '/' ? 0 : Number(/^\/[a-z]+\d*\/(\d+)$/.exec(path)?.[1] ?? Number.NaN);
        if (!(n >= 0 && n < bigUrls) || bigPath(n, fanout) !== path) return notFound(res);
        const links: string[] = [];
        for (let c = n * fanout + 1; c <= n * fanout + fanout && c < bigUrls; c++)
          links.push(bigPath(c, fanout));
        html(res, `big ${n}`, links);
      }),
      '127.2.0.1',
    );
    servers.push(big);
    for (let i = 0; i < hosts; i++) {
      const site = await startSite(
        guard((path, res) => {
          if (path === '/') {
            const links: string[] = [];
            for (let p = 1; p < pagesPerHost; p++) links.push(`/p${p}`);
            for (const child of [2 * i + 1, 2 * i + 2]) if (child < hosts) links.push(`${origins[child]}/`);
            return html(res, `small ${i}`, links);
          }
          const p = Number(/^\/p(\d+)$/.exec(path)?.[1] ?? Number.NaN);
          if (p >= 1 && p < pagesPerHost) return html(res, `small ${i} page ${p}`, ['/']);
          notFound(res);
        }),
        smallAddress(i),
      );
      servers.push(site);
      origins.push(site.origin);
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.close()));
    throw error;
  }
  ready = true;
  const [big, ...small] = servers as [SiteServer, ...SiteServer[]];
  const fetched = (site: SiteServer) =>
    new Set(site.log.filter((r) => r.method === 'GET' && r.path !== '/robots.txt').map((r) => r.path));
  return {
    seeds: [`${big.origin}/`, `${small[0]!.origin}/`],
    big,
    small,
    urls: bigUrls + hosts * pagesPerHost,
    unrequested() {
      let missing = bigUrls - fetched(big).size;
      for (const site of small) missing += pagesPerHost - fetched(site).size;
      return missing;
    },
    close: () => Promise.all(servers.map((s) => s.close())).then(() => undefined),
  };
}

/** The longest a server waited between the end of one request and the start of the next, ms. */
export function longestWait(log: readonly LoggedRequest[]): number {
  const sorted = [...log].sort((a, b) => a.start - b.start);
  let longest = 0;
  for (let i = 1; i < sorted.length; i++) longest = Math.max(longest, sorted[i]!.start - sorted[i - 1]!.end);
  return longest;
}

/** What a scale run is judged by. */
export interface ScaleFigures {
  seconds: number;
  /** Pages fetched (the crawl's counter) and per second over the crawl's wall time. */
  pages: number;
  pagesPerSecond: number;
  /** USD per million pages fetched: requests and compute as bench:cloud's cost model bills them. */
  dollarsPerMillion: number;
  /** Pages the servers have that were never fetched, and the crawl's own count of lost URLs. */
  lost: number;
  crawlLost: number;
  /** The small host that waited longest between two of its requests: the wait, ms, and its origin. */
  smallWait: { ms: number; origin: string; requests: number };
  /** Small hosts' longest waits: the median and the 99th percentile, ms. */
  smallWaits: { p50: number; p99: number };
  /** The big host: pages fetched and the time from its first request to its last, s. */
  big: { pages: number; spanSeconds: number };
  /** The base-table partition key with the busiest second of writes (undefined: no writes seen). */
  hotKey?: PartitionKeyWrites;
  /**
   * The crawl's own partition key (CrawlTable `pk = <crawlId>`: the crawl item, every host item
   * and the counter shards), when it is among the busiest keys the stand-in lists.
   */
  crawlKey?: PartitionKeyWrites;
  /** Most invocations running at once, per function. */
  peakConcurrency: Record<string, number>;
  /** The frontier worker's peak V8 heap in one container, MiB. */
  workerPeakHeapMb: number;
}

/** The figures of a finished (or stopped) run, from the servers' logs and the stand-in's metrics. */
export function scaleFigures(
  web: ScaleWeb,
  run: { crawlId: string; seconds: number; pages: number; crawlLost: number; metrics: CloudLocalMetrics },
): ScaleFigures {
  const waits = web.small
    .map((site) => ({ ms: longestWait(site.log), origin: site.origin, requests: site.log.length }))
    .sort((a, b) => a.ms - b.ms);
  const at = (q: number) => waits[Math.min(waits.length - 1, Math.floor(q * waits.length))]?.ms ?? 0;
  const bigLog = web.big.log;
  const costs = costBreakdown(run.metrics);
  const hotKeys = run.metrics.endpoint?.dynamodb.hotKeys ?? [];
  const hotKey = hotKeys[0];
  const crawlKey = hotKeys.find((k) => k.key === run.crawlId);
  return {
    seconds: run.seconds,
    pages: run.pages,
    pagesPerSecond: run.pages / run.seconds,
    dollarsPerMillion: run.pages === 0 ? 0 : (costs.dollars.total / run.pages) * 1e6,
    lost: web.unrequested(),
    crawlLost: run.crawlLost,
    smallWait: waits.at(-1) ?? { ms: 0, origin: '', requests: 0 },
    smallWaits: { p50: at(0.5), p99: at(0.99) },
    big: {
      pages: bigLog.filter((r) => r.path !== '/robots.txt').length,
      spanSeconds: bigLog.length < 2 ? 0 : (bigLog.at(-1)!.start - bigLog[0]!.start) / 1000,
    },
    ...(hotKey === undefined ? {} : { hotKey }),
    ...(crawlKey === undefined ? {} : { crawlKey }),
    peakConcurrency: Object.fromEntries(
      Object.entries(run.metrics.functions).map(([name, f]) => [name, f.maxConcurrent]),
    ),
    workerPeakHeapMb: run.metrics.functions.FrontierWorker?.peakHeapMb ?? 0,
  };
}
