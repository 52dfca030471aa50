/**
 * HITS (Kleinberg, "Authoritative sources in a hyperlinked environment", 1999): a good hub links
 * to good authorities, a good authority is linked from good hubs. Authorities are the principal
 * eigenvector of AᵀA and hubs that of AAᵀ (A the adjacency matrix), found by power iteration:
 * a ← Aᵀh, h ← Aa, each normalized. Used beside PageRank in `crawlstack rank` to compare with
 * AOPIC's importance estimate.
 *
 * No random jump: a node without out-links has hub score 0, a node without in-links authority 0,
 * an isolated node both. Parallel edges count as often as they occur; self-loops are kept.
 */
import { indexGraph } from './pagerank.ts';

/** Settings of {@link hitsIndexed}. */
export interface HitsOptions {
  /**
   * Stop when the L1 change of one iteration, authorities plus hubs, is below this
   * (default 1e-10). The error shrinks like (λ₂/λ₁)ᵏ, λ the eigenvalues of AᵀA: slowly when the
   * two largest are close.
   */
  tolerance?: number;
  /** Stop after this many iterations even if not converged (default 1000). */
  maxIterations?: number;
}

/** Scores by node index, with how the iteration ended. */
export interface HitsResult {
  /** Authority score of node i at index i; they sum to 1 (all 0 for a graph without edges). */
  authorities: Float64Array;
  /** Hub score of node i at index i; they sum to 1 (all 0 for a graph without edges). */
  hubs: Float64Array;
  iterations: number;
  /** L1 change of the last iteration (authorities plus hubs). */
  delta: number;
  converged: boolean;
}

/**
 * HITS hub and authority scores of nodes 0..nodeCount-1 with edges from[e] -> to[e]. Linear in
 * nodes + edges per iteration (edges bucketed by target and by source once, counting sort).
 *
 * The start vector is uniform hubs. When the largest eigenvalue of AᵀA is not simple (two
 * components equally strong), the limit depends on that start; it is still deterministic.
 * @throws RangeError on an edge endpoint outside [0, nodeCount) or arrays of different lengths.
 */
export function hitsIndexed(
  nodeCount: number,
  from: ArrayLike<number>,
  to: ArrayLike<number>,
  options: HitsOptions = {},
): HitsResult {
  const tolerance = options.tolerance ?? 1e-10;
  const maxIterations = options.maxIterations ?? 1000;
  if (from.length !== to.length) throw new RangeError('from and to must have the same length');
  const n = nodeCount;
  const m = from.length;
  for (let e = 0; e < m; e++) {
    const u = from[e]!;
    const v = to[e]!;
    if (!(u >= 0 && u < n && v >= 0 && v < n && Number.isInteger(u) && Number.isInteger(v))) {
      throw new RangeError(`edge ${e} (${u} -> ${v}) has an endpoint outside [0, ${n})`);
    }
  }
  const authorities = new Float64Array(n);
  const hubs = new Float64Array(n);
  if (m === 0) return { authorities, hubs, iterations: 0, delta: 0, converged: true };

  const inbound = bucket(n, to, from);
  const outbound = bucket(n, from, to);
  hubs.fill(1 / n);
  const nextAuthorities = new Float64Array(n);
  const nextHubs = new Float64Array(n);
  let iterations = 0;
  let delta = Number.POSITIVE_INFINITY;
  while (iterations < maxIterations && delta >= tolerance) {
    // a = Aᵀh: each node's authority is the sum of the hub scores of the nodes linking to it.
    pull(inbound, hubs, nextAuthorities);
    normalize(nextAuthorities);
    // h = Aa, from the new authorities (Kleinberg's order).
    pull(outbound, nextAuthorities, nextHubs);
    normalize(nextHubs);
    delta = 0;
    for (let v = 0; v < n; v++) {
      delta += Math.abs(nextAuthorities[v]! - authorities[v]!) + Math.abs(nextHubs[v]! - hubs[v]!);
    }
    authorities.set(nextAuthorities);
    hubs.set(nextHubs);
    iterations++;
  }
  return { authorities, hubs, iterations, delta, converged: delta < tolerance };
}

/**
 * HITS of a graph given by node ids: node id -> { hub, authority }. Edges whose ends are not
 * among `nodes` are ignored (links to pages not crawled).
 */
export function hits<T>(
  nodes: Iterable<T>,
  edges: Iterable<readonly [from: T, to: T]>,
  options: HitsOptions = {},
): Map<T, { hub: number; authority: number }> {
  const { index, from, to } = indexGraph(nodes, edges);
  const { hubs, authorities } = hitsIndexed(index.size, from, to, options);
  const out = new Map<T, { hub: number; authority: number }>();
  for (const [node, i] of index) out.set(node, { hub: hubs[i]!, authority: authorities[i]! });
  return out;
}

/** Edges grouped by `key` node: the `value` ends of node k are value[start[k] .. start[k + 1]). */
interface Buckets {
  start: Int32Array;
  value: Int32Array;
}

function bucket(n: number, key: ArrayLike<number>, value: ArrayLike<number>): Buckets {
  const start = new Int32Array(n + 1);
  for (let e = 0; e < key.length; e++) start[key[e]! + 1]!++;
  for (let k = 0; k < n; k++) start[k + 1]! += start[k]!;
  const fill = start.slice(0, n);
  const out = new Int32Array(key.length);
  for (let e = 0; e < key.length; e++) out[fill[key[e]!]!++] = value[e]!;
  return { start, value: out };
}

/** target[k] = sum of source[j] over the nodes j bucketed under k. */
function pull({ start, value }: Buckets, source: Float64Array, target: Float64Array): void {
  for (let k = 0; k < target.length; k++) {
    let sum = 0;
    const end = start[k + 1]!;
    for (let j = start[k]!; j < end; j++) sum += source[value[j]!]!;
    target[k] = sum;
  }
}

/** Scales to sum 1 (the vector is non-negative; an all-zero vector stays zero). */
function normalize(vector: Float64Array): void {
  let total = 0;
  for (let i = 0; i < vector.length; i++) total += vector[i]!;
  if (total === 0) return;
  for (let i = 0; i < vector.length; i++) vector[i]! /= total;
}
