/**
 * Two places where fauxqs' FIFO queues differ from SQS, mended in process for the stand-in:
 *
 * 1. fauxqs hands out at most one message of a message group per ReceiveMessage. SQS "first
 *    attempts to return as many messages with the same message group ID as possible" (the FIFO
 *    queue's receive documentation), and the worker is built for that: a batch holding several
 *    pages of one host shares one host read, one ledger write, one receive and one invocation.
 *    With one message per group the stand-in's costs per page were those of batches of one.
 * 2. When several in-flight messages of a group become visible again (a deferred batch, expired
 *    visibility), fauxqs puts each back at the front of its group in turn, which reverses their
 *    order. SQS keeps a group's order; the worker's ledger relies on it (a message whose sequence
 *    number is at or below the host's ledger is taken as handled).
 *
 * `patchFauxqsFifo` replaces `SqsQueue.prototype.dequeueFifo` with fauxqs' own loop minus its
 * one-per-group `break`, and puts a group back in sequence order after messages return to it.
 * It reaches fauxqs' queue class by file URL (the package exports only its app), and refuses to
 * patch a version whose internals look different rather than guess.
 */
import { randomUUID } from 'node:crypto';

/** The fields of a fauxqs message this patch reads or writes. */
interface FauxMessage {
  messageId: string;
  body: string;
  md5OfBody: string;
  md5OfMessageAttributes?: string;
  messageAttributes: Record<string, unknown>;
  messageGroupId?: string;
  sequenceNumber?: string;
  approximateReceiveCount: number;
  approximateFirstReceiveTimestamp?: number;
}

/** The fields of fauxqs' SqsQueue this patch uses. */
interface FauxQueue {
  name: string;
  attributes: Record<string, string | undefined>;
  spy?: { addMessage(event: Record<string, unknown>): void };
  fifoMessages: Map<string, FauxMessage[]>;
  fifoLockedGroups: Map<string, number>;
  inflightMessages: Map<string, { message: FauxMessage; receiptHandle: string; visibilityDeadline: number }>;
  isFifo(): boolean;
  processTimers(): void;
  changeVisibility(receiptHandle: string, timeoutSeconds: number): void;
}

type DlqResolver = (arn: string) => { enqueue(message: FauxMessage): void } | undefined;

let patched: Promise<void> | undefined;

/** Patches fauxqs' FIFO queues once per process (see the module comment). */
export function patchFauxqsFifo(): Promise<void> {
  patched ??= apply();
  return patched;
}

async function apply(): Promise<void> {
  const app = import.meta.resolve('fauxqs');
  const module = (await import(new URL('./sqs/sqsStore.js', app).href)) as {
    SqsQueue?: { prototype: Record<string, unknown> };
  };
  const proto = module.SqsQueue?.prototype;
  if (
    proto === undefined ||
    typeof proto.dequeueFifo !== 'function' ||
    typeof proto.processTimers !== 'function' ||
    typeof proto.changeVisibility !== 'function'
  ) {
    throw new Error('fauxqs: SqsQueue internals not as expected; the FIFO patch needs updating');
  }
  proto.dequeueFifo = dequeueFifo;

  const originalTimers = proto.processTimers as (this: FauxQueue) => void;
  proto.processTimers = function processTimers(this: FauxQueue): void {
    // Groups whose in-flight messages expire now (a little margin: fauxqs reads the clock again).
    const groups = new Set<string>();
    if (this.isFifo()) {
      const soon = Date.now() + 50;
      for (const entry of this.inflightMessages.values()) {
        if (entry.visibilityDeadline <= soon) groups.add(entry.message.messageGroupId ?? '__default');
      }
    }
    originalTimers.call(this);
    inSequence(this, groups);
  };

  const originalChange = proto.changeVisibility as (this: FauxQueue, handle: string, seconds: number) => void;
  proto.changeVisibility = function changeVisibility(this: FauxQueue, handle: string, seconds: number): void {
    const group = this.inflightMessages.get(handle)?.message.messageGroupId;
    originalChange.call(this, handle, seconds);
    if (seconds === 0 && group !== undefined && this.isFifo()) inSequence(this, new Set([group]));
  };
}

/** Restores sequence order in the given groups (sequence numbers are zero-padded strings). */
function inSequence(queue: FauxQueue, groups: ReadonlySet<string>): void {
  for (const groupId of groups) {
    queue.fifoMessages
      .get(groupId)
      ?.sort((a, b) => ((a.sequenceNumber ?? '') < (b.sequenceNumber ?? '') ? -1 : 1));
  }
}

/** fauxqs 1.9.2's dequeueFifo, taking as many messages of a group as fit (SQS's behaviour). */
function dequeueFifo(
  this: FauxQueue,
  maxCount: number,
  visibilityTimeoutOverride: number | undefined,
  dlqResolver: DlqResolver | undefined,
): Record<string, unknown>[] {
  this.processTimers();
  const visibilityTimeout =
    visibilityTimeoutOverride ?? Number.parseInt(this.attributes.VisibilityTimeout ?? '30', 10);
  let maxReceiveCount = Number.POSITIVE_INFINITY;
  let dlqArn: string | undefined;
  if (this.attributes.RedrivePolicy) {
    try {
      const policy = JSON.parse(this.attributes.RedrivePolicy) as {
        maxReceiveCount?: number;
        deadLetterTargetArn?: string;
      };
      maxReceiveCount = policy.maxReceiveCount ?? Number.POSITIVE_INFINITY;
      dlqArn = policy.deadLetterTargetArn;
    } catch {
      // an invalid policy is ignored, as fauxqs does
    }
  }
  const result: Record<string, unknown>[] = [];
  const count = Math.min(maxCount, 10);
  for (const [groupId, groupMessages] of this.fifoMessages) {
    if (result.length >= count) break;
    if (this.fifoLockedGroups.has(groupId) || groupMessages.length === 0) continue;
    while (result.length < count && groupMessages.length > 0) {
      const message = groupMessages.shift() as FauxMessage;
      message.approximateReceiveCount++;
      message.approximateFirstReceiveTimestamp ??= Date.now();
      if (dlqArn && dlqResolver && message.approximateReceiveCount > maxReceiveCount) {
        const dlq = dlqResolver(dlqArn);
        if (dlq) {
          this.spy?.addMessage({
            service: 'sqs',
            queueName: this.name,
            messageId: message.messageId,
            body: message.body,
            messageAttributes: message.messageAttributes,
            status: 'dlq',
            timestamp: Date.now(),
          });
          dlq.enqueue(message);
          continue;
        }
      }
      const receiptHandle = randomUUID();
      this.inflightMessages.set(receiptHandle, {
        message,
        receiptHandle,
        visibilityDeadline: Date.now() + visibilityTimeout * 1000,
      });
      const received: Record<string, unknown> = {
        MessageId: message.messageId,
        ReceiptHandle: receiptHandle,
        MD5OfBody: message.md5OfBody,
        Body: message.body,
      };
      if (message.md5OfMessageAttributes) received.MD5OfMessageAttributes = message.md5OfMessageAttributes;
      if (Object.keys(message.messageAttributes).length > 0)
        received.MessageAttributes = message.messageAttributes;
      result.push(received);
      // The group stays locked while any of its messages is in flight (a count, as in fauxqs).
      this.fifoLockedGroups.set(groupId, (this.fifoLockedGroups.get(groupId) ?? 0) + 1);
    }
    if (groupMessages.length === 0) this.fifoMessages.delete(groupId);
  }
  return result;
}
