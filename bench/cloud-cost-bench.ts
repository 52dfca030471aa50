/**
 * `npm run bench:cloud`: what the serverless crawler costs per million pages, billed as AWS would
 * bill it (issue 10).
 *
 *   npm run bench:cloud                          # every scenario (realistic first), about 14 minutes
 *   npm run bench:cloud -- --only realistic      # the headline scenario alone, about 7 minutes
 *   npm run bench:cloud -- --only realistic --scale 0.3   # quick: about 3 minutes (1,000 pages)
 *   npm run bench:cloud -- --scale 0.3           # smaller webs, every scenario: about 8 minutes
 *   npm run bench:cloud -- --latency 100-300     # server response time, ms (realistic scenario)
 *   npm run bench:cloud -- --page-kb 30-100      # HTML page sizes, KB (realistic scenario)
 *   npm run bench:cloud -- --cpu-factor 1.3      # Lambda's core this much slower than the local one
 *   npm run bench:cloud -- --json out.json       # also write the numbers as JSON
 *   npm run bench:cloud -- --worker-pollers 2 --worker-hosts 20   # the worker's scale (below)
 *   npm run bench:cloud -- --group-limit 12      # URLs of one host in its FIFO group at most
 *   npm run bench:cloud -- --max-pages 100000    # every crawl with a page budget (its hold-back and refills by task)
 *   npm run bench:cloud -- --requests log.jsonl  # also write every request the servers saw
 *
 * Scenarios. `realistic` (the headline): 100 hosts and 2,500 good pages (Zipf 0.5 host sizes),
 * servers that answer after 100-300 ms (seeded per response), pages of 30-100 KB of markup that
 * gzips like real HTML (test/fixtures/web/page-padding.ts), and the crawl at the configuration's
 * default politeness (no `delayMs` or `delayFactor` given). The loopback scenarios (the second
 * table): servers on loopback answering in about a millisecond with ~8.5 KB pages, at a 20 ms
 * per-host gap (`site`, `broad`) and at the default politeness (`broad-default`).
 *
 * How. Each scenario starts the whole stack on the stand-in in this process (`startCloudLocal`:
 * the synthesized template, the bundled handlers, each Lambda container a worker thread with its
 * own module state, the template's event source settings; only the schedule ticks every 5 s
 * instead of every minute, so a crawl is seen done sooner), serves the web on 127.0.1.x, starts
 * a crawl through the HTTP API, polls its status every 2 s (as `crawlstack cloud watch` or a
 * dashboard would) until `done`, and prices what the stand-in counted at us-east-1 list prices
 * (localstack/cost-model.ts: sources and dates there; Lambda arm64; data transfer excluded):
 * - requests: every SQS request by queue and operation (per started 64 KiB), DynamoDB read and
 *   write units by table and index, S3 requests, Lambda invocations;
 * - Lambda duration, modelled: each invocation's measured wall time and its container thread's
 *   CPU time; billed = max(wall, cpu x cpu-factor / share) rounded up to 1 ms, where share is the
 *   function's vCPU share (memory / 1,769 MB: 0.145 at 256 MB), times memory in GB, at the arm64
 *   GB-second price; plus every cold start's INIT time as measured (billed since August 2025).
 *   An estimate: the local core (AMD EPYC here) is taken as fast as Lambda's Graviton2 core
 *   (`--cpu-factor 1`; a Graviton2 core is likely somewhat slower, so this leans low), the
 *   thread's CPU time leaves out V8's background threads, and `max` assumes the CPU work
 *   overlapped the waits; the additive ceiling (wall + cpu x (factor / share - 1)) is printed too;
 * - CloudWatch Logs: the bytes each crawl function wrote, plus Lambda's START/END/REPORT lines
 *   (about 260 B an invocation) and 26 B per event, priced per GB ingested;
 * - storage for one month at the retention default (90 days, so a crawl pays it about three
 *   times): DynamoDB item bytes of what the crawl left (DynamoDB's size rules, 100 B per item,
 *   index entries too), PITR on the same base-table bytes, S3 Standard for the bucket's objects;
 * - status polling: the measured cost of one GET /crawls/{id} (API invocation, its billed time,
 *   its reads) every 2 s for the crawl's wall time; the API's and the bench's reads are not
 *   counted as the crawl's;
 * - fixed monthly costs, not per page: the template's alarms, the scheduler's tick every minute
 *   for a month (one idle tick measured), the idle long polls of the two event source mappings
 *   (assumed 5 pollers each, 20 s long polls). The scheduler's DynamoDB and SQS calls during the
 *   crawl stay in the crawl's rows (at 12 times AWS's rate: an over-count).
 * URL-seen cache hits are reported per container when the worker writes one EMF log line per
 * invocation with `UrlSeenLookups` and `UrlSeenCacheHits` (the stand-in names each line's
 * container, as CloudWatch names its log stream); otherwise only the pooled rate (the host
 * ledgers' sums over all containers) is known, and the per-container target is not met.
 *
 * Loopback only; ends by itself. Wall time on the 2-core machine (2026-11-26, other jobs
 * running): the realistic scenario 6.6 minutes at scale 1 (2,922 pages), 3 minutes at 0.3; the
 * three loopback scenarios 7.3 minutes; everything at `--scale 0.3` 7.8 minutes. A smaller scale
 * saves less than it seems: each crawl also waits for the archiver's 60 s batching window.
 */

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type AwsClients, createAwsClients } from '../functions/adapters/aws/clients.ts';
import { readGroupLimit, readHostsPerInvocation, TUNING_ENV } from '../functions/cloud/env.ts';
import type { CrawlProgressView } from '../functions/cloud/use-cases/crawl-progress.ts';
import { type ArchiveLifecycle, DEFAULT_ARCHIVE } from '../lib/storage.ts';
import { startCloudLocal } from '../localstack/cloud-local.ts';
import {
  type CostBreakdown,
  costBreakdown,
  cpuShare,
  type LambdaBillingModel,
  LIST_PRICES,
  metricsDelta,
} from '../localstack/cost-model.ts';
import { generateWeb, TRAP_KINDS, type TrapKind } from '../test/fixtures/web/generate-web.ts';
import { serveWeb, type WebRequest } from '../test/fixtures/web/serve-web.ts';
import { auditClaims, scanItems } from './lib/claim-audit.ts';
import { cloudApi } from './lib/cloud-api.ts';
import { type CrawlStorage, measureStorage } from './lib/cloud-storage.ts';
import {
  addWorkerTime,
  describeCaptureBytes,
  describeWorkerTime,
  emptyWorkerTime,
  parseEmf,
  type WorkerTime,
} from './lib/worker-time.ts';

