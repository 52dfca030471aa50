/**
 * Measures the near-duplicate index as it grows: candidates read per lookup (the cost that must stay
 * flat), and the time per add and lookup of the SQLite index. The numbers in docs/quality.md come
 * from here. Not a test:
 * `npx tsx test/unit/quality/measure-near-duplicate.ts [--sqlite-max=1000000] [--blocks=4] [--batch=16384] [--memory=0]`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalNearDuplicateIndex } from '../../../functions/adapters/local/local-near-duplicate-index.ts';
import { bandLayout, MemoryNearDuplicateIndex } from '../../../functions/core/quality/near-duplicate.ts';
import { simhashFromHalves } from '../../../functions/core/quality/simhash.ts';
import { seeded } from './simhash-reference.ts';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const sqliteMax = arg('sqlite-max', 1_000_000);
const sqliteBlocks = arg('blocks', 4);
const memory = arg('memory', 1) === 1;
const sqliteBatch = arg('batch', 16_384);
const random = seeded(12345);
const randomSimhash = () => simhashFromHalves(Math.floor(random() * 2 ** 32), Math.floor(random() * 2 ** 32));
const LOOKUPS = 2000;

if (memory)
  console.log(
    'memory index: candidates read per lookup of a random SimHash (expected: bands x N / 2^key bits)',
  );
for (const [k, blocks, sizes] of !memory
  ? []
  : ([
      [3, 4, [1_000, 10_000, 100_000, 1_000_000]],
      [3, 5, [1_000, 10_000, 100_000, 1_000_000]],
      [6, 7, [1_000, 10_000, 100_000]],
      [6, 8, [1_000, 10_000, 100_000]],
    ] as const)) {
  const layout = bandLayout(k, blocks);
  const keyBits = (64 * (blocks - k)) / blocks;
  const index = new MemoryNearDuplicateIndex({ k, blocks, maxPerBand: 1_000_000 });
  let n = 0;
  const row: string[] = [];
  for (const size of sizes) {
    for (; n < size; n++) await index.add(randomSimhash(), `u${n}`);
    const before = index.stats.candidates;
    for (let q = 0; q < LOOKUPS; q++) await index.findNear(randomSimhash(), k);
    const measured = (index.stats.candidates - before) / LOOKUPS;
    const expected = (layout.bands.length * size) / 2 ** keyBits;
    row.push(`N=${size}: ${measured.toFixed(2)} (expected ${expected.toFixed(2)})`);
  }
  console.log(`  k=${k} blocks=${blocks} (${layout.bands.length} keys per page): ${row.join('; ')}`);
}

console.log(
  `\nSQLite index in a file (k=3, ${sqliteBlocks} blocks, batches of ${sqliteBatch}), up to ${sqliteMax} pages:`,
);
const dir = mkdtempSync(join(tmpdir(), 'crawlstack-measure-'));
try {
  const path = join(dir, 'state.sqlite');
  const index = new LocalNearDuplicateIndex(path, { k: 3, blocks: sqliteBlocks, batchSize: sqliteBatch });
  let n = 0;
  for (const size of [10_000, 100_000, 1_000_000].filter((s) => s <= sqliteMax)) {
    const t0 = performance.now();
    const start = n;
    for (; n < size; n++) await index.add(randomSimhash(), `https://example.com/section/page-${n}.html`);
    index.flush();
    const addUs = ((performance.now() - t0) * 1000) / (n - start);
    const before = index.stats.candidates;
    const t1 = performance.now();
    for (let q = 0; q < LOOKUPS; q++) await index.findNear(randomSimhash(), 3);
    const findUs = ((performance.now() - t1) * 1000) / LOOKUPS;
    const candidates = (index.stats.candidates - before) / LOOKUPS;
    const bytes = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    console.log(
      `  N=${size}: add ${addUs.toFixed(1)} µs, lookup ${findUs.toFixed(1)} µs, ${candidates.toFixed(2)} candidates per lookup, file ${(bytes / size).toFixed(0)} bytes per page`,
    );
  }
  index.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
