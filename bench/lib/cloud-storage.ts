/**
 * What a crawl leaves stored on the stand-in, in the units AWS bills storage in: DynamoDB item
 * bytes per table (DynamoDB's item size rules plus 100 bytes per item, `dynamoItemBytes`), bytes
 * of global secondary index entries, and S3 object bytes by key prefix. Read with a Scan and a
 * listing after the crawl's metrics were taken (these requests are the bench's, not the crawl's).
 */
import { type AttributeValue, DescribeTableCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createAwsClients } from '../../functions/adapters/aws/clients.ts';
import { dynamoItemBytes } from '../../localstack/cost-model.ts';

/** One table's stored bytes. */
export interface TableStorage {
  items: number;
  /** Base-table bytes (what PITR also bills). */
  bytes: number;
  /** Bytes of its global secondary indexes' entries (index keys, projected attributes, table keys, 100 B each). */
  indexBytes: number;
  /** Items whose key holds `#c#`: content-hash claims in the URL table. */
  contentClaims: number;
}

/** A crawl's storage after it ended. */
export interface CrawlStorage {
  tables: Record<string, TableStorage>;
  /** S3 bytes and objects by the key's first segment (`warc`, `index`, `links`, `trace`, ...). */
  objects: Record<string, { objects: number; bytes: number }>;
}

/** Scans `tables` and lists `bucket` through the stand-in's `endpoint`. */
export async function measureStorage(
  endpoint: string,
  tables: string[],
  bucket: string,
): Promise<CrawlStorage> {
  const clients = createAwsClients({ AWS_ENDPOINT_URL: endpoint, AWS_REGION: 'us-east-1' });
  try {
    const out: CrawlStorage = { tables: {}, objects: {} };
    for (const table of tables) {
      const described = await clients.dynamo.send(new DescribeTableCommand({ TableName: table }));
      const keyNames = (described.Table?.KeySchema ?? []).map((k) => k.AttributeName as string);
      const indexes = (described.Table?.GlobalSecondaryIndexes ?? []).map((gsi) => ({
        keys: (gsi.KeySchema ?? []).map((k) => k.AttributeName as string),
        projected:
          gsi.Projection?.ProjectionType === 'ALL' ? undefined : (gsi.Projection?.NonKeyAttributes ?? []),
      }));
      const stats: TableStorage = { items: 0, bytes: 0, indexBytes: 0, contentClaims: 0 };
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await clients.dynamo.send(
          new ScanCommand({ TableName: table, ExclusiveStartKey: start }),
        );
        for (const item of page.Items ?? []) {
          stats.items += 1;
          stats.bytes += dynamoItemBytes(item);
          if ((item.pk?.S ?? '').includes('#c#')) stats.contentClaims += 1;
          for (const index of indexes) {
            if (!index.keys.every((k) => item[k] !== undefined)) continue;
            const names = new Set([...index.keys, ...keyNames, ...(index.projected ?? Object.keys(item))]);
            const entry = Object.fromEntries(
              [...names].filter((n) => item[n] !== undefined).map((n) => [n, item[n]]),
            );
            stats.indexBytes += dynamoItemBytes(entry);
          }
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      out.tables[table] = stats;
    }
    let token: string | undefined;
    do {
      const page = await clients.s3.send(
        new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        const prefix = (object.Key ?? '').split('/')[0] ?? '';
        const entry = out.objects[prefix] ?? { objects: 0, bytes: 0 };
        entry.objects += 1;
        entry.bytes += object.Size ?? 0;
        out.objects[prefix] = entry;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out;
  } finally {
    clients.destroy();
  }
}
