import type { DenseTrace } from '../core/url-seen/url-seen-trace.ts';
import { CACHE_POLICIES, type CachePolicy, countMisses } from './cache-policies.ts';

/** Settings of {@link runCacheStudy}. */
export interface CacheStudyOptions {
  /** Cache sizes as powers of two, smallest first: 2^minLog2 .. 2^maxLog2 (default 8 .. 20). */
  minLog2?: number;
  maxLog2?: number;
  /** RANDOM's seed (default 1). */
  seed?: number;
  /** Policies to replay (default all). */
  policies?: readonly CachePolicy[];
}

/** One cache size's row: misses / look-ups per policy. */
export interface CacheStudyRow {
  size: number;
  missRate: Partial<Record<CachePolicy, number>>;
}

/** Miss rates of each policy at each cache size, over one trace. */
export interface CacheStudy {
  lookups: number;
  distinct: number;
  /** The miss rate of an infinite cache: distinct / lookups (every first look-up misses). */
  compulsoryMissRate: number;
  seed: number;
  policies: CachePolicy[];
  rows: CacheStudyRow[];
}

/**
 * Replays a URL-seen trace through every policy at every cache size (Broder, Najork and Wiener's
 * study). O(n) per policy and size, O(n log n) for MIN.
 * @throws RangeError on sizes that are not whole numbers with 0 <= min <= max <= 30.
 */
export function runCacheStudy(trace: DenseTrace, options: CacheStudyOptions = {}): CacheStudy {
  const minLog2 = options.minLog2 ?? 8;
  const maxLog2 = options.maxLog2 ?? 20;
  if (
    !Number.isInteger(minLog2) ||
    !Number.isInteger(maxLog2) ||
    minLog2 < 0 ||
    maxLog2 > 30 ||
    minLog2 > maxLog2
  )
    throw new RangeError(`cache sizes 2^${minLog2} .. 2^${maxLog2}: give whole powers 0 <= min <= max <= 30`);
  const seed = options.seed ?? 1;
  const policies = [...(options.policies ?? CACHE_POLICIES)];
  const lookups = trace.ids.length;
  const rows: CacheStudyRow[] = [];
  for (let log2 = minLog2; log2 <= maxLog2; log2++) {
    const size = 2 ** log2;
    const missRate: CacheStudyRow['missRate'] = {};
    for (const policy of policies) {
      const misses = countMisses(policy, trace.ids, trace.distinct, size, { seed });
      missRate[policy] = lookups === 0 ? 0 : misses / lookups;
    }
    rows.push({ size, missRate });
  }
  return {
    lookups,
    distinct: trace.distinct,
    compulsoryMissRate: lookups === 0 ? 0 : trace.distinct / lookups,
    seed,
    policies,
    rows,
  };
}
