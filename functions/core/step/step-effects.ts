/**
 * What a crawl step leaves for its runtime to commit, as a value: the step calls no port to write
 * (no frontier, no record sink, no archive, no learning call whose answer it does not use), so
 * each runtime commits these in the order its crash safety needs (the embedded crawler archives
 * the captures and applies the lessons, then writes the rest in one SQLite transaction; the cloud
 * worker buffers the captures for its batch commit, which makes them durable before it
 * acknowledges the frontier's messages). commit-effects.ts holds what both runtimes do alike.
 *
 * Some port calls stay inside the step, because their answer decides what it does:
 * - the URL-seen claim (a URL is admitted only if this step's claim wins it, so the claim is a
 *   lookup, not an effect) and the content-seen claim (a duplicate's links are not followed);
 * - the defences that judge and learn in one call: `quality.assess` (whether the page is genuine,
 *   its SimHash and nearest earlier page, filed in the near-duplicate index as it is judged),
 *   `checkTask`, `checkLink` and `isSoft404Redirect` (a refusal and its finding are one answer);
 * - the duplicate-URL rules' observations (`urlRules.observePage`, `observeRedirect`,
 *   `observeDeclared`, `takeGivenBack`): each returns the URLs a rule it blocked gives back, which
 *   the same step admits with its links. They are lookups with memory, as the URL-seen claim is:
 *   returning them as effects would need a per-step overlay of the rule book (a rule this page
 *   proves rewrites the page's own links in the same step: `observePage` runs before
 *   `followLinks` for that reason), that is a copy-on-write view of the learner's state
 *   (duplicate-url-rule-learner.ts, about 860 lines) which it does not offer yet;
 * - the scope's `allowHost` when a seed redirects: the same step checks the target against the
 *   widened scope, and the runtimes already keep the host from the record's `redirectTo`.
 * A probe answer is a lesson the step does not read back: a probe step ends with its request, and
 * a probe that robots.txt refuses is recorded as status 0, which the detector treats as no answer.
 */
import type { Capture, RobotsEntry } from '../ports.ts';
import type { SiteAnswer } from '../quality/soft-404.ts';
import type { CrawlTask, LinkRecord } from '../types.ts';

/** A robots.txt entry the step read, for the runtime to store in the crawl's robots cache. */
export interface RobotsWrite {
  origin: string;
  entry: RobotsEntry;
}

/**
 * What the step learned for the crawl's defences without using the answer: the runtime applies it
 * to its CrawlQuality when it commits the step (`applyLessons`).
 */
export type DefenceLesson =
  /** How a site answered its soft-404 probe (status 0: the probe could not be made). */
  { kind: 'probe'; probe: string; answer: SiteAnswer };

/**
 * The effects of one crawl step. With the outcome's `record` (a finished URL, kind `done`: the
 * URL's page record, to write once), they are everything the step changes.
 */
export interface StepEffects {
  /**
   * The tasks admitted for the frontier, in admission order: each one's URL was claimed by this
   * step (or, re-sent by a blocked duplicate-URL rule, claimed when first queued). The sitemap
   * files a site's robots.txt names (see {@link isRobotsSitemap}) come first in the step that
   * read that robots.txt, before `storeRobots` says they were queued: a runtime sends them before
   * it stores the entry, so that a crash between the two reads robots.txt again.
   */
  enqueued: CrawlTask[];
  /**
   * The page's out-links with why each one is not followed (`skipped`), or a sitemap file's
   * entries: its line of the link graph (links.jsonl). Absent when the step read no links.
   */
  links?: LinkRecord;
  /** The origin's robots.txt entry this step fetched, to store (after `enqueued` is sent). */
  storeRobots?: RobotsWrite;
  /**
   * The page's response, to archive (a `done` outcome's only): the archive's reference goes into
   * the record as its `warc` before the record is written (none when the archive keeps nothing,
   * `--no-warc`). A recrawl's unchanged page comes as a revisit capture (`Capture.revisit`).
   */
  capture?: Capture;
  /**
   * The robots.txt responses the step received (each hop of a redirect), in order, for a runtime
   * that archives them too (as Heritrix does; the embedded crawler does, the cloud does not).
   */
  robotsCaptures?: Capture[];
  /** What the defences learn from this step, in order, to apply when it is committed. */
  lessons?: DefenceLesson[];
}

/** A sitemap file named by its site's robots.txt, queued when that robots.txt was read. */
export function isRobotsSitemap(task: CrawlTask): boolean {
  return task.sitemap?.from === 'robots';
}
