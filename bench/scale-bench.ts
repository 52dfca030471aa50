/**
 * `npm run bench:scale`: the cloud crawler at scale on the stand-in (issue 21, item 6): thousands
 * of small hosts and one big host in one crawl, the FIFO scan window scaled down, judged by what
 * breaks first at scale (docs/scale.md projects the figures to 10,000 hosts and 10 million pages).
 *
 *   npm run bench:scale                                 # 2,000 hosts + one of 20,000 URLs, window 5,000
 *   npm run bench:scale -- --hosts 500 --big-urls 5000  # smaller
 *   npm run bench:scale -- --max-minutes 10             # stop the crawl after 10 minutes (default 15)
 *   npm run bench:scale -- --scan-window 5000 --delay-ms 20 --pages-per-host 5
 *   npm run bench:scale -- --fanout 50                  # links a page of the big host (default 20)
 *   npm run bench:scale -- --worker-pollers 5 --worker-hosts 10   # the worker's scale
 *   npm run bench:scale -- --group-limit 100000        # without the group bound (what it prevents)
 *   npm run bench:scale -- --json out.json
 *
 * The web (bench/lib/scale-web.ts): small hosts of a few pages, found from one another as a
 * binary tree from host 0, and a big host whose pages are a tree of 20 links each; every host a
 * real server on its own loopback address. The crawl runs on the stand-in (`startCloudLocal`: the
 * synthesized template, the bundled handlers in containers of their own, the template's event
 * source settings, the schedule every 5 s), with `CRAWLSTACK_LOCAL_FIFO_SCAN_WINDOW` at
 * `--scan-window` (AWS: 120,000) so that the big host's frontier alone would outgrow it, at
 * `delayMs` `--delay-ms`, with sitemaps and the soft-404 probe off (each host's requests are its
 * pages and robots.txt). It prints:
 * - pages/s over the crawl, and $ per million pages: requests and compute (DynamoDB, SQS, S3,
 *   Lambda) as bench:cloud's cost model bills them (localstack/cost-model.ts); bench:cloud adds
 *   logs, storage and status polls;
 * - the longest wait of any small host between two of its requests (end of one to start of the
 *   next, at its server) against the politeness gap: no host starves behind the big one;
 * - the busiest DynamoDB partition key's write units in one second, against AWS's 1,000 WCU per
 *   key (the stand-in counts every write per table and partition key);
 * - peak Lambda concurrency per function, URLs lost (pages the servers have that no GET reached,
 *   and the crawl's own count) and the worker's peak V8 heap in one container.
 *
 * Loopback only; ends by itself (after `--max-minutes` at the latest: then the figures are of
 * the part crawled, and lost URLs are not judged).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createAwsClients } from '../functions/adapters/aws/clients.ts';
import { readGroupLimit, readHostsPerInvocation, TUNING_ENV } from '../functions/cloud/env.ts';
import { WORKER_MEMORY_MODEL } from '../functions/cloud/lambda-settings.ts';
import type { CrawlProgressView } from '../functions/cloud/use-cases/crawl-progress.ts';
import { startCloudLocal } from '../localstack/cloud-local.ts';
import { auditClaims, type ClaimAudit } from './lib/claim-audit.ts';
import { cloudApi } from './lib/cloud-api.ts';
import { type ScaleFigures, scaleFigures, serveScaleWeb } from './lib/scale-web.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '2000' },
    'big-urls': { type: 'string', default: '20000' },
    'max-minutes': { type: 'string', default: '15' },
    'scan-window': { type: 'string', default: '5000' },
    'delay-ms': { type: 'string', default: '20' },
    'pages-per-host': { type: 'string', default: '5' },
    fanout: { type: 'string', default: '20' },
    'worker-pollers': { type: 'string' },
    'worker-hosts': { type: 'string' },
    'group-limit': { type: 'string' },
    json: { type: 'string' },
  },
});

/** A flag's value as an integer of at least `min`, or an error naming the flag. */
function integer(flag: keyof typeof values, min: number): number {
  const text = values[flag] as string;
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min)) throw new Error(`--${flag} ${text}: expected an integer of at least ${min}`);
  return n;
}

const hosts = integer('hosts', 1);
const bigUrls = integer('big-urls', 1);
const maxMinutes = integer('max-minutes', 1);
const scanWindow = integer('scan-window', 1);
const delayMs = integer('delay-ms', 0);
const pagesPerHost = integer('pages-per-host', 1);
const fanout = integer('fanout', 1);
const workerPollers = values['worker-pollers'] === undefined ? undefined : integer('worker-pollers', 2);
// Bad values fail here, not at each worker's cold start.
if (values['worker-hosts'] !== undefined)
  readHostsPerInvocation({ [TUNING_ENV.hostsPerInvocation]: values['worker-hosts'] });
if (values['group-limit'] !== undefined) readGroupLimit({ [TUNING_ENV.groupLimit]: values['group-limit'] });
const POLL_SECONDS = 5;
/** AWS's write throughput per partition key, WCU per second. */
const KEY_WCU = 1000;

const fmt = (n: number, digits = 2) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(digits));

