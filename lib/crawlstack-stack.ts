import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { FRONTIER_VISIBILITY_SECONDS } from '../functions/cloud/lambda-settings.ts';
import { Alarms } from './alarms.ts';
import { Captures } from './captures.ts';
import { Frontier } from './frontier.ts';
import { ARCHIVER_BATCHING_WINDOW_SECONDS, ARCHIVER_TIMEOUT, Functions } from './functions.ts';
import { type ArchiveClass, archiveProblem, DEFAULT_ARCHIVE, Storage } from './storage.ts';
import type { WorkerScaleProps } from './worker-scale.ts';

/** Days a crawl's items and pages are kept by default. */
export const DEFAULT_RETENTION_DAYS = 90;

/** Properties of {@link CrawlstackStack}; lib/app.ts fills them from `crawlstack:*` context. */
export interface CrawlstackStackProps extends StackProps, WorkerScaleProps {
  /**
   * A throw-away deployment: tables, bucket and log groups are destroyed with the stack, and the
   * bucket is emptied first. Otherwise they are retained.
   * @default false
   */
  readonly dev?: boolean;
  /** Receives of one frontier message before SQS moves it to the DLQ. @default 10 */
  readonly maxReceiveCount?: number;
  /**
   * Days a crawl's data is kept: every DynamoDB item expires this long after its last write (TTL
   * on `expiresAt`), and the page bucket's objects this long after they were written. Must exceed
   * the longest crawl (a running crawl's URL-seen claims are written once, when found). 0 keeps
   * everything. @default 90
   */
  readonly retentionDays?: number;
  /**
   * Where WARC objects move once a crawl is over (`STANDARD_IA`, `GLACIER_IR`, or `STANDARD` to
   * stay) and after how many days (S3's minimum: 30 for Standard-IA, 0 for Glacier IR).
   * @default Standard-IA after 30 days
   */
  readonly archiveStorageClass?: ArchiveClass;
  readonly archiveTransitionDays?: number;
  /**
   * Let crawls set `allowPrivate` (lift the SSRF guard: loopback, private, link-local and metadata
   * addresses, e.g. 169.254.169.254 inside Lambda). Off: the API refuses such a crawl and the
   * worker keeps the guard. Only for deployments whose API callers are trusted. @default false
   */
  readonly allowPrivateAddresses?: boolean;
  /**
   * The shortest interval between two rounds of a crawl's recurring recrawl, in minutes (the API
   * refuses a shorter `every`). @default 60
   */
  readonly recrawlMinIntervalMinutes?: number;
  /** Log retention of the three functions. @default ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** X-Ray active tracing on the functions. @default false */
  readonly tracing?: boolean;
  /** Alarm on frontier worker throttles. @default true */
  readonly throttleAlarm?: boolean;
  /**
   * ARN of an existing SNS topic notified by every alarm (on ALARM and on OK). Imported, not
   * created: who gets paged is decided outside this stack.
   * @default - no notification
   */
  readonly alarmTopicArn?: string;
}

/**
 * crawlstack on AWS: the SQS FIFO frontier, the capture queue, the DynamoDB tables, the WARC
 * bucket, the worker, API, scheduler and archiver Lambdas, and alarms. Environment-agnostic (no account or region), so it
 * synthesizes offline without credentials.
 */
export class CrawlstackStack extends Stack {
  /** FrontierQueue and FrontierDlq. */
  readonly frontier: Frontier;
  /** CaptureQueue and CaptureDlq. */
  readonly captures: Captures;
  /** UrlTable, CrawlTable and PageBucket. */
  readonly storage: Storage;
  /** FrontierWorker, Api (with its function URL), Scheduler (with ScheduleRule) and Archiver. */
  readonly functions: Functions;
  /** DLQ, errors and throttles alarms. */
  readonly alarms: Alarms;

