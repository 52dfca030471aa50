/**
 * The runs of an archive's recurring recrawl on DynamoDB: one item of the crawl table at
 * `arc#<archive>` / `schedule-runs` (beside the archive's rounds item) with a count per outcome and
 * the last run. Like the archive's items it carries no expiry.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../../cloud/env.ts';
import type { ScheduledRun, ScheduledRunLog, ScheduledRuns } from '../../cloud/ports/recrawl-schedules.ts';

const RUNS_SK = 'schedule-runs';

export class DynamoScheduledRunLog implements ScheduledRunLog {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(doc: DynamoDBDocumentClient, table: string) {
    this.#doc = doc;
    this.#table = table;
  }

  #key(archive: string) {
    return { [TABLE_KEYS.partitionKey]: `arc#${archive}`, [TABLE_KEYS.sortKey]: RUNS_SK };
  }

  async record(archive: string, run: ScheduledRun): Promise<void> {
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: this.#key(archive),
        UpdateExpression: 'ADD #kind :one SET #last = :run',
        ExpressionAttributeNames: { '#kind': run.kind, '#last': 'last' },
        ExpressionAttributeValues: { ':one': 1, ':run': run },
      }),
    );
  }

  async read(archive: string): Promise<ScheduledRuns> {
    const { Item: item } = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: this.#key(archive), ConsistentRead: true }),
    );
    const runs: ScheduledRuns = {
      started: Number(item?.started ?? 0),
      skipped: Number(item?.skipped ?? 0),
      failed: Number(item?.failed ?? 0),
    };
    if (item?.last !== undefined) runs.last = item.last as ScheduledRun;
    return runs;
  }
}
