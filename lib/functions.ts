import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV, TABLE_KEYS, TUNING_ENV } from '../functions/cloud/env.ts';
import { LAMBDA_SETTINGS } from '../functions/cloud/lambda-settings.ts';
import type { Captures } from './captures.ts';
import type { Frontier } from './frontier.ts';
import { useBucket, useQueue, useTable } from './grants.ts';
import { pinLogicalId } from './logical-id.ts';
import { createNodeFunction } from './node-function.ts';
import { RecrawlSchedules } from './recrawl-schedules.ts';
import type { Storage } from './storage.ts';
import { type WorkerScaleProps, workerScale } from './worker-scale.ts';

/** The frontier worker's timeout; the frontier's visibility timeout is derived from it. */
export const WORKER_TIMEOUT = Duration.seconds(LAMBDA_SETTINGS.frontierWorker.timeoutSeconds);

/** The archiver's timeout; the capture queue's visibility timeout is derived from it. */
export const ARCHIVER_TIMEOUT = Duration.seconds(LAMBDA_SETTINGS.archiver.timeoutSeconds);

/**
 * How long the archiver's event source gathers captures before invoking it (or until
 * {@link ARCHIVER_BATCH_SIZE} captures or Lambda's 6 MB payload): the longer, the fewer S3 PUTs
 * per page (2 per crawl per batch), the later a page shows up in the API.
 */
export const ARCHIVER_BATCHING_WINDOW_SECONDS = 60;

/** Captures per archiver invocation at most (Lambda allows 10,000 with a batching window). */
export const ARCHIVER_BATCH_SIZE = 5000;

/** Properties of {@link Functions}. */
export interface FunctionsProps extends WorkerScaleProps {
  /** The queues the worker consumes and every function sends to. */
  readonly frontier: Frontier;
  /** The capture queue the worker sends finished pages to and the archiver drains. */
  readonly captures: Captures;
  /** The tables and bucket the functions read and write. */
  readonly storage: Storage;
  /** The frontier's redrive maxReceiveCount (the worker finishes messages before it). */
  readonly maxReceiveCount: number;
  /** Days items are kept after their last write (TTL); 0 keeps them. */
  readonly retentionDays: number;
  /** Crawls may set `allowPrivate` (lift the SSRF guard). */
  readonly allowPrivateAddresses: boolean;
  /** Retention of each function's log group. */
  readonly logRetention: logs.RetentionDays;
  /** Removal policy of each function's log group (follows the stack's dev setting). */
  readonly logRemovalPolicy: RemovalPolicy;
  /** X-Ray active tracing on all three functions. */
  readonly tracing: boolean;
  /** The shortest interval of a recurring recrawl, minutes (default: the API's, 60). */
  readonly recrawlMinIntervalMinutes?: number;
}

/** The four Lambda functions, their triggers and their permissions. */
export class Functions extends Construct {
  /** Fetches, stores and extracts; fed by the frontier (logical ID `FrontierWorker`). */
  readonly frontierWorker: nodejs.NodejsFunction;
  /** Starts, inspects and cancels crawls behind an IAM-authenticated function URL (`Api`). */
  readonly api: nodejs.NodejsFunction;
  /** The function URL of {@link api}. */
  readonly apiUrl: lambda.FunctionUrl;
  /** Completes crawls and redistributes AOPIC credit, once a minute (`Scheduler`). */
  readonly scheduler: nodejs.NodejsFunction;
  /** Writes captures as WARC and index objects, fed by the capture queue (`Archiver`). */
  readonly archiver: nodejs.NodejsFunction;
  /** The recurring recrawls' schedule group and role, and the API's grants on them. */
  readonly recrawlSchedules: RecrawlSchedules;

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    const { frontier, storage, captures } = props;
    const scale = workerScale(props);
    const retention = String(props.retentionDays);
    const common = {
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      tracing: props.tracing,
    };

