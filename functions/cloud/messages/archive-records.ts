/**
 * What the cloud keeps of an archive (a first crawl and its recrawl rounds) so that it can be
 * recrawled: one entry per URL holding the core's {@link ArchivedPage}, and one item counting the
 * rounds. An entry also remembers the round that last folded a visit into it and the state before
 * that visit: a capture archived twice (redelivered, or fetched again after a worker died) is
 * folded again from the same state, never twice, and a revisit looks its page up as it was before
 * the round, whatever the round already folded.
 */
import type { ArchivedPage } from '../../core/recrawl/archived-page.ts';

/** One URL of an archive. */
export interface ArchiveEntry {
  page: ArchivedPage;
  /** The crawl (first crawl or round) whose visit made `page`. */
  round: string;
  /** The state before that crawl's visit (absent when the URL was new to it). */
  before?: ArchivedPage;
}

/** An archive's rounds: how many were started, and the crawl of the last one. */
export interface ArchiveRounds {
  rounds: number;
  last?: string;
}

/** The URL's state as the crawl `crawlId` must see it: before its own visit, if it made one. */
export function stateBefore(entry: ArchiveEntry | undefined, crawlId: string): ArchivedPage | undefined {
  if (entry === undefined) return undefined;
  return entry.round === crawlId ? entry.before : entry.page;
}
