/**
 * The AWS wiring of each handler, shared by the Lambda entries (which call these once at cold
 * start) and the tests (which point them at their own tables and queues).
 */

import { randomUUID } from 'node:crypto';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { LRUCache } from 'lru-cache';
import type { AwsClients } from '../../adapters/aws/clients.ts';
import { DynamoArchiveStore } from '../../adapters/aws/dynamo-archive-store.ts';
import { DynamoContentSeenStore } from '../../adapters/aws/dynamo-content-seen-store.ts';
import { DynamoCrawlTable } from '../../adapters/aws/dynamo-crawl-table.ts';
import { DynamoHostBacklog } from '../../adapters/aws/dynamo-host-backlog.ts';
import { DynamoParkedUrls } from '../../adapters/aws/dynamo-parked-urls.ts';
import { createRobotsWarmCache, DynamoRobotsCache } from '../../adapters/aws/dynamo-robots-cache.ts';
import { DynamoScheduledRunLog } from '../../adapters/aws/dynamo-scheduled-run-log.ts';
import { DynamoSeenLog, seenLogCache } from '../../adapters/aws/dynamo-seen-log.ts';
import { retentionOf } from '../../adapters/aws/retention.ts';
import { S3ObjectLinks } from '../../adapters/aws/s3-object-links.ts';
import { S3Objects } from '../../adapters/aws/s3-objects.ts';
import {
  createSchedulerClient,
  SchedulerRecrawlSchedules,
} from '../../adapters/aws/scheduler-recrawl-schedules.ts';
import { SqsCaptureQueue } from '../../adapters/aws/sqs-capture-queue.ts';
import {
  SqsDeadLetterQueue,
  SqsFrontier,
  SqsMessageControl,
  SqsQueueDepth,
} from '../../adapters/aws/sqs-frontier.ts';
import { BodyBudget } from '../../adapters/http/body-budget.ts';
import { withBodyShareScope } from '../../adapters/http/body-share-scope.ts';
import { gunzipFile } from '../../adapters/http/gunzip-file.ts';
import { UndiciFetcher } from '../../adapters/http/undici-fetcher.ts';
import type { Clock, Fetcher } from '../../core/ports.ts';
import type { FunctionEnv } from '../env.ts';
import { NO_FAULTS } from '../fault-hook.ts';
import { cloudFetchSettings } from '../fetch-budget.ts';
import { ADMIT_STARTER, BackQueueFrontier, GroupHints, SEEDS_STARTER } from '../frontier/back-queues.ts';
import { BODY_COST_PER_BYTE, SEEN_LOG_FINGERPRINTS, workerBodyBudgetMb } from '../lambda-settings.ts';
import type { CrawlStores } from '../ports/cloud-ports.ts';
import type { ArchiverDeps, CrawlInfo } from '../use-cases/archive-captures.ts';
import { type RedistributeCreditDeps, redistributeCredit } from '../use-cases/redistribute-credit.ts';
import type { FrontierWorkerDeps } from '../worker/batch-model.ts';
import type { ApiDeps } from './api/api-app.ts';
import type { SchedulerDeps } from './scheduler/handler.ts';

const systemClock: Clock = { now: () => Date.now() };
// Not `crawlstack/<version>` from package.json: importing it would inline the whole file into
// every bundle. The crawl's user agent (in each warcinfo) carries the version.
const software = 'crawlstack';

/** Options every wiring takes. */
export interface WiringOptions {
  clock?: Clock;
  log?: (line: string) => void;
}

/** URLs of one host in its FIFO group at most, for the wirings that send to groups (default FRONTIER_GROUP_LIMIT). */
type GroupLimitOption = { groupLimit?: number };

/**
 * The large-body budget of a worker container of `memoryMb` holding `hosts` hosts at once: what
 * its memory leaves for bodies past the threshold, each charged BODY_COST_PER_BYTE × its cap
 * until its crawl step ends (lambda-settings.ts, docs/cloud.md "How many hosts at once").
 */
export function workerBodyBudget(memoryMb: number, hosts: number): BodyBudget {
  return new BodyBudget({
    budgetBytes: workerBodyBudgetMb(memoryMb, hosts) * 1024 * 1024,
    costPerByte: BODY_COST_PER_BYTE,
  });
}

/**
 * The frontier worker over DynamoDB, SQS and S3. The caches made here (robots entries, per-crawl
 * stores, one fetcher per distinct fetch settings) live as long as the returned object: in Lambda,
 * as long as the container.
 */
