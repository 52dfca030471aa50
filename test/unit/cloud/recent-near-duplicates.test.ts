/**
 * The cloud worker's bounded near-duplicate memory: two generations, lookups across both.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentNearDuplicates } from '../../../functions/cloud/worker/recent-near-duplicates.ts';

describe('RecentNearDuplicates', () => {
  it('finds pages within k across both generations and forgets the oldest generation', async () => {
    const index = new RecentNearDuplicates(3, 2);
    await index.add('0000000000000000', 'https://e.example/a');
    await index.add('ffffffffffffffff', 'https://e.example/b');
    // Full: the next add starts a new generation; a and b stay findable in the previous one.
    await index.add('00000000ffffffff', 'https://e.example/c');
    assert.equal((await index.findNear('0000000000000007', 3))?.url, 'https://e.example/a');
    assert.equal((await index.findNear('00000000fffffffe', 3))?.url, 'https://e.example/c');
    assert.equal(index.size, 3);
    await index.add('0f0f0f0f0f0f0f0f', 'https://e.example/d');
    // Third generation: a and b are gone, c and d remain.
    await index.add('f0f0f0f0f0f0f0f0', 'https://e.example/e');
    assert.equal(await index.findNear('0000000000000007', 3), undefined);
    assert.equal((await index.findNear('00000000fffffffe', 3))?.url, 'https://e.example/c');
    assert.equal(index.size, 3);
  });

  it('never answers with the page asking, and prefers the nearer match', async () => {
    const index = new RecentNearDuplicates(3, 10);
    await index.add('0000000000000000', 'https://e.example/a');
    await index.add('0000000000000003', 'https://e.example/b');
    assert.equal(
      await index.findNear('0000000000000000', 3, 'https://e.example/a').then((m) => m?.url),
      'https://e.example/b',
    );
    assert.equal((await index.findNear('0000000000000001', 3))?.distance, 1);
  });
});
