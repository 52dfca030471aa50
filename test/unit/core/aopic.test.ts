/**
 * AOPIC accounting (functions/core/scheduling/aopic.ts): how cash splits, the lambda page's O(1)
 * redistribution, importance.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AopicLedger, pathShape, splitCash } from '../../../functions/core/scheduling/aopic.ts';

describe('splitCash', () => {
  it('gives each out-link an equal share of the cash less the tax, the tax to the lambda page', () => {
    const { share, toLambda } = splitCash(1, 4, 0.1);
    assert.equal(toLambda, 0.1);
    assert.ok(Math.abs(share - 0.225) < 1e-12);
    assert.ok(Math.abs(share * 4 + toLambda - 1) < 1e-12, 'cash is conserved');
  });

  it('sends everything to the lambda page when no link can take it, and nothing when there is no cash', () => {
    assert.deepEqual(splitCash(0.5, 0, 0.1), { share: 0, toLambda: 0.5 });
    assert.deepEqual(splitCash(0, 3, 0.1), { share: 0, toLambda: 0 });
  });
});

describe('AopicLedger', () => {
  it('redistributes the lambda page over all known pages as a bonus every page holds', () => {
    const ledger = new AopicLedger();
    ledger.discovered(4);
    const key = ledger.keyFor(0.25);
    ledger.collect(0.2);
    assert.equal(ledger.redistribute(), 0.05);
    assert.equal(ledger.state.lambda, 0);
    assert.ok(Math.abs(ledger.cashOf(key) - 0.3) < 1e-12, 'known before: holds the bonus');
    const later = ledger.keyFor(0.1);
    assert.ok(Math.abs(ledger.cashOf(later) - 0.1) < 1e-12, 'known after: does not');
    assert.equal(ledger.redistribute(), 0, 'nothing to spread');
  });

  it('estimates importance as (history + cash) over all history plus the circulating 1.0', () => {
    const ledger = new AopicLedger();
    ledger.discovered(2);
    assert.equal(ledger.fetched(0.5), 0.5 / 1.5);
    assert.equal(ledger.importance(0.25, 0.25), 0.5 / 1.5);
  });

  it('gives cash back from the lambda page, never more than it holds', () => {
    const ledger = new AopicLedger();
    ledger.collect(0.4);
    assert.equal(ledger.reclaim(0.25), 0.25);
    assert.ok(Math.abs(ledger.state.lambda - 0.15) < 1e-12);
    assert.ok(Math.abs(ledger.reclaim(1) - 0.15) < 1e-12, 'bounded by what the lambda page holds');
    assert.equal(ledger.state.lambda, 0);
    assert.equal(ledger.reclaim(-1), 0);
  });
});

describe('pathShape', () => {
  it('replaces digit runs and ignores the query', () => {
    assert.equal(pathShape('https://e.example/calendar/2026/11?view=day'), '/calendar/#/#');
    assert.equal(pathShape('https://e.example'), '/');
  });
});
