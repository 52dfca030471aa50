import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import type { Fetcher } from '../../../functions/core/ports.ts';
import { CrawlState, CrawlStateMismatchError } from '../../../functions/embedded/crawl-state.ts';
import { tempDir } from '../../e2e/helpers.ts';

/** No network in these tests: opening a crawl must not fetch. */
const noFetcher: Fetcher = {
  fetch: async () => {
    throw new Error('no fetch while opening');
  },
  close: async () => {},
};

function config(seeds: string[], extra: Record<string, unknown> = {}) {
  const result = parseCrawlConfig({ seeds, ...extra });
  assert.ok(result.ok);
  return result.config;
}

function open(outDir: string, seeds = ['http://a.test/', 'http://b.test/x']) {
  return CrawlState.open({
    config: config(seeds),
    outDir,
    now: 1000,
    random: () => 0.5,
    fetcher: noFetcher,
    log: () => {},
  });
}

describe('CrawlState.open', () => {
  test('a new folder is seeded: canonical seeds queued with equal cash, counted, checkpointed', async () => {
    const dir = tempDir();
    const state = await open(join(dir, 'new/out'), [
      'HTTP://A.test:80/',
      'http://b.test/x',
      'http://a.test/',
    ]);
    assert.equal(state.resumed, false);
    assert.deepEqual(
      state.db.hostCounts(),
      new Map([
        ['a.test', 1],
        ['b.test', 1],
      ]),
    );
    assert.equal(state.counters.discovered, 2);
    assert.equal(state.policy.ledger.state.known, 2);
    assert.equal(state.db.head('a.test')?.cash, 0.5);
    assert.equal(state.db.head('a.test')?.url, 'http://a.test/');
    await state.close();
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'new/out/traps.json'), 'utf8')), []);
  });

  test('the same folder again resumes: counters, ledger and scope hosts from the checkpoint', async () => {
    const dir = tempDir();
    const first = await open(dir);
    first.counters.fetched = 7;
    first.scopeHosts.add('www.a.test');
    first.policy.ledger.collect(0.25);
    await first.close();
    const again = await open(dir);
    assert.equal(again.resumed, true);
    assert.equal(again.counters.fetched, 7);
    assert.equal(again.counters.discovered, 2, 'seeds are not queued twice');
    assert.equal(again.policy.ledger.state.lambda, 0.25);
    assert.equal(again.scope.check('http://www.a.test/p', 'www.a.test', 1), undefined);
    assert.equal(again.db.frontierSize(), 2);
    await again.close();
  });

  test('output files are cut back to the sizes the checkpoint committed', async () => {
    const dir = tempDir();
    const first = await open(dir);
    first.pagesFile.append(['{"url":"committed"}']);
    first.db.setMeta('checkpoint', first.checkpoint());
    await first.close();
    const committed = statSync(join(dir, 'pages.jsonl')).size;
    appendFileSync(join(dir, 'pages.jsonl'), '{"url":"never committed"}\n{"half');
    const again = await open(dir);
    assert.equal(again.pagesFile.size, committed);
    await again.close();
    assert.equal(readFileSync(join(dir, 'pages.jsonl'), 'utf8'), '{"url":"committed"}\n');
  });

  test('a folder holding another crawl is refused, and left as it was', async () => {
    const dir = tempDir();
    await (await open(dir)).close();
    await assert.rejects(open(dir, ['http://c.test/']), CrawlStateMismatchError);
    const again = await open(dir);
    assert.equal(again.resumed, true);
    await again.close();
  });
});
