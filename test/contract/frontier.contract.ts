/**
 * The Frontier contract (functions/core/ports.ts): what is queued comes out, each host's tasks in the
 * order they were queued, nothing lost. At-least-once: a task queued twice may come out twice
 * (the SQS frontier drops the copy by its deduplication id; the local one relies on URL-seen).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Frontier } from '../../functions/core/ports.ts';
import type { CrawlTask } from '../../functions/core/types.ts';
import { fingerprint } from '../../functions/core/url/fingerprint.ts';

/** A frontier plus a way to take everything it holds, acknowledging as it goes. */
export interface FrontierHarness {
  frontier: Frontier;
  /** Takes every queued task (at least `expected`), in the order the backend serves each host. */
  drain(expected: number): Promise<CrawlTask[]>;
}

let next = 0;

/** A task for `host`; distinct URLs on every call. */
export function task(crawlId: string, host: string): CrawlTask {
  next += 1;
  const url = `http://${host}/page/${next}`;
  return { crawlId, url, fp: fingerprint(url), host, depth: 1, redirects: 0, attempt: 0, cash: 0 };
}

/** Registers the contract's tests. */
export function frontierContract(open: () => Promise<FrontierHarness>): void {
  it('serves every task, each host in queue order, none lost', async () => {
    const { frontier, drain } = await open();
    const hosts = ['a.test', 'b.test', 'c.test'];
    const tasks: CrawlTask[] = [];
    for (let i = 0; i < 24; i++) tasks.push(task('crawl-1', hosts[i % 3]!));
    await frontier.enqueue(tasks.slice(0, 11));
    await frontier.enqueue(tasks.slice(11));
    const out = await drain(tasks.length);
    assert.deepEqual(
      out.map((t) => t.url).sort(),
      tasks.map((t) => t.url).sort(),
      'nothing lost, nothing extra',
    );
    for (const host of hosts) {
      assert.deepEqual(
        out.filter((t) => t.host === host).map((t) => t.url),
        tasks.filter((t) => t.host === host).map((t) => t.url),
        `${host} in order`,
      );
    }
    assert.deepEqual(
      out.find((t) => t.url === tasks[5]!.url),
      tasks[5],
      'tasks come back unchanged',
    );
  });

  it('a task queued twice comes out at least once, and the host order of the others holds', async () => {
    const { frontier, drain } = await open();
    const one = task('crawl-2', 'd.test');
    const two = task('crawl-2', 'd.test');
    const three = task('crawl-2', 'd.test');
    await frontier.enqueue([one, two]);
    await frontier.enqueue([one, three]);
    const out = (await drain(3)).map((t) => t.url);
    assert.ok(out.includes(one.url));
    assert.deepEqual(
      out.filter((u) => u !== one.url),
      [two.url, three.url],
    );
  });
}