interface Scenario {
  name: string;
  what: string;
  hosts: number;
  pages: number;
  /** Per-host gap; absent: the configuration's default politeness. */
  delayMs?: number;
  /** Zipf exponent of host sizes (0: all hosts the same size). */
  skew: number;
  latencyMs?: { min: number; max: number };
  pageBytes?: { min: number; max: number };
  realistic: boolean;
}

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    scale: { type: 'string', default: '1' },
    json: { type: 'string' },
    seed: { type: 'string', default: '7' },
    latency: { type: 'string', default: '100-300' },
    'page-kb': { type: 'string', default: '30-100' },
    'cpu-factor': { type: 'string', default: '1' },
    /** `off`: crawl with `seenTrace: false` (what the URL-seen trace costs); default on. */
    'seen-trace': { type: 'string', default: 'on' },
    /** Frontier pollers (the stack's workerMaxConcurrency); default: the template's. */
    'worker-pollers': { type: 'string' },
    /**
     * Hosts per worker invocation (the stack's workerHostsPerInvocation, as the variable the
     * worker reads); default: the template's. The template's memory stays, and is what is billed.
     */
    'worker-hosts': { type: 'string' },
    'group-limit': { type: 'string' },
    /**
     * A page budget for every crawl (`maxPages`): a budgeted crawl holds poor pages back and refills
     * by task (docs/aopic.md, docs/cloud.md). A budget above the scenario's pages prices that order
     * on the same crawl.
     */
    'max-pages': { type: 'string' },
    /** Every request the fixture servers saw, as JSON Lines: scenario, host, path, start and end (ms from the first). */
    requests: { type: 'string' },
  },
});

/**
 * Appends the servers' request log (how each host was paced: the gaps a crawl leaves, its tail),
 * times in ms from the scenario's first request.
 */
function writeRequestLog(file: string, scenario: string, requests: readonly WebRequest[]): void {
  const t0 = Math.min(...requests.map((r) => r.start));
  const lines = requests.map((r) =>
    JSON.stringify({
      scenario,
      host: r.host,
      path: r.path,
      start: Math.round(r.start - t0),
      end: Math.round(r.end - t0),
    }),
  );
  appendFileSync(file, lines.length > 0 ? `${lines.join('\n')}\n` : '');
}

/** `a-b` as a range of non-negative numbers, or an error naming the flag. */
function range(flag: string, text: string, unit = 1): { min: number; max: number } {
  const match = /^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?$/.exec(text);
  const min = Number(match?.[1]);
  const max = Number(match?.[2] ?? match?.[1]);
  if (match === null || !(max >= min)) throw new Error(`--${flag} ${text}: expected MIN-MAX, e.g. 100-300`);
  return { min: Math.round(min * unit), max: Math.round(max * unit) };
}

