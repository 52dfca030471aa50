import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  applyRequestFeedback,
  hostGapMs,
  type PoliteHost,
  type PolitenessSettings,
  retryAfterMs,
  retryBackoffMs,
} from '../../../functions/core/scheduling/politeness.ts';

const settings: PolitenessSettings = {
  delayMs: 1000,
  delayFactor: 5,
  maxDelayMs: 60_000,
  maxCrawlDelayMs: 30_000,
  maxRetryAfterMs: 600_000,
  retryBaseDelayMs: 2000,
};

describe('hostGapMs', () => {
  test('delayMs is the floor when responses are fast and robots.txt says nothing', () => {
    assert.equal(hostGapMs(settings, 10), 1000);
    assert.equal(hostGapMs(settings, 0), 1000);
    assert.equal(hostGapMs({ ...settings, delayMs: 0 }, 0), 0);
  });

  test('a slow host waits delayFactor x its last response time', () => {
    assert.equal(hostGapMs(settings, 300), 1500);
    assert.equal(hostGapMs({ ...settings, delayFactor: 10 }, 300), 3000);
    assert.equal(hostGapMs({ ...settings, delayFactor: 0 }, 5000), 1000);
  });

  test('the adaptive part is capped at maxDelayMs, but never below delayMs or Crawl-delay', () => {
    assert.equal(hostGapMs(settings, 60_000), 60_000);
    assert.equal(hostGapMs({ ...settings, maxDelayMs: 2000 }, 10_000), 2000);
    assert.equal(hostGapMs({ ...settings, maxDelayMs: 500 }, 10_000), 1000, 'delayMs still applies');
    assert.equal(
      hostGapMs({ ...settings, maxDelayMs: 500 }, 10_000, 4000),
      4000,
      'Crawl-delay still applies',
    );
  });

  test('Crawl-delay counts up to maxCrawlDelayMs', () => {
    assert.equal(hostGapMs(settings, 10, 2500), 2500);
    assert.equal(hostGapMs(settings, 10, 500), 1000, 'a smaller Crawl-delay does not lower delayMs');
    assert.equal(hostGapMs(settings, 10, 3_600_000), 30_000);
    assert.equal(hostGapMs(settings, 10, undefined), 1000);
  });

  test('fractions round up and a negative response time counts as zero', () => {
    assert.equal(hostGapMs({ ...settings, delayMs: 0 }, 0.3), 2);
    assert.equal(hostGapMs({ ...settings, delayMs: 0 }, 10, 150.2), 151);
    assert.equal(hostGapMs({ ...settings, delayMs: 0 }, -50), 0);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');

  test('delta-seconds', () => {
    assert.equal(retryAfterMs('120', now, 600_000), 120_000);
    assert.equal(retryAfterMs(' 3 ', now, 600_000), 3000);
    assert.equal(retryAfterMs('0', now, 600_000), 0);
  });

  test('an HTTP-date (IMF-fixdate or RFC 850) counts from now', () => {
    assert.equal(retryAfterMs('Sun, 01 Mar 2026 12:00:30 GMT', now, 600_000), 30_000);
    assert.equal(retryAfterMs('Sunday, 01-Mar-26 12:01:00 GMT', now, 600_000), 60_000);
  });

  test('a date in the past means now', () => {
    assert.equal(retryAfterMs('Sun, 01 Mar 2026 11:00:00 GMT', now, 600_000), 0);
  });

  test('capped at maxRetryAfterMs, in both forms', () => {
    assert.equal(retryAfterMs('86400', now, 600_000), 600_000);
    assert.equal(retryAfterMs('Mon, 02 Mar 2026 12:00:00 GMT', now, 600_000), 600_000);
    assert.equal(retryAfterMs('5', now, 1000), 1000);
  });

  test('absent or unparseable: undefined, so the caller backs off instead', () => {
    assert.equal(retryAfterMs(undefined, now, 600_000), undefined);
    for (const value of ['', 'soon', '12 apples', '1.5', '-5', '0x10', '1e3']) {
      assert.equal(retryAfterMs(value, now, 600_000), undefined, JSON.stringify(value));
    }
  });
});

describe('retryBackoffMs', () => {
  test('doubles with each attempt around retryBaseDelayMs', () => {
    const middle = () => 0.5;
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => retryBackoffMs(settings, n, middle)),
      [2000, 4000, 8000, 16_000],
    );
    assert.equal(retryBackoffMs(settings, 0, middle), 2000, 'attempt 0 is treated as the first');
  });

  test('jitter stays within +-25%', () => {
    assert.equal(
      retryBackoffMs(settings, 1, () => 0),
      1500,
    );
    assert.equal(
      retryBackoffMs(settings, 1, () => 0.999_999),
      2500,
    );
    assert.equal(
      retryBackoffMs(settings, 3, () => 0),
      6000,
    );
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let attempt = 1; attempt <= 6; attempt++) {
      const base = 2000 * 2 ** (attempt - 1);
      for (let i = 0; i < 200; i++) {
        const wait = retryBackoffMs(settings, attempt, random);
        assert.ok(wait >= base * 0.75 && wait <= base * 1.25, `attempt ${attempt}: ${wait}`);
        assert.ok(Number.isInteger(wait));
      }
    }
  });

  test('a zero base means no wait', () => {
    assert.equal(
      retryBackoffMs({ ...settings, retryBaseDelayMs: 0 }, 5, () => 0.9),
      0,
    );
  });
});

describe('applyRequestFeedback (the one rule both runtimes apply after a request)', () => {
  test('the next request waits the gap after this one; the response time is remembered', () => {
    const host: PoliteHost = {};
    assert.deepEqual(applyRequestFeedback(settings, host, { responseMs: 400 }, 10_000), {
      gapEnds: 12_000,
      nextAllowedAt: 12_000,
    });
    assert.deepEqual(host, { lastResponseMs: 400 });
  });

  test('a Crawl-delay is remembered and applies to later requests whose feedback has none', () => {
    const host: PoliteHost = {};
    applyRequestFeedback(settings, host, { responseMs: 10, crawlDelayMs: 5000 }, 0);
    assert.equal(host.crawlDelayMs, 5000);
    const later = applyRequestFeedback(settings, host, { responseMs: 10 }, 100_000);
    assert.equal(later.gapEnds, 105_000, 'the remembered Crawl-delay, not delayMs');
  });

  test('blockedUntil (Retry-After, backoff) holds the host past its gap, never shortens it', () => {
    const host: PoliteHost = {};
    const blocked = applyRequestFeedback(settings, host, { responseMs: 10, blockedUntil: 70_000 }, 0);
    assert.deepEqual(blocked, { gapEnds: 1000, nextAllowedAt: 70_000 });
    const early = applyRequestFeedback(settings, host, { responseMs: 10, blockedUntil: 500 }, 0);
    assert.equal(early.nextAllowedAt, 1000);
  });
});
