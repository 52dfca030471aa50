/**
 * A crawl's claims audited against what it left on the stand-in (the cost bench's debug mode,
 * `CRAWLSTACK_BENCH_DEBUG=1`, and the pipeline's scale test): every URL claimed in the crawl's
 * URL-seen logs and per-URL claims (both in the crawl table), less those the archive holds a page
 * record for and those parked and never admitted. What is left either finished without a page
 * record (rare: a step that ends without one) or was lost; each comes with its claim's owner (the
 * page that found it: `<fp>:<seq>@<host>`), and whether its host's back queue still holds it. A
 * URL in two chunks was claimed twice: two pages counted it as their child.
 */
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { AwsClients } from '../../functions/adapters/aws/clients.ts';
import { unpackFingerprints } from '../../functions/adapters/aws/dynamo-seen-log.ts';

/** What the crawl left: its claimed URLs without a page record or a park, and its double claims. */
export interface ClaimAudit {
  /** URLs claimed (each once, however often). */
  claimed: number;
  unfinished: UnfinishedUrl[];
  /** Fingerprints found in more than one chunk of their host's log (each must be in exactly one). */
  claimedTwice: number;
}

/** A claimed URL with no page record and no park. */
export interface UnfinishedUrl {
  fp: string;
  host: string;
  owner: string;
  inBackQueue: boolean;
}

/** Every item of `table`, page by page. */
export async function scanItems(
  clients: AwsClients,
  table: string,
  each: (item: Record<string, unknown>) => void,
): Promise<void> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await clients.doc.send(
      new ScanCommand({ TableName: table, ...(start === undefined ? {} : { ExclusiveStartKey: start }) }),
    );
    for (const item of page.Items ?? []) each(item);
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
}

/** The crawl's claimed URLs that have neither a page record nor a standing park, and its double claims. */
export async function auditClaims(
  clients: AwsClients,
  tables: { crawl: string; url: string },
  bucket: string,
  crawlId: string,
): Promise<ClaimAudit> {
  const claimed = new Map<string, { host: string; owner: string }>();
  let claimedTwice = 0;
  const backlog = new Set<string>();
  const seenPrefix = `seen#${crawlId}#`;
  const seenUrl = `seenurl#${crawlId}#`;
  await scanItems(clients, tables.crawl, (item) => {
    const pk = String(item.pk ?? '');
    if (pk.startsWith(seenPrefix) && item.fps instanceof Uint8Array) {
      const host = pk.slice(seenPrefix.length);
      for (const fp of unpackFingerprints(item.fps)) {
        if (claimed.has(fp)) claimedTwice += 1;
        claimed.set(fp, { host, owner: String(item.owner) });
      }
    } else if (pk.startsWith(seenUrl)) {
      // A closed log's host: one item per URL.
      const fp = pk.slice(seenUrl.length);
      if (claimed.has(fp)) claimedTwice += 1;
      claimed.set(fp, { host: '(per-URL claim)', owner: String(item.owner) });
    } else if (pk.startsWith(`bq#${crawlId}#`) && item.turn instanceof Uint8Array) {
      backlog.add(gunzipSync(item.turn).toString('utf8'));
    }
  });
  const parked = new Set<string>();
  await scanItems(clients, tables.url, (item) => {
    const pk = String(item.pk ?? '');
    if (pk.startsWith(`${crawlId}#`) && item.admitted === undefined && item.task !== undefined) {
      parked.add(pk.slice(crawlId.length + 1));
    }
  });
  const recorded = new Set<string>();
  let token: string | undefined;
  do {
    const listed = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `index/${crawlId}/`, ContinuationToken: token }),
    );
    for (const { Key } of listed.Contents ?? []) {
      const object = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
      const text = (await object.Body?.transformToString('utf8')) ?? '';
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        recorded.add(String((JSON.parse(line) as { fp?: string }).fp));
      }
    }
    token = listed.NextContinuationToken;
  } while (token !== undefined);
  const out: UnfinishedUrl[] = [];
  const backlogText = [...backlog].join('\n');
  for (const [fp, { host, owner }] of claimed) {
    if (recorded.has(fp) || parked.has(fp)) continue;
    out.push({ fp, host, owner, inBackQueue: backlogText.includes(fp) });
  }
  return { claimed: claimed.size, unfinished: out, claimedTwice };
}
