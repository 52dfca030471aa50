import type {
  BatchState,
  BatchStateReader,
  BatchStateRequest,
} from '../../functions/cloud/ports/cloud-ports.ts';

/** The batch state of the items `want` names (the kinds it does not name: none), as the contracts read it. */
export function readBatchState(
  table: BatchStateReader,
  want: Partial<BatchStateRequest>,
): Promise<BatchState> {
  return table.loadBatchState({ crawlIds: [], budgets: [], hosts: [], robots: [], ...want });
}
