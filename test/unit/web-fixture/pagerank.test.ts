/**
 * The fixture's PageRank against an exact solution: (I - d·Mᵀ) r = (1 - d)/n + d·(dangling mass)/n,
 * solved by Gaussian elimination on small graphs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pageRankIndexed } from '../../../functions/core/quality/pagerank.ts';
import { generateWeb } from '../../fixtures/web/generate-web.ts';
import { pageRank } from '../../fixtures/web/pagerank.ts';

function csr(n: number, edges: [number, number][]): { start: Int32Array; targets: Int32Array } {
  const lists: number[][] = Array.from({ length: n }, () => []);
  for (const [from, to] of edges) lists[from]!.push(to);
  const start = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) start[i + 1] = start[i]! + lists[i]!.length;
  return { start, targets: Int32Array.from(lists.flat()) };
}

/** PageRank by solving the linear system exactly (dangling nodes link to every node). */
function exactPageRank(start: Int32Array, targets: Int32Array, damping: number): number[] {
  const n = start.length - 1;
  // A r = b with A = I - d·P, where P[j][i] = 1/outdeg(i) for i -> j (1/n for dangling i)
  const a = Array.from({ length: n }, (_, j) => Array.from({ length: n }, (_, i) => (i === j ? 1 : 0)));
  for (let i = 0; i < n; i++) {
    const out = start[i + 1]! - start[i]!;
    if (out === 0) {
      for (let j = 0; j < n; j++) a[j]![i]! -= damping / n;
    } else {
      for (let k = start[i]!; k < start[i + 1]!; k++) a[targets[k]!]![i]! -= damping / out;
    }
  }
  const b = new Array<number>(n).fill((1 - damping) / n);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let row = col + 1; row < n; row++)
      if (Math.abs(a[row]![col]!) > Math.abs(a[pivot]![col]!)) pivot = row;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    [b[col], b[pivot]] = [b[pivot]!, b[col]!];
    for (let row = 0; row < n; row++) {
      if (row === col) continue;
      const factor = a[row]![col]! / a[col]![col]!;
      if (factor === 0) continue;
      for (let k = col; k < n; k++) a[row]![k]! -= factor * a[col]![k]!;
      b[row]! -= factor * b[col]!;
    }
  }
  return b.map((value, i) => value / a[i]![i]!);
}

describe('pageRank', () => {
  test('a two-page cycle splits the rank evenly', () => {
    const { start, targets } = csr(2, [
      [0, 1],
      [1, 0],
    ]);
    const rank = pageRank(start, targets);
    assert.ok(Math.abs(rank[0]! - 0.5) < 1e-12 && Math.abs(rank[1]! - 0.5) < 1e-12);
  });

  test('matches the exact solution on a small graph with a dangling page', () => {
    // 0 -> 1, 2; 1 -> 2; 2 -> 0; 3 -> 0, 2; 4 dangling, linked from 3
    const { start, targets } = csr(5, [
      [0, 1],
      [0, 2],
      [1, 2],
      [2, 0],
      [3, 0],
      [3, 2],
      [3, 4],
    ]);
    const rank = pageRank(start, targets);
    const exact = exactPageRank(start, targets, 0.85);
    for (let i = 0; i < 5; i++)
      assert.ok(Math.abs(rank[i]! - exact[i]!) < 1e-10, `node ${i}: ${rank[i]} vs ${exact[i]}`);
    assert.ok(Math.abs(rank.reduce((x, y) => x + y, 0) - 1) < 1e-12);
    // node 2 has the most in-links, node 3 none
    assert.equal([...rank.keys()].sort((x, y) => rank[y]! - rank[x]!)[0], 2);
    assert.ok(Math.abs(rank[3]! - exact[3]!) < 1e-12);
  });

  test("matches the exact solution on a generated web's graph", () => {
    const web = generateWeb({ seed: 5, hosts: 4, goodPages: 120 });
    const exact = exactPageRank(web.linkStart, web.linkTargets, web.options.damping);
    for (let i = 0; i < web.pageCount; i++) {
      assert.ok(
        Math.abs(web.pageRank[i]! - exact[i]!) < 1e-10,
        `page ${i}: ${web.pageRank[i]} vs ${exact[i]}`,
      );
    }
  });

  test("agrees with the crawler's own PageRank (functions/core/quality/pagerank.ts)", () => {
    const web = generateWeb({ seed: 1 });
    const from: number[] = [];
    for (let page = 0; page < web.pageCount; page++) {
      for (let k = web.linkStart[page]!; k < web.linkStart[page + 1]!; k++) from.push(page);
    }
    const core = pageRankIndexed(web.pageCount, from, web.linkTargets, { tolerance: 1e-13 });
    assert.ok(core.converged);
    for (let i = 0; i < web.pageCount; i++) {
      assert.ok(
        Math.abs(core.scores[i]! - web.pageRank[i]!) < 1e-9,
        `page ${i}: ${core.scores[i]} vs ${web.pageRank[i]}`,
      );
    }
  });
});