    const worker = createNodeFunction(this, 'FrontierWorker', {
      ...common,
      entry: 'frontier-worker',
      description: 'crawlstack: fetches frontier URLs, extracts and enqueues new links, sends captures',
      // Mostly waiting on the network: as little as its hosts in flight need (lambda-settings.ts).
      memorySize: scale.memoryMb,
      timeout: WORKER_TIMEOUT,
      // It sends the links it finds to the queue that invokes it: every crawl deeper than 16
      // generations is such a chain, which Lambda's default (Terminate) stops at the 16th. What
      // stops a runaway crawl instead: its budgets (docs/cloud.md, "What ends a crawl").
      recursiveLoop: lambda.RecursiveLoop.ALLOW,
      reservedConcurrency: scale.reservedConcurrency,
    });
    worker.addEnvironment(TUNING_ENV.hostsPerInvocation, String(scale.hostsPerInvocation));
    // Content hashes (GetItem, PutItem), parking, credits and unparking (UpdateItem); the richest
    // parked URLs when it finds a crawl's frontier dry (Query of ParkedIndex). URL-seen claims are
    // in the crawl table (the hosts' seen logs).
    useTable(worker, ENV.urlTable, storage.urlTable, ['GetItem', 'PutItem', 'UpdateItem'], {
      indexes: [TABLE_KEYS.parkedIndex],
    });
    // The batch's state and ledger positions (BatchGetItem), host ledgers, budgets, allowed hosts
    // and admitted counts (UpdateItem), robots.txt entries (GetItem, PutItem), a crawl's running
    // totals when its frontier may be dry (Query of its counter shards), the hosts' back queues
    // (BatchWriteItem to add and take out, Query for the richest).
    useTable(worker, ENV.crawlTable, storage.crawlTable, [
      'GetItem',
      'BatchGetItem',
      'BatchWriteItem',
      'Query',
      'PutItem',
      'UpdateItem',
    ]);
    // Finished pages go to the archiver through the capture queue; the worker writes to the
    // bucket only a capture too big for a message (put only: it never reads pages).
    useQueue(worker, ENV.captureQueueUrl, captures.queue, ['SendMessage']);
    useBucket(worker, ENV.pageBucket, storage.pageBucket, ['PutObject']);
    // New links, and deferring a message until its host may be fetched again (receive and delete
    // come with the event source).
    useQueue(worker, ENV.frontierQueueUrl, frontier.queue, ['SendMessage', 'ChangeMessageVisibility']);
    // The worker moves messages that keep failing for a known reason to the DLQ itself.
    useQueue(worker, ENV.frontierDlqUrl, frontier.dlq, ['SendMessage']);
    // ...and finishes a message before its last receive, so SQS's redrive takes nothing unrecorded.
    worker.addEnvironment(ENV.frontierMaxReceives, String(props.maxReceiveCount));
    worker.addEnvironment(ENV.retentionDays, retention);
    const privateAddresses = props.allowPrivateAddresses ? 'allowed' : 'forbidden';
    worker.addEnvironment(ENV.privateAddresses, privateAddresses);
    worker.addEventSource(
      new SqsEventSource(frontier.queue, {
        batchSize: 10,
        // Only the failed records return to the queue; the rest of the batch is deleted.
        reportBatchItemFailures: true,
        // Bounds the crawl's total parallelism independently of the number of hosts (FIFO groups
        // already bound it per host to one). Fewer pollers than active hosts / 10 means fuller
        // batches: the receive, delete, invocation and capture send of a batch are shared by
        // more pages (docs/cloud.md measures 20 vs 5 vs 2).
        // Hosts side by side: these pollers × the hosts per invocation (docs/cloud.md).
        maxConcurrency: scale.pollers,
      }),
    );