const scale = Number(values.scale);
if (!(scale > 0)) throw new Error(`--scale ${values.scale}: expected a number above 0`);
const model: LambdaBillingModel = { cpuSpeedFactor: Number(values['cpu-factor']) };
if (!(model.cpuSpeedFactor > 0))
  throw new Error(`--cpu-factor ${values['cpu-factor']}: expected a number above 0`);
const latencyMs = range('latency', values.latency);
const pageKb = range('page-kb', values['page-kb'], 1000);
const POLL_SECONDS = 2;
// A bad --worker-hosts fails here, not at each worker's cold start.
if (values['group-limit'] !== undefined) readGroupLimit({ [TUNING_ENV.groupLimit]: values['group-limit'] });
if (values['worker-hosts'] !== undefined) {
  readHostsPerInvocation({ [TUNING_ENV.hostsPerInvocation]: values['worker-hosts'] });
}
/** The window of the busiest pages/s (docs/cloud.md, "How many hosts at once", compares it). */
const RATE_WINDOW_SECONDS = 30;

/** Pages/s over the busiest window of the status polls' (seconds, pages fetched) samples. */
function busiestRate(samples: readonly { at: number; fetched: number }[]): number {
  let best = 0;
  let from = 0;
  for (const sample of samples) {
    while (sample.at - samples[from]!.at > RATE_WINDOW_SECONDS) from += 1;
    const first = samples[from]!;
    if (sample.at - first.at >= RATE_WINDOW_SECONDS / 2) {
      best = Math.max(best, (sample.fetched - first.fetched) / (sample.at - first.at));
    }
  }
  return best;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'realistic',
    what: `realistic: 100 hosts, servers ${latencyMs.min}-${latencyMs.max} ms, pages ${values['page-kb']} KB, default politeness`,
    hosts: 100,
    pages: 2500,
    skew: 0.5,
    latencyMs,
    pageBytes: pageKb,
    realistic: true,
  },
  {
    name: 'site',
    what: 'loopback site crawl: 1 host, delayMs 20',
    hosts: 1,
    pages: 2000,
    delayMs: 20,
    skew: 1,
    realistic: false,
  },
  {
    name: 'broad',
    what: 'loopback broad crawl: 100 hosts, delayMs 20',
    hosts: 100,
    pages: 3000,
    delayMs: 20,
    skew: 0.5,
    realistic: false,
  },
  {
    name: 'broad-default',
    what: 'loopback broad crawl: 20 hosts, default politeness',
    hosts: 20,
    pages: 300,
    skew: 0,
    realistic: false,
  },
].filter((s) => values.only === undefined || values.only.split(',').includes(s.name));
if (SCENARIOS.length === 0)
  throw new Error(`--only ${values.only}: no such scenario (realistic, site, broad, broad-default)`);

const NO_TRAPS = Object.fromEntries(TRAP_KINDS.map((t) => [t, 0])) as Record<TrapKind, number>;
const GB = 2 ** 30;
const MONTH_MINUTES = 30 * 24 * 60;
/** Lambda's START, END and REPORT lines of one invocation, bytes (estimated from their format). */
const PLATFORM_LOG_BYTES = 260;
/** CloudWatch Logs bills 26 bytes of overhead per log event. */
const LOG_EVENT_OVERHEAD = 26;
/** Functions whose work is the crawl (the API and the scheduler are watching and housekeeping). */
const CRAWL_FUNCTIONS = ['FrontierWorker', 'Archiver'];
/** Idle pollers Lambda keeps per SQS event source mapping (assumed), each a 20 s long poll. */
const IDLE_POLLERS = 5;

/** URL-seen counts of one worker container, from its EMF lines. */
interface ContainerSeen {
  lookups: number;
  hits: number;
}

/** One scenario's numbers. */
interface Result {
  scenario: Scenario;
  seconds: number;
  pages: number;
  /** Pages fetched per second over the crawl, and over its busiest {@link RATE_WINDOW_SECONDS}. */
  rate: { overall: number; busiest: number };
  finished: number;
  lost: number;
  polls: number;
  costs: CostBreakdown;
  storage: CrawlStorage;
  /** USD for the crawl, by row (see `rows`). */
  rows: Record<string, number>;
  /** USD per month whatever the crawls. */
  fixed: Record<string, number>;
  perPage: { s3Puts: number; writeUnits: number };
  cache: { pooled: number; containers: ContainerSeen[] };
  /** Where the worker's time went (its EMF lines). */
  workerTime: WorkerTime;
  logs: Record<string, { lines: number; bytes: number }>;
}

