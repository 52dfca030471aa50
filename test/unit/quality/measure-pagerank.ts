/**
 * Times PageRank on a random graph of 100,000 nodes and 1,000,000 edges (out-degrees skewed, 5% of
 * nodes dangling) and Spearman on 100,000 pairs. Not a test: `npx tsx test/unit/quality/measure-pagerank.ts`.
 */
import { pageRank, pageRankIndexed } from '../../../functions/core/quality/pagerank.ts';
import { spearman } from '../../../functions/core/quality/spearman.ts';
import { seeded } from './simhash-reference.ts';

const random = seeded(31);
const n = 100_000;
const m = 1_000_000;
const from = new Int32Array(m);
const to = new Int32Array(m);
for (let e = 0; e < m; e++) {
  let u = Math.floor(random() ** 2 * n); // a few pages link a lot
  if (u % 20 === 0) u = (u + 1) % n; // every 20th node has no out-links
  from[e] = u;
  to[e] = Math.floor(random() ** 3 * n); // a few pages are linked a lot
}
for (const tolerance of [1e-6, 1e-8, 1e-10]) {
  const t0 = performance.now();
  const result = pageRankIndexed(n, from, to, { tolerance });
  const ms = performance.now() - t0;
  console.log(
    `pageRankIndexed ${n} nodes, ${m} edges, tolerance ${tolerance}: ${ms.toFixed(0)} ms, ${result.iterations} iterations (${(ms / result.iterations).toFixed(1)} ms each), converged ${result.converged}`,
  );
}
const ids = Array.from({ length: n }, (_, i) => `https://example.com/page/${i}`);
const pairs: [string, string][] = [];
for (let e = 0; e < m; e++) pairs.push([ids[from[e]!]!, ids[to[e]!]!]);
let t0 = performance.now();
pageRank(ids, pairs);
console.log(
  `pageRank with URL ids (Map lookups for 1,000,000 edges): ${(performance.now() - t0).toFixed(0)} ms`,
);
const a = Array.from({ length: n }, () => random());
const b = a.map((x) => x + random() * 0.1);
t0 = performance.now();
const rho = spearman(a, b);
console.log(`spearman on ${n} pairs: ${(performance.now() - t0).toFixed(0)} ms (rho ${rho.toFixed(4)})`);
