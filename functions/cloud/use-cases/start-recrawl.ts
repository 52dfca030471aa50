/**
 * Starting a recrawl round in the cloud (docs/recrawl.md): a new crawl, linked to the archive of
 * the finished crawl it is asked of, that seeds the pages the archive's schedule picks. The
 * round's settings are the crawl's own with the request's overrides (validated by the one config
 * schema); its step sends each page's validators back and writes revisit records, and the
 * archiver folds its pages into the archive as it indexes them.
 */
import { type CrawlConfig, parseCrawlConfig } from '../../core/config.ts';
import { planRecrawl } from '../../core/recrawl/recrawl-plan.ts';
import { SEED_OWNER } from '../../core/step/crawl-page.ts';
import type { CrawlRecord, RecrawlOf } from '../messages/crawl-records.ts';
import type { ArchiveStore } from '../ports/cloud-ports.ts';
import type { StartCrawlDeps } from './start-crawl.ts';

/** What starting a round needs. */
export interface StartRecrawlDeps extends StartCrawlDeps {
  archives: ArchiveStore;
}

/**
 * Why a round, or a schedule of rounds, of a crawl's archive is refused: no such crawl, settings
 * the schema refuses, or a state of the crawl that forbids it now (the API's 404, 400 and 409).
 */
export type RecrawlRefusal =
  | { kind: 'not-found' }
  | { kind: 'invalid'; problems: string[] }
  /** The crawl or a round of its archive is still running, or the archive holds no page yet. */
  | { kind: 'conflict'; problem: string };

/** Started, or why not. */
export type StartRecrawlOutcome = { kind: 'started'; id: string; recrawl: RecrawlOf } | RecrawlRefusal;

/**
 * Starts the next round of the archive of crawl `fromId` (the archive's first crawl or any of
 * its rounds). The round number is taken with a conditional write first, so two requests never
 * start the same round; the crawl item is written before any task is queued.
 */
export async function startRecrawl(
  deps: StartRecrawlDeps,
  fromId: string,
  input: unknown,
): Promise<StartRecrawlOutcome> {
  const from = await deps.table.getCrawl(fromId);
  if (from === undefined) return { kind: 'not-found' };
  const settings = roundSettings(from, input);
  if (!settings.ok) return { kind: 'invalid', problems: settings.problems };
  const { overrides, parsed } = settings;
  if (from.status === 'running') return { kind: 'conflict', problem: `crawl ${fromId} is still running` };
  const unarchived = unarchivedProblem(from);
  if (unarchived !== undefined) return { kind: 'conflict', problem: unarchived };
  const archive = archiveOf(from);
  const rounds = await deps.archives.rounds(archive);
  if (rounds?.last !== undefined) {
    const last = await deps.table.getCrawl(rounds.last);
    if (last?.status === 'running')
      return { kind: 'conflict', problem: `round ${rounds.rounds} (crawl ${rounds.last}) is still running` };
  }
  const pages = await deps.archives.pages(archive);
  if (pages.length === 0)
    return {
      kind: 'conflict',
      problem: `the archive of ${archive} holds no page yet (still being indexed?)`,
    };
  const config: CrawlConfig = { ...parsed };
  // The budget is the round's page budget too: new pages found on the way share it.
  if (config.recrawlBudget !== undefined) config.maxPages = config.recrawlBudget;
  else if (!('maxPages' in overrides)) delete config.maxPages;
  const plan = planRecrawl(pages, config, deps.clock.now());
  const id = deps.newId();
  const round = (rounds?.rounds ?? 0) + 1;
  if (!(await deps.archives.startRound(archive, round, id)))
    return { kind: 'conflict', problem: `another round of ${archive} was started meanwhile` };
  const recrawl: RecrawlOf = {
    archive,
    round,
    from: fromId,
    schedule: config.recrawlSchedule,
    known: pages.length,
    planned: plan.planned.length,
  };
  if (config.recrawlBudget !== undefined) recrawl.budget = config.recrawlBudget;
  const crawl: CrawlRecord = {
    id,
    status: 'running',
    createdAt: new Date(deps.clock.now()).toISOString(),
    config,
    seeds: plan.tasks.length,
    recrawl,
  };
  await deps.table.createCrawl(crawl);
  const tasks = plan.tasks.map((task) => ({ ...task, crawlId: id }));
  const seen = deps.seen(id);
  const claimed = await seen.claim(
    tasks.map((t) => t.fp),
    SEED_OWNER,
    { hosts: tasks.map((t) => t.host) },
  );
  // Known pages left out are seen, not queued: a link to one does not spend the round's budget.
  await seen.claim(
    plan.known.map((k) => k.fp),
    SEED_OWNER,
    { hosts: plan.known.map((k) => k.host) },
  );
  await deps.frontier.enqueue(tasks.filter((_, i) => claimed[i]));
  return { kind: 'started', id, recrawl };
}

/**
 * The settings of a round of `from`'s archive: the crawl's own with `input`'s overrides, by the one
 * config schema; a round keeps its archive's seeds. Also what a recurring schedule is checked with.
 */
export function roundSettings(
  from: CrawlRecord,
  input: unknown,
): { ok: true; overrides: object; parsed: CrawlConfig } | { ok: false; problems: string[] } {
  const overrides = input ?? {};
  if (typeof overrides !== 'object' || Array.isArray(overrides))
    return { ok: false, problems: ['body: expected an object of settings to override'] };
  // The archive is its seeds' (the round's tasks come from the archive's pages, not from seeds).
  if ('seeds' in overrides)
    return { ok: false, problems: ["seeds: a round keeps its archive's seeds (start a new crawl instead)"] };
  const parsed = parseCrawlConfig({ ...from.config, ...overrides });
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  return { ok: true, overrides, parsed: parsed.config };
}

/** Why `from` has no archive to recrawl (it did not keep its pages' validators), or undefined. */
export function unarchivedProblem(from: CrawlRecord): string | undefined {
  if (from.config.keepArchive || from.recrawl !== undefined) return undefined;
  return `crawl ${from.id} did not keep its pages' validators and links (keepArchive: false); start it again with "keepArchive": true to recrawl it`;
}

/** The archive `from` belongs to: its first crawl's id. */
export function archiveOf(from: CrawlRecord): string {
  return from.recrawl?.archive ?? from.id;
}
