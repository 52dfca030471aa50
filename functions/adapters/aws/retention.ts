/**
 * How long the items a crawl writes are kept: every item the AWS adapters create carries
 * `expiresAt` (epoch seconds, the tables' TTL attribute), so DynamoDB deletes a crawl's items the
 * stack's retention after they were last written (and point-in-time recovery stops growing). The
 * page bucket's lifecycle expires objects after the same number of days (lib/storage.ts).
 */
import { TABLE_KEYS } from '../../cloud/env.ts';
import type { Clock } from '../../core/ports.ts';

/** When an item written now expires, or undefined to keep it. */
export interface Retention {
  expiresAt(): number | undefined;
}

/** Items are kept forever. */
export const KEEP_FOREVER: Retention = { expiresAt: () => undefined };

/** Items expire `days` after they are written; `undefined` or 0 keeps them forever. */
export function retentionOf(days: number | undefined, clock: Clock): Retention {
  if (days === undefined || !(days > 0)) return KEEP_FOREVER;
  return { expiresAt: () => Math.floor(clock.now() / 1000) + Math.round(days * 86_400) };
}

/** The item with its `expiresAt`, when the retention gives one. */
export function withExpiry<T extends Record<string, unknown>>(item: T, retention: Retention): T {
  const expiresAt = retention.expiresAt();
  return expiresAt === undefined ? item : { ...item, [TABLE_KEYS.expiresAt]: expiresAt };
}
