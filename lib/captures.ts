import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-id.ts';

/** Properties of {@link Captures}. */
export interface CapturesProps {
  /** The archiver's timeout; the queue's visibility timeout is derived from it. */
  readonly archiverTimeout: Duration;
  /** The archiver's batching window (seconds); also part of the visibility timeout. */
  readonly batchingWindowSeconds: number;
  /**
   * Receives before SQS moves a capture to the DLQ. Captures that are not captures at all are
   * sent there by the archiver itself (with the reason); this redrive catches archiver crashes.
   * @default 5
   */
  readonly maxReceiveCount?: number;
}

/** Longest retention SQS allows: pages of a crawl whose archiver is failing are kept two weeks. */
const RETENTION = Duration.days(14);

/**
 * The capture queue: the worker sends each finished page (its record and WARC records) here, and
 * the archiver drains it in large batches, writing one WARC object and one index object per crawl
 * per batch. A standard queue: order does not matter, and only standard queues let Lambda gather
 * batches larger than 10 over a batching window.
 */
export class Captures extends Construct {
  /** The capture queue (logical ID `CaptureQueue`). */
  readonly queue: sqs.Queue;
  /** Its dead-letter queue (logical ID `CaptureDlq`). */
  readonly dlq: sqs.Queue;

  constructor(scope: Construct, id: string, props: CapturesProps) {
    super(scope, id);
    const maxReceiveCount = props.maxReceiveCount ?? 5;
    const common = {
      retentionPeriod: RETENTION,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    } as const;
    this.dlq = new sqs.Queue(this, 'CaptureDlq', common);
    this.queue = new sqs.Queue(this, 'CaptureQueue', {
      ...common,
      // AWS's advice for an SQS event source with a batching window: six times the function
      // timeout plus the window, so a batch being gathered or retried never reappears mid-run.
      visibilityTimeout: Duration.seconds(
        props.archiverTimeout.toSeconds() * 6 + props.batchingWindowSeconds,
      ),
      deadLetterQueue: { queue: this.dlq, maxReceiveCount },
    });
    pinLogicalId(this.dlq);
    pinLogicalId(this.queue);
  }
}