export function createAwsWorkerDeps(
  clients: AwsClients,
  env: FunctionEnv<'frontierWorker'>,
  options: WiringOptions &
    Partial<
      Pick<FrontierWorkerDeps, 'fault' | 'inlineWaitMs' | 'fetcher' | 'creditFlushMs' | 'groupLimit'>
    > & {
      /** Shared by the container's fetchers (see {@link workerBodyBudget}); none: bodies unbounded together. */
      bodyBudget?: BodyBudget;
    } = {},
): FrontierWorkerDeps {
  const clock = options.clock ?? systemClock;
  const retention = retentionOf(Number(env.retentionDays), clock);
  const robotsWarm = createRobotsWarmCache();
  const stores = new LRUCache<string, CrawlStores>({ max: 32 });
  // One bound for the URL-seen logs of all the container's crawls (lambda-settings.ts).
  const seenLogs = seenLogCache(SEEN_LOG_FINGERPRINTS);
  const fetchers = new Map<string, Fetcher>();
  const control = new SqsMessageControl(clients.sqs, env.frontierQueueUrl);
  const deps: FrontierWorkerDeps = {
    clock,
    random: Math.random,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    table: new DynamoCrawlTable(clients.doc, env.crawlTable, { retention }),
    frontier: new SqsFrontier(clients.sqs, env.frontierQueueUrl),
    backlog: new DynamoHostBacklog(clients.doc, env.crawlTable, retention),
    messages: control,
    receiver: control,
    deadLetters: new SqsDeadLetterQueue(clients.sqs, env.frontierDlqUrl),
    captures: new SqsCaptureQueue(clients.sqs, env.captureQueueUrl),
    objects: new S3Objects(clients.s3, env.pageBucket),
    parked: new DynamoParkedUrls(clients.doc, env.urlTable, Date.now, retention),
    archive: new DynamoArchiveStore(clients.doc, env.crawlTable),
    gunzip: gunzipFile,
    software,
    stores: (crawlId) => {
      let crawlStores = stores.get(crawlId);
      if (crawlStores === undefined) {
        crawlStores = {
          seen: new DynamoSeenLog(clients.doc, env.crawlTable, crawlId, { retention, logs: seenLogs }),
          contentSeen: new DynamoContentSeenStore(clients.doc, env.urlTable, crawlId, { retention }),
          robots: new DynamoRobotsCache(clients.doc, env.crawlTable, crawlId, {
            warm: robotsWarm,
            clock,
            retention,
          }),
        };
        stores.set(crawlId, crawlStores);
      }
      return crawlStores;
    },
    // One fetcher (one connection pool) per distinct fetch settings, for the container's life.
    fetcher:
      options.fetcher ??
      ((config) => {
        const settings = cloudFetchSettings(config, { forbidPrivate: env.privateAddresses !== 'allowed' });
        const key = JSON.stringify(settings);
        let fetcher = fetchers.get(key);
        if (fetcher === undefined) {
          // One budget for all: the container's memory is one, whatever each crawl's settings.
          fetcher = new UndiciFetcher(
            options.bodyBudget === undefined ? settings : { ...settings, bodyBudget: options.bodyBudget },
          );
          fetchers.set(key, fetcher);
        }
        return fetcher;
      }),
    fault: options.fault ?? NO_FAULTS,
    maxReceives: Number(env.frontierMaxReceives),
    groupHints: new GroupHints(() => clock.now()),
    stepScope: withBodyShareScope,
  };
  if (options.log !== undefined) deps.log = options.log;
  if (options.inlineWaitMs !== undefined) deps.inlineWaitMs = options.inlineWaitMs;
  if (options.creditFlushMs !== undefined) deps.creditFlushMs = options.creditFlushMs;
  if (options.groupLimit !== undefined) deps.groupLimit = options.groupLimit;
  return deps;
}

function groupLimitOf(options: GroupLimitOption): GroupLimitOption {
  return options.groupLimit === undefined ? {} : { groupLimit: options.groupLimit };
}

/** The HTTP API over DynamoDB, SQS and the page bucket (where it lists pages from). */
export function createAwsApiDeps(
  clients: AwsClients,
  env: FunctionEnv<'api'>,
  options: WiringOptions &
    GroupLimitOption &
    Pick<ApiDeps, 'metric'> & {
      newId?: () => string;
      /** The EventBridge Scheduler client; default: one for the clients' region and endpoint. */
      scheduler?: SchedulerClient;
      /** The shortest interval of a recurring recrawl, minutes (env RECRAWL_MIN_INTERVAL_MINUTES). */
      recrawlMinIntervalMinutes?: number;
    } = {},
): ApiDeps {
  const retention = retentionOf(Number(env.retentionDays), options.clock ?? systemClock);
  const table = new DynamoCrawlTable(clients.doc, env.crawlTable, { retention });
  const deps: ApiDeps = {
    table,
    // Seeds go through their hosts' back queues, as every task does (back-queues.ts).
    frontier: new BackQueueFrontier(
      {
        table,
        backlog: new DynamoHostBacklog(clients.doc, env.crawlTable, retention),
        queue: new SqsFrontier(clients.sqs, env.frontierQueueUrl),
        ...groupLimitOf(options),
      },
      SEEDS_STARTER,
    ),
    seen: (crawlId) => new DynamoSeenLog(clients.doc, env.crawlTable, crawlId, { retention }),
    pages: new S3Objects(clients.s3, env.pageBucket),
    archive: new S3ObjectLinks(clients.s3, env.pageBucket),
    archives: new DynamoArchiveStore(clients.doc, env.crawlTable),
    recrawlSchedules: {
      schedules: new SchedulerRecrawlSchedules(
        options.scheduler ??
          createSchedulerClient({ AWS_REGION: clients.region, AWS_ENDPOINT_URL: clients.endpoint }),
        {
          group: env.recrawlScheduleGroup,
          roleArn: env.recrawlScheduleRoleArn,
          targetArn: env.recrawlTargetArn,
        },
      ),
      runs: new DynamoScheduledRunLog(clients.doc, env.crawlTable),
      ...(options.recrawlMinIntervalMinutes === undefined
        ? {}
        : { minIntervalMinutes: options.recrawlMinIntervalMinutes }),
    },
    clock: options.clock ?? systemClock,
    newId: options.newId ?? randomUUID,
    forbidPrivate: env.privateAddresses !== 'allowed',
  };
  if (options.log !== undefined) deps.log = options.log;
  if (options.metric !== undefined) deps.metric = options.metric;
  return deps;
}