async function run(scenario: Scenario): Promise<Result> {
  const goodPages = Math.max(scenario.hosts, Math.round(scenario.pages * scale));
  const web = generateWeb({
    seed: Number(values.seed),
    hosts: scenario.hosts,
    goodPages,
    seedHosts: Math.min(3, scenario.hosts),
    hostSizeExponent: scenario.skew,
    trapHosts: NO_TRAPS,
    ...(scenario.pageBytes === undefined ? {} : { pageBytes: scenario.pageBytes }),
  });
  const served = await serveWeb(web, {
    seed: Number(values.seed),
    ...(scenario.latencyMs === undefined ? {} : { latencyMs: scenario.latencyMs }),
  });
  const logs: Record<string, { lines: number; bytes: number }> = {};
  const seen = new Map<number, ContainerSeen>();
  const workerTime = emptyWorkerTime();
  const debug = process.env.CRAWLSTACK_BENCH_DEBUG === '1';
  const log = (line: string, container?: number) => {
    if (debug && !line.includes('"UrlSeenLookups"')) process.stderr.write(`${line}\n`);
    // `[<prefix>-<Function>] <line>`: the stand-in names functions with the stack's prefix.
    const full = /^\[([\w-]+)\] /.exec(line)?.[1];
    if (full === undefined) return;
    const name = full.slice(full.lastIndexOf('-') + 1);
    const entry = logs[name] ?? { lines: 0, bytes: 0 };
    entry.lines += 1;
    entry.bytes += Buffer.byteLength(line) - full.length - 3;
    logs[name] = entry;
    if (name === 'FrontierWorker' && container !== undefined && line.includes('"UrlSeenLookups"')) {
      const emf = parseEmf(line.slice(full.length + 3));
      if (emf === undefined) return;
      addWorkerTime(workerTime, emf);
      const counts = seen.get(container) ?? { lookups: 0, hits: 0 };
      counts.lookups += emf.UrlSeenLookups ?? 0;
      counts.hits += emf.UrlSeenCacheHits ?? 0;
      seen.set(container, counts);
    }
  };
  const local = await startCloudLocal({
    // The fixture servers are on loopback: allowed on the stand-in, forbidden by default on AWS.
    env: {
      PRIVATE_ADDRESSES: 'allowed',
      ...(values['worker-hosts'] === undefined
        ? {}
        : { [TUNING_ENV.hostsPerInvocation]: values['worker-hosts'] }),
      ...(values['group-limit'] === undefined ? {} : { [TUNING_ENV.groupLimit]: values['group-limit'] }),
    },
    port: 0,
    prefix: `bench${process.pid.toString(36)}${scenario.name.replace(/\W/g, '')}`,
    scheduleRateMs: 5000,
    log,
    ...(values['worker-pollers'] === undefined
      ? {}
      : {
          eventSource: {
            byFunction: { FrontierWorker: { maxConcurrency: Number(values['worker-pollers']) } },
          },
        }),
  });
  const api = cloudApi(local.api, local.token);
  try {
    const started = performance.now();
    const { id } = (await api('/crawls', {
      method: 'POST',
      body: JSON.stringify({
        seeds: served.seeds,
        scope: 'any',
        allowPrivate: true,
        ...(scenario.delayMs === undefined ? {} : { delayMs: scenario.delayMs }),
        ...(values['max-pages'] === undefined ? {} : { maxPages: Number(values['max-pages']) }),
        seenTrace: values['seen-trace'] !== 'off',
      }),
    })) as { id: string };
    let view: CrawlProgressView;
    let polls = 0;
    const samples: { at: number; fetched: number }[] = [{ at: 0, fetched: 0 }];
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_SECONDS * 1000));
      view = (await api(`/crawls/${id}`)) as unknown as CrawlProgressView;
      polls += 1;
      samples.push({ at: (performance.now() - started) / 1000, fetched: view.counters.fetched });
      if (view.status !== 'running') break;
      const c = view.counters;
      process.stderr.write(`\r  ${scenario.name}: ${c.finished}/${c.discovered} finished   `);
      if (performance.now() - started > 30 * 60_000) throw new Error('crawl did not finish in 30 minutes');
    }
    const seconds = (performance.now() - started) / 1000;
    process.stderr.write('\n');
    // Snapshot before the bench's own reads; then one status poll and one scheduler tick alone.
    const metrics = local.metrics();
    const beforePoll = local.metrics();
    await api(`/crawls/${id}`);
    const poll = costBreakdown(metricsDelta(local.metrics(), beforePoll), model);
    const beforeTick = local.metrics();
    await local.lambdas.Scheduler?.invoke(scheduledEvent());
    const tick = costBreakdown(metricsDelta(local.metrics(), beforeTick), model);
    const urlTable = local.provisioned.resources.UrlTable?.name as string;
    const crawlTable = local.provisioned.resources.CrawlTable?.name as string;
    const bucket = local.provisioned.resources.PageBucket?.name as string;
    const storage = await measureStorage(local.endpoint, [urlTable, crawlTable], bucket);
    if (debug) {
      const clients = createAwsClients({ AWS_ENDPOINT_URL: local.endpoint, AWS_REGION: 'us-east-1' });
      const tables = { crawl: crawlTable, url: urlTable };
      await debugDump(clients, tables, bucket, id, view.lost ?? 0).finally(() => clients.destroy());
    }
    if (values.requests !== undefined) writeRequestLog(values.requests, scenario.name, served.requests());
    const costs = costBreakdown(metrics, model);
    const pages = view.counters.fetched;
    return {
      scenario: { ...scenario, pages: goodPages },
      seconds,
      pages,
      rate: { overall: pages / seconds, busiest: busiestRate(samples) },
      finished: view.counters.finished,
      lost: view.lost ?? 0,
      polls,
      costs,
      storage,
      rows: crawlRows(costs, poll, storage, logs, seconds, polls),
      fixed: fixedMonthly(tick),
      perPage: { s3Puts: costs.s3.puts / pages, writeUnits: costs.dynamo.writeUnits / pages },
      cache: { pooled: view.urlSeen.hitRate, containers: [...seen.values()] },
      workerTime,
      logs,
    };
  } finally {
    await local.stop();
    await served.close();
  }
}