console.log(
  `# crawlstack scale bench (stand-in): ${hosts} small hosts x ${pagesPerHost} pages + one host of ${bigUrls} URLs (${fanout} links a page), FIFO scan window ${scanWindow}, delayMs ${delayMs}${values['group-limit'] === undefined ? '' : `, group limit ${values['group-limit']}`}`,
);
const web = await serveScaleWeb({ hosts, bigUrls, pagesPerHost, fanout });
const env: Record<string, string> = { PRIVATE_ADDRESSES: 'allowed' };
if (values['worker-hosts'] !== undefined) env[TUNING_ENV.hostsPerInvocation] = values['worker-hosts'];
if (values['group-limit'] !== undefined) env[TUNING_ENV.groupLimit] = values['group-limit'];
const local = await startCloudLocal({
  env,
  port: 0,
  prefix: `scale${process.pid.toString(36)}`,
  scheduleRateMs: 5000,
  limits: { fifoScanWindow: scanWindow },
  log: () => {},
  ...(workerPollers === undefined
    ? {}
    : { eventSource: { byFunction: { FrontierWorker: { maxConcurrency: workerPollers } } } }),
});
const api = cloudApi(local.api, local.token);
let figures: ScaleFigures;
let view: CrawlProgressView;
let audit: ClaimAudit;
try {
  const started = performance.now();
  const { id } = (await api('/crawls', {
    method: 'POST',
    body: JSON.stringify({
      seeds: web.seeds,
      scope: 'any',
      allowPrivate: true,
      delayMs,
      sitemaps: false,
      soft404Probe: false,
    }),
  })) as { id: string };
  for (;;) {
    await new Promise((r) => setTimeout(r, POLL_SECONDS * 1000));
    view = (await api(`/crawls/${id}`)) as unknown as CrawlProgressView;
    const c = view.counters;
    const elapsed = (performance.now() - started) / 1000;
    process.stderr.write(
      `\r  ${Math.round(elapsed)} s: ${c.fetched} fetched, ${c.finished}/${c.discovered} finished, big host ${web.big.log.length} requests   `,
    );
    if (view.status !== 'running' || elapsed > maxMinutes * 60) break;
  }
  process.stderr.write('\n');
  figures = scaleFigures(web, {
    crawlId: id,
    seconds: (performance.now() - started) / 1000,
    pages: view.counters.fetched,
    crawlLost: view.lost ?? 0,
    metrics: local.metrics(),
  });
  // After the figures: the audit's own reads are not the crawl's.
  const { resources } = local.provisioned;
  const tables = { crawl: String(resources.CrawlTable?.name), url: String(resources.UrlTable?.name) };
  const clients = createAwsClients({ AWS_ENDPOINT_URL: local.endpoint, AWS_REGION: 'us-east-1' });
  audit = await auditClaims(clients, tables, String(resources.PageBucket?.name), id).finally(() =>
    clients.destroy(),
  );
} finally {
  await local.stop();
  await web.close();
}

const done = view.status === 'done';
const f = figures;
console.log(
  done
    ? `crawl ${view.status} in ${fmt(f.seconds, 0)} s`
    : `crawl still ${view.status} after ${maxMinutes} minutes (--max-minutes): the figures are of the part crawled`,
);
console.log(
  `pages fetched: ${f.pages} of ${web.urls} (big host ${f.big.pages} over ${fmt(f.big.spanSeconds, 0)} s)`,
);
console.log(`pages/s over the crawl: ${fmt(f.pagesPerSecond)}`);
console.log(
  `$ per million pages (requests + compute, bench:cloud's cost model): $${fmt(f.dollarsPerMillion)}`,
);
console.log(
  `longest wait of a small host between two requests: ${fmt(f.smallWait.ms / 1000)} s (${f.smallWait.origin}, ${f.smallWait.requests} requests) = ${fmt(f.smallWait.ms / Math.max(1, delayMs), 0)} x its politeness gap of ${delayMs} ms; median host ${fmt(f.smallWaits.p50 / 1000)} s, 99th percentile ${fmt(f.smallWaits.p99 / 1000)} s`,
);
const hot = f.hotKey;
console.log(
  hot === undefined
    ? 'busiest partition key: no writes counted (an external endpoint?)'
    : `busiest partition key: ${hot.peakPerSecond} WCU in one second (${fmt((hot.peakPerSecond / KEY_WCU) * 100, 1)}% of AWS's ${KEY_WCU} per key), ${hot.writeUnits} WCU in all: ${hot.table.replace(/^.*-/, '')} ${hot.key}`,
);
const crawlKey = f.crawlKey;
if (crawlKey !== undefined) {
  const perPage = crawlKey.writeUnits / Math.max(1, f.pages);
  console.log(
    `the crawl's partition key (CrawlTable pk = crawl id: host items, counter shards): ${crawlKey.peakPerSecond} WCU in its busiest second, ${fmt(perPage, 3)} WCU per page: ${KEY_WCU} WCU a second at ${fmt(KEY_WCU / perPage, 0)} pages/s`,
  );
}
console.log(
  `peak Lambda concurrency: ${Object.entries(f.peakConcurrency)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ')}`,
);
console.log(
  `URLs lost: ${done ? f.lost : 'not judged (stopped)'} (pages never requested${done ? '' : `: ${f.lost}`}), crawl's own count ${f.crawlLost}`,
);
console.log(
  `claims: ${audit.claimed} URLs claimed, ${audit.claimedTwice} twice, ${audit.unfinished.length} with neither a page record nor a park (bench/lib/claim-audit.ts)`,
);
console.log(
  `worker peak V8 heap in one container: ${fmt(f.workerPeakHeapMb, 0)} MiB (+ the runtime's ~${WORKER_MEMORY_MODEL.runtimeMb} MiB RSS: lambda-settings.ts)`,
);
if (values.json !== undefined) {
  writeFileSync(
    values.json,
    JSON.stringify(
      { hosts, bigUrls, pagesPerHost, fanout, scanWindow, delayMs, status: view.status, ...f },
      null,
      1,
    ),
  );
}
