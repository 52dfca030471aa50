/**
 * The FIFO rule of a partial batch response, in one place: SQS FIFO hands a group's messages out
 * in order, so when one record of a group fails, every later record of that group in the batch
 * must fail too (else a later message would be deleted while an earlier one comes back). Powertools'
 * `SqsFifoPartialProcessor` applies the same rule; this worker does not use it because it runs
 * groups concurrently and writes the batch's effects after every record ran (see batch-commit.ts).
 */
import type { VisibilityChange } from '../ports/cloud-ports.ts';
import type { FrontierMessage, MessageVerdict } from './batch-model.ts';

/**
 * Runs a group's records in order; once one fails (a `retry` verdict), every later record gets
 * the same verdict without running (or what `behind` makes of it: the worker re-sends a record
 * that has few receives left rather than let it return once more).
 */
export async function runGroupInOrder<T extends { message: FrontierMessage }>(
  entries: readonly T[],
  step: (entry: T) => Promise<MessageVerdict>,
  verdicts: Map<string, MessageVerdict>,
  behind: (entry: T, blocked: MessageVerdict) => Promise<MessageVerdict> = async (_, blocked) => blocked,
): Promise<void> {
  let blocked: MessageVerdict | undefined;
  for (const entry of entries) {
    const verdict = blocked === undefined ? await step(entry) : await behind(entry, blocked);
    if (verdict.kind === 'retry') blocked ??= verdict;
    verdicts.set(entry.message.messageId, verdict);
  }
}

/** What the handler does with a batch's verdicts: the failed message ids and their new visibility. */
export interface FifoResponse {
  /** Message ids for `batchItemFailures`, in batch order. */
  failed: string[];
  /** Visibility of each failed message (the wait of its group's first failure). */
  changes: VisibilityChange[];
}

/**
 * Applies the FIFO rule to a batch's verdicts: a message fails when its own verdict is `retry`,
 * when it has no verdict, or when an earlier message of its group failed (it then waits as long as
 * that one).
 */
export function fifoResponse(
  messages: readonly FrontierMessage[],
  verdicts: ReadonlyMap<string, MessageVerdict>,
): FifoResponse {
  const failed: string[] = [];
  const changes: VisibilityChange[] = [];
  const blockedGroups = new Map<string, number>();
  for (const message of messages) {
    const verdict = verdicts.get(message.messageId);
    const groupBlock = message.groupId === undefined ? undefined : blockedGroups.get(message.groupId);
    if (verdict?.kind === 'ack' && groupBlock === undefined) continue;
    const seconds = verdict?.kind === 'retry' ? verdict.seconds : (groupBlock ?? 0);
    failed.push(message.messageId);
    changes.push({ receiptHandle: message.receiptHandle, seconds });
    if (message.groupId !== undefined && groupBlock === undefined)
      blockedGroups.set(message.groupId, seconds);
  }
  return { failed, changes };
}