function scheduledEvent(): unknown {
  return {
    version: '0',
    id: 'bench-tick',
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [],
    detail: {},
  };
}

const lambdaDollars = (costs: CostBreakdown, names: string[]) =>
  costs.lambda
    .filter((f) => names.includes(f.function))
    .reduce(
      (n, f) => n + f.invocations * LIST_PRICES.lambdaRequest + f.gbSeconds * LIST_PRICES.lambdaArmGbSecond,
      0,
    );

/** USD of log ingestion for the functions' own lines and Lambda's lines per invocation. */
function logDollars(logs: Result['logs'], costs: CostBreakdown, names: string[]): number {
  let bytes = 0;
  for (const name of names) {
    const own = logs[name] ?? { lines: 0, bytes: 0 };
    const invocations = costs.lambda.find((f) => f.function === name)?.invocations ?? 0;
    bytes +=
      own.bytes +
      own.lines * LOG_EVENT_OVERHEAD +
      invocations * (PLATFORM_LOG_BYTES + 3 * LOG_EVENT_OVERHEAD);
  }
  return (bytes / GB) * LIST_PRICES.logsIngestGb;
}

/**
 * Debug (CRAWLSTACK_BENCH_DEBUG=1): host items whose group says it holds messages, the back-queue
 * turns left, and the crawl's claims audited against its archive (bench/lib/claim-audit.ts).
 */
async function debugDump(
  clients: AwsClients,
  tables: { crawl: string; url: string },
  bucket: string,
  crawlId: string,
  lost: number,
): Promise<void> {
  await scanItems(clients, tables.crawl, (item) => {
    const sk = String(item.sk ?? '');
    if (String(item.pk).startsWith('bq#')) console.error(`BACKLOG ${item.pk} ${sk}`);
    else if (
      sk.startsWith('host#') &&
      (Number(item.groupQueued ?? 0) !== 0 || item.groupStarter !== undefined)
    )
      console.error(
        `GROUP ${sk} queued=${item.groupQueued} v=${item.backlogVersion} d=${item.backlogDrained} s=${item.groupStarter} doneSeq=${item.doneSeq}`,
      );
  });
  const { unfinished, claimedTwice } = await auditClaims(clients, tables, bucket, crawlId);
  console.error(
    `UNFINISHED: ${unfinished.length} claimed URLs without a page record or a park, ${claimedTwice} claimed twice (lost: ${lost})`,
  );
  for (const u of unfinished.slice(0, 50)) {
    console.error(`UNFINISHED ${u.fp} host=${u.host} owner=${u.owner} inBackQueue=${u.inBackQueue}`);
  }
}

/** The crawl's USD by row: requests, compute, logs, a month of storage, status polling. */
function crawlRows(
  costs: CostBreakdown,
  poll: CostBreakdown,
  storage: CrawlStorage,
  logs: Result['logs'],
  seconds: number,
  polls: number,
): Record<string, number> {
  const p = LIST_PRICES;
  const d = costs.dollars;
  const tables = Object.values(storage.tables);
  const tableBytes = tables.reduce((n, t) => n + t.bytes, 0);
  const indexBytes = tables.reduce((n, t) => n + t.indexBytes, 0);
  const objectBytes = Object.values(storage.objects).reduce((n, o) => n + o.bytes, 0);
  const rows: Record<string, number> = {
    'DynamoDB writes': d.dynamoWrites,
    'DynamoDB reads': Math.max(0, d.dynamoReads - polls * poll.dollars.dynamoReads),
    SQS: Math.max(0, d.sqs - polls * poll.dollars.sqs),
    'S3 requests': d.s3,
    'Lambda FrontierWorker (requests + modelled GB-s)': lambdaDollars(costs, ['FrontierWorker']),
    'Lambda Archiver (requests + modelled GB-s)': lambdaDollars(costs, ['Archiver']),
    'CloudWatch Logs ingestion': logDollars(logs, costs, CRAWL_FUNCTIONS),
    'DynamoDB storage, 1 month': ((tableBytes + indexBytes) / GB) * p.dynamoStorageGbMonth,
    'DynamoDB PITR, 1 month': (tableBytes / GB) * p.dynamoPitrGbMonth,
    // WARC objects under the deploy's default lifecycle (lib/storage.ts), the rest in Standard.
    [S3_STORAGE_ROW]:
      ((objectBytes - (storage.objects.warc?.bytes ?? 0)) / GB) * p.s3StandardGbMonth +
      archiveMonthly(storage.objects.warc, DEFAULT_ARCHIVE),
    [`status polling every ${POLL_SECONDS} s`]:
      (seconds / POLL_SECONDS) * (poll.dollars.total + logDollars({}, poll, ['Api'])),
  };
  rows.total = Object.values(rows).reduce((n, v) => n + v, 0);
  return rows;
}

