// Sitemap reading on hostile shapes (issue 24): time and peak memory of `readSitemap` (plus
// `followSitemap`) on four shapes at two sizes each, every read in a fresh process that loads the
// body from a file first, so that its peak RSS growth is the reader's alone. CPU time is the
// process's (user and system): on a machine shared with other jobs it says more than wall time.
//
//   npm run bench:sitemap            (npx tsx bench/sitemap-bench.ts)
//
// Shapes (test/fixtures/sitemap-shapes.ts): `deep`, elements nested N deep, each declaring a
// namespace; `attribute`, one start tag with an attribute of N characters and no `=` (backtracking
// bait); `index`, a sitemap index of N children; `nested`, N MiB of `<a>` nested without end.
import { readInFreshProcess, type SitemapShape, sitemapShape } from '../test/fixtures/sitemap-shapes.ts';

const RUNS: { shape: SitemapShape; size: number; label: string }[] = [
  { shape: 'deep', size: 16_000, label: '16,000 elements' },
  { shape: 'deep', size: 32_000, label: '32,000 elements' },
  { shape: 'attribute', size: 40_000, label: '40 KB attribute' },
  { shape: 'attribute', size: 80_000, label: '80 KB attribute' },
  { shape: 'index', size: 25_000, label: '25,000 children' },
  { shape: 'index', size: 50_000, label: '50,000 children' },
  { shape: 'nested', size: 16, label: '16 MiB' },
  { shape: 'nested', size: 48, label: '48 MiB' },
];

const mb = (n: number) =>
  n < 1024 * 1024 ? `${(n / 1024).toFixed(0)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;

console.log('shape      size                    body  wall time   CPU time   peak RSS growth   read');
for (const run of RUNS) {
  const r = readInFreshProcess(sitemapShape(run.shape, run.size));
  console.log(
    `${run.shape.padEnd(10)} ${run.label.padEnd(18)} ${mb(r.bytes).padStart(9)} ${`${r.ms.toFixed(0)} ms`.padStart(10)} ${`${r.cpuMs.toFixed(0)} ms`.padStart(10)} ` +
      `${mb(r.growth).padStart(12)} (${(r.growth / r.bytes).toFixed(2)}x)  ${r.read}`,
  );
}