/**
 * The scheduler over DynamoDB and SQS: the AOPIC step and crawl completion, and the rounds of the
 * recurring recrawls its schedules invoke it for.
 */
export function createAwsSchedulerDeps(
  clients: AwsClients,
  env: FunctionEnv<'scheduler'>,
  options: WiringOptions & GroupLimitOption & { frontierTarget?: number; newId?: () => string } = {},
): SchedulerDeps {
  const retention = retentionOf(Number(env.retentionDays), options.clock ?? systemClock);
  const table = new DynamoCrawlTable(clients.doc, env.crawlTable, { retention });
  const frontier = new SqsFrontier(clients.sqs, env.frontierQueueUrl);
  const aopicDeps: RedistributeCreditDeps = {
    table,
    parked: new DynamoParkedUrls(clients.doc, env.urlTable, Date.now, retention),
    // Admitted URLs go through their hosts' back queues (back-queues.ts).
    frontier: new BackQueueFrontier(
      {
        table,
        backlog: new DynamoHostBacklog(clients.doc, env.crawlTable, retention),
        queue: frontier,
        ...groupLimitOf(options),
      },
      ADMIT_STARTER,
    ),
  };
  if (options.frontierTarget !== undefined) aopicDeps.frontierTarget = options.frontierTarget;
  if (options.log !== undefined) aopicDeps.log = options.log;
  const deps: SchedulerDeps = {
    // A round's seeds go through their hosts' back queues, as a crawl's do (createAwsApiDeps).
    recrawl: {
      table,
      frontier: new BackQueueFrontier(
        {
          table,
          backlog: new DynamoHostBacklog(clients.doc, env.crawlTable, retention),
          queue: frontier,
          ...groupLimitOf(options),
        },
        SEEDS_STARTER,
      ),
      seen: (crawlId) => new DynamoSeenLog(clients.doc, env.crawlTable, crawlId, { retention }),
      archives: new DynamoArchiveStore(clients.doc, env.crawlTable),
      runs: new DynamoScheduledRunLog(clients.doc, env.crawlTable),
      clock: options.clock ?? systemClock,
      newId: options.newId ?? randomUUID,
      forbidPrivate: env.privateAddresses !== 'allowed',
      ...(options.log === undefined ? {} : { log: options.log }),
    },
    // A crawl ends only when no host's back queue holds a task.
    backQueues: {
      table,
      backlog: new DynamoHostBacklog(clients.doc, env.crawlTable, retention),
      queue: frontier,
    },
    table,
    frontier,
    captures: new SqsQueueDepth(clients.sqs, env.captureQueueUrl),
    archive: new S3Objects(clients.s3, env.pageBucket),
    clock: options.clock ?? systemClock,
    aopic: {
      redistribute: (crawl, counters, totals, options) =>
        redistributeCredit(aopicDeps, crawl, counters, totals, options),
    },
  };
  if (options.log !== undefined) deps.log = options.log;
  return deps;
}

/** The archiver over S3 (objects), SQS (its DLQ) and the crawl table (warcinfo fields). */
export function createAwsArchiverDeps(
  clients: AwsClients,
  env: FunctionEnv<'archiver'>,
  options: Pick<WiringOptions, 'log'> & Partial<Pick<ArchiverDeps, 'fault'>> = {},
): ArchiverDeps {
  const table = new DynamoCrawlTable(clients.doc, env.crawlTable);
  const deps: ArchiverDeps = {
    objects: new S3Objects(clients.s3, env.pageBucket),
    deadLetters: new SqsDeadLetterQueue(clients.sqs, env.captureDlqUrl),
    crawlInfo: async (crawlId) => {
      const crawl = await table.getCrawl(crawlId);
      if (crawl === undefined) return undefined;
      const info: CrawlInfo = { seeds: crawl.config.seeds, userAgent: crawl.config.userAgent };
      if (crawl.recrawl !== undefined) info.recrawl = { archive: crawl.recrawl.archive };
      if (crawl.config.keepArchive) info.keepArchive = true;
      return info;
    },
    archive: new DynamoArchiveStore(clients.doc, env.crawlTable),
    software,
  };
  if (options.fault !== undefined) deps.fault = options.fault;
  if (options.log !== undefined) deps.log = options.log;
  return deps;
}
