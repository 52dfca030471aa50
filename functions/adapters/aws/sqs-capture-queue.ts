/**
 * The capture queue on SQS (standard): the worker sends one message per finished page, packed into
 * SendMessageBatch calls. (The archiver's dead letters go to the capture DLQ through
 * SqsDeadLetterQueue.)
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { CaptureSink } from '../../cloud/ports/cloud-ports.ts';
import { sendMessageBatch } from './sqs-frontier.ts';

/** SQS: at most 10 entries and 256 KiB of bodies per SendMessageBatch. */
const MAX_ENTRIES = 10;
const MAX_BATCH_BYTES = 256 * 1024;
/** Room per entry for its id and the request's JSON around the body. */
const ENTRY_OVERHEAD = 64;

/**
 * Packs bodies into as few SendMessageBatch calls as SQS allows (10 entries and 256 KiB each).
 * SQS bills a call per started 64 KiB of payload, so packing saves calls, not bytes.
 */
export class SqsCaptureQueue implements CaptureSink {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;

  constructor(sqs: SQSClient, queueUrl: string) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
  }

  async send(bodies: readonly string[]): Promise<void> {
    let chunk: string[] = [];
    let size = 0;
    const calls: Promise<void>[] = [];
    for (const body of bodies) {
      const bytes = Buffer.byteLength(body, 'utf8') + ENTRY_OVERHEAD;
      if (chunk.length > 0 && (chunk.length >= MAX_ENTRIES || size + bytes > MAX_BATCH_BYTES)) {
        calls.push(this.#send(chunk));
        chunk = [];
        size = 0;
      }
      chunk.push(body);
      size += bytes;
    }
    if (chunk.length > 0) calls.push(this.#send(chunk));
    // Order does not matter on a standard queue: the calls run together.
    await Promise.all(calls);
  }

  #send(bodies: string[]): Promise<void> {
    return sendMessageBatch(
      this.#sqs,
      this.#queueUrl,
      bodies.map((body, i) => ({ Id: String(i), MessageBody: body })),
    );
  }
}
