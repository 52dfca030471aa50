import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageRank, pageRankIndexed } from '../../../functions/core/quality/pagerank.ts';
import { averageRanks, spearman } from '../../../functions/core/quality/spearman.ts';
import { seeded } from './simhash-reference.ts';

const close = (actual: number, expected: number, message?: string, epsilon = 1e-9): void => {
  assert.ok(Math.abs(actual - expected) <= epsilon, `${message ?? ''} ${actual} vs ${expected}`);
};

const sum = (values: Iterable<number>) => {
  let s = 0;
  for (const v of values) s += v;
  return s;
};

/** Dense power iteration, the textbook way: r = (1 - d) / n + d (M r + dangling / n). */
function densePageRank(n: number, edges: [number, number][], d = 0.85): number[] {
  const out = new Array<number>(n).fill(0);
  for (const [u] of edges) out[u]!++;
  let r = new Array<number>(n).fill(1 / n);
  for (let iteration = 0; iteration < 1000; iteration++) {
    const dangling = sum(r.filter((_, u) => out[u] === 0));
    const next = new Array<number>(n).fill((1 - d) / n + (d * dangling) / n);
    for (const [u, v] of edges) next[v]! += (d * r[u]!) / out[u]!;
    r = next;
  }
  return r;
}

describe('pageRank', () => {
  it('matches the hand-solved 3-node graph A->B, A->C, B->C, C->A', () => {
    // r = 0.05 + 0.85 M r solved exactly: A = 686/1769, B = 380/1769, C = 703/1769
    const scores = pageRank(
      ['A', 'B', 'C'],
      [
        ['A', 'B'],
        ['A', 'C'],
        ['B', 'C'],
        ['C', 'A'],
      ],
    );
    close(scores.get('A')!, 686 / 1769, 'A');
    close(scores.get('B')!, 380 / 1769, 'B');
    close(scores.get('C')!, 703 / 1769, 'C');
  });

  it('spreads a dangling node over all nodes: A->B alone gives A = 20/57, B = 37/57', () => {
    // A = 0.075 + 0.85 B / 2, B = 0.075 + 0.85 (A + B / 2)
    const scores = pageRank(['A', 'B'], [['A', 'B']]);
    close(scores.get('A')!, 20 / 57);
    close(scores.get('B')!, 37 / 57);
  });

  it('is uniform on a cycle', () => {
    const n = 50;
    const { scores, converged } = pageRankIndexed(
      n,
      Array.from({ length: n }, (_, i) => i),
      Array.from({ length: n }, (_, i) => (i + 1) % n),
    );
    assert.equal(converged, true);
    for (const s of scores) close(s, 1 / n);
  });

  it('ranks the centre of a star first, by the closed form', () => {
    // leaves link to the centre, the centre to every leaf: c = b + d L l, l = b + d c / L, b = (1 - d) / n
    const leaves = 9;
    const n = leaves + 1;
    const from: number[] = [];
    const to: number[] = [];
    for (let leaf = 1; leaf <= leaves; leaf++) {
      from.push(leaf, 0);
      to.push(0, leaf);
    }
    const { scores } = pageRankIndexed(n, from, to);
    const d = 0.85;
    const b = (1 - d) / n;
    const centre = (b + d * leaves * b) / (1 - d * d);
    close(scores[0]!, centre);
    for (let leaf = 1; leaf <= leaves; leaf++) close(scores[leaf]!, b + (d * centre) / leaves);
  });

  it('agrees with networkx 3.6.1 on a graph with a dangling node and a self-loop', () => {
    // nx.pagerank(G, alpha=0.85, tol=1e-14) with these edges
    const edges: [number, number][] = [
      [0, 1],
      [0, 2],
      [1, 2],
      [2, 0],
      [2, 3],
      [3, 4],
      [4, 3],
      [5, 3],
      [5, 6],
      [6, 5],
      [2, 7],
      [3, 3],
    ];
    const expected = [
      0.046446861641, 0.043424895247, 0.080336056207, 0.447875568107, 0.214032095495, 0.068598373763,
      0.052839287899, 0.046446861641,
    ];
    const { scores } = pageRankIndexed(
      8,
      edges.map((e) => e[0]),
      edges.map((e) => e[1]),
      { tolerance: 1e-14 },
    );
    for (const [i, s] of scores.entries()) close(s, expected[i]!, `node ${i}`, 1e-11);
  });

  it('agrees with a dense textbook iteration on random graphs, parallel edges and all', () => {
    const random = seeded(8);
    for (let trial = 0; trial < 20; trial++) {
      const n = 2 + Math.floor(random() * 40);
      const edges: [number, number][] = [];
      const m = Math.floor(random() * n * 4);
      for (let e = 0; e < m; e++) edges.push([Math.floor(random() * n), Math.floor(random() * n)]);
      const damping = 0.5 + random() * 0.45;
      const { scores } = pageRankIndexed(
        n,
        edges.map((e) => e[0]),
        edges.map((e) => e[1]),
        { damping },
      );
      const dense = densePageRank(n, edges, damping);
      for (const [i, s] of scores.entries()) close(s, dense[i]!, `trial ${trial} node ${i}`);
      close(sum(scores), 1, 'sum');
    }
  });

  it('sums to 1, ignores edges to unknown nodes, and handles the empty graph', () => {
    const scores = pageRank(
      [1, 2, 3],
      [
        [1, 2],
        [2, 99],
        [99, 3],
      ],
    );
    assert.deepEqual([...scores.keys()], [1, 2, 3]);
    close(sum(scores.values()), 1);
    assert.equal(pageRank([], []).size, 0);
    assert.deepEqual(pageRankIndexed(0, [], []).scores, new Float64Array(0));
    // no edges at all: every node dangling, uniform
    for (const s of pageRankIndexed(4, [], []).scores) close(s, 0.25);
  });

  it('refuses bad input', () => {
    assert.throws(() => pageRankIndexed(2, [0], [2]), RangeError);
    assert.throws(() => pageRankIndexed(2, [0, 1], [1]), RangeError);
    assert.throws(() => pageRankIndexed(2, [0.5], [1]), RangeError);
    assert.throws(() => pageRankIndexed(2, [0], [1], { damping: 1 }), RangeError);
  });

  it('stops at maxIterations and says it did not converge', () => {
    const result = pageRankIndexed(3, [0, 1], [1, 2], { maxIterations: 2, tolerance: 0 });
    assert.equal(result.iterations, 2);
    assert.equal(result.converged, false);
    close(sum(result.scores), 1);
  });
});

