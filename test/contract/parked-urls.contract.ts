/**
 * The ParkedUrls contract (functions/cloud/ports/cloud-ports.ts, docs/aopic.md): AOPIC's parked
 * URLs of a crawl. The first page to park a URL owns it (another page's park is refused: the worker
 * parks only URLs its URL-seen claim won) and a URL is never parked again once it was admitted; credits add to a parked URL's key and name
 * the URLs not parked; `richest` lists most cash first; an admission's claim holds
 * ADMISSION_CLAIM_MS against other admissions. Written once, run against the unit tests' fake and
 * the DynamoDB adapter.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ADMISSION_CLAIM_MS, type ParkedUrls } from '../../functions/cloud/ports/cloud-ports.ts';
import type { CrawlTask } from '../../functions/core/types.ts';
import { fingerprint } from '../../functions/core/url/fingerprint.ts';

/** The store. */
export interface ParkedUrlsHarness {
  parked: ParkedUrls;
  /** Sets the clock the admission claims are judged by. */
  setNow(ms: number): void;
}

let next = 0;
let crawls = 0;
/** A new crawl for each test, so that one table serves them all. */
const newCrawl = () => `parked-${process.pid}-${++crawls}`;
const OWNER = 'a1a1a1a1a1a1a1a1';
const OTHER = 'b2b2b2b2b2b2b2b2';

/** A task of `crawlId`; distinct URLs on every call, spread over the fingerprints' first digits. */
function task(crawlId: string): CrawlTask {
  next += 1;
  const url = `http://parked.test/p/${next}`;
  return {
    crawlId,
    url,
    fp: fingerprint(url),
    host: 'parked.test',
    depth: 2,
    redirects: 0,
    attempt: 0,
    cash: 0,
  };
}

const fps = (parked: readonly { task: CrawlTask }[]) => parked.map((p) => p.task.fp).sort();

/** A new crawl with `a` (key 1) and `b` (key 2) parked by OWNER; `never` not. */
async function parkTwo(open: () => Promise<ParkedUrlsHarness>) {
  const harness = await open();
  const crawl = newCrawl();
  const [a, b, never] = [task(crawl), task(crawl), task(crawl)];
  await harness.parked.park(crawl, [
    { task: a, owner: OWNER, key: 1 },
    { task: b, owner: OWNER, key: 2 },
  ]);
  return { ...harness, crawl, a, b, never };
}

/** Registers the contract's tests. */
export function parkedUrlsContract(open: () => Promise<ParkedUrlsHarness>): void {
  it("parks with the task and key given, refuses another page's park of a URL; richest lists most cash first", async () => {
    const { parked } = await open();
    const crawl = newCrawl();
    const [a, b, c] = [task(crawl), task(crawl), task(crawl)];
    await parked.park(crawl, [{ task: c, owner: OTHER, key: 1 }]);
    await parked.park(crawl, [
      { task: a, owner: OWNER, key: 5 },
      { task: b, owner: OWNER, key: 9 },
      { task: c, owner: OWNER, key: 7 },
    ]);
    const richest = await parked.richest(crawl, 10);
    assert.deepEqual(richest, [
      { task: b, key: 9 },
      { task: a, key: 5 },
      { task: c, key: 1 },
    ]);
    assert.deepEqual(await parked.richest(crawl, 1), [{ task: b, key: 9 }]);
    assert.deepEqual(await parked.richest(crawl, 0), []);
    assert.deepEqual(await parked.richest(newCrawl(), 10), []);
  });

  it('parking again is idempotent and takes the new key', async () => {
    const { parked } = await open();
    const crawl = newCrawl();
    const a = task(crawl);
    await parked.park(crawl, [{ task: a, owner: OWNER, key: 3 }]);
    await parked.park(crawl, [{ task: a, owner: OWNER, key: 4 }]);
    assert.deepEqual(await parked.richest(crawl, 10), [{ task: a, key: 4 }]);
  });

  it('credits add to parked URLs and name those not parked', async () => {
    const { parked, crawl, a, b, never } = await parkTwo(open);
    const missing = await parked.credit(
      crawl,
      new Map([
        [a.fp, 4],
        [never.fp, 1],
      ]),
    );
    assert.deepEqual(missing, [never.fp]);
    assert.deepEqual(await parked.richest(crawl, 10), [
      { task: a, key: 5 },
      { task: b, key: 2 },
    ]);
  });

  it('unpark takes URLs out and counts those that were parked; an admitted URL is never parked again', async () => {
    const { parked, crawl, a, b, never } = await parkTwo(open);
    assert.equal(await parked.unpark(crawl, [a.fp, never.fp]), 1);
    assert.deepEqual(fps(await parked.richest(crawl, 10)), [b.fp]);
    assert.equal(await parked.unpark(crawl, [a.fp]), 0, 'once');
    assert.deepEqual(await parked.credit(crawl, new Map([[a.fp, 1]])), [a.fp]);
    // a page redelivered after a crash parks its links again: the admitted one stays out
    await parked.park(crawl, [{ task: a, owner: OWNER, key: 6 }]);
    assert.deepEqual(fps(await parked.richest(crawl, 10)), [b.fp]);
    // a URL that was never parked was not admitted by an unpark: it may still be parked
    await parked.park(crawl, [{ task: never, owner: OWNER, key: 3 }]);
    assert.deepEqual(fps(await parked.richest(crawl, 10)), [b.fp, never.fp].sort());
  });

  it('an admission claim holds against other admissions until ADMISSION_CLAIM_MS passed; its own admitter may claim again', async () => {
    const { parked, setNow, crawl, a, b, never } = await parkTwo(open);
    setNow(1_000_000);
    const first = await parked.claimAdmission(crawl, [a.fp, a.fp, never.fp], 'admission-1');
    assert.deepEqual(first, [a.fp], 'a parked URL once; one not parked is not given');
    setNow(1_000_000 + ADMISSION_CLAIM_MS - 1);
    assert.deepEqual((await parked.claimAdmission(crawl, [a.fp, b.fp], 'admission-2')).sort(), [b.fp]);
    assert.deepEqual(await parked.claimAdmission(crawl, [a.fp], 'admission-1'), [a.fp]);
    setNow(1_000_000 + 2 * ADMISSION_CLAIM_MS);
    assert.deepEqual(
      await parked.claimAdmission(crawl, [a.fp], 'admission-2'),
      [a.fp],
      'a lapsed claim is taken over',
    );
    await parked.unpark(crawl, [a.fp]);
    assert.deepEqual(
      await parked.claimAdmission(crawl, [a.fp], 'admission-3'),
      [],
      'an admitted URL is not given',
    );
  });
}
