/**
 * The duplicate-URL rules per crawl and origin in the crawl table (HostRulesStore), as
 * host-rules-sync.ts and the API rely on them: a write succeeds only on the version it read (0: no
 * item yet) and otherwise resolves what is stored, each origin (scheme, host and port) and crawl
 * keeps its own rules, the crawl's rules list every origin's, and the rules news tells the latest
 * version announced per origin (read with the batch state).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { BatchStateReader, HostRulesStore } from '../../functions/cloud/ports/cloud-ports.ts';
import type { HeldForm, HostRuleRecord } from '../../functions/core/quality/duplicate-url-rules.ts';
import { readBatchState } from './read-batch-state.ts';

type RulesTable = HostRulesStore & BatchStateReader;

const rule = (status: HostRuleRecord['status'], support: number): HostRuleRecord => ({
  rule: { kind: 'drop-suffix', suffix: 'index.html' },
  name: 'drop-suffix index.html',
  status,
  support,
  examples: [['https://a.example/x/', 'https://a.example/x/index.html']],
});

async function newsOf(table: RulesTable, crawlId: string): Promise<Map<string, number> | undefined> {
  const state = await readBatchState(table, { rulesNews: [crawlId] });
  return state.rulesNews.get(crawlId);
}

/** Registers the contract's tests; `open` gives a fresh table. */
export function hostRulesContract(open: () => Promise<RulesTable>): void {
  it('writes on the version read: the first write finds version 0, the next the version it made', async () => {
    const table = await open();
    const origin = 'https://a.example';
    assert.equal(await table.hostRules('c', origin), undefined);
    const held: HeldForm[] = [['https://a.example/x/index.html', 42]];
    assert.deepEqual(await table.putHostRules('c', origin, [rule('candidate', 1)], 0, held), {
      written: true,
      version: 1,
    });
    assert.deepEqual(await table.hostRules('c', origin), {
      records: [rule('candidate', 1)],
      version: 1,
      held,
    });
    assert.deepEqual(await table.putHostRules('c', origin, [rule('active', 4)], 1), {
      written: true,
      version: 2,
    });
    assert.deepEqual(await table.hostRules('c', origin), { records: [rule('active', 4)], version: 2 });
  });

  it('a write on a stale version writes nothing and resolves the stored rules', async () => {
    const table = await open();
    const origin = 'https://a.example';
    await table.putHostRules('c', origin, [rule('active', 4)], 0);
    assert.deepEqual(await table.putHostRules('c', origin, [rule('blocked', 1)], 0), {
      written: false,
      stored: { records: [rule('active', 4)], version: 1 },
    });
    assert.deepEqual((await table.hostRules('c', origin))?.records, [rule('active', 4)]);
  });

  it('a write on a version never stored resolves "no rules, version 0"', async () => {
    const table = await open();
    assert.deepEqual(await table.putHostRules('c', 'https://a.example', [rule('active', 4)], 3), {
      written: false,
      stored: { records: [], version: 0 },
    });
    assert.equal(await table.hostRules('c', 'https://a.example'), undefined);
  });

  it("each origin and crawl keeps its own rules; a crawl's rules list every origin's", async () => {
    const table = await open();
    await table.putHostRules('c', 'https://a.example', [rule('active', 4)], 0);
    await table.putHostRules('c', 'http://a.example', [rule('candidate', 1)], 0);
    await table.putHostRules('c', 'https://a.example:8443', [rule('blocked', 2)], 0);
    await table.putHostRules('d', 'https://a.example', [rule('blocked', 9)], 0);
    assert.equal((await table.hostRules('c', 'http://a.example'))?.records[0]?.status, 'candidate');
    assert.equal((await table.hostRules('d', 'https://a.example'))?.records[0]?.status, 'blocked');
    const listed = (await table.crawlRules('c')).map((r) => `${r.origin} ${r.status} ${r.support}`).sort();
    assert.deepEqual(listed, [
      'http://a.example candidate 1',
      'https://a.example active 4',
      'https://a.example:8443 blocked 2',
    ]);
    assert.deepEqual(await table.crawlRules('none'), []);
  });

  it('the stored rules are read with the batch state', async () => {
    const table = await open();
    await table.putHostRules('c', 'https://a.example', [rule('active', 4)], 0);
    const state = await readBatchState(table, {
      rules: [
        { crawlId: 'c', origin: 'https://a.example' },
        { crawlId: 'c', origin: 'https://b.example' },
      ],
    });
    assert.deepEqual([...state.rules.keys()], ['c https://a.example']);
    assert.equal(state.rules.get('c https://a.example')?.version, 1);
  });

  it("the rules news tells each announced origin's latest version, per crawl", async () => {
    const table = await open();
    assert.equal(await newsOf(table, 'c'), undefined);
    await table.announceHostRules('c', 'https://a.example', 1);
    await table.announceHostRules('c', 'https://b.example', 3);
    await table.announceHostRules('c', 'https://a.example', 2);
    await table.announceHostRules('d', 'https://a.example', 7);
    const news = await newsOf(table, 'c');
    // Two origins may share a slot (news is a hint): these two do not.
    assert.deepEqual(
      news,
      new Map([
        ['https://a.example', 2],
        ['https://b.example', 3],
      ]),
    );
    assert.deepEqual(await newsOf(table, 'd'), new Map([['https://a.example', 7]]));
  });
}
