import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BODY_THRESHOLD_BYTES,
  BodyBudget,
  BodyBudgetError,
} from '../../../functions/adapters/http/body-budget.ts';

const MiB = 1024 * 1024;

describe('BodyBudget', () => {
  it('grants claims that fit at once, inside the call', () => {
    const budget = new BodyBudget({ budgetBytes: 20 * MiB });
    const granted: string[] = [];
    budget.claim(10 * MiB, () => granted.push('a'));
    budget.claim(10 * MiB, () => granted.push('b'));
    assert.deepEqual(granted, ['a', 'b']);
    assert.equal(budget.holders, 2);
    assert.equal(budget.heldBytes, 20 * MiB);
    assert.equal(budget.thresholdBytes, BODY_THRESHOLD_BYTES);
    assert.equal(budget.slotsFor(10 * MiB), 2);
  });

  it('makes later claims wait, and grants them in the order they came as shares come back', () => {
    const budget = new BodyBudget({ budgetBytes: 10 * MiB });
    const granted: string[] = [];
    const releaseA = budget.claim(10 * MiB, () => granted.push('a'));
    const releaseB = budget.claim(10 * MiB, () => granted.push('b'));
    const releaseC = budget.claim(10 * MiB, () => granted.push('c'));
    assert.deepEqual(granted, ['a']);
    assert.equal(budget.waiting, 2);
    releaseA();
    assert.deepEqual(granted, ['a', 'b']);
    releaseB();
    assert.deepEqual(granted, ['a', 'b', 'c']);
    releaseC();
    assert.equal(budget.holders, 0);
    assert.equal(budget.heldBytes, 0);
  });

  it('does not let a small claim overtake a waiting large one (no starvation)', () => {
    const budget = new BodyBudget({ budgetBytes: 10 * MiB });
    const granted: string[] = [];
    const releaseA = budget.claim(6 * MiB, () => granted.push('a'));
    budget.claim(6 * MiB, () => granted.push('big'));
    budget.claim(1 * MiB, () => granted.push('small'));
    assert.deepEqual(granted, ['a'], 'the small claim would fit, but a claim waits before it');
    releaseA();
    assert.deepEqual(granted, ['a', 'big', 'small']);
  });

  it('withdraws a waiting claim without ever granting it, and lets those behind it through', () => {
    const budget = new BodyBudget({ budgetBytes: 10 * MiB });
    const granted: string[] = [];
    const releaseA = budget.claim(6 * MiB, () => granted.push('a'));
    const withdrawB = budget.claim(6 * MiB, () => granted.push('b'));
    budget.claim(4 * MiB, () => granted.push('c'));
    withdrawB(); // the fetch was aborted, or failed, while it waited
    assert.deepEqual(granted, ['a', 'c']);
    releaseA();
    assert.deepEqual(granted, ['a', 'c'], 'a withdrawn claim is never granted');
    assert.equal(budget.waiting, 0);
    assert.equal(budget.heldBytes, 4 * MiB);
  });

  it('counts a second release of the same share once', () => {
    const budget = new BodyBudget({ budgetBytes: 10 * MiB });
    const release = budget.claim(5 * MiB, () => {});
    budget.claim(5 * MiB, () => {});
    release();
    release();
    assert.equal(budget.heldBytes, 5 * MiB);
    assert.equal(budget.holders, 1);
  });

  it('cuts a claim larger than the whole budget to the budget, so it is granted alone', () => {
    const budget = new BodyBudget({ budgetBytes: 8 * MiB });
    let granted = false;
    const release = budget.claim(16 * MiB, () => {
      granted = true;
    });
    assert.ok(granted);
    assert.equal(budget.slotsFor(16 * MiB), 1);
    let second = false;
    budget.claim(1, () => {
      second = true;
    });
    assert.equal(second, false);
    release();
    assert.equal(second, true);
  });

  it('refuses a budget or threshold that is not a positive number of bytes, saying which', () => {
    assert.throws(() => new BodyBudget({ budgetBytes: 0 }), BodyBudgetError);
    assert.throws(
      () => new BodyBudget({ budgetBytes: Number.NaN }),
      /budgetBytes must be a positive integer/,
    );
    assert.throws(
      () => new BodyBudget({ budgetBytes: MiB, thresholdBytes: -1 }),
      /thresholdBytes must be a positive integer of bytes, got -1/,
    );
  });

  it('charges a claim its cap times the cost per byte: the slots of a share kept through the step', () => {
    const budget = new BodyBudget({ budgetBytes: 100 * MiB, costPerByte: 5 });
    assert.equal(budget.slotsFor(10 * MiB), 2);
    budget.claim(10 * MiB, () => {});
    assert.equal(budget.heldBytes, 50 * MiB);
    assert.throws(() => new BodyBudget({ budgetBytes: MiB, costPerByte: 0.5 }), /costPerByte must be/);
  });
});
