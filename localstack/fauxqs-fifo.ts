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
 *
 * And three AWS limits fauxqs does not have, which only big crawls reach (each scaled down by an
 * environment variable, see aws-limits.ts; the endpoint sets a queue's {@link QueueLimits}):
 *
 * 3. A FIFO receive looks for available groups among the first 120,000 messages of the queue only
 *    (in flight or not): behind a backlog that long in locked groups it returns nothing.
 * 4. A FIFO queue holds at most 120,000 messages in flight; past that a receive returns nothing
 *    (SQS answers without error).
 * 5. A message is deleted `MessageRetentionPeriod` seconds after its send, whatever its
 *    visibility did meanwhile (fauxqs keeps messages forever).
 *
 * `patchFauxqsFifo` replaces `SqsQueue.prototype.dequeueFifo` with fauxqs' own loop minus its
 * one-per-group `break` (plus 3 and 4), puts a group back in sequence order after messages
 * return to it, and expires messages in `processTimers` (5). It reaches fauxqs' queue class by
 * file URL (the package exports only its app), and refuses to patch a version whose internals
 * look different rather than guess.
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
  /** Epoch ms of the send (fauxqs' `createMessage`). */
  sentTimestamp: number;
  approximateReceiveCount: number;
  approximateFirstReceiveTimestamp?: number;
}

/** AWS limits of one queue (the endpoint sets them when the queue is created). */
export interface QueueLimits {
  /** A FIFO receive considers groups among this many oldest messages only. */
  fifoScanWindow: number;
  /** In-flight messages a FIFO queue holds at most. */
  fifoInflight: number;
  /** Retention from the send, seconds, when shorter than the queue's `MessageRetentionPeriod`. */
  retentionSeconds?: number;
  /** Called with the id of each message retention deletes. */
  onExpire?: (messageId: string) => void;
}

const SQS_LIMITS: QueueLimits = { fifoScanWindow: 120_000, fifoInflight: 120_000 };

/** The fields of fauxqs' SqsQueue this patch uses. */
interface FauxQueue {
  name: string;
  attributes: Record<string, string | undefined>;
  spy?: { addMessage(event: Record<string, unknown>): void };
  messages: FauxMessage[];
  delayedMessages: FauxMessage[];
  fifoMessages: Map<string, FauxMessage[]>;
  fifoDelayed: Map<string, FauxMessage[]>;
  fifoLockedGroups: Map<string, number>;
  inflightMessages: Map<string, { message: FauxMessage; receiptHandle: string; visibilityDeadline: number }>;
  isFifo(): boolean;
  processTimers(): void;
  changeVisibility(receiptHandle: string, timeoutSeconds: number): void;
  /** Set by the endpoint (absent: SQS's limits). */
  limits?: QueueLimits;
  /** When the next message expires (epoch ms); absent: not known, look. */
  nextExpiry?: number;
}

type DlqResolver = (arn: string) => { enqueue(message: FauxMessage): void } | undefined;

/** What the endpoint reads of fauxqs' SQS store (it passes the store to `buildApp`). */
export interface FauxSqsStore {
  getQueue(url: string): { inflightMessages: Map<string, { message: { messageId: string } }> } | undefined;
}

interface SqsStoreModule {
  SqsQueue?: { prototype: Record<string, unknown> };
  SqsStore?: new () => FauxSqsStore & { createQueue(...args: unknown[]): FauxQueue };
}

let patched: Promise<SqsStoreModule> | undefined;

/** Patches fauxqs' FIFO queues once per process (see the module comment). */
export async function patchFauxqsFifo(): Promise<void> {
  patched ??= apply();
  await patched;
}

/** A patched fauxqs SQS store whose queues keep `limits` (pass it to `buildApp({ stores })`). */
export async function limitedSqsStore(limits: QueueLimits): Promise<FauxSqsStore> {
  patched ??= apply();
  const { SqsStore } = await patched;
  if (SqsStore === undefined) throw new Error('fauxqs: no SqsStore export; the FIFO patch needs updating');
  const store = new SqsStore();
  const create = store.createQueue.bind(store);
  store.createQueue = (...args: unknown[]) => {
    const queue = create(...args);
    queue.limits = limits;
    return queue;
  };
  return store;
}