/**
 * The WARC objects' storage under each archive lifecycle a deploy can choose
 * (crawlstack:archiveStorageClass, crawlstack:archiveTransitionDays; lib/storage.ts), per million
 * pages and per month, averaged over the retention default (90 days): days in Standard, then the
 * class, plus one transition request per object. Reads of archived objects (IA $0.01, Glacier IR
 * $0.03 per GB) are the user's downloads and not counted.
 */
function archiveClassLines(r: Result): string[] {
  const warc = r.storage.objects.warc;
  const perMillion = (usd: number) => (usd / Math.max(1, r.pages)) * 1e6;
  const option = (name: string, archive: ArchiveLifecycle) =>
    `${name} $${fmt(perMillion(archiveMonthly(warc, archive)), 3)}`;
  return [
    `    WARC storage per month over ${RETENTION_DAYS} days of retention, $/M pages: ${[
      option('Standard', { storageClass: 'STANDARD', afterDays: RETENTION_DAYS }),
      option('Standard-IA after 30 d (default)', { storageClass: 'STANDARD_IA', afterDays: 30 }),
      option('Glacier IR after 0 d', { storageClass: 'GLACIER_IR', afterDays: 0 }),
    ].join('; ')}`,
  ];
}

/** The retention default: a crawl's objects are stored this long, so a month is a third of it. */
const RETENTION_DAYS = 90;

/** The row of the objects' month of storage. */
const S3_STORAGE_ROW = `S3 storage, 1 month (WARC ${DEFAULT_ARCHIVE.storageClass} after ${DEFAULT_ARCHIVE.afterDays} d)`;

/**
 * A month of the WARC objects' storage under a lifecycle, averaged over the retention: its days
 * in Standard, then its class, plus one transition request per object.
 */
function archiveMonthly(
  warc: { objects: number; bytes: number } | undefined,
  archive: ArchiveLifecycle,
): number {
  if (warc === undefined) return 0;
  const p = LIST_PRICES;
  const [gbMonth, transition] =
    archive.storageClass === 'GLACIER_IR'
      ? [p.s3GlacierIrGbMonth, p.s3TransitionToGlacierIr]
      : archive.storageClass === 'STANDARD_IA'
        ? [p.s3StandardIaGbMonth, p.s3TransitionToIa]
        : [p.s3StandardGbMonth, 0];
  const standardDays = Math.min(archive.afterDays, RETENTION_DAYS);
  const gbDays =
    (warc.bytes / GB) * (standardDays * p.s3StandardGbMonth + (RETENTION_DAYS - standardDays) * gbMonth);
  const moves = standardDays < RETENTION_DAYS ? (warc.objects * transition) / (RETENTION_DAYS / 30) : 0;
  return gbDays / RETENTION_DAYS + moves;
}

