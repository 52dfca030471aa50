/**
 * The frontier worker's handler (and the archiver's) over real tables, queues and a bucket on the
 * test endpoint, driven by hand: tests build SQS events themselves (e.g. several records of one
 * FIFO group in one batch, which the stand-in's SQS never delivers but real SQS does) or pump the
 * queues like the event source mappings.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoCrawlTable } from '../../../functions/adapters/aws/dynamo-crawl-table.ts';
import { S3Objects } from '../../../functions/adapters/aws/s3-objects.ts';
import type { FunctionEnv } from '../../../functions/cloud/env.ts';
import type { FaultHook } from '../../../functions/cloud/fault-hook.ts';
import { createArchiver } from '../../../functions/cloud/lambdas/archiver/handler.ts';
import {
  createAwsApiDeps,
  createAwsArchiverDeps,
  createAwsWorkerDeps,
} from '../../../functions/cloud/lambdas/aws-wiring.ts';
import { createFrontierWorker } from '../../../functions/cloud/lambdas/frontier-worker/handler.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import { encodeTask, messageGroupId } from '../../../functions/cloud/messages/task-message.ts';
import { crawlProgress } from '../../../functions/cloud/use-cases/crawl-progress.ts';
import { listPages, type PageCursor } from '../../../functions/cloud/use-cases/list-pages.ts';
import { startCrawl } from '../../../functions/cloud/use-cases/start-crawl.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';
import { toSqsRecords } from '../../../localstack/sqs-event-source.ts';
import { type AwsBackend, openAwsBackend } from '../../contract/backends.ts';

/** A worker and everything around it. */
export interface WorkerHarness {
  aws: AwsBackend;
  env: FunctionEnv<'frontierWorker'> & FunctionEnv<'archiver'> & FunctionEnv<'api'>;
  table: DynamoCrawlTable;
  objects: S3Objects;
  logs: string[];
  /** Builds a worker (a fresh container: cold caches) over the same resources. */
  worker(options?: {
    fault?: FaultHook;
    creditFlushMs?: number;
    /** The inline wait per host served (tests of the deferral path set 300 ms: their gaps are 1 s). */
    inlineWaitMs?: number;
  }): (records: SQSRecord[]) => Promise<SQSBatchResponse>;
  /** Builds an archiver (a fresh container). */
  archiver(options?: { fault?: FaultHook }): (event: SQSEvent) => Promise<SQSBatchResponse>;
  startCrawl(config: Record<string, unknown>): Promise<string>;
  progress(id: string): ReturnType<typeof crawlProgress>;
  /** A hand-built record for a task: its group, the given sequence number, a fresh message id. */
  /**
   * A hand-made record. `seq` undefined: outside the group's sequence (no SequenceNumber), for a
   * record handed over while the crawl's own messages of its host are in the queue: the stand-in
   * numbers messages from 1, so a hand-made number could pass them for handled by its ledger.
   */
  record(task: CrawlTask, seq: number | undefined, messageId?: string): SQSRecord;
  /** Receives up to 10 frontier messages as the event source would (and does not delete them). */
  receive(): Promise<SQSRecord[]>;
  /** Deletes the records a response did not list as failed (what Lambda's event source does). */
  settle(records: SQSRecord[], response: SQSBatchResponse): Promise<void>;
  /** Everything on the capture queue, received (and left in flight) as capture records. */
  receiveCaptures(): Promise<SQSRecord[]>;
  /** Receives every capture waiting, archives them in one batch, deletes what succeeded. */
  archiveAll(archiver?: (event: SQSEvent) => Promise<SQSBatchResponse>): Promise<SQSBatchResponse>;
  /** Every page record of a crawl, through the API's listing (limit per call). */
  pages(id: string, limit?: number): Promise<PageItem[]>;
  close(): Promise<void>;
}

