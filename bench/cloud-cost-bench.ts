/**
 * `npm run bench:cloud`: what the serverless crawler costs per million pages.
 *
 *   npm run bench:cloud                       # = tsx --disable-warning=ExperimentalWarning bench/cloud-cost-bench.ts
 *   npm run bench:cloud -- --only site        # one scenario (site, broad, site-1s, broad-1s)
 *   npm run bench:cloud -- --scale 0.5        # smaller webs (faster, noisier)
 *   npm run bench:cloud -- --json out.json    # also write the numbers as JSON
 *
 * Each scenario starts the whole stack on the local stand-in in this process (`startCloudLocal`:
 * the synthesized template, the real bundled handlers, the template's event source settings),
 * serves a generated fixture web on 127.0.1.x (test/fixtures/web: realistic pages of ~8.5 KB with
 * ~15 links, duplicates, redirects, dead links; no traps), starts a crawl through the HTTP API,
 * polls it to `done`, and reads the stand-in's counters: every SQS request by queue and operation
 * (billed per started 64 KiB), DynamoDB read and write units by table, S3 requests, Lambda
 * invocations and billed milliseconds per function. They are priced at us-east-1 list prices
 * (localstack/cost-model.ts, data transfer excluded) next to the same counts for the naive design
 * (one S3 PUT per page, one conditional write per extracted link, no cache), and checked against
 * the targets of issue 3.
 *
 * Loopback only. About seven minutes on two cores (the 1 s-delay scenarios are slow by design,
 * and each crawl ends only after the archiver's 60 s batching window).
 * Numbers are for the stand-in: its SQS FIFO hands out several messages of a group per receive
 * and keeps their order, as SQS does (localstack/fauxqs-fifo.ts); Lambda billed time is wall time
 * in a shared process.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { PageItem } from '../functions/cloud/messages/crawl-records.ts';
import type { CrawlProgressView } from '../functions/cloud/use-cases/crawl-progress.ts';
import { type CloudLocalMetrics, startCloudLocal } from '../localstack/cloud-local.ts';
import { type CostBreakdown, costBreakdown, dollarTotal, LIST_PRICES } from '../localstack/cost-model.ts';
import { generateWeb, TRAP_KINDS, type TrapKind } from '../test/fixtures/web/generate-web.ts';
import { serveWeb } from '../test/fixtures/web/serve-web.ts';
import { cloudApi } from './lib/cloud-api.ts';

interface Scenario {
  name: string;
  what: string;
  hosts: number;
  pages: number;
  delayMs: number;
  /** Zipf exponent of host sizes (0: all hosts the same size). */
  skew?: number;
}

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    scale: { type: 'string', default: '1' },
    json: { type: 'string' },
    seed: { type: 'string', default: '7' },
    /** Frontier pollers (the stack's workerMaxConcurrency); default: the template's. */
    'worker-pollers': { type: 'string' },
  },
});
const scale = Number(values.scale);
const SCENARIOS: Scenario[] = [
  { name: 'site', what: 'site crawl: 1 host, delayMs 20', hosts: 1, pages: 2000, delayMs: 20 },
  {
    name: 'broad',
    what: 'broad crawl: 100 hosts, delayMs 20',
    hosts: 100,
    pages: 3000,
    delayMs: 20,
    skew: 0.5,
  },
  { name: 'site-1s', what: 'site crawl: 1 host, delayMs 1000 (default)', hosts: 1, pages: 60, delayMs: 1000 },
  {
    name: 'broad-1s',
    what: 'broad crawl: 20 hosts, delayMs 1000 (default)',
    hosts: 20,
    pages: 300,
    delayMs: 1000,
    skew: 0,
  },
].filter((s) => values.only === undefined || values.only.split(',').includes(s.name));

const NO_TRAPS = Object.fromEntries(TRAP_KINDS.map((t) => [t, 0])) as Record<TrapKind, number>;

/** One scenario's numbers. */
interface Result {
  scenario: Scenario;
  seconds: number;
  view: CrawlProgressView;
  /** Pages with an HTTP response (the "per page" divisor). */
  pages: number;
  listed: number;
  outLinks: number;
  contentClaims: number;
  urlClaims: number;
  costs: CostBreakdown;
  /** USD of watching the crawl (the bench's status polls, the scheduler ticks), estimated. */
  observation: number;
  naive: { dollars: Record<string, number>; writes: number; puts: number };
  metrics: CloudLocalMetrics;
}

