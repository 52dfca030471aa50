/**
 * The parts of committing a step's effects (step-effects.ts) that both runtimes do alike: archive
 * its captures and put the page's reference into its record, and teach the defences what the step
 * learned. Each runtime calls them in its own commit, before the record is written.
 */
import type { PageStore } from '../ports.ts';
import type { CrawlQuality } from '../quality/crawl-quality.ts';
import type { PageRecord } from '../types.ts';
import type { DefenceLesson, StepEffects } from './step-effects.ts';

/** Where a runtime archives a step's captures. */
export interface CaptureArchive {
  /** The pages' captures. */
  pages: PageStore;
  /** robots.txt responses; absent: they are not archived. */
  robots?: PageStore;
}

/**
 * Archives the step's robots.txt responses (when `archive.robots` is set), then its page capture,
 * whose reference becomes `record.warc` (none when the store keeps no captures). The captures are
 * dropped from `effects` once stored: their bodies are the step's largest part.
 */
export async function archiveCaptures(
  archive: CaptureArchive,
  effects: StepEffects,
  record: PageRecord | undefined,
): Promise<void> {
  const { capture, robotsCaptures } = effects;
  delete effects.capture;
  delete effects.robotsCaptures;
  if (archive.robots !== undefined)
    for (const robots of robotsCaptures ?? []) await archive.robots.put(robots);
  if (capture === undefined) return;
  const warc = await archive.pages.put(capture);
  if (warc !== undefined && record !== undefined) record.warc = warc;
}

/** Applies the step's lessons to the crawl's defences (a runtime's CrawlQuality or its wrapper), in order. */
export function applyLessons(
  quality: Pick<CrawlQuality, 'recordProbe'>,
  lessons: readonly DefenceLesson[] | undefined,
): void {
  for (const lesson of lessons ?? []) {
    if (lesson.kind === 'probe') quality.recordProbe(lesson.probe, lesson.answer);
  }
}
