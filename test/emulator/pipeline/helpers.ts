/**
 * Shared setup for the pipeline tests: the whole stack from the synthesized template on the
 * stand-in (or on `AWS_ENDPOINT_URL`), an API client with the local bearer token, fixture sites on
 * loopback addresses, and readers for what a crawl left behind.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { type AwsClients, createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import type { CrawlProgressView } from '../../../functions/cloud/use-cases/crawl-progress.ts';
import type { AwsLimits } from '../../../localstack/aws-limits.ts';
import type { CfnTemplate } from '../../../localstack/cfn-template.ts';
import type { ChaosOptions } from '../../../localstack/chaos.ts';
import {
  type CloudLocal,
  type CloudLocalMetrics,
  startCloudLocal,
  synthesizedTemplate,
} from '../../../localstack/cloud-local.ts';
import { costBreakdown } from '../../../localstack/cost-model.ts';
import { eventually, type LoggedRequest, type SiteServer, startSite } from '../../fixtures/site-server.ts';

/** Read once at load: the local runtime itself sets AWS_ENDPOINT_URL while functions run. */
/**
 * Crawl settings for tests that count requests: any scope, loopback allowed, no politeness
 * delay, no soft-404 probe and no sitemaps (tests of those say so).
 */
export const QUICK_CRAWL = {
  scope: 'any',
  allowPrivate: true,
  delayMs: 0,
  delayFactor: 0,
  soft404Probe: false,
  sitemaps: false,
} as const;

export const EXTERNAL_ENDPOINT = process.env.AWS_ENDPOINT_URL?.replace(/\/+$/, '') || undefined;

/** A page as GET /crawls/{id}/pages lists it. */
export type ListedPage = Omit<PageItem, 'messageId' | 'enqueued'>;

/** The running stack plus what the tests need around it. */
export interface Pipeline {
  local: CloudLocal;
  clients: AwsClients;
  logs: string[];
  queueUrl: string;
  dlqUrl: string;
  captureQueueUrl: string;
  captureDlqUrl: string;
  /** The page bucket. */
  bucket: string;
  api(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }>;
  startCrawl(config: Record<string, unknown>): Promise<string>;
  status(id: string): Promise<CrawlProgressView>;
  waitForStatus(id: string, statuses: string[], timeoutMs: number): Promise<CrawlProgressView>;
  pages(id: string, limit?: number): Promise<ListedPage[]>;
  /** The WARC response record a page record points at, inflated. */
  warcRecord(page: ListedPage): Promise<string>;
  /** Receives what is in the DLQ (deleting nothing; messages stay in flight for a while). */
  deadLetters(
    expected: number,
    timeoutMs: number,
    queueUrl?: string,
  ): Promise<{ body: string; attributes: Record<string, string> }[]>;
  stop(): Promise<void>;
}

let counter = 0;
function uniquePrefix(): string {
  counter += 1;
  return `p${process.pid.toString(36)}${randomBytes(2).toString('hex')}${counter}`;
}

/** Options of {@link startPipeline}. */
export interface PipelineOptions {
  env?: Record<string, string>;
  /**
   * Visibility timeout (s) of the frontier and capture queues: a crashed batch comes back after it
   * (the template says 225 and 420). The worker's and the archiver's timeouts become a second
   * less, as Lambda requires (a batch must not become visible while its invocation runs): crawls
   * must then keep their fetch timeouts well under it (the worker starts no fetch it could not
   * finish with 5 s left for its writes).
   */
  visibilityTimeoutSeconds?: number;
  /** The scheduler's period (default 1 s; the stack's rule says a minute). */
  scheduleRateMs?: number;
  /** Kill containers of these functions at random points (the stand-in's chaos option). */
  chaos?: Record<string, ChaosOptions>;
  /** Changes the synthesized template before the stack starts (e.g. takes a grant away). */
  template?: (template: CfnTemplate) => CfnTemplate;
  /** Serve the cloud dashboard too (`local.dashboard`). */
  dashboard?: boolean;
  /** AWS limits scaled down (the stand-in's `limits`: FIFO scan window, in-flight cap, ...). */
  limits?: Partial<AwsLimits>;
}

/** The project's root (cdk.out and .tmp are there). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LOCK = join(ROOT, '.tmp', 'pipeline-synth.lock');

/**
 * Runs `start` while holding a lock directory shared by the test processes (mkdir is atomic). A
 * lock older than five minutes belongs to a process that died, and is taken over.
 */
