/**
 * A frontier worker over the in-memory cloud: builds crawls, messages with FIFO sequence numbers,
 * and runs batches the way the handler does, with a clock the test moves.
 */

import { encodeTask, messageGroupId } from '../../../functions/cloud/messages/task-message.ts';
import type {
  BatchOutcome,
  FrontierMessage,
  FrontierWorkerDeps,
} from '../../../functions/cloud/worker/batch-model.ts';
import { createFrontierBatchProcessor } from '../../../functions/cloud/worker/process-frontier-batch.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import type { Fetcher } from '../../../functions/core/ports.ts';
import { seedTasks } from '../../../functions/core/step/crawl-page.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';
import { UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';
import type { MemoryCloud } from './memory-cloud.ts';

/** A clock tests move by hand; `sleep` moves it. */
export class TestClock {
  t: number;
  constructor(t = Date.UTC(2026, 10, 26)) {
    this.t = t;
  }
  now = (): number => this.t;
  sleep = async (ms: number): Promise<void> => {
    this.t += ms;
  };
}

let ids = 0;

/** A worker container over a {@link MemoryCloud}. */
export function workerOver(
  cloud: MemoryCloud,
  fetcher: Fetcher,
  clock: TestClock,
  extra: Partial<FrontierWorkerDeps> = {},
): (messages: readonly FrontierMessage[], remainingMs?: () => number) => Promise<BatchOutcome> {
  return createFrontierBatchProcessor({
    clock,
    random: () => 0.5,
    sleep: clock.sleep,
    table: cloud.table,
    frontier: cloud.frontier,
    messages: cloud.visibility,
    deadLetters: cloud.deadLetters,
    stores: cloud.forContainer(clock),
    captures: cloud.captures,
    objects: cloud.objects,
    parked: cloud.parked,
    backlog: cloud.backlog,
    fetcher: () => fetcher,
    newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
    ...extra,
  });
}

/** Creates a running crawl (its item and seed claims); resolves its id and a task maker. */
export function runningCrawl(
  cloud: MemoryCloud,
  input: Record<string, unknown>,
  clock: TestClock,
  id = `crawl-${++ids}`,
): { id: string; tasks: (urls: string[], depth?: number) => CrawlTask[] } {
  const parsed = parseCrawlConfig(input);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  const canonicalizer = new UrlCanonicalizer(parsed.config);
  const seeds = seedTasks(id, parsed.config.seeds, canonicalizer).tasks;
  cloud.table.crawls.set(id, {
    id,
    status: 'running',
    createdAt: new Date(clock.now()).toISOString(),
    config: parsed.config,
    seeds: seeds.length,
  });
  cloud.table.registry.add(id);
  const owners = cloud.seen(id).owners;
  for (const t of seeds) owners.set(t.fp, '0000000000000000');
  return {
    id,
    tasks: (urls, depth = 0) =>
      seedTasks(id, urls, canonicalizer).tasks.map((t) => ({
        ...t,
        depth,
        cash: depth === 0 ? t.cash : 0.01,
      })),
  };
}

let seq = 1000;

/** A frontier message for a task: its FIFO group, a new sequence number and message id. */
export function messageFor(task: CrawlTask, receiveCount = 1, sequenceNumber = ++seq): FrontierMessage {
  return {
    messageId: `m-${task.fp}-${sequenceNumber}`,
    receiptHandle: `r-${sequenceNumber}`,
    body: encodeTask(task),
    groupId: messageGroupId(task),
    sequenceNumber: String(sequenceNumber),
    receiveCount,
  };
}
