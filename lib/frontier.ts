import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FRONTIER_RETENTION_DAYS } from '../functions/cloud/lambda-settings.ts';
import { pinLogicalId } from './logical-id.ts';

/** Properties of {@link Frontier}. */
export interface FrontierProps {
  /**
   * The frontier queue's visibility timeout (functions/cloud/lambda-settings.ts derives it from the
   * worker's timeout): Lambda's poller may hold a batch a while before the function starts, and a
   * retried invocation must not see its messages reappear mid-run.
   */
  readonly visibilityTimeout: Duration;
  /**
   * Receives before SQS moves a message to the dead-letter queue. Higher than the usual 3-5:
   * a politeness deferral returns a message to the queue with a visibility delay, and every such
   * return counts as a receive. Messages that keep failing for a known reason are sent to the DLQ
   * by the worker itself (with the reason); this redrive is the net for crashes and timeouts.
   * @default 10
   */
  readonly maxReceiveCount?: number;
}

/** Longest retention SQS allows: a paused or throttled crawl keeps its frontier for two weeks. */
const RETENTION = Duration.days(FRONTIER_RETENTION_DAYS);

/**
 * The crawl frontier: an SQS FIFO queue with one message group per crawl and host, so SQS itself
 * guarantees that no host has two requests in flight, and its FIFO dead-letter queue.
 */
export class Frontier extends Construct {
  /** The frontier queue (logical ID `FrontierQueue`). */
  readonly queue: sqs.Queue;
  /** Its dead-letter queue (logical ID `FrontierDlq`). */
  readonly dlq: sqs.Queue;

  /** The redrive's maxReceiveCount. */
  readonly maxReceiveCount: number;

  constructor(scope: Construct, id: string, props: FrontierProps) {
    super(scope, id);
    const maxReceiveCount = props.maxReceiveCount ?? 10;
    this.maxReceiveCount = maxReceiveCount;
    if (!Number.isInteger(maxReceiveCount) || maxReceiveCount < 3 || maxReceiveCount > 1000) {
      throw new Error(`maxReceiveCount must be an integer from 3 to 1000, got ${maxReceiveCount}`);
    }

    // High-throughput FIFO (dedup scope and throughput limit per message group) on both queues:
    // the crawl spreads over many hosts, i.e. many groups, and the queue-wide 300 TPS of plain
    // FIFO would cap the whole crawl. The worker also writes to the DLQ, at crawl speed in a storm.
    const highThroughputFifo = {
      fifo: true,
      deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      // The worker sets MessageDeduplicationId = crawl + URL fingerprint (+ attempt for a
      // deliberate re-send); hashing the body would treat two tasks for one URL as different.
      contentBasedDeduplication: false,
      retentionPeriod: RETENTION,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    } as const;

    this.dlq = new sqs.Queue(this, 'FrontierDlq', highThroughputFifo);
    this.queue = new sqs.Queue(this, 'FrontierQueue', {
      ...highThroughputFifo,
      visibilityTimeout: props.visibilityTimeout,
      deadLetterQueue: { queue: this.dlq, maxReceiveCount },
    });
    pinLogicalId(this.dlq);
    pinLogicalId(this.queue);
  }
}