async function withSynthLock<T>(start: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 5 * 60_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${LOCK} held for 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await start();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** Starts the stack (synthesizing first if cdk.out is stale). */
export async function startPipeline(options: PipelineOptions = {}): Promise<Pipeline> {
  const logs: string[] = [];
  // CRAWLSTACK_FAULT's "n-th time" counted across the stack's containers (see fault-hook.ts).
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const faultCounters =
    options.env?.CRAWLSTACK_FAULT === undefined ? undefined : mkdtempSync(join(ROOT, '.tmp', 'faults-'));
  const visibility = options.visibilityTimeoutSeconds;
  // Test files run two at a time, and each pipeline file may find cdk.out stale and synthesize:
  // two `cdk synth` into one cdk.out at once break each other. One start at a time.
  const local = await withSynthLock(async () =>
    startCloudLocal({
      ...(options.template === undefined
        ? {}
        : await (async () => {
            const { template, assemblyDir } = await synthesizedTemplate();
            return { template: options.template!(template), assemblyDir };
          })()),
      port: 0,
      prefix: uniquePrefix(),
      // Scheduler runs overlap as on AWS (each tick invokes); a tick shorter than a loaded run's
      // few hundred ms would pile up containers that a one-minute rule never would.
      scheduleRateMs: options.scheduleRateMs ?? 1000,
      // The archiver gathers captures for 1 s instead of 30: pages show up in the API quickly.
      eventSource: {
        waitTimeSeconds: 1,
        byFunction: { FrontierWorker: { maxConcurrency: 4 }, Archiver: { batchingWindowSeconds: 1 } },
      },
      // The stand-in crawls fixture sites on loopback: a deployment forbids that by default
      // (crawlstack:allowPrivateAddresses), the stand-in allows it.
      env: {
        PRIVATE_ADDRESSES: 'allowed',
        ...options.env,
        ...(faultCounters === undefined ? {} : { CRAWLSTACK_FAULT_COUNTERS: faultCounters }),
      },
      ...(visibility === undefined
        ? {}
        : {
            queues: {
              FrontierQueue: { visibilityTimeoutSeconds: visibility },
              CaptureQueue: { visibilityTimeoutSeconds: visibility },
            },
            functions: {
              FrontierWorker: { timeoutSeconds: visibility - 1 },
              Archiver: { timeoutSeconds: visibility - 1 },
            },
          }),
      ...(options.chaos === undefined ? {} : { chaos: options.chaos }),
      log: (line) => logs.push(line),
      ...(options.dashboard === true ? { dashboard: {} } : {}),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    }),
  );
  const clients = createAwsClients({ AWS_ENDPOINT_URL: local.endpoint, AWS_REGION: 'us-east-1' });
  const queueUrl = local.provisioned.resources.FrontierQueue?.url as string;
  const dlqUrl = local.provisioned.resources.FrontierDlq?.url as string;
  const captureQueueUrl = local.provisioned.resources.CaptureQueue?.url as string;
  const captureDlqUrl = local.provisioned.resources.CaptureDlq?.url as string;
  const bucket = local.provisioned.resources.PageBucket?.name as string;
  const headers = { authorization: `Bearer ${local.token}`, 'content-type': 'application/json' };

  const api: Pipeline['api'] = async (method, path, body) => {
    const response = await fetch(`${local.api}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const status = async (id: string) => {
    const response = await api('GET', `/crawls/${id}`);
    if (response.status !== 200)
      throw new Error(`GET /crawls/${id}: ${response.status} ${JSON.stringify(response.json)}`);
    return response.json as unknown as CrawlProgressView;
  };

  return {
    local,
    clients,
    logs,
    queueUrl,
    dlqUrl,
    captureQueueUrl,
    captureDlqUrl,
    bucket,
    api,
    async startCrawl(config) {
      const response = await api('POST', '/crawls', config);
      if (response.status !== 201)
        throw new Error(`POST /crawls: ${response.status} ${JSON.stringify(response.json)}`);
      return response.json.id as string;
    },
    status,
    async waitForStatus(id, statuses, timeoutMs) {
      return eventually(
        async () => {
          const view = await status(id);
          return statuses.includes(view.status) ? view : undefined;
        },
        timeoutMs,
        `crawl ${id} to be ${statuses.join(' or ')}`,
      );
    },
    async pages(id, limit = 7) {
      const out: ListedPage[] = [];
      let cursor: string | undefined;
      do {
        const query = `limit=${limit}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const response = await api('GET', `/crawls/${id}/pages?${query}`);
        if (response.status !== 200) throw new Error(`GET pages: ${response.status}`);
        out.push(...(response.json.pages as ListedPage[]));
        cursor = response.json.cursor as string | undefined;
      } while (cursor !== undefined);
      return out;
    },
    async warcRecord(page) {
      const warc = page.warc;
      if (warc === undefined) throw new Error(`${page.url} has no WARC location`);
      if (warc.bucket !== bucket) throw new Error(`${page.url} is in bucket ${warc.bucket}, not ${bucket}`);
      const response = await clients.s3.send(
        new GetObjectCommand({
          Bucket: warc.bucket,
          Key: warc.key,
          Range: `bytes=${warc.offset}-${warc.offset + warc.length - 1}`,
        }),
      );
      return gunzipSync(await response.Body!.transformToByteArray()).toString('latin1');
    },
    async deadLetters(expected, timeoutMs, queue = dlqUrl) {
      const letters: { body: string; attributes: Record<string, string> }[] = [];
      await eventually(
        async () => {
          const response = await clients.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: queue,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: 0,
              MessageAttributeNames: ['All'],
              VisibilityTimeout: 300,
            }),
          );
          for (const message of response.Messages ?? []) {
            const attributes: Record<string, string> = {};
            for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
              attributes[name] = value.StringValue ?? '';
            }
            letters.push({ body: message.Body ?? '', attributes });
          }
          return letters.length >= expected ? letters : undefined;
        },
        timeoutMs,
        `${expected} dead letters`,
      );
      return letters;
    },
    async stop() {
      clients.destroy();
      await local.stop();
      if (faultCounters !== undefined) rmSync(faultCounters, { recursive: true, force: true });
    },
  };
}

