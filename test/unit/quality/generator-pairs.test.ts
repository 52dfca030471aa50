/**
 * The generator rule (CrawlQuality.learn): a page of its parent's path pattern that reads like its
 * parent (SimHash within 12 bits) is evidence that the pattern generates more of the same. One
 * such pair is not proof: short pages of one template sit about 26 bits from their parents, so a
 * site of a few hundred of them has a pair within 12 bits by chance, and that pair alone used to
 * stop every later page of the pattern (a 700-page test site lost up to 84 pages, at random,
 * depending on when the pair was fetched). A pattern is flagged once at least two of its pages,
 * and at least half of those compared, read like their parents.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CrawlQuality } from '../../../functions/core/quality/crawl-quality.ts';
import type { CrawlTask, PageRecord } from '../../../functions/core/types.ts';

const SETTINGS = { trapDetectors: true, nearDuplicateDistance: 3, soft404Probe: false };
const PARENT = '0000000000000000';

/** A SimHash `bits` bits away from PARENT. */
function away(bits: number): string {
  return (bits === 64 ? 0xffffffffffffffffn : (1n << BigInt(bits)) - 1n).toString(16).padStart(16, '0');
}

function task(n: number): CrawlTask {
  return {
    crawlId: 'c',
    url: `http://a.example/p/${n}`,
    fp: n.toString(16).padStart(16, '0'),
    host: 'a.example',
    depth: 1,
    redirects: 0,
    attempt: 0,
    cash: 0,
    parentSimhash: PARENT,
  };
}

function record(t: CrawlTask, simhash: string): PageRecord {
  return { url: t.url, status: 200, depth: t.depth, simhash } as PageRecord;
}

/** Learns page n of /p/# at `bits` from its parent; then whether a queued /p/# task is dropped. */
async function learnThenCheck(quality: CrawlQuality, n: number, bits: number): Promise<string | undefined> {
  await quality.learn(task(n), record(task(n), away(bits)));
  return quality.checkTask(task(10_000 + n));
}

describe('generator rule: a pattern is flagged on corroborated look-alikes only', () => {
  it('a site whose pages differ from their parents keeps its pattern after one chance look-alike', async () => {
    const quality = new CrawlQuality(SETTINGS, { random: () => 0.5 });
    for (let n = 0; n < 40; n++) assert.equal(await learnThenCheck(quality, n, 26), undefined);
    assert.equal(await learnThenCheck(quality, 40, 12), undefined, 'one pair within 12 bits of 41');
    assert.equal(await learnThenCheck(quality, 41, 11), undefined, 'two of 42 are not half');
  });

  it('a generator whose pages all read like their parents is flagged at its second look-alike page', async () => {
    const quality = new CrawlQuality(SETTINGS, { random: () => 0.5 });
    assert.equal(await learnThenCheck(quality, 1, 4), undefined);
    assert.equal(await learnThenCheck(quality, 2, 3), 'link-generator');
  });

  it("a resumed crawl remembers a pattern's pairs (the detectors' saved state)", async () => {
    const first = new CrawlQuality(SETTINGS, { random: () => 0.5 });
    assert.equal(await learnThenCheck(first, 1, 4), undefined);
    const resumed = new CrawlQuality(SETTINGS, { random: () => 0.5 }, first.snapshot());
    assert.equal(await learnThenCheck(resumed, 2, 3), 'link-generator');
  });
});
