/**
 * The ArchiveStore contract (functions/cloud/ports/cloud-ports.ts, docs/recrawl.md): each archive's
 * per-URL entries, written whole and read back as written (copies: what a caller changes afterwards
 * is not stored), listed per archive, and its rounds started one at a time. Written once, run
 * against the unit tests' fake and the DynamoDB adapter.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ArchiveEntry } from '../../functions/cloud/messages/archive-records.ts';
import type { ArchiveStore } from '../../functions/cloud/ports/cloud-ports.ts';
import type { ArchivedPage } from '../../functions/core/recrawl/archived-page.ts';

let archives = 0;
/** A new archive name for each test, so that one store serves them all. */
const newArchive = () => `arc-contract-${process.pid}-${++archives}`;

function page(url: string, overrides: Partial<ArchivedPage> = {}): ArchivedPage {
  return {
    url,
    depth: 1,
    status: 200,
    validators: { etag: '"v1"' },
    contentHash: 'a'.repeat(64),
    contentType: 'text/html',
    title: 'A page',
    copy: { date: '2026-11-28T10:00:00Z', payloadDigest: 'sha1:ABC' },
    links: [{ url: `${url}next`, kind: 'page' }],
    history: { visits: 0, changes: 0, firstVisitAt: 1000, lastVisitAt: 1000 },
    ...overrides,
  };
}

/** Registers the contract's tests; `open` gives the store (one per suite is enough). */
export function archiveStoreContract(open: () => Promise<ArchiveStore>): void {
  it('reads back the entries written, with their state before the visit; none for a URL never written', async () => {
    const store = await open();
    const archive = newArchive();
    const first: ArchiveEntry = { page: page('http://a.test/'), round: 'crawl-1' };
    const second: ArchiveEntry = {
      page: page('http://a.test/b', { status: 404, gone: true, links: [] }),
      round: 'round-1',
      before: page('http://a.test/b'),
    };
    await store.put(archive, [first, second]);
    const found = await store.entries(archive, ['http://a.test/', 'http://a.test/b', 'http://a.test/never']);
    assert.deepEqual([...found.keys()].sort(), ['http://a.test/', 'http://a.test/b']);
    assert.deepEqual(found.get('http://a.test/'), first);
    assert.deepEqual(found.get('http://a.test/b'), second);
    assert.deepEqual(await store.entries(archive, []), new Map());
  });

  it('copies in and out: changing what was written or read does not change what is stored', async () => {
    const store = await open();
    const archive = newArchive();
    const entry: ArchiveEntry = { page: page('http://a.test/'), round: 'crawl-1' };
    await store.put(archive, [entry]);
    entry.page.title = 'changed after the write';
    const read = (await store.entries(archive, ['http://a.test/'])).get('http://a.test/')!;
    assert.equal(read.page.title, 'A page');
    read.page.history.visits = 99;
    const again = (await store.entries(archive, ['http://a.test/'])).get('http://a.test/')!;
    assert.equal(again.page.history.visits, 0);
  });

  it('a second write of a URL replaces its entry; a URL asked twice is answered once', async () => {
    const store = await open();
    const archive = newArchive();
    await store.put(archive, [{ page: page('http://a.test/'), round: 'crawl-1' }]);
    const newer: ArchiveEntry = {
      page: page('http://a.test/', {
        title: 'Changed',
        history: { visits: 1, changes: 1, firstVisitAt: 1000, lastVisitAt: 2000 },
      }),
      round: 'round-1',
      before: page('http://a.test/'),
    };
    await store.put(archive, [newer]);
    const found = await store.entries(archive, ['http://a.test/', 'http://a.test/']);
    assert.equal(found.size, 1);
    assert.deepEqual(found.get('http://a.test/'), newer);
  });

  it('lists every page of its archive, and only of its archive, past one batch of reads', async () => {
    const store = await open();
    const archive = newArchive();
    const other = newArchive();
    const urls = Array.from({ length: 130 }, (_, i) => `http://a.test/p-${i}`);
    await store.put(
      archive,
      urls.map((url) => ({ page: page(url), round: 'crawl-1' })),
    );
    await store.put(other, [{ page: page('http://other.test/'), round: 'crawl-2' }]);
    const pages = await store.pages(archive);
    assert.deepEqual(pages.map((p) => p.url).sort(), [...urls].sort());
    assert.deepEqual(
      pages.find((p) => p.url === urls[7]),
      page(urls[7]!),
    );
    const found = await store.entries(archive, urls);
    assert.equal(found.size, urls.length, 'entries of more URLs than one batch read');
    assert.deepEqual(
      (await store.pages(other)).map((p) => p.url),
      ['http://other.test/'],
    );
    assert.deepEqual(await store.pages(newArchive()), []);
  });

  it('starts rounds one at a time: round n only when n - 1 were started, each once', async () => {
    const store = await open();
    const archive = newArchive();
    assert.equal(await store.rounds(archive), undefined);
    assert.equal(await store.startRound(archive, 2, 'round-2'), false, 'round 1 first');
    assert.equal(await store.startRound(archive, 1, 'round-1'), true);
    assert.deepEqual(await store.rounds(archive), { rounds: 1, last: 'round-1' });
    assert.equal(await store.startRound(archive, 1, 'round-1b'), false, 'round 1 was started');
    assert.deepEqual(
      await store.rounds(archive),
      { rounds: 1, last: 'round-1' },
      'a refused start writes nothing',
    );
    assert.equal(await store.startRound(archive, 2, 'round-2'), true);
    assert.deepEqual(await store.rounds(archive), { rounds: 2, last: 'round-2' });
  });

  it('two rounds started at once: exactly one wins', async () => {
    const store = await open();
    const archive = newArchive();
    const started = await Promise.all([
      store.startRound(archive, 1, 'round-a'),
      store.startRound(archive, 1, 'round-b'),
    ]);
    assert.deepEqual(started.filter(Boolean).length, 1);
    const rounds = await store.rounds(archive);
    assert.equal(rounds?.rounds, 1);
    assert.equal(rounds?.last, started[0] ? 'round-a' : 'round-b');
  });
}
