import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hits, hitsIndexed } from '../../../functions/core/quality/hits.ts';
import { seeded } from './simhash-reference.ts';

const close = (actual: number, expected: number, message?: string, epsilon = 1e-9): void => {
  assert.ok(Math.abs(actual - expected) <= epsilon, `${message ?? ''} ${actual} vs ${expected}`);
};

const sum = (values: Iterable<number>) => {
  let s = 0;
  for (const v of values) s += v;
  return s;
};

describe('hits', () => {
  it('matches the hand-solved graph A->B, A->C, B->C (the golden ratio)', () => {
    // AᵀA restricted to B, C is [[1, 1], [1, 2]]: largest eigenvalue φ² = (3 + √5) / 2 with
    // eigenvector (1, φ), so authorities B = 1/φ², C = 1/φ; hubs h = Aa: A = 1 + φ = φ², B = φ,
    // normalized A = 1/φ, B = 1/φ². C links nowhere (hub 0); A has no in-links (authority 0).
    const phi = (1 + Math.sqrt(5)) / 2;
    const scores = hits(
      ['A', 'B', 'C'],
      [
        ['A', 'B'],
        ['A', 'C'],
        ['B', 'C'],
      ],
    );
    close(scores.get('A')!.authority, 0, 'authority A');
    close(scores.get('B')!.authority, 1 / phi ** 2, 'authority B');
    close(scores.get('C')!.authority, 1 / phi, 'authority C');
    close(scores.get('A')!.hub, 1 / phi, 'hub A');
    close(scores.get('B')!.hub, 1 / phi ** 2, 'hub B');
    close(scores.get('C')!.hub, 0, 'hub C');
  });

  it('matches networkx 3.6.1 (SVD) on a graph with dangling, isolated and self-linked nodes', () => {
    // nx.hits(G) with these edges over nodes 0..7 (7 is isolated, 2 links only to 0, 4 to itself)
    const edges: [number, number][] = [
      [0, 1],
      [0, 2],
      [1, 2],
      [2, 0],
      [3, 2],
      [3, 4],
      [4, 4],
      [5, 1],
      [5, 2],
      [5, 4],
      [6, 0],
    ];
    const hubs = [0.216832314892, 0.136450014966, 0, 0.234261795061, 0.097811780095, 0.314644094987, 0, 0];
    const authorities = [0, 0.255470549763, 0.433664629783, 0, 0.310864820454, 0, 0, 0];
    const result = hitsIndexed(
      8,
      edges.map((e) => e[0]),
      edges.map((e) => e[1]),
    );
    assert.equal(result.converged, true);
    for (let i = 0; i < 8; i++) {
      close(result.hubs[i]!, hubs[i]!, `hub ${i}`, 1e-10);
      close(result.authorities[i]!, authorities[i]!, `authority ${i}`, 1e-10);
    }
  });

  it('gives every score 0 on a graph without edges, and nothing on an empty graph', () => {
    const none = hitsIndexed(3, [], []);
    assert.deepEqual([...none.hubs, ...none.authorities], [0, 0, 0, 0, 0, 0]);
    assert.equal(none.converged, true);
    assert.equal(hitsIndexed(0, [], []).hubs.length, 0);
  });

  it('puts all the weight on the stronger of two communities (the tightly-knit community effect)', () => {
    // Component 1: hubs 0, 1 both link to authorities 2, 3 (AᵀA eigenvalue 4).
    // Component 2: hub 4 links to 5, 6, 7 (eigenvalue 3). The weaker one goes to zero.
    const from = [0, 0, 1, 1, 4, 4, 4];
    const to = [2, 3, 2, 3, 5, 6, 7];
    const { hubs, authorities, converged } = hitsIndexed(8, from, to, { tolerance: 1e-13 });
    assert.equal(converged, true);
    close(authorities[2]!, 0.5);
    close(authorities[3]!, 0.5);
    close(hubs[0]!, 0.5);
    close(hubs[1]!, 0.5);
    for (const i of [5, 6, 7]) close(authorities[i]!, 0, `authority ${i}`);
    close(hubs[4]!, 0, 'hub 4');
  });

  it('counts parallel edges as often as they occur', () => {
    // 0 -> 1 twice, 0 -> 2 once: AᵀA = [[4, 2], [2, 1]] on (1, 2), rank one, eigenvector (2, 1).
    const { authorities } = hitsIndexed(3, [0, 0, 0], [1, 1, 2]);
    close(authorities[1]!, 2 / 3);
    close(authorities[2]!, 1 / 3);
  });

  it('reports when it stops before converging', () => {
    // Two near-equal communities: the second eigenvalue is close to the first, so 2 iterations
    // are not enough.
    const from = [0, 0, 1, 1, 4, 4, 5];
    const to = [2, 3, 2, 3, 6, 7, 6];
    const result = hitsIndexed(8, from, to, { maxIterations: 2 });
    assert.equal(result.iterations, 2);
    assert.equal(result.converged, false);
    assert.ok(result.delta > 1e-10);
  });

  it('returns the principal eigenvectors on random graphs (checked by the eigen-equation)', () => {
    const random = seeded(7);
    for (let trial = 0; trial < 20; trial++) {
      const n = 5 + Math.floor(random() * 40);
      const m = Math.floor(random() * n * 4);
      const from: number[] = [];
      const to: number[] = [];
      for (let e = 0; e < m; e++) {
        from.push(Math.floor(random() * n));
        to.push(Math.floor(random() * n));
      }
      const { hubs, authorities, converged } = hitsIndexed(n, from, to, { maxIterations: 100_000 });
      if (m === 0) continue;
      assert.equal(converged, true, `trial ${trial}`);
      close(sum(hubs), 1, 'hubs sum', 1e-9);
      close(sum(authorities), 1, 'authorities sum', 1e-9);
      // AᵀA a = λ a: apply it and compare the direction.
      const h = new Float64Array(n);
      for (let e = 0; e < m; e++) h[from[e]!]! += authorities[to[e]!]!;
      const a = new Float64Array(n);
      for (let e = 0; e < m; e++) a[to[e]!]! += h[from[e]!]!;
      const lambda = sum(a);
      for (let i = 0; i < n; i++) close(a[i]! / lambda, authorities[i]!, `trial ${trial} node ${i}`, 1e-6);
      for (let i = 0; i < n; i++) close(h[i]! / sum(h), hubs[i]!, `trial ${trial} hub ${i}`, 1e-6);
    }
  });

  it('refuses edges outside the node range', () => {
    assert.throws(() => hitsIndexed(2, [0], [2]), RangeError);
    assert.throws(() => hitsIndexed(2, [0, 1], [1]), RangeError);
  });
});