/** USD per month whatever the crawls: alarms, the scheduler every minute, idle event-source polls. */
function fixedMonthly(tick: CostBreakdown): Record<string, number> {
  const p = LIST_PRICES;
  const template = JSON.parse(readFileSync('cdk.out/CrawlstackStack.template.json', 'utf8')) as {
    Resources: Record<string, { Type: string }>;
  };
  const alarms = Object.values(template.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm').length;
  const pollsPerMonth = IDLE_POLLERS * MONTH_MINUTES * 3;
  const tickMs = tick.lambda.reduce((n, f) => n + f.billedMs, 0);
  const fixed: Record<string, number> = {
    [`${alarms} CloudWatch alarms`]: alarms * p.alarmMonth,
    [`scheduler every minute (an idle tick: ${fmt(tickMs, 0)} ms billed, ${fmt(tick.dynamo.readUnits, 1)} RRU)`]:
      MONTH_MINUTES * (tick.dollars.total + logDollars({}, tick, ['Scheduler'])),
    [`idle event source polls (${IDLE_POLLERS} pollers x 2 queues, 20 s)`]:
      pollsPerMonth * (p.sqsFifoRequest + p.sqsStandardRequest),
  };
  fixed.total = Object.values(fixed).reduce((n, v) => n + v, 0);
  return fixed;
}

// --- printing --------------------------------------------------------------------------------

const fmt = (n: number, digits = 3) =>
  n === 0 ? '0' : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(digits);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Per-container hit rates of containers with at least 50 look-ups, sorted. */
function containerRates(r: Result): number[] {
  return r.cache.containers
    .filter((c) => c.lookups >= 50)
    .map((c) => c.hits / c.lookups)
    .sort((a, b) => a - b);
}

function targets(r: Result): [string, boolean, string][] {
  const million = (r.rows.total! / r.pages) * 1e6;
  const rates = containerRates(r);
  return [
    ['total <= $2 per million pages', million <= 2, `$${fmt(million)}`],
    ['S3 PUT per page <= 0.1', r.perPage.s3Puts <= 0.1, fmt(r.perPage.s3Puts)],
    ['DynamoDB WRU per page <= 4', r.perPage.writeUnits <= 4, fmt(r.perPage.writeUnits)],
    [
      'URL-seen cache hits >= 75% in every container',
      rates.length > 0 && rates[0]! >= 0.75,
      rates.length > 0
        ? `min ${pct(rates[0]!)}`
        : `not measured per container (the worker writes no UrlSeenLookups EMF line); pooled ${pct(r.cache.pooled)}`,
    ],
    ['URLs lost = 0', r.lost === 0, String(r.lost)],
  ];
}

function print(r: Result): void {
  const { costs, pages } = r;
  const million = (usd: number) => (usd / pages) * 1e6;
  console.log(`\n## ${r.scenario.what}`);
  console.log(
    `web: ${r.scenario.hosts} host(s), ${r.scenario.pages} good pages; crawl: ${pages} pages fetched, ${r.finished} URLs finished, ${r.lost} lost, ${Math.round(r.seconds)} s, ${r.polls} status polls`,
  );
  console.log(
    `pages/s: ${fmt(r.rate.overall)} over the crawl, ${fmt(r.rate.busiest)} in its busiest ${RATE_WINDOW_SECONDS} s (docs/cloud.md, "How many hosts at once")`,
  );
  for (const [row, usd] of Object.entries(r.rows)) {
    if (row === 'total') continue;
    console.log(`  ${row.padEnd(52)}${`$${fmt(million(usd))}`.padStart(10)} /M pages`);
  }
  console.log(`  ${'TOTAL'.padEnd(52)}${`$${fmt(million(r.rows.total!))}`.padStart(10)} /M pages`);
  console.log('  fixed, per month whatever is crawled:');
  for (const [row, usd] of Object.entries(r.fixed))
    console.log(`    ${row.padEnd(50)}${`$${fmt(usd)}`.padStart(10)} /month`);
  console.log('  counts:');
  const line = (label: string, count: number) =>
    console.log(
      `    ${label.padEnd(50)}${fmt(count, 0).padStart(10)}${fmt(count / pages).padStart(10)} /page`,
    );
  for (const [table, units] of Object.entries(costs.dynamo.byTable)) {
    const name = table.replace(/^.*-/, '');
    line(`DynamoDB WRU ${name}`, units.writeRequestUnits);
    line(`DynamoDB RRU ${name}`, units.readRequestUnits);
  }
  if (process.env.CRAWLSTACK_BENCH_DEBUG === '1') {
    // Where the units come from: table, operation, item family (the busiest first).
    const families = Object.entries(costs.dynamo.byFamily)
      .map(([family, u]) => ({ family: family.replace(/^\S*-(\w+) /, '$1 '), u }))
      .sort(
        (a, b) =>
          b.u.writeRequestUnits + b.u.readRequestUnits / 4 - a.u.writeRequestUnits - a.u.readRequestUnits / 4,
      );
    for (const { family, u } of families.slice(0, 30)) {
      const per = u.items
        ? ` (${u.items} items, ${fmt((u.writeRequestUnits + u.readRequestUnits) / u.items)} units each)`
        : '';
      if (u.writeRequestUnits > 0) line(`  WRU ${family}${per}`, u.writeRequestUnits);
      if (u.readRequestUnits > 0) line(`  RRU ${family}${per}`, u.readRequestUnits);
    }
  }
  for (const l of [...costs.sqs].sort(
    (a, b) => a.queue.localeCompare(b.queue) || a.operation.localeCompare(b.operation),
  )) {
    const queue = l.queue.replace(/^.*-(\w+(?:\.fifo)?)$/, '$1');
    line(`SQS ${queue} ${l.operation}${l.empty > 0 ? ` (${l.empty} empty)` : ''}`, l.billed);
  }
  line('S3 PUT', costs.s3.puts);
  line('S3 GET', costs.s3.gets);
  for (const f of costs.lambda) {
    line(`Lambda ${f.function} invocations`, f.invocations);
    console.log(
      `    ${f.function}: ${f.memoryMb} MB (${fmt(cpuShare(f.memoryMb))} vCPU); per invocation wall ${fmt(f.wallBilledMs / Math.max(1, f.invocations), 0)} ms, CPU ${fmt(f.cpuMs / Math.max(1, f.invocations), 1)} ms, billed ${fmt(f.billedMs / Math.max(1, f.invocations), 0)} ms (ceiling ${fmt(f.ceilingMs / Math.max(1, f.invocations), 0)}); ${f.coldStarts} cold starts, INIT ${f.initMs} ms`,
    );
  }
  for (const [table, t] of Object.entries(r.storage.tables)) {
    console.log(
      `    stored ${table.replace(/^.*-/, '')}: ${t.items} items (${t.contentClaims} content-hash claims), ${fmt(t.bytes / Math.max(1, t.items), 0)} B/item, index entries ${fmt(t.indexBytes / 1024, 0)} KiB`,
    );
  }
  console.log(
    `    stored S3: ${Object.entries(r.storage.objects)
      .map(([k, o]) => `${k}/ ${o.objects} objects ${fmt(o.bytes / 2 ** 20, 1)} MiB`)
      .join(', ')}`,
  );
  console.log(
    `    logs: ${
      Object.entries(r.logs)
        .map(([k, l]) => `${k} ${l.lines} lines ${fmt(l.bytes / 1024, 0)} KiB`)
        .join(', ') || 'none'
    }`,
  );
  for (const line of archiveClassLines(r)) console.log(line);
  const rates = containerRates(r);
  console.log(
    `    URL-seen cache hits: pooled ${pct(r.cache.pooled)} (the host ledgers' sums over all containers, each with its own cache); per container ${rates.length === 0 ? 'not measured' : `min ${pct(rates[0]!)}, median ${pct(rates[Math.floor(rates.length / 2)]!)} over ${rates.length} containers`}`,
  );
  console.log(`    ${describeWorkerTime(r.workerTime)}`);
  console.log(`    ${describeCaptureBytes(r.workerTime, r.pages)}`);
  for (const [what, ok, value] of targets(r)) console.log(`  ${ok ? 'PASS' : 'FAIL'}  ${what}: ${value}`);
}

/** The summary table, markdown, as docs/cloud.md shows it. */
function table(results: Result[]): void {
  console.log(
    '\n| scenario | pages | $/M pages | requests+compute | logs | storage (1 month) | polling | S3 PUT/page | WRU/page | cache hits per container (min / median / pooled) | lost | wall |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const m = (usd: number) => `$${fmt((usd / r.pages) * 1e6)}`;
    const storage =
      r.rows['DynamoDB storage, 1 month']! + r.rows['DynamoDB PITR, 1 month']! + r.rows[S3_STORAGE_ROW]!;
    const polling = r.rows[`status polling every ${POLL_SECONDS} s`]!;
    const logs = r.rows['CloudWatch Logs ingestion']!;
    const rates = containerRates(r);
    const perContainer =
      rates.length === 0 ? 'n/a / n/a' : `${pct(rates[0]!)} / ${pct(rates[Math.floor(rates.length / 2)]!)}`;
    console.log(
      `| ${r.scenario.name} | ${r.pages} | **${m(r.rows.total!)}** | ${m(r.rows.total! - storage - polling - logs)} | ${m(logs)} | ${m(storage)} | ${m(polling)} | ${fmt(r.perPage.s3Puts)} | ${fmt(r.perPage.writeUnits)} | ${perContainer} / ${pct(r.cache.pooled)} | ${r.lost} | ${Math.round(r.seconds)} s |`,
    );
  }
}

console.log(
  `# crawlstack cloud cost benchmark (stand-in; us-east-1 list prices as of ${LIST_PRICES.asOf}; Lambda arm64; data transfer excluded)`,
);
console.log(
  `Lambda billed = max(wall, CPU x ${model.cpuSpeedFactor} / vCPU share) per invocation + INIT; scale ${scale}; status polls every ${POLL_SECONDS} s`,
);
const results: Result[] = [];
for (const scenario of SCENARIOS) {
  const result = await run(scenario);
  results.push(result);
  print(result);
}
const realistic = results.filter((r) => r.scenario.realistic);
const loopback = results.filter((r) => !r.scenario.realistic);
if (realistic.length > 0) {
  console.log('\n# realistic regime');
  table(realistic);
}
if (loopback.length > 0) {
  console.log('\n# loopback scenarios');
  table(loopback);
}
if (values.json !== undefined) {
  writeFileSync(values.json, JSON.stringify(results, null, 1));
}