  constructor(scope: Construct, id: string, props: CrawlstackStackProps = {}) {
    super(scope, id, {
      description: 'crawlstack: a polite, trap-resistant web crawler (SQS FIFO, Lambda, DynamoDB, S3)',
      ...props,
    });
    const dev = props.dev ?? false;
    const retentionDays = props.retentionDays ?? DEFAULT_RETENTION_DAYS;
    if (!Number.isInteger(retentionDays) || retentionDays < 0 || retentionDays > 3650) {
      throw new Error(`retentionDays must be an integer from 0 (keep forever) to 3650, got ${retentionDays}`);
    }
    const archive = {
      storageClass: props.archiveStorageClass ?? DEFAULT_ARCHIVE.storageClass,
      afterDays: props.archiveTransitionDays ?? DEFAULT_ARCHIVE.afterDays,
    };
    const archiveError = archiveProblem(archive);
    if (archiveError !== undefined) throw new Error(archiveError);
    const removalPolicy = dev ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;

    this.frontier = new Frontier(this, 'Frontier', {
      visibilityTimeout: Duration.seconds(FRONTIER_VISIBILITY_SECONDS),
      maxReceiveCount: props.maxReceiveCount,
    });
    this.captures = new Captures(this, 'Captures', {
      archiverTimeout: ARCHIVER_TIMEOUT,
      batchingWindowSeconds: ARCHIVER_BATCHING_WINDOW_SECONDS,
    });
    this.storage = new Storage(this, 'Storage', {
      removalPolicy,
      autoDeleteObjects: dev,
      retentionDays,
      archive,
    });
    this.functions = new Functions(this, 'Functions', {
      frontier: this.frontier,
      captures: this.captures,
      storage: this.storage,
      maxReceiveCount: this.frontier.maxReceiveCount,
      retentionDays,
      allowPrivateAddresses: props.allowPrivateAddresses ?? false,
      workerMaxConcurrency: props.workerMaxConcurrency,
      workerHostsPerInvocation: props.workerHostsPerInvocation,
      reservableConcurrency: props.reservableConcurrency,
      reserveWorkerConcurrency: props.reserveWorkerConcurrency,
      logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      logRemovalPolicy: removalPolicy,
      tracing: props.tracing ?? false,
      ...(props.recrawlMinIntervalMinutes === undefined
        ? {}
        : { recrawlMinIntervalMinutes: props.recrawlMinIntervalMinutes }),
    });
    this.alarms = new Alarms(this, 'Alarms', {
      dlq: this.frontier.dlq,
      captureDlq: this.captures.dlq,
      frontier: this.frontier.queue,
      captures: this.captures.queue,
      functions: {
        FrontierWorker: this.functions.frontierWorker,
        Api: this.functions.api,
        Scheduler: this.functions.scheduler,
        Archiver: this.functions.archiver,
      },
      worker: this.functions.frontierWorker,
      throttleAlarm: props.throttleAlarm ?? true,
      topic: props.alarmTopicArn
        ? sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn)
        : undefined,
    });

    // Top-level outputs keep their ids as logical IDs (no hash): scripts read them by name.
    const outputs: Record<string, [string, string]> = {
      ApiUrl: [this.functions.apiUrl.url, 'HTTP API (function URL, AWS_IAM auth: sign requests with SigV4)'],
      PageBucketName: [this.storage.pageBucket.bucketName, 'S3 bucket with WARC objects and the page index'],
      UrlTableName: [
        this.storage.urlTable.tableName,
        'DynamoDB table: URL-seen claims, URL state, AOPIC cash',
      ],
      CrawlTableName: [this.storage.crawlTable.tableName, 'DynamoDB table: crawls, hosts and their ledgers'],
      FrontierQueueUrl: [this.frontier.queue.queueUrl, 'SQS FIFO frontier queue'],
      FrontierDlqUrl: [this.frontier.dlq.queueUrl, 'SQS FIFO dead-letter queue of the frontier'],
      CaptureQueueUrl: [this.captures.queue.queueUrl, 'SQS queue of finished pages, drained by the archiver'],
      CaptureDlqUrl: [this.captures.dlq.queueUrl, 'SQS dead-letter queue of the capture queue'],
    };
    for (const [id, [value, description]] of Object.entries(outputs)) {
      new CfnOutput(this, id, { value, description });
    }
  }
}
