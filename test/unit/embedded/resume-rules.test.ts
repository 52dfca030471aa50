import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { fixedSettingChange, reasonsToRetry } from '../../../functions/embedded/resume-rules.ts';

function config(extra: Record<string, unknown> = {}) {
  const result = parseCrawlConfig({ seeds: ['http://a.test/'], ...extra });
  assert.ok(result.ok);
  return result.config;
}

describe('resume rules', () => {
  test('settings that widen what the crawl may do retry the failures they remove', () => {
    const before = config({ allowPrivate: false, headersTimeoutMs: 1000, maxPagesPerHost: 10 });
    assert.deepEqual([...reasonsToRetry(before, before, 5)], [], 'nothing changed');
    const wider = config({ allowPrivate: true, headersTimeoutMs: 5000, maxPagesPerHost: 20 });
    assert.deepEqual(
      reasonsToRetry(before, wider, 5),
      new Map([
        ['blocked-address', 'allowPrivate is now on'],
        ['timeout-headers', 'headersTimeoutMs grew'],
        ['host-budget', 'maxPagesPerHost grew'],
      ]),
    );
    assert.deepEqual([...reasonsToRetry(wider, before, 5)], [], 'narrowing retries nothing');
    const listed = config({ allowPrivate: ['loopback'] });
    assert.deepEqual(
      [...reasonsToRetry(listed, config({ allowPrivate: ['loopback', 'link-local'] }), 5)],
      [['blocked-address', 'allowPrivate names other networks']],
    );
    assert.deepEqual([...reasonsToRetry(listed, listed, 5)], [], 'the same networks: nothing to retry');
  });

  test('more retries, or a crawl that fetched nothing, retries the transient failures', () => {
    const before = config({ maxRetries: 1 });
    const more = reasonsToRetry(before, config({ maxRetries: 3 }), 5);
    assert.ok(more.has('connect') && more.has('robots-unreachable') && more.has('timeout-total'));
    assert.equal(more.has('blocked-address'), false);
    const failed = reasonsToRetry(before, before, 0);
    assert.equal(failed.get('dns'), 'no page was fetched before');
    assert.equal(reasonsToRetry(undefined, before, 3).size, 0, 'no settings stored: nothing to compare');
  });

  test('the near-duplicate distance cannot change; everything else may', () => {
    assert.match(
      fixedSettingChange(config(), config({ nearDuplicateDistance: 5 })) ?? '',
      /^nearDuplicateDistance was 3 when this crawl started \(got 5\)/,
    );
    assert.equal(fixedSettingChange(config(), config({ maxPages: 9, delayMs: 0, order: 'bfs' })), undefined);
    assert.equal(fixedSettingChange({}, config({ nearDuplicateDistance: 5 })), undefined);
  });
});
