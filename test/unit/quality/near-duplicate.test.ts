import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import {
  LocalNearDuplicateIndex,
  NearDuplicateLayoutError,
} from '../../../functions/adapters/local/local-near-duplicate-index.ts';
import {
  bandKeys,
  bandLayout,
  isNear,
  MemoryNearDuplicateIndex,
  type NearDuplicateIndex,
  type NearDuplicateIndexOptions,
  type NearDuplicateStats,
  type NearMatch,
} from '../../../functions/core/quality/near-duplicate.ts';
import { popcount32, simhashFromHalves, simhashHalves } from '../../../functions/core/quality/simhash.ts';
import { seeded } from './simhash-reference.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-near-'));
  dirs.push(dir);
  return join(dir, 'state.sqlite');
}

function randomSimhash(random: () => number): string {
  return simhashFromHalves(Math.floor(random() * 2 ** 32), Math.floor(random() * 2 ** 32));
}

/** `simhash` with `bits` distinct random bits flipped. */
function flip(simhash: string, bits: number, random: () => number): string {
  let x = BigInt(`0x${simhash}`);
  const chosen = new Set<number>();
  while (chosen.size < bits) chosen.add(Math.floor(random() * 64));
  for (const bit of chosen) x ^= 1n << BigInt(bit);
  return x.toString(16).padStart(16, '0');
}

/** Band keys computed the obvious way, with BigInt bit extraction. */
function referenceBandKeys(simhash: string, k: number, blocks = Math.max(k + 1, 2)): string[] {
  const x = BigInt(`0x${simhash}`);
  const layout = bandLayout(k, blocks);
  const values = layout.ranges.map(([start, end]) =>
    ((x >> BigInt(64 - end)) & ((1n << BigInt(end - start)) - 1n)).toString(16),
  );
  return layout.bands.map((band, i) => `${i}:${band.map((b) => values[b]).join('.')}`);
}

describe('bandKeys', () => {
  it('cuts 64 bits into k + 1 blocks, one key per block with its index (frozen: a stored format)', () => {
    assert.deepEqual(bandKeys('0123456789abcdef', 3), ['0:123', '1:4567', '2:89ab', '3:cdef']);
    assert.deepEqual(bandKeys('0000000000000000', 3), ['0:0', '1:0', '2:0', '3:0']);
    // k = 6: blocks of 10, 9, 9, 9, 9, 9, 9 bits
    assert.deepEqual(bandLayout(6).ranges, [
      [0, 10],
      [10, 19],
      [19, 28],
      [28, 37],
      [37, 46],
      [46, 55],
      [55, 64],
    ]);
    assert.deepEqual(bandKeys('ffffffffffffffff', 6), [
      '0:3ff',
      '1:1ff',
      '2:1ff',
      '3:1ff',
      '4:1ff',
      '5:1ff',
      '6:1ff',
    ]);
    // 5 blocks for k = 3: bands are the 10 pairs of blocks
    assert.equal(bandKeys('0123456789abcdef', 3, 5).length, 10);
    assert.equal(bandKeys('0123456789abcdef', 3, 5)[0], '0:24.d15');
  });

  it('matches a BigInt extraction for random SimHashes and layouts', () => {
    const random = seeded(1);
    for (const [k, blocks] of [
      [1, 2],
      [2, 3],
      [3, 4],
      [3, 5],
      [4, 5],
      [5, 6],
      [6, 7],
      [6, 8],
      [0, 2],
    ] as const) {
      for (let i = 0; i < 200; i++) {
        const h = randomSimhash(random);
        assert.deepEqual(
          bandKeys(h, k, blocks),
          referenceBandKeys(h, k, blocks),
          `${h} k=${k} blocks=${blocks}`,
        );
      }
    }
  });

  it('gives two SimHashes within distance k at least one common key (pigeonhole)', () => {
    const random = seeded(2);
    for (let k = 0; k <= 6; k++) {
      for (const blocks of [Math.max(k + 1, 2), k + 2]) {
        for (let i = 0; i < 300; i++) {
          const a = randomSimhash(random);
          const b = flip(a, Math.floor(random() * (k + 1)), random);
          const keys = new Set(bandKeys(a, k, blocks));
          assert.ok(
            bandKeys(b, k, blocks).some((key) => keys.has(key)),
            `${a} ${b} k=${k} blocks=${blocks}`,
          );
        }
      }
    }
  });

  it('refuses impossible layouts', () => {
    assert.throws(() => bandLayout(-1), RangeError);
    assert.throws(() => bandLayout(3, 3), RangeError);
    assert.throws(() => bandLayout(1.5), RangeError);
    assert.throws(() => bandLayout(3, 33), RangeError);
    assert.throws(() => bandLayout(12, 24), RangeError); // C(24, 12) bands
  });

  it('isNear compares the distance with k', () => {
    assert.equal(isNear('0000000000000000', '0000000000000007', 3), true);
    assert.equal(isNear('0000000000000000', '000000000000000f', 3), false);
    assert.equal(isNear('0000000000000000', '000000000000000f'), false);
    assert.equal(isNear('0000000000000000', '000000000000000f', 4), true);
  });
});