/** Opens the endpoint and creates the stack's resources for one test file. */
export async function openWorkerHarness(): Promise<WorkerHarness> {
  const aws = await openAwsBackend();
  const [urlTable, crawlTable, frontierQueueUrl, frontierDlqUrl, captureQueueUrl, captureDlqUrl, pageBucket] =
    await Promise.all([
      aws.urlTable(),
      aws.crawlTable(),
      aws.fifoQueue(30),
      aws.fifoQueue(30),
      aws.standardQueue(30),
      aws.standardQueue(30),
      aws.bucket(),
    ]);
  const env = {
    urlTable,
    crawlTable,
    frontierQueueUrl,
    frontierDlqUrl,
    captureQueueUrl,
    captureDlqUrl,
    pageBucket,
    frontierMaxReceives: '10',
    retentionDays: '90',
    // The stand-in crawls loopback fixtures; a deployment forbids it by default.
    privateAddresses: 'allowed',
    // No schedule is created through this harness's API (test/emulator/stand-in/recrawl-schedule.test.ts does).
    recrawlScheduleGroup: 'harness-recrawls',
    recrawlScheduleRoleArn: 'arn:aws:iam::000000000000:role/harness-recrawls',
    recrawlTargetArn: 'arn:aws:lambda:us-east-1:000000000000:function:harness-scheduler',
  };
  const table = new DynamoCrawlTable(aws.clients.doc, crawlTable);
  const objects = new S3Objects(aws.clients.s3, pageBucket);
  const logs: string[] = [];
  const apiDeps = createAwsApiDeps(aws.clients, env);
  const queueArn = `arn:aws:sqs:us-east-1:000000000000:${frontierQueueUrl.split('/').pop()}`;
  const captureArn = `arn:aws:sqs:us-east-1:000000000000:${captureQueueUrl.split('/').pop()}`;

  async function receiveAll(queueUrl: string, arn: string): Promise<SQSRecord[]> {
    const out: SQSRecord[] = [];
    for (;;) {
      const response = await aws.clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const messages = response.Messages ?? [];
      if (messages.length === 0) return out;
      out.push(...toSqsRecords(messages, arn, 'us-east-1'));
    }
  }

  async function remove(queueUrl: string, records: SQSRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 10) {
      await aws.clients.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: records
            .slice(i, i + 10)
            .map((r, n) => ({ Id: String(n), ReceiptHandle: r.receiptHandle })),
        }),
      );
    }
  }

  const harness: WorkerHarness = {
    aws,
    env,
    table,
    objects,
    logs,
    worker(options = {}) {
      const handler = createFrontierWorker(
        createAwsWorkerDeps(aws.clients, env, {
          log: (line) => logs.push(line),
          ...(options.fault === undefined ? {} : { fault: options.fault }),
          ...(options.creditFlushMs === undefined ? {} : { creditFlushMs: options.creditFlushMs }),
          ...(options.inlineWaitMs === undefined ? {} : { inlineWaitMs: options.inlineWaitMs }),
        }),
      );
      return (records) => handler({ Records: records });
    },
    archiver(options = {}) {
      return createArchiver(
        createAwsArchiverDeps(aws.clients, env, {
          log: (line) => logs.push(line),
          ...(options.fault === undefined ? {} : { fault: options.fault }),
        }),
      );
    },
    async startCrawl(config) {
      const outcome = await startCrawl(apiDeps, config);
      if (outcome.kind !== 'started') throw new Error(outcome.problems.join('; '));
      return outcome.id;
    },
    progress: (id) => crawlProgress(table, id),
    record(task, seq, messageId = randomUUID()) {
      return {
        messageId,
        receiptHandle: `fake-${messageId}`,
        body: encodeTask(task),
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: '0',
          SenderId: '000000000000',
          ApproximateFirstReceiveTimestamp: '0',
          MessageGroupId: messageGroupId(task),
          MessageDeduplicationId: `${task.crawlId}#${task.fp}`,
          ...(seq === undefined ? {} : { SequenceNumber: String(seq).padStart(20, '0') }),
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: 'us-east-1',
      };
    },
    async receive() {
      const response = await aws.clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: frontierQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      return toSqsRecords(response.Messages ?? [], queueArn, 'us-east-1');
    },
    async settle(records, response) {
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      await remove(
        frontierQueueUrl,
        records.filter((r) => !failed.has(r.messageId)),
      );
    },
    receiveCaptures: () => receiveAll(captureQueueUrl, captureArn),
    async archiveAll(archiver) {
      const records = await receiveAll(captureQueueUrl, captureArn);
      const response = await (archiver ?? harness.archiver())({ Records: records });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      await remove(
        captureQueueUrl,
        records.filter((r) => !failed.has(r.messageId)),
      );
      return response;
    },
    async pages(id, limit = 1000) {
      const out: PageItem[] = [];
      let cursor: PageCursor | undefined;
      do {
        const page = await listPages(objects, id, limit, cursor);
        out.push(...page.pages);
        cursor = page.cursor;
      } while (cursor !== undefined);
      return out;
    },
    close: () => aws.close(),
  };
  return harness;
}
