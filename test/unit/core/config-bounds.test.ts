/**
 * Every numeric crawl setting has an upper bound that a laptop and a 256 MB Lambda can honour
 * (issue 8, item 4): values past it are refused with a problem naming the setting and the limit,
 * the limits themselves are accepted. Before the bounds, `seenCacheSize: 2^31` was accepted (the
 * CLOCK cache computed a negative slot), `maxBodyBytes: 1e12` too, and a `delayMs` over 2^31 ms
 * made the embedded scheduler's setTimeout fire at once, in a busy loop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONFIG_LIMITS, parseCrawlConfig } from '../../../functions/core/config.ts';

const seeds = ['https://example.org/'];

/** Every bounded numeric setting and its limit. */
const LIMITS: Record<string, number> = {
  maxPages: CONFIG_LIMITS.pages,
  maxDepth: CONFIG_LIMITS.maxDepth,
  maxPagesPerHost: CONFIG_LIMITS.pages,
  maxUrlLength: CONFIG_LIMITS.maxUrlLength,
  maxSegmentRepeats: CONFIG_LIMITS.maxSegmentRepeats,
  concurrency: 1024,
  delayMs: CONFIG_LIMITS.waitMs,
  delayFactor: CONFIG_LIMITS.delayFactor,
  maxDelayMs: CONFIG_LIMITS.waitMs,
  maxCrawlDelayMs: CONFIG_LIMITS.waitMs,
  maxRetryAfterMs: CONFIG_LIMITS.waitMs,
  maxRetries: 20,
  retryBaseDelayMs: CONFIG_LIMITS.retryBaseDelayMs,
  connectTimeoutMs: CONFIG_LIMITS.timeoutMs,
  headersTimeoutMs: CONFIG_LIMITS.timeoutMs,
  idleTimeoutMs: CONFIG_LIMITS.timeoutMs,
  totalTimeoutMs: CONFIG_LIMITS.timeoutMs,
  maxBodyBytes: CONFIG_LIMITS.maxBodyBytes,
  maxRedirects: 50,
  maxRobotsBytes: CONFIG_LIMITS.maxRobotsBytes,
  robotsTtlMs: 86_400_000,
  robotsErrorTtlMs: CONFIG_LIMITS.waitMs,
  seenCacheSize: CONFIG_LIMITS.seenCacheSize,
  redistributeEveryMs: CONFIG_LIMITS.redistributeEveryMs,
  nearDuplicateDistance: 6,
  aopicTax: 1,
  aopicAdmitShare: 1,
};

describe('config bounds', () => {
  it('every duration fits setTimeout (2^31 - 1 ms) with room to spare', () => {
    for (const [key, limit] of Object.entries(LIMITS)) {
      if (/Ms$/.test(key)) assert.ok(limit <= 86_400_000, `${key}: ${limit}`);
    }
  });

  it('accepts each limit and refuses one past it, naming the setting and the limit', () => {
    for (const [key, limit] of Object.entries(LIMITS)) {
      assert.ok(parseCrawlConfig({ seeds, [key]: limit }).ok, `${key} = ${limit} is allowed`);
      const over = Number.isInteger(limit) && limit > 1 ? limit + 1 : limit + 0.5;
      const result = parseCrawlConfig({ seeds, [key]: over });
      assert.ok(!result.ok, `${key} = ${over} is refused`);
      const problem = result.problems.find((p) => p.startsWith(`${key}:`));
      assert.ok(problem !== undefined, `${key}: ${result.problems.join('; ')}`);
      assert.ok(problem.includes(limit.toLocaleString('en-US')) || problem.includes(String(limit)), problem);
    }
  });

  it('no numeric setting of the schema is unbounded (a setting added later needs its limit too)', () => {
    const defaults = parseCrawlConfig({ seeds });
    assert.ok(defaults.ok);
    for (const [key, value] of Object.entries(defaults.config)) {
      if (typeof value !== 'number' && key !== 'maxPages') continue;
      const result = parseCrawlConfig({ seeds, [key]: 1e15 });
      assert.ok(!result.ok, `${key} accepts 1e15`);
    }
  });

  it('refuses the values the audit found accepted', () => {
    for (const [key, value] of [
      ['seenCacheSize', 2 ** 31],
      ['maxBodyBytes', 1e12],
      ['delayMs', 2 ** 31],
      ['maxRetryAfterMs', 2 ** 32],
    ] as const) {
      const result = parseCrawlConfig({ seeds, [key]: value });
      assert.ok(!result.ok, key);
      assert.match(result.problems[0]!, new RegExp(`^${key}: at most `));
    }
  });
});
