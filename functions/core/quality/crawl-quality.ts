/**
 * The trap and near-duplicate defences of one crawl, as the crawl step uses them: which queued
 * task or link to drop, which sites need a soft-404 probe, and what a fetched page's text says
 * (SimHash, nearest earlier page, soft 404). The detectors are pure and in memory; the runtime
 * owns their persistence (`snapshot`) and the near-duplicate index (a port).
 */

import type { CrawlConfig } from '../config.ts';
import { pathShape } from '../scheduling/aopic.ts';
import type { CrawlTask, PageRecord, SkipReason } from '../types.ts';
import { CalendarTrapDetector, type CalendarTrapSnapshot } from './calendar-trap.ts';
import { LinkGeneratorDetector, type LinkGeneratorSnapshot } from './link-generator.ts';
import { LruMap } from './lru-map.ts';
import type { NearDuplicateIndex } from './near-duplicate.ts';
import { hammingDistance, simhash } from './simhash.ts';
import {
  type ProbeAnswer,
  type SiteAnswer,
  Soft404Detector,
  type Soft404Snapshot,
  soft404ProbePath,
} from './soft-404.ts';
import { type TrapFinding, TrapFindings } from './trap-findings.ts';
import { urlShape } from './url-template.ts';

/** The detectors' state, JSON-safe, saved with checkpoints so a resumed crawl remembers them. */
export interface QualitySnapshot {
  calendar?: CalendarTrapSnapshot;
  linkGenerators?: LinkGeneratorSnapshot;
  soft404?: Soft404Snapshot;
  selfGenerated?: TrapFinding[];
  /** Path patterns (host + path shape) flagged as generators (see GENERATOR_MIN_ALIKE). */
  generators?: string[];
  /** Per path pattern: its pages compared with a parent of the pattern, and how many read alike. */
  generatorPairs?: [pattern: string, pairs: number, alike: number][];
}

export type QualitySettings = Pick<CrawlConfig, 'nearDuplicateDistance' | 'trapDetectors' | 'soft404Probe'>;

/**
 * What the crawl step asks of the defences (CrawlQuality, or a runtime's wrapper of it). A probe's
 * answer is not among them: the step returns it as a lesson (`recordProbe`, applied at commit).
 */
export type QualityChecks = Pick<
  CrawlQuality,
  'checkTask' | 'probeFor' | 'wantsText' | 'assess' | 'checkLink' | 'parentSimhashFor' | 'isSoft404Redirect'
>;

export class CrawlQuality {
  readonly #nearDistance: number;
  readonly #index: NearDuplicateIndex | undefined;
  readonly #calendar: CalendarTrapDetector | undefined;
  readonly #linkGenerators: LinkGeneratorDetector | undefined;
  readonly #soft404: Soft404Detector | undefined;
  readonly #selfGenerated: TrapFindings | undefined;
  readonly #generators: LruMap<string, true> | undefined;
  /** Per path pattern: pages compared with their parent of the same pattern, and those alike. */
  readonly #generatorPairs: LruMap<string, { pairs: number; alike: number }> | undefined;
  readonly #random: () => number;

  constructor(
    settings: QualitySettings,
    deps: { index?: NearDuplicateIndex; random: () => number },
    snapshot: QualitySnapshot = {},
  ) {
    this.#nearDistance = deps.index === undefined ? 0 : settings.nearDuplicateDistance;
    this.#index = this.#nearDistance > 0 ? deps.index : undefined;
    this.#random = deps.random;
    if (settings.trapDetectors) {
      this.#calendar = new CalendarTrapDetector(CALENDAR_DEFAULTS, snapshot.calendar);
      this.#linkGenerators = new LinkGeneratorDetector({}, snapshot.linkGenerators);
      this.#selfGenerated = new TrapFindings(1000, 5, snapshot.selfGenerated);
      this.#generators = new LruMap(10_000);
      for (const pattern of snapshot.generators ?? []) this.#generators.set(pattern, true);
      this.#generatorPairs = new LruMap(10_000);
      for (const [pattern, pairs, alike] of snapshot.generatorPairs ?? [])
        this.#generatorPairs.set(pattern, { pairs, alike });
    }
    if (settings.soft404Probe) this.#soft404 = new Soft404Detector({}, snapshot.soft404);
  }

