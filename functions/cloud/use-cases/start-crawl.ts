/**
 * Starting a crawl in the cloud: validate the config (the one schema the CLI uses too), write the
 * crawl item and its registry entry, claim the seeds, queue them.
 */
import { parseCrawlConfig } from '../../core/config.ts';
import type { Clock, Frontier, SeenStore } from '../../core/ports.ts';
import { SEED_OWNER, seedTasks } from '../../core/step/crawl-page.ts';
import { UrlCanonicalizer } from '../../core/url/canonicalize.ts';
import type { CrawlRegistry } from '../ports/cloud-ports.ts';

/** What starting a crawl needs. */
export interface StartCrawlDeps {
  table: CrawlRegistry;
  frontier: Frontier;
  /** The URL-seen store of a crawl. */
  seen: (crawlId: string) => SeenStore;
  clock: Clock;
  newId: () => string;
  /** The deployment forbids `allowPrivate` (a stack setting). Default false. */
  forbidPrivate?: boolean;
}

/** Started, or the list of problems with the request. */
export type StartCrawlOutcome =
  | { kind: 'started'; id: string; seeds: number }
  | { kind: 'invalid'; problems: string[] };

/**
 * Starts a crawl. The crawl item is written first (with its seed count, the first `discovered`
 * URLs) so that a worker never sees a task of a crawl that does not exist; if queueing the seeds
 * fails afterwards, the error propagates and the scheduler later ends the crawl with its seeds
 * counted as `lost`.
 */
export async function startCrawl(deps: StartCrawlDeps, input: unknown): Promise<StartCrawlOutcome> {
  const parsed = parseCrawlConfig(input);
  if (!parsed.ok) return { kind: 'invalid', problems: parsed.problems };
  const { config } = parsed;
  if (config.allowPrivate && deps.forbidPrivate === true) {
    return {
      kind: 'invalid',
      problems: [
        'allowPrivate: this deployment forbids crawling private addresses (stack setting crawlstack:allowPrivateAddresses)',
      ],
    };
  }
  const id = deps.newId();
  const { tasks, problems } = seedTasks(id, config.seeds, new UrlCanonicalizer(config));
  if (problems.length > 0) return { kind: 'invalid', problems: problems.map((p) => `seeds: ${p}`) };
  await deps.table.createCrawl({
    id,
    status: 'running',
    createdAt: new Date(deps.clock.now()).toISOString(),
    config,
    seeds: tasks.length,
  });
  const claimed = await deps.seen(id).claim(
    tasks.map((t) => t.fp),
    SEED_OWNER,
    { hosts: tasks.map((t) => t.host) },
  );
  await deps.frontier.enqueue(tasks.filter((_, i) => claimed[i]));
  return { kind: 'started', id, seeds: tasks.length };
}
