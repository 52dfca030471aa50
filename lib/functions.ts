import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../functions/env.ts';
import type { Frontier } from './frontier.ts';
import { useBucket, useQueue, useTable } from './grants.ts';
import { pinLogicalId } from './logical-id.ts';
import { createNodeFunction } from './node-function.ts';
import type { Storage } from './storage.ts';

/** The frontier worker's timeout; the frontier's visibility timeout is derived from it. */
export const WORKER_TIMEOUT = Duration.seconds(60);

/** Properties of {@link Functions}. */
export interface FunctionsProps {
  /** The queues the worker consumes and every function sends to. */
  readonly frontier: Frontier;
  /** The tables and bucket the functions read and write. */
  readonly storage: Storage;
  /** Cap on concurrent worker invocations fed by the frontier (2-1000). @default 20 */
  readonly workerMaxConcurrency?: number;
  /** Retention of each function's log group. */
  readonly logRetention: logs.RetentionDays;
  /** Removal policy of each function's log group (follows the stack's dev setting). */
  readonly logRemovalPolicy: RemovalPolicy;
  /** X-Ray active tracing on all three functions. */
  readonly tracing: boolean;
}

/** The three Lambda functions, their triggers and their permissions. */
export class Functions extends Construct {
  /** Fetches, stores and extracts; fed by the frontier (logical ID `FrontierWorker`). */
  readonly frontierWorker: nodejs.NodejsFunction;
  /** Starts, inspects and cancels crawls behind an IAM-authenticated function URL (`Api`). */
  readonly api: nodejs.NodejsFunction;
  /** The function URL of {@link api}. */
  readonly apiUrl: lambda.FunctionUrl;
  /** Completes crawls and redistributes AOPIC credit, once a minute (`Scheduler`). */
  readonly scheduler: nodejs.NodejsFunction;

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    const { frontier, storage } = props;
    const workerMaxConcurrency = props.workerMaxConcurrency ?? 20;
    if (!Number.isInteger(workerMaxConcurrency) || workerMaxConcurrency < 2 || workerMaxConcurrency > 1000) {
      throw new Error(`workerMaxConcurrency must be an integer from 2 to 1000, got ${workerMaxConcurrency}`);
    }
    const common = {
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      tracing: props.tracing,
    };

    const worker = createNodeFunction(this, 'FrontierWorker', {
      ...common,
      entry: 'frontier-worker.ts',
      description: 'crawlstack: fetches frontier URLs, stores WARC, extracts and enqueues new links',
      memorySize: 512,
      timeout: WORKER_TIMEOUT,
    });
    useTable(worker, ENV.urlTable, storage.urlTable, 'readWrite');
    useTable(worker, ENV.crawlTable, storage.crawlTable, 'readWrite');
    useBucket(worker, ENV.pageBucket, storage.pageBucket, 'readWrite');
    // Send: new links. Consume (also granted by the event source): delete, and change visibility
    // to defer a message until its host may be fetched again.
    useQueue(worker, ENV.frontierQueueUrl, frontier.queue, 'sendAndConsume');
    // The worker moves messages that keep failing for a known reason to the DLQ itself.
    useQueue(worker, ENV.frontierDlqUrl, frontier.dlq, 'send');
    worker.addEventSource(
      new SqsEventSource(frontier.queue, {
        batchSize: 10,
        // Only the failed records return to the queue; the rest of the batch is deleted.
        reportBatchItemFailures: true,
        // Bounds the crawl's total parallelism (and its Lambda bill) independently of the
        // number of hosts; FIFO groups already bound it per host to one.
        maxConcurrency: workerMaxConcurrency,
      }),
    );

    const api = createNodeFunction(this, 'Api', {
      ...common,
      entry: 'api.ts',
      description: 'crawlstack: HTTP API to start, inspect and cancel crawls',
      memorySize: 256,
      timeout: Duration.seconds(15),
    });
    useTable(api, ENV.crawlTable, storage.crawlTable, 'readWrite');
    useTable(api, ENV.urlTable, storage.urlTable, 'read');
    // Send: seeds. GetQueueAttributes (part of send): queue depth in the crawl status.
    useQueue(api, ENV.frontierQueueUrl, frontier.queue, 'send');
    useBucket(api, ENV.pageBucket, storage.pageBucket, 'read');
    // AWS_IAM: callers sign requests (SigV4) and need lambda:InvokeFunctionUrl; see
    // `api.grantInvokeUrl(principal)`. No CORS: the API is for programs, not browsers.
    this.apiUrl = api.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });

    const scheduler = createNodeFunction(this, 'Scheduler', {
      ...common,
      entry: 'scheduler.ts',
      description: 'crawlstack: completes crawls and redistributes AOPIC credit',
      memorySize: 256,
      timeout: Duration.seconds(60),
    });
    useTable(scheduler, ENV.crawlTable, storage.crawlTable, 'readWrite');
    useTable(scheduler, ENV.urlTable, storage.urlTable, 'readWrite');
    // Send: admits deferred URLs. GetQueueAttributes: an empty frontier is one sign a crawl is done.
    useQueue(scheduler, ENV.frontierQueueUrl, frontier.queue, 'send');
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

    this.frontierWorker = worker;
    this.api = api;
    this.scheduler = scheduler;
  }
}
