import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TABLE_KEYS } from '../functions/cloud/env.ts';
import { pinLogicalId } from './logical-id.ts';

/** Properties of {@link Storage}. */
export interface StorageProps {
  /** What happens to tables and bucket when the stack deletes them (RETAIN outside dev). */
  readonly removalPolicy: RemovalPolicy;
  /** Empty the bucket on stack deletion (a custom resource); only sensible in dev. */
  readonly autoDeleteObjects: boolean;
  /** Delete stored pages this many days after they were written; 0 keeps them. */
  readonly retentionDays: number;
  /** Where WARC objects move once a crawl is over, and after how many days (see ArchiveClass). */
  readonly archive: ArchiveLifecycle;
}

/**
 * The storage class WARC objects move to (read rarely once a crawl is over): `STANDARD_IA`
 * (Standard-IA: $0.0125 per GB-month against Standard's $0.023, $0.01 per GB read, 30-day
 * minimum), `GLACIER_IR` (Glacier Instant Retrieval: $0.004, $0.03 per GB read, 90-day minimum,
 * still read in milliseconds), or `STANDARD` (no move).
 */
export type ArchiveClass = 'STANDARD' | 'STANDARD_IA' | 'GLACIER_IR';

/** The archive's lifecycle: its class after `afterDays` days in Standard. */
export interface ArchiveLifecycle {
  storageClass: ArchiveClass;
  afterDays: number;
}

/** The default: Standard-IA after 30 days (S3's earliest move to IA). */
export const DEFAULT_ARCHIVE: ArchiveLifecycle = { storageClass: 'STANDARD_IA', afterDays: 30 };

/** S3's earliest lifecycle move into each class, in days. */
export const ARCHIVE_MIN_DAYS: Record<ArchiveClass, number> = { STANDARD: 0, STANDARD_IA: 30, GLACIER_IR: 0 };

const S3_CLASS: Record<Exclude<ArchiveClass, 'STANDARD'>, s3.StorageClass> = {
  STANDARD_IA: s3.StorageClass.INFREQUENT_ACCESS,
  GLACIER_IR: s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
};

/** Why an archive lifecycle is refused (S3 would refuse it at deploy time), or undefined. */
export function archiveProblem(archive: ArchiveLifecycle): string | undefined {
  if (!(archive.storageClass in ARCHIVE_MIN_DAYS)) {
    return `archive storage class must be STANDARD, STANDARD_IA or GLACIER_IR, got ${archive.storageClass}`;
  }
  const min = ARCHIVE_MIN_DAYS[archive.storageClass];
  if (!Number.isInteger(archive.afterDays) || archive.afterDays < min || archive.afterDays > 3650) {
    return `archive transition days must be an integer from ${min} to 3650 for ${archive.storageClass}, got ${archive.afterDays}`;
  }
  return undefined;
}

/** The crawl's durable state: the two DynamoDB tables and the page bucket. */
export class Storage extends Construct {
  /**
   * The checksum table (logical ID `UrlTable`): one item per (crawl, URL fingerprint) holding the
   * URL-seen claim (a conditional put) and, while AOPIC keeps the URL parked, its task and cash
   * key (index `ParkedIndex`).
   */
  readonly urlTable: dynamodb.Table;
  /**
   * Per-crawl records (logical ID `CrawlTable`), partition key crawlId, sort key: `crawl`
   * (config, status, counters), `budget`, `host#<host>` (next allowed time, Crawl-delay, the
   * host's ledger of counted messages and its counts), `robots#<origin>`. Page records live in
   * the page bucket (`index/`), written by the archiver.
   */
  readonly crawlTable: dynamodb.Table;
  /** WARC objects under `warc/`, the page index under `index/` (logical ID `PageBucket`). */
  readonly pageBucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);
    const { removalPolicy } = props;
    const pageExpiryDays = props.retentionDays > 0 ? props.retentionDays : undefined;

    const common = {
      // Crawls are bursty and idle between runs: on demand costs nothing while idle.
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_KEYS.expiresAt,
      removalPolicy,
    } as const;

    // No sort key and no write sharding: the key already starts with the crawl id and ends with
    // a 64-bit fingerprint, so writes spread evenly over partitions; a fixed-size key also keeps
    // long URLs out of the key (the key is a checksum, not the URL text).
    this.urlTable = new dynamodb.Table(this, 'UrlTable', {
      ...common,
      partitionKey: { name: TABLE_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
    });
    // AOPIC's parked URLs (cloud mode): sparse, only items that carry `parked` are in it, richest
    // first per crawl shard, for the scheduler to admit. The task is projected so admitting a URL
    // needs no read of the base table.
    this.urlTable.addGlobalSecondaryIndex({
      indexName: TABLE_KEYS.parkedIndex,
      partitionKey: { name: TABLE_KEYS.parkedShard, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.parkedKey, type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: ['task'],
    });
    // One item collection per crawl: a crawl's status and hosts are one Query away
    // (begins_with(sk, 'host#') sums the ledgers). No LSI, so the collection has no 10 GB limit
    // and DynamoDB may split a busy crawl across partitions by sort key. No hot item: counts are
    // kept per host (each host item is written once per batch that touched it).
    this.crawlTable = new dynamodb.Table(this, 'CrawlTable', {
      ...common,
      partitionKey: { name: TABLE_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: dynamodb.AttributeType.STRING },
    });

    const lifecycleRules: s3.LifecycleRule[] = [
      { id: 'abort-incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
    ];
    // A transition at or after the expiry would be rejected or pointless.
    const { archive } = props;
    if (
      archive.storageClass !== 'STANDARD' &&
      (pageExpiryDays === undefined || pageExpiryDays > archive.afterDays)
    ) {
      lifecycleRules.push({
        id: archive.storageClass === 'STANDARD_IA' ? 'warc-to-infrequent-access' : 'warc-to-glacier-ir',
        prefix: 'warc/',
        transitions: [
          { storageClass: S3_CLASS[archive.storageClass], transitionAfter: Duration.days(archive.afterDays) },
        ],
      });
    }
    if (pageExpiryDays !== undefined) {
      lifecycleRules.push({ id: 'expire-pages', expiration: Duration.days(pageExpiryDays) });
    }
    this.pageBucket = new s3.Bucket(this, 'PageBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // WARC segments are written once under unique keys; versions would only add cost.
      versioned: false,
      lifecycleRules,
      removalPolicy,
      autoDeleteObjects: props.autoDeleteObjects,
    });

    // cdk-nag (AwsSolutions-S1) asks for server access logs. Not kept: the bucket holds copies of
    // public web pages, and only this stack's function roles reach it (public access blocked,
    // TLS only, ACLs off); access logs need a second bucket (itself flagged by S1) and log every
    // archiver PUT and API GET. Whoever needs an audit trail turns on CloudTrail S3 data events
    // for the account, which cover every bucket at once.
    Validations.of(this.pageBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "Copies of public web pages, reached only by the stack's own function roles (public access blocked, TLS only); " +
        'server access logs would need a second bucket and log every archiver PUT and API GET. ' +
        'CloudTrail S3 data events give an audit trail where one is wanted.',
    });

    pinLogicalId(this.urlTable);
    pinLogicalId(this.crawlTable);
    pinLogicalId(this.pageBucket);
  }
}
