import type { DashboardRatePoint, DashboardSnapshot } from '../core/dashboard-snapshot.ts';

/** The crawl's pages counter at a moment of crawl time. */
interface Sample {
  elapsedMs: number;
  pages: number;
}

/**
 * The cloud dashboard's chart of a crawl: pages per second over the whole crawl, from the crawl's
 * pages counter (exact, no archive lag) sampled at each view. A point is the counter's change over
 * the real crawl time between two samples at least `minGapMs` apart, so a poll that comes before
 * the counter moved adds nothing rather than a 0 pages/s dip (a real stall of `minGapMs` or more
 * still shows as 0). The time before the first view is one point, the average since the crawl
 * began: the API's archive-based points are not mixed in, since the pages still being archived
 * (up to a minute's) would make a dip where they meet the counter. At most `maxPoints` points:
 * past that, a sample between two is dropped (the two points become their average), where the
 * merged point is narrowest: the whole crawl in points of about the same width, which grows
 * with the crawl (two hours: about 30 s).
 */
export class RateHistory {
  readonly maxPoints: number;
  readonly minGapMs: number;
  /** From crawl time 0, oldest first. */
  #samples: Sample[] = [];

  constructor(maxPoints = 240, minGapMs = 5000) {
    if (maxPoints < 4) throw new RangeError(`maxPoints must be at least 4, got ${maxPoints}`);
    this.maxPoints = maxPoints;
    this.minGapMs = minGapMs;
  }

  /** Adds one view's counter; returns the chart. */
  add(snapshot: Pick<DashboardSnapshot, 'elapsedMs' | 'pages' | 'state'>): DashboardRatePoint[] {
    const sample = { elapsedMs: snapshot.elapsedMs, pages: snapshot.pages };
    const last = this.#samples.at(-1);
    if (last === undefined) {
      // The time before the first view: one average from the crawl's start.
      this.#samples.push({ elapsedMs: 0, pages: 0 });
      if (sample.elapsedMs > 0) this.#samples.push(sample);
    } else if (sample.elapsedMs > last.elapsedMs && sample.pages >= last.pages) {
      const gap = sample.elapsedMs - last.elapsedMs;
      // A crawl that ended has its last counter: kept whatever the gap.
      if (gap >= this.minGapMs || snapshot.state !== 'running') this.#samples.push(sample);
    }
    while (this.#samples.length > this.maxPoints + 1) this.#thin();
    return this.points();
  }

  /**
   * Drops the sample whose two intervals make the narrowest one together, the oldest of equals
   * (never the first, at crawl time 0, nor the latest): the points stay about as wide as each
   * other, older ones first to widen.
   */
  #thin(): void {
    const s = this.#samples;
    let drop = 1;
    for (let i = 2; i < s.length - 1; i++) {
      if (s[i + 1]!.elapsedMs - s[i - 1]!.elapsedMs < s[drop + 1]!.elapsedMs - s[drop - 1]!.elapsedMs)
        drop = i;
    }
    s.splice(drop, 1);
  }

  /** The chart: one point per interval between samples, at its end. */
  points(): DashboardRatePoint[] {
    const points: DashboardRatePoint[] = [];
    for (let i = 1; i < this.#samples.length; i++) {
      const from = this.#samples[i - 1]!;
      const to = this.#samples[i]!;
      points.push({
        elapsedMs: to.elapsedMs,
        pages: to.pages,
        pagesPerSecond: (to.pages - from.pages) / ((to.elapsedMs - from.elapsedMs) / 1000),
      });
    }
    return points;
  }
}