async function apply(): Promise<SqsStoreModule> {
  const app = import.meta.resolve('fauxqs');
  const module = (await import(new URL('./sqs/sqsStore.js', app).href)) as SqsStoreModule;
  const proto = module.SqsQueue?.prototype;
  if (
    proto === undefined ||
    typeof proto.dequeueFifo !== 'function' ||
    typeof proto.processTimers !== 'function' ||
    typeof proto.changeVisibility !== 'function' ||
    typeof proto.enqueue !== 'function' ||
    typeof proto.setAttributes !== 'function'
  ) {
    throw new Error('fauxqs: SqsQueue internals not as expected; the FIFO patch needs updating');
  }
  proto.dequeueFifo = dequeueFifo;

  const originalEnqueue = proto.enqueue as (this: FauxQueue, message: FauxMessage) => void;
  proto.enqueue = function enqueue(this: FauxQueue, message: FauxMessage): void {
    if (this.nextExpiry !== undefined) {
      this.nextExpiry = Math.min(this.nextExpiry, message.sentTimestamp + retentionMs(this));
    }
    originalEnqueue.call(this, message);
  };
  const originalSetAttributes = proto.setAttributes as (this: FauxQueue, attrs: unknown) => void;
  proto.setAttributes = function setAttributes(this: FauxQueue, attrs: unknown): void {
    originalSetAttributes.call(this, attrs);
    this.nextExpiry = undefined; // the retention period may have changed
  };

  const originalTimers = proto.processTimers as (this: FauxQueue) => void;
  proto.processTimers = function processTimers(this: FauxQueue): void {
    expire(this);
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
  return module;
}

/** The queue's retention: its `MessageRetentionPeriod`, or the stand-in's shorter one. */
function retentionMs(queue: FauxQueue): number {
  const own = Number.parseInt(queue.attributes.MessageRetentionPeriod ?? '345600', 10);
  return Math.min(own, queue.limits?.retentionSeconds ?? own) * 1000;
}

/** Releases one in-flight message's hold on its FIFO group (as fauxqs counts it). */
function unlockOne(queue: FauxQueue, groupId: string): void {
  const count = (queue.fifoLockedGroups.get(groupId) ?? 1) - 1;
  if (count <= 0) queue.fifoLockedGroups.delete(groupId);
  else queue.fifoLockedGroups.set(groupId, count);
}

/**
 * Deletes every message sent longer ago than the retention, waiting, delayed or in flight. Looks
 * only when the earliest expiry it knows of has come (sends lower it, see `enqueue`).
 */
function expire(queue: FauxQueue): void {
  const now = Date.now();
  if (queue.nextExpiry !== undefined && now < queue.nextExpiry) return;
  const keepFor = retentionMs(queue);
  let next = Number.POSITIVE_INFINITY;
  const kept = (message: FauxMessage): boolean => {
    const end = message.sentTimestamp + keepFor;
    if (end > now) {
      next = Math.min(next, end);
      return true;
    }
    queue.limits?.onExpire?.(message.messageId);
    return false;
  };
  queue.messages = queue.messages.filter(kept);
  queue.delayedMessages = queue.delayedMessages.filter(kept);
  for (const groups of [queue.fifoMessages, queue.fifoDelayed]) {
    for (const [groupId, messages] of groups) {
      const left = messages.filter(kept);
      if (left.length === 0) groups.delete(groupId);
      else if (left.length !== messages.length) groups.set(groupId, left);
    }
  }
  for (const [handle, entry] of queue.inflightMessages) {
    if (kept(entry.message)) continue;
    queue.inflightMessages.delete(handle);
    if (queue.isFifo()) unlockOne(queue, entry.message.messageGroupId ?? '__default');
  }
  queue.nextExpiry = next;
}

/**
 * The highest sequence number a FIFO receive may take: that of the queue's N-th oldest message
 * (waiting or in flight), N being the scan window; undefined when the queue holds no more than N.
 */
function scanHorizon(queue: FauxQueue, window: number): string | undefined {
  let total = queue.inflightMessages.size;
  for (const messages of queue.fifoMessages.values()) total += messages.length;
  if (total <= window) return undefined;
  const sequences: string[] = [];
  for (const messages of queue.fifoMessages.values()) {
    for (const message of messages) sequences.push(message.sequenceNumber ?? '');
  }
  for (const entry of queue.inflightMessages.values()) sequences.push(entry.message.sequenceNumber ?? '');
  sequences.sort();
  return sequences[window - 1];
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
  const limits = this.limits ?? SQS_LIMITS;
  const result: Record<string, unknown>[] = [];
  // Past the in-flight cap SQS returns nothing (no error) until messages are deleted or return.
  const count = Math.min(maxCount, 10, limits.fifoInflight - this.inflightMessages.size);
  if (count <= 0) return result;
  const horizon = scanHorizon(this, limits.fifoScanWindow);
  const inWindow = (message: FauxMessage | undefined) =>
    message !== undefined && (horizon === undefined || (message.sequenceNumber ?? '') <= horizon);
  for (const [groupId, groupMessages] of this.fifoMessages) {
    if (result.length >= count) break;
    if (this.fifoLockedGroups.has(groupId) || groupMessages.length === 0) continue;
    while (result.length < count && inWindow(groupMessages[0])) {
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