describe('spearman', () => {
  it('is 1 for the same order and -1 for the reverse', () => {
    assert.equal(spearman([1, 2, 3, 4, 5], [10, 20, 30, 40, 50]), 1);
    assert.equal(spearman([1, 2, 3, 4, 5], [0.5, 0.4, 0.3, 0.2, 0.1]), -1);
    close(spearman([1, 2, 3, 4, 5], [1, 4, 9, 16, 25]), 1); // monotone, not linear
  });

  it('gives tied values their average rank (known values from scipy.stats.spearmanr 1.17.1)', () => {
    assert.deepEqual([...averageRanks([10, 20, 20, 30])], [1, 2.5, 2.5, 4]);
    assert.deepEqual([...averageRanks([3, 1, 3, 3, 2])], [4, 1, 4, 4, 2]);
    close(spearman([1, 2, 2, 3, 4, 4, 4, 5], [2, 1, 3, 3, 5, 4, 6, 6]), 0.9007775105401477, undefined, 1e-12);
    close(spearman([10, 20, 20, 30], [1, 1, 2, 3]), 0.8333333333333335, undefined, 1e-12);
  });

  it('is NaN without an order to compare, and refuses bad input', () => {
    assert.ok(Number.isNaN(spearman([1], [2])));
    assert.ok(Number.isNaN(spearman([1, 1, 1], [1, 2, 3])));
    assert.throws(() => spearman([1, 2], [1]), RangeError);
    assert.throws(() => spearman([1, Number.NaN], [1, 2]), RangeError);
  });
});