async function run(scenario: Scenario): Promise<Result> {
  const goodPages = Math.max(scenario.hosts, Math.round(scenario.pages * scale));
  const web = generateWeb({
    seed: Number(values.seed),
    hosts: scenario.hosts,
    goodPages,
    seedHosts: Math.min(3, scenario.hosts),
    hostSizeExponent: scenario.skew ?? 1,
    trapHosts: NO_TRAPS,
  });
  const served = await serveWeb(web);
  const logs: string[] = [];
  // The template's settings (20 frontier pollers, 20 s long polls, archiver window 30 s); only
  // the schedule runs every 5 s instead of every minute, so a crawl is seen done sooner.
  const local = await startCloudLocal({
    // The fixture servers are on loopback: allowed on the stand-in, forbidden by default on AWS.
    env: { PRIVATE_ADDRESSES: 'allowed' },
    port: 0,
    prefix: `bench${process.pid.toString(36)}${scenario.name.replace(/\W/g, '')}`,
    scheduleRateMs: 5000,
    log: (line) => logs.push(line),
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
        delayMs: scenario.delayMs,
      }),
    })) as { id: string };
    let view: CrawlProgressView;
    for (;;) {
      await new Promise((r) => setTimeout(r, 2500));
      view = (await api(`/crawls/${id}`)) as unknown as CrawlProgressView;
      if (view.status !== 'running') break;
      const c = view.counters;
      process.stderr.write(`\r  ${scenario.name}: ${c.finished}/${c.discovered} finished   `);
      if (performance.now() - started > 20 * 60_000) throw new Error('crawl did not finish in 20 minutes');
    }
    const seconds = (performance.now() - started) / 1000;
    process.stderr.write('\n');
    // Snapshot before reading the results back (those reads are the bench's, not the crawl's).
    const metrics = local.metrics();
    const costs = costBreakdown(metrics);
    // What one status read costs in DynamoDB reads (the scheduler's tick reads the same items).
    const before = local.metrics().endpoint?.dynamodb.readRequestUnits ?? 0;
    await api(`/crawls/${id}`);
    const pollReads = (local.metrics().endpoint?.dynamodb.readRequestUnits ?? 0) - before;
    const pages: PageItem[] = [];
    let cursor: string | undefined;
    do {
      const body = (await api(
        `/crawls/${id}/pages?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )) as { pages: PageItem[]; cursor?: string };
      pages.push(...body.pages);
      cursor = body.cursor;
    } while (cursor !== undefined);
    const claims = await countClaims(local.endpoint, local.provisioned.resources.UrlTable?.name as string);
    const fetched = view.counters.fetched;
    return {
      scenario: { ...scenario, pages: goodPages },
      seconds,
      view,
      pages: fetched,
      listed: pages.length,
      outLinks: pages.reduce((n, p) => n + p.outLinks, 0),
      contentClaims: claims.content,
      urlClaims: claims.urls,
      costs,
      observation: observation(costs, pollReads),
      naive: naive(costs, view, fetched),
      metrics,
    };
  } finally {
    await local.stop();
    await served.close();
  }
}

/** Items of the URL table by kind (a Scan, after the snapshot). */
async function countClaims(endpoint: string, table: string): Promise<{ urls: number; content: number }> {
  const { createAwsClients } = await import('../functions/adapters/aws/clients.ts');
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const clients = createAwsClients({ AWS_ENDPOINT_URL: endpoint, AWS_REGION: 'us-east-1' });
  let urls = 0;
  let content = 0;
  let start: Record<string, unknown> | undefined;
  try {
    do {
      const page = await clients.doc.send(
        new ScanCommand({ TableName: table, ProjectionExpression: 'pk', ExclusiveStartKey: start }),
      );
      for (const item of page.Items ?? []) {
        if (String(item.pk).includes('#c#')) content += 1;
        else urls += 1;
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  } finally {
    clients.destroy();
  }
  return { urls, content };
}

/**
 * The cost of watching the crawl rather than crawling: the API's and the scheduler's invocations
 * (exact), their GetQueueAttributes calls (exact: nobody else makes them), and their reads (one
 * measured status read per invocation). The bench polls every 2.5 s and ticks the scheduler every
 * 5 s (the stack: every minute), so for slow crawls this is far above what a deployment pays.
 */
function observation(costs: CostBreakdown, pollReads: number): number {
  const p = LIST_PRICES;
  const watchers = costs.lambda.filter((f) => f.function === 'Api' || f.function === 'Scheduler');
  const invocations = watchers.reduce((n, f) => n + f.invocations, 0);
  const depth = costs.sqs
    .filter((l) => l.operation === 'GetQueueAttributes')
    .reduce((n, l) => n + l.billed * (l.fifo ? p.sqsFifoRequest : p.sqsStandardRequest), 0);
  return (
    invocations * p.lambdaRequest +
    watchers.reduce((n, f) => n + f.gbSeconds, 0) * p.lambdaArmGbSecond +
    depth +
    invocations * pollReads * p.dynamoReadUnit
  );
}

/**
 * The naive design from the same counts: one S3 PUT per fetched page, one conditional write per
 * URL-seen look-up (every extracted in-scope link, no cache, no read first), a page record and a
 * content-hash write per page; the capture queue and archiver not needed; the same frontier SQS
 * and worker Lambda.
 */
function naive(costs: CostBreakdown, view: CrawlProgressView, pages: number) {
  const p = LIST_PRICES;
  const crawlTableWrites = costs.dynamo.writeUnits - urlTableUnits(costs).writeRequestUnits;
  const writes = view.urlSeen.lookups + crawlTableWrites + view.counters.finished + pages;
  const others = costs.lambda.filter((f) => f.function !== 'Archiver');
  const dollars = {
    dynamoWrites: writes * p.dynamoWriteUnit,
    dynamoReads: (costs.dynamo.readUnits - urlTableUnits(costs).readRequestUnits) * p.dynamoReadUnit,
    sqs: costs.sqs.filter((l) => l.fifo).reduce((n, l) => n + l.billed * p.sqsFifoRequest, 0),
    s3: pages * p.s3PutOrList,
    lambdaRequests: others.reduce((n, f) => n + f.invocations, 0) * p.lambdaRequest,
    lambdaCompute: others.reduce((n, f) => n + f.gbSeconds, 0) * p.lambdaArmGbSecond,
    total: 0,
  };
  dollars.total = dollarTotal(dollars);
  return { dollars, writes, puts: pages };
}

function urlTableUnits(costs: CostBreakdown): { writeRequestUnits: number; readRequestUnits: number } {
  const table = Object.keys(costs.dynamo.byTable).find((t) => t.endsWith('UrlTable'));
  return (
    (table === undefined ? undefined : costs.dynamo.byTable[table]) ?? {
      writeRequestUnits: 0,
      readRequestUnits: 0,
    }
  );
}

// --- printing --------------------------------------------------------------------------------

const fmt = (n: number, digits = 3) =>
  n === 0 ? '0' : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(digits);
const pad = (text: string, width: number) => text.padEnd(width);
const lpad = (text: string, width: number) => text.padStart(width);

function print(r: Result): void {
  const { costs, pages, view } = r;
  const per = (n: number) => n / pages;
  const million = (usd: number) => (usd / pages) * 1e6;
  const line = (label: string, count: number, usd?: number) =>
    console.log(
      `  ${pad(label, 52)}${lpad(fmt(count, 0), 9)}${lpad(fmt(per(count)), 10)}${lpad(usd === undefined ? '' : `$${fmt(million(usd))}`, 12)}`,
    );
  console.log(`\n## ${r.scenario.what}`);
  console.log(
    `web: ${r.scenario.hosts} host(s), ${r.scenario.pages} good pages; crawl: ${pages} pages fetched, ${view.counters.finished} URLs finished, ${r.listed} listed by the API, ${Math.round(r.seconds)} s`,
  );
  console.log(`  ${pad('', 52)}${lpad('count', 9)}${lpad('per page', 10)}${lpad('$/M pages', 12)}`);
  const p = LIST_PRICES;
  for (const [table, units] of Object.entries(costs.dynamo.byTable)) {
    const name = table.replace(/^.*-/, '');
    line(`DynamoDB WRU ${name}`, units.writeRequestUnits, units.writeRequestUnits * p.dynamoWriteUnit);
  }
  line('  of which URL claims (items)', r.urlClaims);
  line('  of which content-hash claims (items)', r.contentClaims);
  for (const [table, units] of Object.entries(costs.dynamo.byTable)) {
    const name = table.replace(/^.*-/, '');
    line(`DynamoDB RRU ${name}`, units.readRequestUnits, units.readRequestUnits * p.dynamoReadUnit);
  }
  const sqs = [...costs.sqs].sort(
    (a, b) => a.queue.localeCompare(b.queue) || a.operation.localeCompare(b.operation),
  );
  for (const l of sqs) {
    const price = l.fifo ? p.sqsFifoRequest : p.sqsStandardRequest;
    const queue = l.queue.replace(/^.*-(\w+(?:\.fifo)?)$/, '$1');
    const note = l.empty > 0 ? ` (${l.empty} empty)` : '';
    line(`SQS ${queue} ${l.operation}${note}`, l.billed, l.billed * price);
  }
  line('S3 PUT', costs.s3.puts, costs.s3.puts * p.s3PutOrList);
  line('S3 GET', costs.s3.gets, costs.s3.gets * p.s3Get);
  line(
    'S3 LIST and other',
    costs.s3.lists + costs.s3.other,
    (costs.s3.lists + costs.s3.other) * p.s3PutOrList,
  );
  for (const f of costs.lambda) {
    line(`Lambda ${f.function} invocations`, f.invocations, f.invocations * p.lambdaRequest);
    line(
      `Lambda ${f.function} GB-s (${f.memoryMb} MB, ${fmt(f.billedMs / Math.max(1, f.invocations), 0)} ms/inv)`,
      f.gbSeconds,
      f.gbSeconds * p.lambdaArmGbSecond,
    );
  }
  const d = costs.dollars;
  console.log(
    `  total $${fmt(million(d.total))} per million pages: DynamoDB writes $${fmt(million(d.dynamoWrites))}, reads $${fmt(million(d.dynamoReads))}, SQS $${fmt(million(d.sqs))} (idle polls $${fmt(million(d.sqsIdle))}), S3 $${fmt(million(d.s3))}, Lambda $${fmt(million(d.lambdaRequests + d.lambdaCompute))}`,
  );
  const crawl = d.total - r.observation;
  console.log(
    `  the crawl itself (without the bench's status polls and 5 s scheduler ticks, $${fmt(million(r.observation))}): $${fmt(million(crawl))}; of which idle long polls $${fmt(million(d.sqsIdle))}`,
  );
  const n = r.naive;
  console.log(
    `  naive design: $${fmt(million(n.dollars.total! - r.observation))} per million pages, the crawl itself (${fmt(per(n.writes))} WRU/page: ${fmt(per(view.urlSeen.lookups))} link claims + page record + content hash + host items; ${fmt(per(n.puts))} S3 PUT/page $${fmt(million(n.dollars.s3!))})`,
  );
  console.log(
    `  links: ${fmt(per(r.outLinks))} extracted per page, ${fmt(per(view.urlSeen.lookups))} URL-seen look-ups per page; cache hit rate ${(view.urlSeen.hitRate * 100).toFixed(1)}%`,
  );
  const targets: [string, boolean, string][] = [
    ['S3 PUT per page <= 0.1', per(costs.s3.puts) <= 0.1, fmt(per(costs.s3.puts))],
    ['DynamoDB WRU per page <= 4', per(costs.dynamo.writeUnits) <= 4, fmt(per(costs.dynamo.writeUnits))],
    [
      'URL-seen cache hit rate >= 75%',
      view.urlSeen.hitRate >= 0.75,
      `${(view.urlSeen.hitRate * 100).toFixed(1)}%`,
    ],
    ['total < $2 per million pages (the crawl itself)', million(crawl) < 2, `$${fmt(million(crawl))}`],
  ];
  for (const [what, ok, value] of targets) console.log(`  ${ok ? 'PASS' : 'FAIL'}  ${what}: ${value}`);
}

console.log(
  `# crawlstack cloud cost benchmark (stand-in; us-east-1 list prices as of ${LIST_PRICES.asOf}, Lambda arm64, data transfer excluded)`,
);
const usd = (price: number) => `$${Number((price * 1e6).toPrecision(4))}/M`;
console.log(
  `prices: DynamoDB ${usd(LIST_PRICES.dynamoWriteUnit)} WRU, ${usd(LIST_PRICES.dynamoReadUnit)} RRU; SQS ${usd(LIST_PRICES.sqsStandardRequest)} standard, ${usd(LIST_PRICES.sqsFifoRequest)} FIFO (per 64 KiB); S3 ${usd(LIST_PRICES.s3PutOrList)} PUT/LIST, ${usd(LIST_PRICES.s3Get)} GET; Lambda ${usd(LIST_PRICES.lambdaRequest)} requests, $${LIST_PRICES.lambdaArmGbSecond}/GB-s`,
);
const results: Result[] = [];
for (const scenario of SCENARIOS) {
  const result = await run(scenario);
  results.push(result);
  print(result);
}
if (values.json !== undefined) {
  writeFileSync(
    values.json,
    JSON.stringify(
      results.map(({ metrics: _m, ...r }) => r),
      null,
      1,
    ),
  );
}
