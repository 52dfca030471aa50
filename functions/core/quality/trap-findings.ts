/**
 * What the trap detectors caught, for the crawl's traps report: per reason and pattern, how many
 * URLs were rejected and a few of them as examples. Bounded, like the detectors.
 */

/** Stable reasons of the quality trap rules (a `PageRecord.reason` / `OutLink.skipped`). */
export type TrapReason = 'calendar' | 'link-generator' | 'soft-404';

/** One line of a traps report. */
export interface TrapFinding {
  reason: TrapReason;
  /** The URL template (with its host) or host that the rule caught. */
  pattern: string;
  /** URLs rejected (or pages flagged) for it. */
  count: number;
  /** The first few of them. */
  examples: string[];
}

/** Patterns beyond the cap are counted under this pattern, per reason. */
export const OTHER_PATTERN = '(other)';

/** Collects {@link TrapFinding}s with a cap on patterns and on examples per pattern. */
export class TrapFindings {
  readonly #maxPatterns: number;
  readonly #maxExamples: number;
  readonly #findings = new Map<string, TrapFinding>();

  constructor(maxPatterns = 1000, maxExamples = 5, findings: readonly TrapFinding[] = []) {
    this.#maxPatterns = maxPatterns;
    this.#maxExamples = maxExamples;
    for (const finding of findings) {
      this.#findings.set(`${finding.reason} ${finding.pattern}`, {
        ...finding,
        examples: finding.examples.slice(0, maxExamples),
      });
    }
  }

  /** Counts one rejected URL under (reason, pattern). */
  record(reason: TrapReason, pattern: string, url: string): void {
    let id = `${reason} ${pattern}`;
    let finding = this.#findings.get(id);
    if (finding === undefined) {
      if (this.#findings.size >= this.#maxPatterns) {
        pattern = OTHER_PATTERN;
        id = `${reason} ${pattern}`;
        finding = this.#findings.get(id);
      }
      if (finding === undefined) {
        finding = { reason, pattern, count: 0, examples: [] };
        this.#findings.set(id, finding);
      }
    }
    finding.count++;
    if (finding.examples.length < this.#maxExamples && !finding.examples.includes(url)) {
      finding.examples.push(url);
    }
  }

  /** Findings, most URLs first (copies). */
  list(): TrapFinding[] {
    return [...this.#findings.values()]
      .map((f) => ({ ...f, examples: [...f.examples] }))
      .sort((a, b) => b.count - a.count || a.pattern.localeCompare(b.pattern));
  }
}
