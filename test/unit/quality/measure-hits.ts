/**
 * Times HITS on the graph measure-pagerank.ts uses (100,000 nodes, 1,000,000 edges, skewed
 * degrees, 5% of nodes without out-links). Not a test: `npx tsx test/unit/quality/measure-hits.ts`.
 */
import { hitsIndexed } from '../../../functions/core/quality/hits.ts';
import { seeded } from './simhash-reference.ts';

const random = seeded(31);
const n = 100_000;
const m = 1_000_000;
const from = new Int32Array(m);
const to = new Int32Array(m);
for (let e = 0; e < m; e++) {
  let u = Math.floor(random() ** 2 * n);
  if (u % 20 === 0) u = (u + 1) % n;
  from[e] = u;
  to[e] = Math.floor(random() ** 3 * n);
}
for (const tolerance of [1e-6, 1e-8, 1e-10]) {
  const t0 = performance.now();
  const result = hitsIndexed(n, from, to, { tolerance });
  const ms = performance.now() - t0;
  console.log(
    `hitsIndexed ${n} nodes, ${m} edges, tolerance ${tolerance}: ${ms.toFixed(0)} ms, ${result.iterations} iterations (${(ms / result.iterations).toFixed(1)} ms each), converged ${result.converged}`,
  );
}
