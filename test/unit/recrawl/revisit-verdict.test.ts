import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ArchivedPage, foldVisit, withLastmod } from '../../../functions/core/recrawl/archived-page.ts';
import { isChange, judgeRevisit } from '../../../functions/core/recrawl/revisit-verdict.ts';
import type { PageRecord } from '../../../functions/core/types.ts';

const before = { status: 200, contentHash: 'aaa' };

function record(fields: Partial<PageRecord>): PageRecord {
  return {
    url: 'http://example.com/a',
    finalUrl: 'http://example.com/a',
    status: 200,
    contentType: 'text/html',
    kind: 'page',
    depth: 1,
    bytes: 10,
    fetchedAt: '2026-11-02T00:00:00.000Z',
    durationMs: 5,
    title: 'A',
    contentHash: 'aaa',
    outLinks: 0,
    ...fields,
  };
}

describe('the verdict of a revisit', () => {
  test('a 304 is not modified, never a change, whatever else came with it', () => {
    assert.equal(judgeRevisit(before, 304, null), 'not-modified');
    assert.equal(judgeRevisit(before, 304, 'bbb'), 'not-modified');
    assert.equal(isChange('not-modified'), false);
  });

  test('the same payload is unchanged; another one, or another status, is a change', () => {
    assert.equal(judgeRevisit(before, 200, 'aaa'), 'unchanged');
    assert.equal(judgeRevisit(before, 200, 'bbb'), 'changed');
    assert.equal(judgeRevisit(before, 301, 'aaa'), 'changed');
    assert.equal(judgeRevisit({ status: 200, contentHash: null }, 200, null), 'changed');
  });

  test('404 and 410 are gone', () => {
    assert.equal(judgeRevisit(before, 404, 'x'), 'gone');
    assert.equal(judgeRevisit(before, 410, null), 'gone');
    assert.equal(isChange('gone'), true);
  });
});

describe('foldVisit', () => {
  const first = foldVisit(undefined, record({ etag: '"1"' }), {
    links: [{ url: 'http://example.com/b', kind: 'page' }],
    ref: { file: 'warc/x.warc.gz', offset: 1, length: 2 },
    payloadDigest: 'sha1:AAAA',
  }) as ArchivedPage;

  test('the first fetch starts the history and is the copy', () => {
    assert.deepEqual(first.history, {
      visits: 0,
      changes: 0,
      firstVisitAt: Date.parse('2026-11-02T00:00:00.000Z'),
      lastVisitAt: Date.parse('2026-11-02T00:00:00.000Z'),
    });
    assert.equal(first.copy?.payloadDigest, 'sha1:AAAA');
    assert.deepEqual(first.validators, { etag: '"1"' });
  });

  test('a 304 counts a visit, not a change, and keeps the copy and its links', () => {
    const next = foldVisit(
      first,
      record({
        status: 304,
        change: 'not-modified',
        fetchedAt: '2026-11-03T00:00:00.000Z',
        etag: '"1"',
        bytes: 0,
      }),
      { ref: { file: 'recrawls/round-0001/warc/y.warc.gz', offset: 9, length: 9 } },
    )!;
    assert.deepEqual([next.history.visits, next.history.changes], [1, 0]);
    assert.equal(next.status, 200);
    assert.deepEqual(next.copy, first.copy);
    assert.deepEqual(next.links, first.links);
  });

  test('a changed page counts a change and becomes the copy; a gone one is marked', () => {
    const changed = foldVisit(first, record({ change: 'changed', contentHash: 'bbb' }), { links: [] })!;
    assert.deepEqual([changed.history.visits, changed.history.changes], [1, 1]);
    assert.equal(changed.contentHash, 'bbb');
    assert.deepEqual(changed.links, []);
    const gone = foldVisit(first, record({ status: 410, change: 'gone' }))!;
    assert.equal(gone.gone, true);
  });

  test('without a stored capture (--no-warc) there is no copy to refer to', () => {
    assert.equal(foldVisit(undefined, record({}))?.copy, undefined);
  });

  test('a fetch with no response leaves the state as it was', () => {
    assert.equal(foldVisit(first, record({ status: null, fetchedAt: null })), first);
  });
});

describe('withLastmod', () => {
  const page = foldVisit(undefined, record({})) as ArchivedPage;

  test('a later sitemap lastmod is kept as the hint; an earlier one or a non-date changes nothing', () => {
    const hinted = withLastmod(page, '2026-11-05T00:00:00Z');
    assert.equal(hinted.history.lastmod, Date.parse('2026-11-05T00:00:00Z'));
    assert.equal(withLastmod(hinted, '2026-11-04T00:00:00Z'), hinted);
    assert.equal(withLastmod(hinted, 'soon'), hinted);
  });
});
