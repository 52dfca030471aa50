/**
 * The trap and near-duplicate defences as one crawl step sees them: every call goes to the
 * crawl's CrawlQuality, and what the step taught it is noted, to be committed with the step. The
 * detectors' whole state is saved every few hundred steps, at a commit when no running step has
 * taught them anything yet (so the save holds committed lessons only); after a `kill -9` the
 * crawl loads it and teaches it again what the steps committed since taught it
 * (`replayLessons`), in commit order. So the near-duplicate index, the soft-404 probe answers and the calendar and
 * link-generator detectors and the hosts' duplicate-URL rules come back as they were, and a resumed crawl decides as an
 * uninterrupted one (exactly so at concurrency 1; with steps running at once, the order in which
 * their lessons were learned may differ slightly from commit order).
 */

import type { CrawlQuality, QualityChecks } from '../core/quality/crawl-quality.ts';
import type { UrlRuleBook } from '../core/quality/duplicate-url-rule-book.ts';
import type { UrlRuleLearner } from '../core/quality/duplicate-url-rule-learner.ts';
import type { PageObservation } from '../core/quality/duplicate-url-rule-state.ts';
import type { ProbeAnswer } from '../core/quality/soft-404.ts';
import { mayNameDate } from '../core/quality/url-template.ts';
import type { UrlRuleChecks } from '../core/step/admit-urls.ts';
import type { CrawlTask, PageRecord } from '../core/types.ts';

/** The parts of a task the detectors read. */
type TaskPart = Pick<CrawlTask, 'url' | 'fp'> & Partial<Pick<CrawlTask, 'parent' | 'parentSimhash'>>;

/** One lesson; short keys, since a step's lessons are written with its commit. */
export type Lesson =
  /** A queued task refused before its fetch (its pattern was recognized since). */
  | { t: TaskPart }
  /** A link that named a date (the calendar detector counts it) or that was refused. */
  | { l: string; from: TaskPart; now: number; near?: string }
  /** A site's soft-404 probe answer. */
  | { p: string; a: ProbeAnswer }
  /** A judged page: what `learn` needs of its record. */
  | { g: TaskPart; r: Pick<PageRecord, 'status' | 'simhash' | 'duplicateOf' | 'nearDuplicateOf' | 'reason'> }
  /** A fetched URL, as the duplicate-URL rules observed it. */
  | { o: PageObservation }
  /** A redirect within one origin: [from, to] ([from, to, host] when written before rules were keyed by origin). */
  | { d: [string, string] | [string, string, string] }
  /** A page's declared canonical URL, known before it: [url, canonical] (or [url, host, canonical], earlier). */
  | { k: [string, string] | [string, string, string] }
  /**
   * A URL a rule merged or audited (its merge log or audit list grew): which check asked
   * (`r`ewrite, `h`eldAs, `a`liasNamespace) and whether for a queued task.
   */
  | { m: [string, 'r' | 'h' | 'a', boolean] };

function taskPart(task: CrawlTask): TaskPart {
  const part: TaskPart = { url: task.url, fp: task.fp };
  if (task.parent !== undefined) part.parent = task.parent;
  if (task.parentSimhash !== undefined) part.parentSimhash = task.parentSimhash;
  return part;
}

/** One step's view of the crawl's defences; `lessons` are committed with the step. */
export class StepQuality implements QualityChecks {
  readonly lessons: Lesson[] = [];
  readonly #quality: CrawlQuality;

  constructor(quality: CrawlQuality) {
    this.#quality = quality;
  }

  checkTask(task: CrawlTask) {
    const reason = this.#quality.checkTask(task);
    if (reason !== undefined) this.lessons.push({ t: taskPart(task) });
    return reason;
  }

  probeFor(origin: string) {
    return this.#quality.probeFor(origin);
  }

  /** A site's probe answer, as the step returned it (a lesson), applied when the step is committed. */
  recordProbe(probeUrl: string, answer: Parameters<CrawlQuality['recordProbe']>[1]) {
    this.#quality.recordProbe(probeUrl, answer);
    const origin = new URL(probeUrl).origin;
    const recorded = this.#quality.probeAnswer(origin);
    if (recorded !== undefined) this.lessons.push({ p: origin, a: recorded });
  }

  wantsText(url: string) {
    return this.#quality.wantsText(url);
  }

  async assess(task: CrawlTask, record: PageRecord, text: string | undefined) {
    const genuine = await this.#quality.assess(task, record, text);
    if (text !== undefined) {
      const r: Extract<Lesson, { g: TaskPart }>['r'] = { status: record.status };
      if (record.simhash !== undefined) r.simhash = record.simhash;
      if (record.duplicateOf !== undefined) r.duplicateOf = record.duplicateOf;
      if (record.nearDuplicateOf !== undefined) r.nearDuplicateOf = record.nearDuplicateOf;
      if (record.reason !== undefined) r.reason = record.reason;
      this.lessons.push({ g: taskPart(task), r });
    }
    return genuine;
  }