  /** A reason to drop a queued task without fetching it (its pattern was recognized since). */
  checkTask(task: CrawlTask): SkipReason | undefined {
    if (task.parentSimhash !== undefined) {
      const flagged = this.#flaggedPattern(task.url);
      if (flagged !== undefined) {
        this.#selfGenerated?.record('link-generator', flagged, task.url);
        return 'link-generator';
      }
    }
    return this.#linkGenerators?.check(task.url, task.parent);
  }

  /** The flagged generator pattern that covers this URL: its own path shape, or a directory above it. */
  #flaggedPattern(url: string): string | undefined {
    const generators = this.#generators;
    if (generators === undefined || generators.size === 0) return undefined;
    const pattern = patternOf(url);
    if (generators.peek(pattern) !== undefined) return pattern;
    const host = hostPart(url);
    const shape = pathShape(url);
    for (
      let slash = shape.indexOf('/', 1);
      slash > 0 && slash < shape.length - 1;
      slash = shape.indexOf('/', slash + 1)
    ) {
      const prefix = `${host}${shape.slice(0, slash + 1)}*`;
      if (generators.peek(prefix) !== undefined) return prefix;
    }
    return undefined;
  }

  /** The SimHash a link should carry to be compared with this page when fetched (same path pattern). */
  parentSimhashFor(url: string, parentUrl: string, parentSimhash: string | undefined): string | undefined {
    if (parentSimhash === undefined || this.#generators === undefined) return undefined;
    return generatedBy(url, parentUrl) ? parentSimhash : undefined;
  }

  /**
   * A reason not to follow a link found on `parent`. `parentNearDuplicateOf`: the earlier page the
   * parent page nearly duplicates. When that page has the parent's own path pattern, a link to the
   * pattern (`/calendar/2026/11` -> `/calendar/2026/12`, `/search?color=red` ->
   * `/search?color=red&page=2`) is a generator producing more of the same, and is not followed: the
   * cheapest signal there is, after one look-alike page instead of the ten the template rule waits
   * for. A parent that reads like a page of another pattern says nothing about its own: a home
   * page served again as `/p0`, or `/blog/` as `/blog/page/1.html`, must not stop `/p1` or
   * `/blog/page/2.html` (it did: issue 8, item 10).
   */
  checkLink(
    url: string,
    parent: CrawlTask,
    now: number,
    parentNearDuplicateOf?: string,
  ): SkipReason | undefined {
    const calendar = this.#calendar?.check(url, now);
    if (calendar !== undefined) return calendar;
    if (this.#generators !== undefined && generatedBy(url, parent.url)) {
      const flagged = this.#flaggedPattern(url);
      if (flagged !== undefined) {
        this.#selfGenerated?.record('link-generator', flagged, url);
        return 'link-generator';
      }
    }
    if (parentNearDuplicateOf !== undefined && this.#selfGenerated !== undefined) {
      const link = urlShape(url);
      const from = urlShape(parent.url);
      const original = urlShape(parentNearDuplicateOf);
      const samePattern = (a: typeof link, b: typeof link) =>
        a.host === b.host && pathPart(a.template) === pathPart(b.template);
      if (samePattern(link, from) && samePattern(original, from)) {
        this.#selfGenerated.record('link-generator', link.host + pathPart(link.template), url);
        return 'link-generator';
      }
    }
    return this.#linkGenerators?.check(url, parent.fp);
  }

  /** A made-up URL to ask the site once before its pages, when the site has not been probed. */
  probeFor(origin: string): string | undefined {
    if (this.#soft404 === undefined || !this.#soft404.needsProbe(origin)) return undefined;
    return `${origin}${soft404ProbePath(this.#random)}`;
  }

  recordProbe(probeUrl: string, answer: SiteAnswer): void {
    this.#soft404?.recordProbe(probeUrl, answer);
  }

  /** Whether a page of this URL needs its visible text extracted for `assess`. */
  wantsText(url: string): boolean {
    return (
      this.#index !== undefined ||
      this.#linkGenerators !== undefined ||
      (this.#soft404?.needsText(url) ?? false)
    );
  }

  /**
   * Judges a fetched 2xx HTML page from its visible text: a soft 404 (`record.reason`), else its
   * SimHash and the nearest earlier page within the near-duplicate distance
   * (`record.nearDuplicateOf`), then learns from it (`learn`). Returns false when the page's links
   * must not be followed (soft 404).
   */
  async assess(task: CrawlTask, record: PageRecord, text: string | undefined): Promise<boolean> {
    if (text === undefined) return true;
    if (this.#soft404?.isSoft404(task.url, { status: record.status ?? 0, text })) {
      record.reason = 'soft-404';
      return false;
    }
    if (this.#index !== undefined || this.#linkGenerators !== undefined) {
      record.simhash = simhash(text);
    }
    if (this.#index !== undefined && record.simhash !== undefined) {
      const match = await this.#index.findNear(record.simhash, this.#nearDistance, task.url);
      if (match !== undefined) record.nearDuplicateOf = match.url;
    }
    await this.learn(task, record);
    return true;
  }

  /**
   * What the detectors learn from a judged page, from its record alone (no text): a page of its
   * parent's path pattern that reads like its parent flags the pattern as a generator; the page
   * is filed in the near-duplicate index; the link-generator detector counts it. `assess` calls
   * it; a resumed crawl calls it again for pages judged after the detectors' last saved state.
   */
  async learn(task: CrawlTask, record: PageRecord): Promise<void> {
    if (record.reason === 'soft-404') return;
    let near = record.duplicateOf !== undefined || record.nearDuplicateOf !== undefined;
    // Pages of their parent's path pattern that read like their parent: the pattern is a generator
    // (calendar months, facet combinations, list pages). Its other queued pages are dropped.
    if (task.parentSimhash !== undefined && record.simhash !== undefined) {
      const alike = hammingDistance(record.simhash, task.parentSimhash) <= GENERATOR_DISTANCE;
      if (alike) near = true;
      const pattern = patternOf(task.url);
      if (this.#isGenerator(pattern, alike)) {
        this.#generators?.set(pattern, true);
        // A directory listing that nests more of itself (`/files/a/` -> `/files/a/b/`): the
        // directory above the page is the generator.
        const dir = parentDirectory(task.url);
        if (dir !== undefined) this.#generators?.set(`${hostPart(task.url)}${dir}*`, true);
      }
    }
    if (this.#index !== undefined && record.simhash !== undefined) {
      await this.#index.add(record.simhash, task.url);
    }
    this.#linkGenerators?.observe(
      task.parent === undefined
        ? { url: task.url, nearDuplicate: near }
        : { url: task.url, parent: task.parent, nearDuplicate: near },
    );
  }

  /**
   * Counts one more page of `pattern` compared with its parent of the pattern; true once the
   * pattern's look-alikes are at least GENERATOR_MIN_ALIKE and GENERATOR_ALIKE_SHARE of its pairs.
   * One look-alike pair is not enough: short pages of one template sit about 26 bits apart, so a
   * site of a few hundred of them has a pair within GENERATOR_DISTANCE by chance, and that pair
   * alone stopped the rest of the site's pages of the pattern (a 700-page tree lost up to 84).
   */
  #isGenerator(pattern: string, alike: boolean): boolean {
    const tallies = this.#generatorPairs;
    if (tallies === undefined) return false;
    const tally = tallies.get(pattern) ?? { pairs: 0, alike: 0 };
    tally.pairs += 1;
    if (alike) tally.alike += 1;
    tallies.set(pattern, tally);
    return alike && tally.alike >= GENERATOR_MIN_ALIKE && tally.alike >= GENERATOR_ALIKE_SHARE * tally.pairs;
  }

  /** The answer recorded for a site's soft-404 probe (origin `scheme://host[:port]`), if any. */
  probeAnswer(origin: string): ProbeAnswer | undefined {
    return this.#soft404?.probeOf(origin);
  }

  /** Puts back a probe answer `probeAnswer` gave (a resumed crawl does not probe the site again). */
  restoreProbe(origin: string, answer: ProbeAnswer): void {
    this.#soft404?.restoreProbe(origin, answer);
  }

  /** A redirect answered like the site's probe (every unknown URL sent to one place). */
  isSoft404Redirect(task: CrawlTask, status: number, location: string): boolean {
    return this.#soft404?.isSoft404(task.url, { status, location }) ?? false;
  }

  /** What the detectors caught, most first (the traps report). */
  report(): TrapFinding[] {
    return [
      ...(this.#calendar?.report() ?? []),
      ...(this.#linkGenerators?.report() ?? []),
      ...(this.#selfGenerated?.list() ?? []),
      ...(this.#soft404?.report() ?? []),
    ].sort((a, b) => b.count - a.count);
  }

  snapshot(): QualitySnapshot {
    const snapshot: QualitySnapshot = {};
    if (this.#calendar) snapshot.calendar = this.#calendar.snapshot();
    if (this.#linkGenerators) snapshot.linkGenerators = this.#linkGenerators.snapshot();
    if (this.#soft404) snapshot.soft404 = this.#soft404.snapshot();
    if (this.#selfGenerated) snapshot.selfGenerated = this.#selfGenerated.list();
    if (this.#generators) snapshot.generators = [...this.#generators.entries()].map(([pattern]) => pattern);
    if (this.#generatorPairs)
      snapshot.generatorPairs = [...this.#generatorPairs.entries()].map(([pattern, t]) => [
        pattern,
        t.pairs,
        t.alike,
      ]);
    return snapshot;
  }
}

/**
 * Calendars: a date-patterned URL template may produce 12 distinct dates, whatever their age, and
 * none more than a year ahead. An events calendar or a daily archive rarely needs more to reach
 * its content, and each extra month is a request spent on an empty page. (Dated article URLs,
 * `/2015/03/12/title`, are one template per title and never reach the cap.)
 */
const CALENDAR_DEFAULTS = { maxFutureYears: 1, maxPastYears: 0, maxDatesPerTemplate: 12 };

/**
 * SimHash distance under which a page counts as a copy of its parent for the generator rule:
 * looser than the near-duplicate distance, since a generator's pages differ in their own few
 * words (a month name, a facet label, three product titles), while unrelated pages are ~32 apart.
 */
const GENERATOR_DISTANCE = 12;
/**
 * Look-alike pages a pattern needs before it is flagged as a generator, and their share of the
 * pattern's compared pages: a real generator's pages all read alike (every calendar month, every
 * facet), a real site's template has one such pair in hundreds by chance (see #isGenerator).
 */
const GENERATOR_MIN_ALIKE = 2;
const GENERATOR_ALIKE_SHARE = 0.5;

function hostPart(url: string): string {
  const start = url.indexOf('//') + 2;
  const end = url.indexOf('/', start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

/**
 * Whether `url` is the kind of link a generator makes from `parentUrl`: same host and either the
 * same path shape (`/calendar/2026/11` -> `/calendar/2026/12`) or a path nested under a directory
 * page (`/files/a/` -> `/files/a/b/`).
 */
function generatedBy(url: string, parentUrl: string): boolean {
  if (hostPart(url) !== hostPart(parentUrl)) return false;
  const shape = pathShape(url);
  const parentShape = pathShape(parentUrl);
  return (
    shape === parentShape ||
    // A directory listing that nests more of itself (`/files/a/` -> `/files/a/b/`). Only a
    // directory in a directory: a page under one (`/` -> `/p0`, `/blog/` -> `/blog/page/1.html`)
    // that reads like it is a home or index page served twice, not a generator (issue 8, item 10).
    (parentShape.endsWith('/') &&
      shape.endsWith('/') &&
      shape.length > parentShape.length &&
      shape.startsWith(parentShape))
  );
}

/** The path shape of the directory holding a directory page (`/files/a/b/` -> `/files/a/`). */
function parentDirectory(url: string): string | undefined {
  const shape = pathShape(url);
  if (!shape.endsWith('/') || shape.length < 2) return undefined;
  const slash = shape.lastIndexOf('/', shape.length - 2);
  return slash > 0 ? shape.slice(0, slash + 1) : undefined;
}

/** Host plus path shape: `127.0.0.1:80/calendar/#/#`. */
function patternOf(url: string): string {
  return hostPart(url) + pathShape(url);
}

function pathPart(template: string): string {
  const q = template.indexOf('?');
  return q < 0 ? template : template.slice(0, q);
}
