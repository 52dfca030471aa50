/**
 * PageRank (Brin and Page 1998) by power iteration over a sparse directed graph, to rank a crawl's
 * link graph and to check how well AOPIC's cash ordering approximates it (Abiteboul, Preda and
 * Cobena 2003). The random surfer follows an out-link with probability `damping` and jumps to a
 * uniformly chosen node otherwise; a dangling node (no out-links) spreads its rank over all nodes.
 * Parallel edges count as often as they occur; self-loops are kept.
 */

/** Settings of {@link pageRank}. */
export interface PageRankOptions {
  /** Probability of following a link (default 0.85). */
  damping?: number;
  /** Stop when the L1 change of the rank vector over one iteration is below this (default 1e-10). */
  tolerance?: number;
  /** Stop after this many iterations even if not converged (default 200). */
  maxIterations?: number;
}

/** Scores by node index, with how the iteration ended. */
export interface PageRankResult {
  /** Score of node i at index i; the scores sum to 1. */
  scores: Float64Array;
  iterations: number;
  /** L1 change of the last iteration. */
  delta: number;
  converged: boolean;
}

/**
 * PageRank of nodes 0..nodeCount-1 with edges from[e] -> to[e]. Linear in nodes + edges per
 * iteration: edges are sorted by target once (counting sort), then each iteration pulls every
 * node's in-links, so the inner loop reads two typed arrays in order.
 * @throws RangeError on an edge endpoint outside [0, nodeCount), arrays of different lengths, or
 *   a damping outside [0, 1).
 */
export function pageRankIndexed(
  nodeCount: number,
  from: ArrayLike<number>,
  to: ArrayLike<number>,
  options: PageRankOptions = {},
): PageRankResult {
  const damping = options.damping ?? 0.85;
  const tolerance = options.tolerance ?? 1e-10;
  const maxIterations = options.maxIterations ?? 200;
  if (!(damping >= 0 && damping < 1)) throw new RangeError(`damping must be in [0, 1), got ${damping}`);
  if (from.length !== to.length) throw new RangeError('from and to must have the same length');
  const n = nodeCount;
  if (n === 0) return { scores: new Float64Array(0), iterations: 0, delta: 0, converged: true };
  const m = from.length;

  const outDegree = new Int32Array(n);
  const inStart = new Int32Array(n + 1);
  for (let e = 0; e < m; e++) {
    const u = from[e]!;
    const v = to[e]!;
    if (!(u >= 0 && u < n && v >= 0 && v < n && Number.isInteger(u) && Number.isInteger(v))) {
      throw new RangeError(`edge ${e} (${u} -> ${v}) has an endpoint outside [0, ${n})`);
    }
    outDegree[u]!++;
    inStart[v + 1]!++;
  }
  for (let v = 0; v < n; v++) inStart[v + 1]! += inStart[v]!;
  const inSource = new Int32Array(m);
  const fill = inStart.slice(0, n);
  for (let e = 0; e < m; e++) inSource[fill[to[e]!]!++] = from[e]!;

  let rank = new Float64Array(n).fill(1 / n);
  let next = new Float64Array(n);
  const share = new Float64Array(n);
  let iterations = 0;
  let delta = Number.POSITIVE_INFINITY;
  while (iterations < maxIterations && delta >= tolerance) {
    let dangling = 0;
    for (let u = 0; u < n; u++) {
      const degree = outDegree[u]!;
      if (degree === 0) {
        dangling += rank[u]!;
        share[u] = 0;
      } else {
        share[u] = rank[u]! / degree;
      }
    }
    const base = (1 - damping) / n + (damping * dangling) / n;
    delta = 0;
    for (let v = 0; v < n; v++) {
      let sum = 0;
      const end = inStart[v + 1]!;
      for (let j = inStart[v]!; j < end; j++) sum += share[inSource[j]!]!;
      const r = base + damping * sum;
      next[v] = r;
      delta += Math.abs(r - rank[v]!);
    }
    [rank, next] = [next, rank];
    iterations++;
  }
  // rounding drifts the total by ~1e-15 per iteration: restore the sum exactly-ish
  let total = 0;
  for (let v = 0; v < n; v++) total += rank[v]!;
  for (let v = 0; v < n; v++) rank[v]! /= total;
  return { scores: rank, iterations, delta, converged: delta < tolerance };
}

/**
 * PageRank of a graph given by node ids (strings, numbers, anything a Map can key): node id ->
 * score, scores summing to 1. Edges whose ends are not among `nodes` are ignored (links to pages
 * not crawled), which leaves a node whose every link leaves the graph dangling.
 */
export function pageRank<T>(
  nodes: Iterable<T>,
  edges: Iterable<readonly [from: T, to: T]>,
  options: PageRankOptions = {},
): Map<T, number> {
  const { index, from, to } = indexGraph(nodes, edges);
  const { scores } = pageRankIndexed(index.size, from, to, options);
  const out = new Map<T, number>();
  for (const [node, i] of index) out.set(node, scores[i]!);
  return out;
}

/**
 * A graph given by node ids as dense indexes: each distinct node numbered in order, each edge as
 * `from[e] -> to[e]`; edges whose ends are not among `nodes` are left out.
 */
export function indexGraph<T>(
  nodes: Iterable<T>,
  edges: Iterable<readonly [from: T, to: T]>,
): { index: Map<T, number>; from: number[]; to: number[] } {
  const index = new Map<T, number>();
  for (const node of nodes) if (!index.has(node)) index.set(node, index.size);
  const from: number[] = [];
  const to: number[] = [];
  for (const [a, b] of edges) {
    const u = index.get(a);
    const v = index.get(b);
    if (u === undefined || v === undefined) continue;
    from.push(u);
    to.push(v);
  }
  return { index, from, to };
}