interface IndexUnderTest extends NearDuplicateIndex {
  readonly stats: NearDuplicateStats;
  readonly size: number;
}

const implementations: [name: string, make: (options?: NearDuplicateIndexOptions) => IndexUnderTest][] = [
  ['MemoryNearDuplicateIndex', (options) => new MemoryNearDuplicateIndex(options)],
  [
    'LocalNearDuplicateIndex (open DatabaseSync, each add merged at once)',
    (options) => new LocalNearDuplicateIndex(new DatabaseSync(':memory:'), { ...options, batchSize: 1 }),
  ],
  [
    'LocalNearDuplicateIndex (path, adds merged 7 at a time: lookups see merged and waiting ones)',
    (options) => new LocalNearDuplicateIndex(dbPath(), { ...options, batchSize: 7 }),
  ],
];

/** The nearest entry by brute force: smallest distance, then earliest added. */
function bruteForce(
  entries: [string, string][],
  query: string,
  k: number,
  self?: string,
): NearMatch | undefined {
  const [qhi, qlo] = simhashHalves(query);
  let best: NearMatch | undefined;
  for (const [simhash, url] of entries) {
    if (url === self) continue;
    const [hi, lo] = halves(simhash);
    const distance = popcount32(hi ^ qhi) + popcount32(lo ^ qlo);
    if (distance <= k && (best === undefined || distance < best.distance)) best = { url, simhash, distance };
  }
  return best;
}

const halvesCache = new Map<string, [number, number]>();
function halves(simhash: string): [number, number] {
  let h = halvesCache.get(simhash);
  if (h === undefined) {
    h = simhashHalves(simhash);
    halvesCache.set(simhash, h);
  }
  return h;
}

