/**
 * The ContentSeenStore contract (functions/core/ports.ts), written once, run against every adapter.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import type { ContentSeenStore } from '../../functions/core/ports.ts';

let next = 0;
function newHash(): string {
  next += 1;
  return createHash('sha256').update(`body ${process.pid} ${next} ${Math.random()}`).digest('hex');
}

/** Registers the contract's tests; `open` gives two stores over one backend. */
export function contentSeenStoreContract(
  open: () => Promise<{ a: ContentSeenStore; b: ContentSeenStore }>,
): void {
  it('registers a new hash (undefined) and names the first URL to later claimers', async () => {
    const { a, b } = await open();
    const hash = newHash();
    assert.equal(await a.claim(hash, 'http://a.test/1'), undefined);
    assert.equal(await a.claim(hash, 'http://a.test/2'), 'http://a.test/1');
    assert.equal(await b.claim(hash, 'http://b.test/3'), 'http://a.test/1');
  });

  it('a repeat by the first URL is not a duplicate of itself', async () => {
    const { a, b } = await open();
    const hash = newHash();
    assert.equal(await a.claim(hash, 'http://a.test/x'), undefined);
    assert.equal(await a.claim(hash, 'http://a.test/x'), undefined);
    assert.equal(await b.claim(hash, 'http://a.test/x'), undefined);
  });

  it('of two URLs racing with the same body, exactly one registers it', async () => {
    const { a, b } = await open();
    for (let i = 0; i < 10; i++) {
      const hash = newHash();
      const [x, y] = await Promise.all([
        a.claim(hash, 'http://a.test/race'),
        b.claim(hash, 'http://b.test/race'),
      ]);
      assert.ok((x === undefined) !== (y === undefined), `one winner, got ${x} / ${y}`);
      assert.equal(x ?? y, x === undefined ? 'http://a.test/race' : 'http://b.test/race');
    }
  });
}
