/**
 * What a crawl step leaves for its runtime to commit, as a value: the step calls no port to write
 * (no frontier, no record sink), so each runtime commits these in the order its crash safety
 * needs (the embedded crawler in one SQLite transaction with the step, the cloud worker through
 * its batch commit).
 *
 * Two kinds of port calls stay inside the step, because their answer decides what it does: the
 * URL-seen claim (a URL is admitted only if this step's claim wins it, so the claim is a lookup,
 * not an effect) and the content-seen claim (a duplicate's links are not followed). The archive
 * (`PageStore.put`) stays a call too: its answer is the WARC reference the record carries.
 */
import type { RobotsEntry } from '../ports.ts';
import type { CrawlTask, LinkRecord } from '../types.ts';

/** A robots.txt entry the step read, for the runtime to store in the crawl's robots cache. */
export interface RobotsWrite {
  origin: string;
  entry: RobotsEntry;
}

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
}

/** A sitemap file named by its site's robots.txt, queued when that robots.txt was read. */
export function isRobotsSitemap(task: CrawlTask): boolean {
  return task.sitemap?.from === 'robots';
}
