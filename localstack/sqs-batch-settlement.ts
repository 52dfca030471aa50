/**
 * What Lambda's SQS event source does with a batch once the function returned: which records it
 * deletes and which it leaves on the queue. Pure, so the rules are unit-tested with hand-built
 * events (including several records of one FIFO group, which the stand-in's SQS never delivers in
 * one receive but real SQS does).
 *
 * Rules (AWS Lambda developer guide, "Handling errors for an SQS event source" and "Implementing
 * partial batch responses"):
 * - the function threw or timed out, or was throttled: the whole batch stays on the queue;
 * - without `ReportBatchItemFailures` any return value counts as success: everything is deleted;
 * - with it, a missing, null or empty `batchItemFailures` is complete success; a list naming only
 *   records of this batch fails exactly those; a malformed list (not a list, an entry without a
 *   string `itemIdentifier`, an empty one, or an id not in the batch) fails the whole batch;
 * - FIFO: a failed record also fails every later record of its message group in the batch, so
 *   the group's order survives a function that forgot to stop at its first failure. This is
 *   stricter than Lambda, which deletes whatever the function does not list (AWS tells FIFO
 *   handlers to report every record after their first failure themselves): a handler must not
 *   rely on it.
 * Records left on the queue are not touched: they return when their visibility timeout runs out,
 * which is what Lambda does (it does not reset visibility on failure), and the queue's redrive
 * policy moves them to the dead-letter queue after `maxReceiveCount` receives.
 */
import type { SQSRecord } from 'aws-lambda';
import type { InvokeOutcome } from './local-lambda.ts';

/** The outcome for one batch. */
export interface BatchSettlement {
  kind: 'success' | 'partial' | 'batch-failed';
  /** Why the whole batch failed (`function-error`, `timeout`, `throttled`, `invalid-response: ...`). */
  reason?: string;
  /** Records to delete from the queue. */
  remove: SQSRecord[];
  /** Records left for redelivery. */
  keep: SQSRecord[];
}

export interface SettlementOptions {
  reportBatchItemFailures: boolean;
  fifo: boolean;
}

function failWhole(records: SQSRecord[], reason: string): BatchSettlement {
  return { kind: 'batch-failed', reason, remove: [], keep: [...records] };
}

/** Decides which records of a batch to delete, given how the invocation ended. */
export function settleSqsBatch(
  records: SQSRecord[],
  outcome: InvokeOutcome,
  options: SettlementOptions,
): BatchSettlement {
  if (outcome.kind === 'error') return failWhole(records, 'function-error');
  if (outcome.kind === 'timeout') return failWhole(records, 'timeout');
  if (outcome.kind === 'throttled') return failWhole(records, 'throttled');
  if (!options.reportBatchItemFailures) return { kind: 'success', remove: [...records], keep: [] };

  const result = outcome.result;
  const failures =
    result !== null && typeof result === 'object'
      ? (result as { batchItemFailures?: unknown }).batchItemFailures
      : null;
  if (failures === undefined || failures === null) return { kind: 'success', remove: [...records], keep: [] };
  if (!Array.isArray(failures))
    return failWhole(records, 'invalid-response: batchItemFailures is not a list');
  if (failures.length === 0) return { kind: 'success', remove: [...records], keep: [] };

  const ids = new Set(records.map((r) => r.messageId));
  const failed = new Set<string>();
  for (const entry of failures) {
    const id =
      entry !== null && typeof entry === 'object'
        ? (entry as { itemIdentifier?: unknown }).itemIdentifier
        : undefined;
    if (typeof id !== 'string' || id === '') {
      return failWhole(records, 'invalid-response: an entry has no itemIdentifier');
    }
    if (!ids.has(id)) return failWhole(records, `invalid-response: itemIdentifier ${id} is not in the batch`);
    failed.add(id);
  }

  const blockedGroups = new Set<string>();
  const remove: SQSRecord[] = [];
  const keep: SQSRecord[] = [];
  for (const record of records) {
    const group = options.fifo ? record.attributes.MessageGroupId : undefined;
    if (failed.has(record.messageId) || (group !== undefined && blockedGroups.has(group))) {
      keep.push(record);
      if (group !== undefined) blockedGroups.add(group);
    } else {
      remove.push(record);
    }
  }
  return {
    kind: remove.length === 0 ? 'batch-failed' : 'partial',
    remove,
    keep,
    ...(remove.length === 0 ? { reason: 'all-records-failed' } : {}),
  };
}
