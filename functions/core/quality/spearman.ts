/**
 * Spearman's rank correlation: Pearson's correlation of the two samples' ranks, tied values
 * sharing the average of their ranks. 1 when b orders the items exactly as a does, -1 when it
 * reverses them. Used to compare a crawl's ordering (AOPIC cash, crawl order) with PageRank.
 * NaN when there are fewer than 2 items or either sample is constant (no order to compare).
 * @throws RangeError when the lengths differ or a value is not a finite number.
 */
export function spearman(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new RangeError(`samples of different lengths (${a.length}, ${b.length})`);
  const n = a.length;
  if (n < 2) return Number.NaN;
  const ra = averageRanks(a);
  const rb = averageRanks(b);
  // every rank vector has mean (n + 1) / 2
  const mean = (n + 1) / 2;
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < n; i++) {
    const x = ra[i]! - mean;
    const y = rb[i]! - mean;
    cov += x * y;
    va += x * x;
    vb += y * y;
  }
  if (va === 0 || vb === 0) return Number.NaN;
  return cov / Math.sqrt(va * vb);
}

/** Ranks 1..n by value, ties given the average of the ranks they span. */
export function averageRanks(values: readonly number[]): Float64Array {
  const n = values.length;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(values[i])) throw new RangeError(`value ${i} is not a finite number: ${values[i]}`);
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => values[x]! - values[y]!);
  const ranks = new Float64Array(n);
  for (let i = 0; i < n; ) {
    let j = i + 1;
    while (j < n && values[order[j]!] === values[order[i]!]) j++;
    // positions i..j-1 (ranks i+1..j) hold one value: each gets their mean
    const rank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) ranks[order[k]!] = rank;
    i = j;
  }
  return ranks;
}