    const api = createNodeFunction(this, 'Api', {
      ...common,
      entry: 'api',
      description: 'crawlstack: HTTP API to start, inspect and cancel crawls',
      memorySize: LAMBDA_SETTINGS.api.memoryMb,
      timeout: Duration.seconds(LAMBDA_SETTINGS.api.timeoutSeconds),
    });
    // The crawl item, the registry and the catalog (PutItem), status (GetItem, Query), GET /crawls
    // (Query of the catalog, BatchGetItem of its crawl items), cancel (UpdateItem); the seeds'
    // URL-seen claims (PutItem to their hosts' seen logs, Query when a log is read) and their
    // hosts' back queues (BatchWriteItem, Query, and UpdateItem of the host items).
    useTable(api, ENV.crawlTable, storage.crawlTable, [
      'PutItem',
      'GetItem',
      'BatchGetItem',
      'BatchWriteItem',
      'UpdateItem',
      'Query',
    ]);
    useQueue(api, ENV.frontierQueueUrl, frontier.queue, ['SendMessage']);
    api.addEnvironment(ENV.retentionDays, retention);
    api.addEnvironment(ENV.privateAddresses, privateAddresses);
    // GET /crawls/{id}/pages: ListObjectsV2 of the index objects, ranged GetObject. GET
    // /crawls/{id}/objects: ListObjectsV2 of the archive, and presigned GetObject URLs for the
    // caller's downloads (warc/, index/, links/, trace/): S3 authorizes those GETs as this role's.
    useBucket(api, ENV.pageBucket, storage.pageBucket, ['GetObject', 'ListBucket']);
    // AWS_IAM: callers sign requests (SigV4) and need lambda:InvokeFunctionUrl; see
    // `api.grantInvokeUrl(principal)`. No CORS: the API is for programs, not browsers.
    this.apiUrl = api.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });

    const scheduler = createNodeFunction(this, 'Scheduler', {
      ...common,
      entry: 'scheduler',
      description: 'crawlstack: completes crawls and redistributes AOPIC credit',
      memorySize: LAMBDA_SETTINGS.scheduler.memoryMb,
      timeout: Duration.seconds(LAMBDA_SETTINGS.scheduler.timeoutSeconds),
    });
    // The registry and counters (Query), crawl items (GetItem), watch, AOPIC state and the end of
    // a crawl (UpdateItem), leaving the registry (DeleteItem); admitted URLs go through their
    // hosts' back queues (BatchWriteItem, Query, UpdateItem of the host items).
    // A recurring recrawl's round (run-scheduled-recrawl.ts): the archive's rounds item
    // (BatchGetItem), its pages (Query), the round's crawl item (PutItem) and the run log
    // (UpdateItem).
    useTable(scheduler, ENV.crawlTable, storage.crawlTable, [
      'GetItem',
      'BatchGetItem',
      'Query',
      'PutItem',
      'UpdateItem',
      'DeleteItem',
      'BatchWriteItem',
    ]);
    // Admission: the richest parked URLs (Query of ParkedIndex), unparking them (UpdateItem). (A
    // round's seeds are claimed as the API claims a crawl's, in the crawl table.)
    useTable(scheduler, ENV.urlTable, storage.urlTable, ['UpdateItem'], {
      indexes: [TABLE_KEYS.parkedIndex],
    });
    // Admits parked URLs; an empty frontier is one sign a crawl is done.
    useQueue(scheduler, ENV.frontierQueueUrl, frontier.queue, ['SendMessage', 'GetQueueAttributes']);
    scheduler.addEnvironment(ENV.retentionDays, retention);
    // A recurring recrawl's round is started here (RecrawlSchedules below): its settings are
    // checked as the API checks them.
    scheduler.addEnvironment(ENV.privateAddresses, privateAddresses);
    this.recrawlSchedules = new RecrawlSchedules(this, 'RecrawlSchedules', {
      api,
      target: scheduler,
      ...(props.recrawlMinIntervalMinutes === undefined
        ? {}
        : { minIntervalMinutes: props.recrawlMinIntervalMinutes }),
    });
    const rule = new events.Rule(this, 'ScheduleRule', {
      description: 'crawlstack: runs the scheduler every minute',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [
        new targets.LambdaFunction(scheduler, {
          // A tick that could not be delivered within a minute is superseded by the next one.
          maxEventAge: Duration.minutes(1),
          retryAttempts: 2,
        }),
      ],
    });
    pinLogicalId(rule);
    // Same reasoning for Lambda's own asynchronous retries: a failed tick is retried by the next.
    scheduler.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });

    // The scheduler ends a crawl only when its last captures are archived: it watches the
    // capture queue's depth (GetQueueAttributes)...
    useQueue(scheduler, ENV.captureQueueUrl, captures.queue, ['GetQueueAttributes']);
    // ...and counts them: the page counts in the crawl's index keys (ListObjectsV2 of index/<crawl>/,
    // only when the crawl's counters say it has nothing left), so a crawl ends on its own work.
    useBucket(scheduler, ENV.pageBucket, storage.pageBucket, ['ListBucket']);

    const archiver = createNodeFunction(this, 'Archiver', {
      ...common,
      entry: 'archiver',
      description: 'crawlstack: writes captured pages as WARC objects and the page index to S3',
      // A batch is at most Lambda's 6 MB payload; concatenating it needs a few times that.
      memorySize: LAMBDA_SETTINGS.archiver.memoryMb,
      timeout: ARCHIVER_TIMEOUT,
    });
    useBucket(archiver, ENV.pageBucket, storage.pageBucket, ['PutObject']);
    // Reads the crawl item once per crawl and container, for the warcinfo record; folds the pages
    // it indexes into their archive's per-URL state (docs/recrawl.md): a recrawl round's entries
    // are read first (BatchGetItem), every entry is written (BatchWriteItem).
    useTable(archiver, ENV.crawlTable, storage.crawlTable, ['GetItem', 'BatchGetItem', 'BatchWriteItem']);
    // Messages that are not captures go to the DLQ with the reason (the redrive catches crashes).
    useQueue(archiver, ENV.captureDlqUrl, captures.dlq, ['SendMessage']);
    archiver.addEventSource(
      new SqsEventSource(captures.queue, {
        batchSize: ARCHIVER_BATCH_SIZE,
        maxBatchingWindow: Duration.seconds(ARCHIVER_BATCHING_WINDOW_SECONDS),
        reportBatchItemFailures: true,
        // The fewest pollers Lambda allows: fuller batches, fewer objects; one archiver keeps up
        // with hundreds of pages a second.
        maxConcurrency: 2,
      }),
    );

    this.frontierWorker = worker;
    this.api = api;
    this.scheduler = scheduler;
    this.archiver = archiver;
  }
}
