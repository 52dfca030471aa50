/**
 * Measures SimHash speed and distance distributions on real text (the Debian python3-doc and
 * postgresql-doc HTML, when installed) and prints them; the numbers in docs/quality.md come from
 * here. Not a test: run with `npx tsx test/unit/quality/measure-simhash.ts`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { extractPage } from '../../../functions/core/html/extract.ts';
import { hammingDistance, simhash, simhashText } from '../../../functions/core/quality/simhash.ts';
import { randomProse, seeded } from './simhash-reference.ts';

const CORPORA = ['/usr/share/doc/python3-doc/html', '/usr/share/doc/postgresql-doc-15/html'];

function htmlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...htmlFiles(path));
    else if (name.endsWith('.html')) out.push(path);
  }
  return out;
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
  return `n=${values.length} mean=${mean.toFixed(2)} sd=${sd.toFixed(2)} min=${sorted[0]} p10=${at(0.1)} median=${at(0.5)} p90=${at(0.9)} p99=${at(0.99)} max=${sorted.at(-1)}`;
}

function histogram(values: number[], upTo: number): string {
  const counts = new Array<number>(upTo + 2).fill(0);
  for (const v of values) counts[Math.min(v, upTo + 1)]!++;
  return counts
    .map((c, d) => `${d > upTo ? `>${upTo}` : d}:${((100 * c) / values.length).toFixed(1)}%`)
    .join(' ');
}

const random = seeded(7);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

function editDistances(texts: string[], label: string): void {
  const windows = texts.map((t) => t.split(/\s+/).filter(Boolean)).filter((w) => w.length >= 600);
  const vocabulary = windows.flat();
  const results: Record<string, number[]> = { replace: [], insert: [], delete: [], unrelated: [] };
  for (let trial = 0; trial < 2000; trial++) {
    const words = pick(windows);
    const start = Math.floor(random() * (words.length - 500));
    const base = words.slice(start, start + 500);
    const at = Math.floor(random() * 500);
    const replaced = [...base];
    let other = pick(vocabulary);
    while (other.toLowerCase() === replaced[at]!.toLowerCase()) other = pick(vocabulary);
    replaced[at] = other;
    const inserted = [...base];
    inserted.splice(at, 0, pick(vocabulary));
    const deleted = [...base];
    deleted.splice(at, 1);
    const h = simhash(base.join(' '));
    results.replace!.push(hammingDistance(h, simhash(replaced.join(' '))));
    results.insert!.push(hammingDistance(h, simhash(inserted.join(' '))));
    results.delete!.push(hammingDistance(h, simhash(deleted.join(' '))));
    const otherWords = pick(windows);
    const otherStart = Math.floor(random() * (otherWords.length - 500));
    if (otherWords !== words) {
      results.unrelated!.push(
        hammingDistance(h, simhash(otherWords.slice(otherStart, otherStart + 500).join(' '))),
      );
    }
  }
  console.log(`\n${label}: 500-word windows of ${windows.length} texts`);
  for (const [kind, values] of Object.entries(results)) {
    console.log(`  ${kind.padEnd(9)} ${summary(values)}`);
    if (kind !== 'unrelated') console.log(`            ${histogram(values, 8)}`);
  }
}

function pairwise(texts: string[], label: string): void {
  const hashes = texts.map((t) => simhash(t));
  const all: number[] = [];
  let near3 = 0;
  let near6 = 0;
  for (let i = 0; i < hashes.length; i++) {
    for (let j = i + 1; j < hashes.length; j++) {
      const d = hammingDistance(hashes[i]!, hashes[j]!);
      all.push(d);
      if (d <= 3) near3++;
      if (d <= 6) near6++;
    }
  }
  console.log(`\n${label}: all pairs of whole pages (${hashes.length} pages)`);
  console.log(`  ${summary(all)}; pairs <= 3: ${near3}, <= 6: ${near6}`);
}

function speed(texts: string[], label: string): void {
  const chars = texts.reduce((a, t) => a + t.length, 0);
  simhashText('warm up the tables');
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now();
    for (const t of texts) simhashText(t);
    rounds.push(performance.now() - t0);
  }
  rounds.sort((a, b) => a - b);
  const ms = rounds[2]!;
  let scan = 0;
  const t0 = performance.now();
  for (const t of texts) for (let i = 0; i < t.length; i++) scan += t.charCodeAt(i);
  const scanMs = performance.now() - t0;
  console.log(
    `\n${label}: ${texts.length} texts, ${(chars / 1024).toFixed(0)} K chars: median of 5 rounds ${ms.toFixed(1)} ms = ${((1000 * ms) / (chars / 1024)).toFixed(2)} µs per K chars (bare charCodeAt loop: ${((1000 * scanMs) / (chars / 1024)).toFixed(2)} µs per K chars, checksum ${scan % 10})`,
  );
  const big = texts.reduce((a, t) => (t.length > a.length ? t : a), '');
  const hundredK =
    big.length >= 100 * 1024
      ? big.slice(0, 100 * 1024)
      : big.repeat(Math.ceil((100 * 1024) / big.length)).slice(0, 100 * 1024);
  for (let i = 0; i < 20; i++) simhashText(hundredK);
  const t1 = performance.now();
  for (let i = 0; i < 100; i++) simhashText(hundredK);
  console.log(`  one 100 K-char text: ${((performance.now() - t1) / 100).toFixed(3)} ms`);
}

const t0 = performance.now();
simhashText('x');
console.log(`first call (builds the character table): ${(performance.now() - t0).toFixed(1)} ms`);

let found = false;
for (const dir of CORPORA) {
  if (!existsSync(dir)) continue;
  found = true;
  const texts = htmlFiles(dir).map((path) => {
    const html = readFileSync(path, 'utf8');
    return extractPage(html, `https://docs.example/${path}`, { text: true }).text ?? '';
  });
  speed(texts, dir);
  editDistances(texts, dir);
  pairwise(texts, dir);
}
const prose = Array.from({ length: 300 }, () => randomProse(random, 1500));
if (!found) speed(prose, 'generated prose');
editDistances(prose, 'generated prose (Zipf-like draws from 150 words)');