/** A small site: path -> HTML links (absolute or same-site paths), plus robots.txt and extras. */
export interface SiteSpec {
  host: string;
  robots?: string;
  pages: Record<string, string[]>;
  /** Raw routes (redirects, duplicates). */
  extra?: Record<string, { status?: number; headers?: Record<string, string>; body?: string }>;
}

/** Starts a fixture site. Links written `@other/path` are filled in by `link` after all sites start. */
export async function startFixtureSite(
  spec: SiteSpec,
  resolve: (link: string) => string,
): Promise<SiteServer> {
  return startSite((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') {
      if (spec.robots === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no robots here');
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(spec.robots);
      }
      return;
    }
    const extra = spec.extra?.[path];
    if (extra !== undefined) {
      res.writeHead(extra.status ?? 200, { 'content-type': 'text/html; charset=utf-8', ...extra.headers });
      res.end(extra.body ?? '');
      return;
    }
    const links = spec.pages[path];
    if (links === undefined) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>not found</body></html>');
      return;
    }
    const anchors = links.map((l) => `<a href="${resolve(l)}">${l}</a>`).join('\n');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html><head><title>${spec.host}${path}</title></head><body>${anchors}</body></html>`,
    );
  }, spec.host);
}

/** Requests of a server that are not robots.txt. */
export function pageRequests(log: readonly LoggedRequest[]): LoggedRequest[] {
  return log.filter((r) => r.path !== '/robots.txt');
}

/**
 * How late this thread's event loop ran while a crawl ran (ms, the most seen). The fixture servers
 * stamp a request's arrival and its response's end on this thread, beside the stand-in's
 * emulators, while the crawler runs in the Lambda containers' threads: a busy loop stamps an end
 * late and shows a gap shorter than the crawler kept (36 ms of a kept 40 in one CI run). Politeness
 * checks allow this much on top of the clocks' slack, at most MAX_LAG_ALLOWED_MS, so a crawler
 * that ignored the gap (requests a few ms apart) still fails them.
 */
export function eventLoopLag(): { stop(): number } {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      return Math.min(MAX_LAG_ALLOWED_MS, histogram.max / 1e6);
    },
  };
}

/** The most event-loop lag a politeness check forgives (see eventLoopLag). */
export const MAX_LAG_ALLOWED_MS = 15;

/** Smallest gap (ms) between the end of one request and the start of the next, on one server. */
export function smallestGap(log: readonly LoggedRequest[]): number {
  let smallest = Number.POSITIVE_INFINITY;
  const sorted = [...log].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++)
    smallest = Math.min(smallest, sorted[i]!.start - sorted[i - 1]!.end);
  return smallest;
}

/** What a crawl cost per fetched page, from the stand-in's metrics (the cost benchmark prints more). */
export interface PerPageCosts {
  pages: number;
  writeUnits: number;
  readUnits: number;
  s3Puts: number;
  /** SQS requests as billed (64 KiB chunks), every queue and the event sources' receives included. */
  sqsRequests: number;
  workerInvocations: number;
  workerGbSeconds: number;
  /** USD per million pages at list prices (localstack/cost-model.ts), excluding data transfer. */
  dollarsPerMillion: { dynamodb: number; sqs: number; s3: number; lambda: number; total: number };
}

/** Divides a run's totals by its fetched pages. Includes whatever else used the endpoint (API polls, scheduler). */
export function perPageCosts(metrics: CloudLocalMetrics, pages: number): PerPageCosts {
  const costs = costBreakdown(metrics);
  const worker = costs.lambda.find((f) => f.function === 'FrontierWorker');
  const per = (n: number) => n / pages;
  const million = (usd: number) => (usd / pages) * 1e6;
  const d = costs.dollars;
  return {
    pages,
    writeUnits: per(costs.dynamo.writeUnits),
    readUnits: per(costs.dynamo.readUnits),
    s3Puts: per(costs.s3.puts),
    sqsRequests: per(costs.sqs.reduce((n, line) => n + line.billed, 0)),
    workerInvocations: per(worker?.invocations ?? 0),
    workerGbSeconds: per(worker?.gbSeconds ?? 0),
    dollarsPerMillion: {
      dynamodb: million(d.dynamoWrites + d.dynamoReads),
      sqs: million(d.sqs),
      s3: million(d.s3),
      lambda: million(d.lambdaRequests + d.lambdaCompute),
      total: million(d.total),
    },
  };
}