for (const [name, make] of implementations) {
  describe(`${name}: NearDuplicateIndex semantics`, () => {
    it('finds nothing in an empty index, then the page filed', async () => {
      const index = make();
      assert.equal(await index.findNear('0123456789abcdef', 3), undefined);
      await index.add('0123456789abcdef', 'https://a.test/1');
      assert.deepEqual(await index.findNear('0123456789abcdef', 3), {
        url: 'https://a.test/1',
        simhash: '0123456789abcdef',
        distance: 0,
      });
      assert.deepEqual(await index.findNear('0123456789abcdee', 3), {
        url: 'https://a.test/1',
        simhash: '0123456789abcdef',
        distance: 1,
      });
      assert.equal(await index.findNear('0123456789abcd10', 3), undefined); // 4 bits away
      assert.equal(index.size, 1);
    });

    it('returns the smallest distance, then the earliest added', async () => {
      const index = make();
      await index.add('00000000000000ff', 'https://a.test/far'); // 8 bits from the query: no match
      await index.add('0000000000000007', 'https://a.test/three');
      await index.add('0000000000000003', 'https://a.test/two-first');
      await index.add('000000000000000c', 'https://a.test/two-second');
      await index.add('0000000000000030', 'https://a.test/two-third');
      assert.equal((await index.findNear('0000000000000000', 3))?.url, 'https://a.test/two-first');
      assert.equal((await index.findNear('0000000000000000', 2))?.url, 'https://a.test/two-first');
      assert.equal(await index.findNear('0000000000000000', 1), undefined);
    });

    it('never matches the page asking (a retried step finds its own earlier add)', async () => {
      const index = make();
      await index.add('0123456789abcdef', 'https://a.test/self');
      assert.equal(await index.findNear('0123456789abcdef', 3, 'https://a.test/self'), undefined);
      await index.add('0123456789abcdee', 'https://a.test/other');
      assert.equal(
        (await index.findNear('0123456789abcdef', 3, 'https://a.test/self'))?.url,
        'https://a.test/other',
      );
      assert.equal(
        (await index.findNear('0123456789abcdef', 3, 'https://a.test/unknown'))?.url,
        'https://a.test/self',
      );
    });

    it('is idempotent per URL: the first add wins', async () => {
      const index = make();
      await index.add('0123456789abcdef', 'https://a.test/x');
      await index.add('0123456789abcdef', 'https://a.test/x');
      await index.add('fedcba9876543210', 'https://a.test/x');
      assert.equal(index.size, 1);
      assert.equal(index.stats.adds, 1);
      assert.equal(await index.findNear('fedcba9876543210', 3), undefined);
      assert.equal((await index.findNear('0123456789abcdef', 3))?.url, 'https://a.test/x');
    });

    it('refuses a distance above its own k, and malformed SimHashes', async () => {
      const index = make({ k: 3 });
      await assert.rejects(index.findNear('0123456789abcdef', 4), RangeError);
      await assert.rejects(index.findNear('0123456789ABCDEF', 3), { code: 'SIMHASH_FORMAT' });
      await assert.rejects(index.add('xyz', 'https://a.test/'), { code: 'SIMHASH_FORMAT' });
    });

    it('agrees with brute force on 3,000 random SimHashes with 300 planted near pairs', async () => {
      const random = seeded(99);
      for (const k of [3, 6]) {
        const index = make({ k });
        const entries: [string, string][] = [];
        const queries: string[] = [];
        for (let i = 0; i < 3000; i++) {
          const h = randomSimhash(random);
          entries.push([h, `https://a.test/${k}/${i}`]);
          await index.add(h, `https://a.test/${k}/${i}`);
          if (i % 10 === 0) queries.push(flip(h, Math.floor(random() * (k + 3)), random));
          else if (i % 10 === 5) queries.push(randomSimhash(random));
        }
        let found = 0;
        for (const query of queries) {
          for (const distance of [k, Math.min(k, 2)]) {
            const expected = bruteForce(entries, query, distance);
            assert.deepEqual(await index.findNear(query, distance), expected, `${query} k=${distance}`);
            if (expected !== undefined) found++;
          }
        }
        assert.ok(found > 200, `only ${found} planted pairs found`);
        // self-exclusion agrees too
        const [h, url] = entries[1234]!;
        assert.deepEqual(await index.findNear(h, k, url), bruteForce(entries, h, k, url));
      }
    });

    it('examines a number of candidates that stays flat as the index grows', async () => {
      const random = seeded(7);
      const index = make({ k: 3 });
      const perLookup: number[] = [];
      let size = 0;
      for (const target of [500, 2000, 8000]) {
        for (; size < target; size++) await index.add(randomSimhash(random), `https://a.test/${size}`);
        const before = index.stats.candidates;
        for (let q = 0; q < 200; q++) await index.findNear(randomSimhash(random), 3);
        perLookup.push((index.stats.candidates - before) / 200);
      }
      // 4 keys of 16 bits: a random entry shares one with probability 4 / 65,536, so the expected
      // count at 8,000 entries is 0.49; a linear scan would read all 8,000
      assert.ok(perLookup[2]! < 2, `candidates per lookup ${perLookup.join(', ')}`);
      assert.ok(perLookup.every((c) => c < 2));
    });

    it('reads at most maxPerBand entries per key, the earliest: the cluster is still found', async () => {
      const index = make({ k: 3, maxPerBand: 3 });
      for (let i = 0; i < 10; i++) await index.add('0123456789abcdef', `https://a.test/copy/${i}`);
      assert.equal(index.size, 10);
      const before = index.stats.candidates;
      assert.equal((await index.findNear('0123456789abcdee', 3))?.url, 'https://a.test/copy/0');
      // the query differs in the last block: three keys match, each read up to 3 entries
      assert.equal(index.stats.candidates - before, 3 * 3);
      assert.equal(index.stats.keysAtCap, 3);
      // a page asking about itself still finds its twins
      assert.equal(
        (await index.findNear('0123456789abcdef', 3, 'https://a.test/copy/0'))?.url,
        'https://a.test/copy/1',
      );
    });
  });
}

