/**
 * The one place for the Lambda settings that code and the CDK app must agree on: each function's
 * timeout and memory, and the time budgets derived from them. lib/ (CDK) sets the functions and
 * queues from these numbers; the worker and the scheduler read the same ones. Like env.ts, this
 * file is bundled into every Lambda, so it imports nothing.
 */

/** Timeout and memory of one function. */
export interface LambdaSetting {
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

/**
 * What one frontier worker container holds in memory, in MiB (Lambda's "MB"); see
 * {@link workerMemoryMb} and docs/cloud.md, "How many hosts at once".
 */
export const WORKER_MEMORY_MODEL = {
  /**
   * Node 22 with the worker's bundle loaded, before any crawl: 112 MiB RSS measured (Node 22.23,
   * the esbuild bundle of functions/cloud/lambdas/frontier-worker/entry.ts imported, 2026-11-28).
   */
  runtimeMb: 112,
  /** The crawl contexts a container keeps (container-state.ts weighs them against this). */
  contextsMb: 88,
  /**
   * The hosts' URL-seen logs a container has read, all its crawls together (DynamoSeenLog's
   * shared cache: {@link SEEN_LOG_FINGERPRINTS} of about 73 bytes each).
   */
  seenLogsMb: 8,
  /**
   * What the garbage collector lets pile up above the live pages (finished steps' copies not yet
   * collected): the fixed part of the bench's peaks (`npm run bench:worker-memory`, 2026-11-28:
   * 26 MiB above the baseline at 10 hosts of 30-100 KB pages, 81 MiB at 80: 18 MiB + 0.8 per host).
   */
  workingSetMb: 24,
  /**
   * One host in flight: the runner fetches one page per host at a time, and a body up to the body
   * budget's threshold (256 KiB, body-budget.ts) needs no share. Its socket and parser, and the
   * page while its crawl step runs (the body, its copy, the decoded text, the WARC record and its
   * gzip: about 5 × the body), plus its batch's gzipped captures until the commit: 0.8 MiB per
   * host measured at 30-100 KB pages; 1.5 MiB covers a host whose pages sit just below 256 KiB.
   */
  hostMb: 1.5,
  /**
   * A body past the threshold, at the default 10 MiB cap, from its fetch to the end of its crawl
   * step: {@link BODY_COST_PER_BYTE} × the cap (45 MiB measured for a 10 MiB page). Such bodies
   * share the container's body budget (the fetcher's large-body slots), so they cost this many at
   * once whatever the hosts; a crawl that raises `maxBodyBytes` to 16 MiB takes a larger share.
   */
  largeBodyMb: 50,
  /** Large bodies the default memory pays for at once: the body budget's slots. */
  largeBodies: 1,
  /** Memory sizes are rounded up to this step. */
  stepMb: 64,
} as const;

/**
 * Fingerprints of read URL-seen logs a worker container keeps, all crawls together: the model's
 * `seenLogsMb` at 75 bytes a fingerprint (72.5 measured in V8: a 16-character key, a shared owner).
 */
export const SEEN_LOG_FINGERPRINTS = Math.floor((WORKER_MEMORY_MODEL.seenLogsMb * 1024 * 1024) / 75);

/**
 * Memory a body past the threshold costs per byte of its cap until its crawl step ends (the
 * fetcher's BodyBudget `costPerByte`): the body as received, the copy handed over, the decoded
 * text, the WARC record and its gzip. 10 MiB pages measured 45 MiB each (`npm run
 * bench:worker-memory -- --hostile-every 1 --hosts 1,2,4,8 --modes none`).
 */
export const BODY_COST_PER_BYTE = 5;

/** Lambda's largest memory size. */
export const LAMBDA_MAX_MEMORY_MB = 10_240;

/**
 * Hosts one worker invocation holds at once unless the stack says otherwise (frontier-runner.ts):
 * twice the 10 of the 11-MiB-per-host model, in the same 320 MB ({@link workerMemoryMb}).
 */
export const DEFAULT_HOSTS_PER_INVOCATION = 20;

/**
 * Hosts one invocation may hold at most, whatever its memory: an execution environment has 1,024
 * file descriptors, and each host in flight holds a socket beside the keep-alive sockets of hosts
 * served before and the SDK's pools.
 */
export const MAX_HOSTS_PER_INVOCATION = 500;

/** Memory of the worker but for its large bodies: runtime, contexts, working set and hosts. */
function workerBaseMb(hosts: number): number {
  const { runtimeMb, contextsMb, seenLogsMb, workingSetMb, hostMb } = WORKER_MEMORY_MODEL;
  return runtimeMb + contextsMb + seenLogsMb + workingSetMb + hosts * hostMb;
}

/**
 * The worker's memory for `hosts` hosts per invocation: runtime + crawl contexts + URL-seen logs +
 * working set + hosts × a host's page + the large bodies of the body budget, rounded up to 64 MiB.
 * 20 hosts (the default): 112 + 88 + 8 + 24 + 30 + 50 = 312 -> 320 MB; 40 hosts: 342 -> 384 MB.
 */
export function workerMemoryMb(hosts: number): number {
  const { largeBodyMb, largeBodies, stepMb } = WORKER_MEMORY_MODEL;
  return Math.ceil((workerBaseMb(hosts) + largeBodies * largeBodyMb) / stepMb) * stepMb;
}

/**
 * The body budget of a worker container of `memoryMb` holding `hosts` hosts: what its memory
 * leaves beyond runtime, contexts, working set and hosts, and at least one large body (so a
 * container of less memory than its model still fetches large bodies, one at a time). 320 MB and
 * 20 hosts: 58 MiB, one 10 MiB body at a time at {@link BODY_COST_PER_BYTE}.
 */
export function workerBodyBudgetMb(memoryMb: number, hosts: number): number {
  return Math.max(WORKER_MEMORY_MODEL.largeBodyMb, memoryMb - workerBaseMb(hosts));
}

/** Every function of the stack. */
export const LAMBDA_SETTINGS = {
  /**
   * Mostly waits on the network, so as little memory as its hosts in flight need (the GB-seconds
   * of the waits grow with it): {@link workerMemoryMb} of the default hosts per invocation. The
   * stack derives it again from its own hosts per invocation. 45 s, so that the frontier's
   * visibility timeout plus one invocation stays inside SQS FIFO's 5-minute deduplication window
   * (see FRONTIER_VISIBILITY_SECONDS).
   */
  frontierWorker: { timeoutSeconds: 45, memoryMb: workerMemoryMb(DEFAULT_HOSTS_PER_INVOCATION) },
  api: { timeoutSeconds: 15, memoryMb: 256 },
  scheduler: { timeoutSeconds: 60, memoryMb: 256 },
  /** A batch is at most Lambda's 6 MB payload; concatenating it needs a few times that. */
  archiver: { timeoutSeconds: 60, memoryMb: 256 },
} as const satisfies Record<string, LambdaSetting>;

/** SQS FIFO drops a message whose deduplication id it saw in the last 5 minutes. */
export const FIFO_DEDUPLICATION_WINDOW_SECONDS = 300;

/**
 * The frontier's visibility timeout: five worker timeouts (AWS advises six for an event source,
 * so that a batch whose invocation is retried does not reappear mid-run; five still covers four
 * retries). The bound that matters more: a batch that crashed sent its links at most one timeout
 * after it was received, and its redelivery sends them again at most visibility + timeout after
 * that receive; both sends must fall in one deduplication window, or crash retries duplicate
 * links (360 s + 60 s did: issue 8, item 5). 225 s + 45 s = 270 s < 300 s.
 */
export const FRONTIER_VISIBILITY_TIMEOUTS = 5;

/** The frontier queue's visibility timeout, seconds. */
export const FRONTIER_VISIBILITY_SECONDS =
  LAMBDA_SETTINGS.frontierWorker.timeoutSeconds * FRONTIER_VISIBILITY_TIMEOUTS;

/**
 * Longest a cloud fetch may take: a crawl's longer timeouts are cut to this in the cloud, so a
 * request and the batch's writes after it end before the worker's timeout.
 */
export const CLOUD_FETCH_BUDGET_MS = 30_000;

/** Time the worker keeps for the end-of-batch writes: no record starts a fetch within this of the timeout. */
export const WRITE_RESERVE_MS = 5_000;

/** The worker's timeout in ms (no batch runs longer). */
export const WORKER_TIMEOUT_MS = LAMBDA_SETTINGS.frontierWorker.timeoutSeconds * 1000;

/**
 * A host's FIFO group is refilled while it holds fewer than this many messages (Mercator's back
 * queues: the rest of the host's frontier waits in DynamoDB, richest first). A refill adds whole
 * turns of the back queue (BACKLOG_TURN tasks stored as one item; a budgeted crawl's refill adds
 * tasks one at a time, but a start from the back queue takes whole turns), so a group holds at most
 * FRONTIER_GROUP_LIMIT + BACKLOG_TURN - 1 = 13 messages: at that bound 9,200 hosts with work fill
 * SQS FIFO's 120,000-message scan window and in-flight cap; more hosts take turns in it, since a
 * refill goes to the queue's tail (docs/cloud.md, "Bounded back queues"). The last of 13 waits 12
 * of its host's gaps: 12 days at the largest gap a crawl may set (a day), inside SQS's 14-day
 * retention. Eight, not six: each batch holds more of a host's pages, so fewer ledger writes,
 * back-queue turns, receives and deletes per page (`npm run bench:cloud -- --only realistic
 * --group-limit N`, 2026-11-28: 6 $4.35, 8 $4.21, 12 $4.14 per million pages); 12 would leave a
 * day-long gap's last URL 16 days in SQS.
 */
export const FRONTIER_GROUP_LIMIT = 8;

/** SQS keeps a frontier message this long after its send (the template's retention, its maximum). */
export const FRONTIER_RETENTION_DAYS = 14;

/**
 * Tasks of a host's back queue stored together, as one item (gzipped, about 1 KB: one write unit
 * to add them, one to take them out, where an item per task cost two per task).
 */
export const BACKLOG_TURN = 6;

/** The most messages a host's group holds (see FRONTIER_GROUP_LIMIT). */
export const FRONTIER_GROUP_MAX = FRONTIER_GROUP_LIMIT + BACKLOG_TURN - 1;