  checkLink(url: string, parent: CrawlTask, now: number, parentNearDuplicateOf?: string) {
    const reason = this.#quality.checkLink(url, parent, now, parentNearDuplicateOf);
    // Other links change nothing the crawl decides with (a recency in a bounded map at most).
    if (reason !== undefined || mayNameDate(url)) {
      const lesson: Lesson = { l: url, from: taskPart(parent), now };
      if (parentNearDuplicateOf !== undefined) lesson.near = parentNearDuplicateOf;
      this.lessons.push(lesson);
    }
    return reason;
  }

  parentSimhashFor(url: string, parentUrl: string, parentSimhash: string | undefined) {
    return this.#quality.parentSimhashFor(url, parentUrl, parentSimhash);
  }

  isSoft404Redirect(task: CrawlTask, status: number, location: string) {
    return this.#quality.isSoft404Redirect(task, status, location);
  }
}

/** The rule book and the learner: what a step checks and observes, and what its lessons replay. */
type BookAndLearner = UrlRuleBook & UrlRuleLearner;

/**
 * One step's view of the hosts' duplicate-URL rules: what it observes is noted in `lessons` (the
 * step's, shared with its StepQuality), to be committed with the step.
 */
export class StepUrlRules implements UrlRuleChecks {
  readonly #rules: BookAndLearner;
  readonly #lessons: Lesson[];

  constructor(rules: BookAndLearner, lessons: Lesson[]) {
    this.#rules = rules;
    this.#lessons = lessons;
  }

  rewrite(url: string, options: { queued?: boolean } = {}) {
    return this.#logged(url, 'r', options, () => this.#rules.rewrite(url, options));
  }

  heldAs(url: string, options: { queued?: boolean } = {}) {
    return this.#logged(url, 'h', options, () => this.#rules.heldAs(url, options));
  }

  aliasNamespace(url: string, options: { queued?: boolean } = {}) {
    return this.#logged(url, 'a', options, () => this.#rules.aliasNamespace(url, options));
  }

  /** Runs a check, noting it as a lesson when it grew a merge log or an audit list (replayed after a restart). */
  #logged<T>(url: string, check: 'r' | 'h' | 'a', options: { queued?: boolean }, run: () => T): T {
    const before = this.#rules.mergeLogRevision;
    const answer = run();
    if (this.#rules.mergeLogRevision !== before)
      this.#lessons.push({ m: [url, check, options.queued === true] });
    return answer;
  }

  observePage(observation: PageObservation) {
    this.#lessons.push({ o: observation });
    return this.#rules.observePage(observation);
  }

  observeRedirect(from: string, to: string) {
    this.#lessons.push({ d: [from, to] });
    return this.#rules.observeRedirect(from, to);
  }

  observeDeclared(url: string, canonical: string) {
    this.#lessons.push({ k: [url, canonical] });
    return this.#rules.observeDeclared(url, canonical);
  }

  /** Nothing in the embedded crawler: one learner, which blocks rules only through observations. */
  takeGivenBack(origin: string) {
    return this.#rules.takeGivenBack(origin);
  }
}

/** Asks `rules` a step's check again, so that its merge logs and audit lists grow as they did. */
function replayCheck(
  rules: UrlRuleBook | undefined,
  url: string,
  check: 'r' | 'h' | 'a',
  queued: boolean,
): void {
  if (check === 'r') rules?.rewrite(url, { queued });
  else if (check === 'h') rules?.heldAs(url, { queued });
  else rules?.aliasNamespace(url, { queued });
}

/**
 * Teaches `quality` (and `rules`, when the crawl learns them) again, in order, the lessons of
 * steps committed after their saved state.
 */
export async function replayLessons(
  quality: CrawlQuality,
  steps: readonly (readonly Lesson[])[],
  rules?: BookAndLearner,
): Promise<number> {
  let replayed = 0;
  for (const lessons of steps) {
    for (const lesson of lessons) {
      if ('o' in lesson) rules?.observePage(lesson.o);
      else if ('d' in lesson) rules?.observeRedirect(lesson.d[0], lesson.d[1]);
      else if ('k' in lesson) rules?.observeDeclared(lesson.k[0], lesson.k[lesson.k.length - 1]!);
      else if ('m' in lesson) replayCheck(rules, ...lesson.m);
      else if ('t' in lesson) quality.checkTask(lesson.t as CrawlTask);
      else if ('l' in lesson) quality.checkLink(lesson.l, lesson.from as CrawlTask, lesson.now, lesson.near);
      else if ('p' in lesson) quality.restoreProbe(lesson.p, lesson.a);
      else await quality.learn(lesson.g as CrawlTask, lesson.r as PageRecord);
      replayed++;
    }
  }
  return replayed;
}