describe('LocalNearDuplicateIndex in the crawl database', () => {
  it('adds its tables beside the crawl and keeps them across a reopen', async () => {
    const path = dbPath();
    const db = new DatabaseSync(path);
    db.exec('CREATE TABLE seen (fp INTEGER PRIMARY KEY)');
    const index = new LocalNearDuplicateIndex(db);
    await index.add('0123456789abcdef', 'https://a.test/1');
    index.close(); // leaves a database it did not open alone
    assert.equal((db.prepare('SELECT count(*) AS n FROM seen').get() as { n: number }).n, 0);
    db.close();

    const reopened = new LocalNearDuplicateIndex(path);
    assert.equal(reopened.size, 1);
    assert.equal((await reopened.findNear('0123456789abcdee', 3))?.url, 'https://a.test/1');
    reopened.close();
  });

  it('merges inside a transaction the crawl has open, and is rolled back with it', async () => {
    const db = new DatabaseSync(':memory:');
    const index = new LocalNearDuplicateIndex(db, { batchSize: 1 });
    db.exec('BEGIN');
    await index.add('0123456789abcdef', 'https://a.test/1');
    db.exec('ROLLBACK');
    assert.equal(index.size, 0);
    db.exec('BEGIN');
    await index.add('0123456789abcdef', 'https://a.test/1');
    db.exec('COMMIT');
    assert.equal(index.size, 1);
  });

  it('keeps adds in memory until a batch fills or flush: a crash loses only those', async () => {
    const path = dbPath();
    const db = new DatabaseSync(path);
    const index = new LocalNearDuplicateIndex(db, { batchSize: 3 });
    for (let i = 0; i < 4; i++) await index.add(`000000000000000${i}`, `https://a.test/${i}`);
    assert.equal(index.size, 4);
    const count = () => (db.prepare('SELECT count(*) AS n FROM simhash_page').get() as { n: number }).n;
    assert.equal(count(), 3); // the first batch was merged
    assert.equal((await index.findNear('0000000000000003', 0))?.url, 'https://a.test/3'); // waiting, still found
    await index.add('0000000000000003', 'https://a.test/3'); // a retry of a waiting add: ignored
    assert.equal(index.size, 4);
    db.close(); // "crash": the waiting add is gone
    const reopened = new LocalNearDuplicateIndex(path, { batchSize: 3 });
    assert.equal(reopened.size, 3);
    await reopened.add('0000000000000003', 'https://a.test/3');
    await reopened.add('0000000000000000', 'https://a.test/0'); // already merged: ignored
    reopened.flush();
    assert.equal(reopened.size, 4);
    assert.equal(
      (await reopened.findNear('0000000000000001', 1, 'https://a.test/1'))?.url,
      'https://a.test/0',
    );
    reopened.close();
  });

  it('refuses to open an index built with another layout', () => {
    const path = dbPath();
    new LocalNearDuplicateIndex(path, { k: 3 }).close();
    assert.throws(() => new LocalNearDuplicateIndex(path, { k: 4 }), NearDuplicateLayoutError);
    assert.throws(() => new LocalNearDuplicateIndex(path, { k: 3, blocks: 5 }), {
      code: 'NEAR_DUPLICATE_LAYOUT',
    });
    new LocalNearDuplicateIndex(path, { k: 3 }).close();
  });
});
