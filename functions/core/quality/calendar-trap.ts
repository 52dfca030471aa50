/**
 * Calendar traps: pages with "next month" / "previous day" links that generate dated URLs
 * without end. Two rules, both on URLs that name a date (see {@link urlShape}):
 *
 * 1. A date more than `maxFutureYears` (2) after now is rejected: next to nothing real is dated
 *    years ahead, while a calendar runs there in a few hundred clicks.
 * 2. A date more than `maxPastYears` (2) before now is rejected once its URL template has already
 *    produced `maxDatesPerTemplate` (50) distinct dates. Old dates alone are no trap: news and blog
 *    articles live under `/2015/03/12/title` for decades (each title its own template, so the cap
 *    never bites them); a calendar walking backwards produces one template with ever more dates.
 *
 * Dates within the window are always accepted: at most about 1,500 day pages per template, and
 * the link-generator rule stops empty calendar days sooner (they are near-duplicates). A date the
 * template already produced is accepted again, so a URL linked from many pages gets the same
 * answer each time. Memory: at most `maxTemplates` templates (LRU) of at most
 * `maxDatesPerTemplate` dates each.
 */
import { LruMap } from './lru-map.ts';
import { type TrapFinding, TrapFindings } from './trap-findings.ts';
import { mayNameDate, type UrlDate, urlShape } from './url-template.ts';

/** Settings of {@link CalendarTrapDetector}. */
export interface CalendarTrapOptions {
  /** Dates more than this many years after now are rejected (default 2). */
  maxFutureYears?: number;
  /** Dates more than this many years before now count against the template's cap (default 2). */
  maxPastYears?: number;
  /** Distinct dates a template may produce before its old dates are rejected (default 50). */
  maxDatesPerTemplate?: number;
  /** Templates remembered, least recently used forgotten first (default 4096). */
  maxTemplates?: number;
}

/** The detector's state, JSON-safe, to persist with a checkpoint and restore on resume. */
export interface CalendarTrapSnapshot {
  /** [host + template, date codes (yyyymmdd, 0 for an absent month or day)], oldest first. */
  templates: [string, number[]][];
  findings: TrapFinding[];
}

/** Rejects URLs of calendar traps with reason `calendar`; see the module comment. */
export class CalendarTrapDetector {
  readonly #maxFutureYears: number;
  readonly #maxPastYears: number;
  readonly #maxDates: number;
  readonly #templates: LruMap<string, Set<number>>;
  readonly #findings: TrapFindings;

  constructor(options: CalendarTrapOptions = {}, snapshot?: CalendarTrapSnapshot) {
    this.#maxFutureYears = options.maxFutureYears ?? 2;
    this.#maxPastYears = options.maxPastYears ?? 2;
    this.#maxDates = options.maxDatesPerTemplate ?? 50;
    this.#templates = new LruMap(options.maxTemplates ?? 4096);
    this.#findings = new TrapFindings(1000, 5, snapshot?.findings);
    for (const [key, dates] of snapshot?.templates ?? []) {
      this.#templates.set(key, new Set(dates.slice(0, this.#maxDates)));
    }
  }

  /**
   * `'calendar'` when the URL must not be queued, else undefined. Call it for every link that
   * passed the scope rules, before the URL-seen test. Dateless URLs cost one regex test.
   * @param now epoch ms
   */
  check(url: string, now: number): 'calendar' | undefined {
    if (!mayNameDate(url)) return undefined;
    const shape = urlShape(url);
    const date = shape.date;
    if (date === undefined) return undefined;
    const pattern = shape.host + shape.template;
    const today = dateCode(now);
    if (firstDay(date) > today + this.#maxFutureYears * 10_000) {
      this.#findings.record('calendar', pattern, url);
      return 'calendar';
    }
    const code = date.year * 10_000 + (date.month ?? 0) * 100 + (date.day ?? 0);
    let dates = this.#templates.get(pattern);
    if (dates?.has(code)) return undefined;
    if (dates === undefined) {
      dates = new Set();
      this.#templates.set(pattern, dates);
    }
    if (lastDay(date) < today - this.#maxPastYears * 10_000 && dates.size >= this.#maxDates) {
      this.#findings.record('calendar', pattern, url);
      return 'calendar';
    }
    if (dates.size < this.#maxDates) dates.add(code);
    return undefined;
  }

  /** What was rejected, most URLs first. */
  report(): TrapFinding[] {
    return this.#findings.list();
  }

  snapshot(): CalendarTrapSnapshot {
    return {
      templates: [...this.#templates.entries()].map(([key, dates]) => [key, [...dates]]),
      findings: this.#findings.list(),
    };
  }
}

/** yyyymmdd of an epoch-ms time, in UTC. */
function dateCode(now: number): number {
  const d = new Date(now);
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
}

/** The first day a (partial) date covers, as yyyymmdd. */
function firstDay(date: UrlDate): number {
  return date.year * 10_000 + (date.month ?? 1) * 100 + (date.day ?? 1);
}

/** The last day a (partial) date covers, as yyyymmdd (day 31 is fine for comparisons). */
function lastDay(date: UrlDate): number {
  return date.year * 10_000 + (date.month ?? 12) * 100 + (date.day ?? 31);
}
