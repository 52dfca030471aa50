/**
 * The scheduler's AOPIC step as a use case, over in-memory ports: the lambda page's bonus, which
 * parked URLs are admitted (as rich as what the crawl fetches, or anything once the frontier runs
 * dry), the page budget. The DynamoDB and SQS side is covered in test/emulator/pipeline/aopic.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  aggregateCounters,
  type CloudAopicState,
  type CrawlCounters,
  type CrawlRecord,
  emptyHostCounts,
} from '../../../functions/cloud/messages/crawl-records.ts';
import type { ParkedUrl, ParkedUrls } from '../../../functions/cloud/ports/cloud-ports.ts';
import { redistributeCredit } from '../../../functions/cloud/use-cases/redistribute-credit.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';

function parkedSet(entries: { fp: string; key: number }[]) {
  const parked = new Map(entries.map((e) => [e.fp, e.key]));
  const port: ParkedUrls = {
    park: async () => {},
    credit: async () => [],
    richest: async (_crawl, limit) =>
      [...parked]
        .sort((a, b) => b[1] - a[1])
        .slice(0, limit)
        .map(([fp, key]): ParkedUrl => ({ task: task(fp), key })),
    unpark: async (_crawl, fps) => fps.filter((fp) => parked.delete(fp)).length,
    claimAdmission: async (_crawl, fps) => fps.filter((fp) => parked.has(fp)),
  };
  return { port, parked };
}

function task(fp: string): CrawlTask {
  return {
    crawlId: 'c',
    url: `https://e.example/${fp}`,
    fp,
    host: 'e.example',
    depth: 2,
    redirects: 0,
    attempt: 0,
    cash: 0,
  };
}

function crawl(aopic?: Partial<CloudAopicState>, settings: Record<string, unknown> = {}): CrawlRecord {
  const parsed = parseCrawlConfig({ seeds: ['https://e.example/'], ...settings });
  assert.ok(parsed.ok);
  const record: CrawlRecord = { id: 'c', status: 'running', createdAt: '', config: parsed.config, seeds: 1 };
  if (aopic !== undefined)
    record.aopic = { bonus: 0, lambdaSpent: 0, admitted: 0, history: 0, fetched: 0, ...aopic };
  return record;
}

function counters(
  c: Partial<{
    enqueued: number;
    finished: number;
    fetched: number;
    parked: number;
    lambda: number;
    history: number;
  }>,
  admitted = 0,
) {
  return aggregateCounters(1, [{ ...emptyHostCounts(), ...c }], admitted);
}

async function step(
  record: CrawlRecord,
  sums: ReturnType<typeof counters>,
  parked: ParkedUrls,
  options: { queueEmpty?: boolean } = {},
) {
  const sent: CrawlTask[] = [];
  const written: CloudAopicState[] = [];
  const result = await redistributeCredit(
    {
      table: { setAopic: async (_id, state) => void written.push(state), addAdmitted: async () => {} },
      parked,
      frontier: { enqueue: async (t) => void sent.push(...t) },
    },
    record,
    sums.counters as CrawlCounters,
    sums.aopic,
    options,
  );
  return { result, sent, written };
}

describe('redistributeCredit', () => {
  it('spreads the new lambda cash over every known URL as a bonus, once', async () => {
    const { port } = parkedSet([]);
    const sums = counters({ enqueued: 9, finished: 5, fetched: 5, lambda: 0.5, history: 0.8 });
    const { result, written } = await step(crawl(), sums, port);
    assert.equal(result.state.bonus, 0.05, '0.5 over 10 known URLs');
    assert.equal(result.state.lambdaSpent, 0.5);
    assert.deepEqual(written, [result.state]);
    const again = await step(crawl(result.state), sums, port);
    assert.equal(again.result.state.bonus, 0.05, 'nothing new to spread');
    assert.deepEqual(again.written, [], 'an unchanged state is not written');
  });

  it('admits parked URLs as rich as what the crawl fetches; poorer ones wait while the frontier has work', async () => {
    const { port, parked } = parkedSet([
      { fp: 'rich', key: 0.02 },
      { fp: 'poor', key: 0.0001 },
    ]);
    // 10 pages fetched since the last step holding 0.3 in all: 0.03 each; the floor is half that.
    const sums = counters({ enqueued: 20, finished: 10, fetched: 10, parked: 2, history: 0.3 });
    const { result, sent } = await step(crawl({ history: 0, fetched: 0 }), sums, port);
    assert.deepEqual(
      sent.map((t) => t.fp),
      ['rich'],
    );
    assert.equal(sent[0]!.cash, 0.02, 'the message carries the key');
    assert.equal(result.admitted, 1);
    assert.equal(result.pending, true, 'the poor one still waits');
    assert.deepEqual([...parked.keys()], ['poor']);
  });

  it('admits the richest parked URLs, however poor, once the frontier is dry', async () => {
    const { port, parked } = parkedSet([
      { fp: 'a', key: 0.0001 },
      { fp: 'b', key: 0.0002 },
    ]);
    const sums = counters({ enqueued: 12, finished: 11, fetched: 11, parked: 2, history: 0.5 });
    assert.equal(sums.counters.queued, 0);
    const { sent } = await step(crawl({ history: 0.1, fetched: 1 }), sums, port);
    assert.deepEqual(
      sent.map((t) => t.fp),
      ['b', 'a'],
    );
    assert.equal(parked.size, 0);
  });

  it('takes an empty queue for a dry frontier, whatever running totals short of a dead batch say', async () => {
    const { port, parked } = parkedSet([{ fp: 'a', key: 0.0001 }]);
    // The totals miss the finish of a batch that died between its ledgers and its shard write.
    const sums = counters({ enqueued: 11, finished: 10, fetched: 10, parked: 1, history: 0.5 });
    assert.equal(sums.counters.queued, 1);
    const busy = await step(crawl({ history: 0.1, fetched: 1 }), sums, port);
    assert.deepEqual(busy.sent, [], 'the totals say one is still queued: the poor one waits');
    const idle = await step(crawl({ history: 0.1, fetched: 1 }), sums, port, { queueEmpty: true });
    assert.deepEqual(
      idle.sent.map((t) => t.fp),
      ['a'],
    );
    assert.equal(parked.size, 0);
  });

  it('admits nothing past the page budget, and then parked URLs no longer keep the crawl going', async () => {
    const { port } = parkedSet([{ fp: 'a', key: 1 }]);
    const sums = counters({ enqueued: 12, finished: 11, fetched: 11, parked: 1, history: 0.5 });
    const { result, sent } = await step(crawl(undefined, { maxPages: 11 }), sums, port);
    assert.deepEqual(sent, []);
    assert.equal(result.pending, false);
  });
});
