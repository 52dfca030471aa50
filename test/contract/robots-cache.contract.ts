/**
 * The RobotsCache contract (functions/core/ports.ts), written once, run against every adapter.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { WarmRobotsCache } from '../../functions/cloud/ports/cloud-ports.ts';
import type { Clock, RobotsCache, RobotsEntry } from '../../functions/core/ports.ts';

let next = 0;
function origin(): string {
  next += 1;
  return `https://host${next}.example:8443`;
}

/** A robots.txt of `bytes` bytes made of ordinary rules (it compresses like a real one). */
export function bigRobots(bytes: number): string {
  const lines: string[] = ['User-agent: *'];
  let size = lines[0]!.length + 1;
  for (let i = 0; size < bytes; i++) {
    const line = `Disallow: /section-${i % 97}/archive/${i}/page-${(i * 7919) % 100_003}.html`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** Registers the contract's tests; `open` gives a writer and a second instance over one backend. */
export function robotsCacheContract(open: () => Promise<{ a: RobotsCache; b: RobotsCache }>): void {
  it('answers undefined for an origin never stored', async () => {
    const { a } = await open();
    assert.equal(await a.get(origin()), undefined);
  });

  it('round-trips each kind of entry, through another instance too', async () => {
    const { a, b } = await open();
    const entries: RobotsEntry[] = [
      {
        status: 'rules',
        body: 'User-agent: *\nDisallow: /private\nCrawl-delay: 2\n# ünïcode\n',
        detail: '200',
        fetchedAt: 1_700_000_000_000,
        expiresAt: 1_700_086_400_000,
      },
      { status: 'allow-all', detail: '404', fetchedAt: 1_700_000_000_001, expiresAt: 1_700_086_400_001 },
      {
        status: 'disallow-all',
        detail: 'timeout-headers',
        fetchedAt: 1_700_000_000_002,
        expiresAt: 1_700_000_300_002,
      },
      // An origin that has never answered: retried after the short backoff (crawl-page.ts).
      {
        status: 'disallow-all',
        detail: 'connect',
        fetchedAt: 1_700_000_000_003,
        expiresAt: 1_700_000_002_003,
        neverAnswered: true,
      },
    ];
    for (const entry of entries) {
      const o = origin();
      await a.put(o, entry);
      assert.deepEqual(await a.get(o), entry);
      assert.deepEqual(await b.get(o), entry);
    }
  });

  it('a later put replaces the entry', async () => {
    const { a, b } = await open();
    const o = origin();
    await a.put(o, { status: 'allow-all', detail: '404', fetchedAt: 1, expiresAt: 2 });
    const newer: RobotsEntry = {
      status: 'rules',
      body: 'User-agent: *\nAllow: /\n',
      detail: '200',
      fetchedAt: 3,
      expiresAt: 4,
    };
    await a.put(o, newer);
    assert.deepEqual(await b.get(o), newer);
  });

  it('keeps a 512 KiB robots.txt whole', async () => {
    const { a, b } = await open();
    const o = origin();
    const body = bigRobots(512 * 1024);
    await a.put(o, { status: 'rules', body, detail: '200', fetchedAt: 5, expiresAt: 6 });
    const got = await b.get(o);
    assert.equal(got?.body?.length, body.length);
    assert.equal(got?.body, body);
  });
}

/**
 * The cloud worker's WarmRobotsCache (functions/cloud/ports/cloud-ports.ts): a container's warm
 * map answers while its entry is valid; an expired one is read again from the table, so another
 * container's newer entry is seen. `open` gives two containers' caches over one backend, with the
 * clock they judge validity by.
 */
export function warmRobotsCacheContract(
  open: (clock: Clock) => Promise<{ a: WarmRobotsCache; b: WarmRobotsCache }>,
): void {
  const entry = (detail: string, expiresAt: number): RobotsEntry => ({
    status: 'rules',
    body: `User-agent: *\nDisallow: /${detail}\n`,
    detail: '200',
    fetchedAt: 1,
    expiresAt,
  });

  it('a valid warm entry answers without the table; an expired one is read again and the newer seen', async () => {
    let now = 1_000;
    const { a, b } = await open({ now: () => now });
    const o = origin();
    await a.put(o, entry('old', 2_000));
    assert.equal(a.isWarm(o), true);
    await b.put(o, entry('new', 5_000));
    assert.deepEqual(await a.get(o), entry('old', 2_000), 'still valid: the warm map answers');
    now = 2_000;
    assert.deepEqual(await a.get(o), entry('new', 5_000), 'expired: the newer entry of the other container');
  });

  it('primes the warm map with an entry read elsewhere, without writing it', async () => {
    const { a, b } = await open({ now: () => 1_000 });
    const o = origin();
    assert.equal(b.isWarm(o), false);
    b.prime(o, entry('primed', 9_000));
    assert.equal(b.isWarm(o), true);
    assert.deepEqual(await b.get(o), entry('primed', 9_000));
    assert.equal(await a.get(o), undefined, 'priming writes nothing to the table');
  });
}
