import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCrawlConfig } from '../../functions/core/config.ts';

describe('parseCrawlConfig', () => {
  it('fills defaults', () => {
    const result = parseCrawlConfig({ seeds: ['https://example.org/'] });
    assert.ok(result.ok);
    assert.equal(result.config.scope, 'domain');
    assert.equal(result.config.maxBodyBytes, 10 * 1024 * 1024);
  });

  it('names each problem', () => {
    const result = parseCrawlConfig({
      seeds: ['ftp://x/', 'nope'],
      maxPages: -3,
      colour: 'red',
      include: ['('],
    });
    assert.ok(!result.ok);
    // Every problem in one answer: the schema's, then the seeds', then the patterns'.
    assert.deepEqual(
      result.problems.map((p) => p.split(':')[0]),
      ['maxPages', '(config)', 'seeds[0]', 'seeds[1]', 'include[0]'],
    );
    const second = parseCrawlConfig({ seeds: ['ftp://x/', 'nope'], include: ['('] });
    assert.ok(!second.ok);
    assert.equal(second.problems.length, 3);
    assert.match(second.problems[0]!, /seeds\[0\]: .*only http and https/);
    assert.match(second.problems[1]!, /seeds\[1\]: "nope" is not an absolute URL/);
    assert.match(second.problems[2]!, /include\[0\]: not a valid regular expression/);
  });
});

describe('credentials in seed URLs', () => {
  it('are refused, the message naming the seed without its password', () => {
    for (const [seed, shown] of [
      ['http://user:hunter2@example.org/', 'http://***:***@example.org/'],
      ['https://token@example.org/a', 'https://***@example.org/a'],
      ['https://:hunter2@example.org/', 'https://:***@example.org/'],
    ] as const) {
      const result = parseCrawlConfig({ seeds: ['https://ok.example/', seed] });
      assert.ok(!result.ok, seed);
      assert.equal(result.problems.length, 1);
      assert.equal(
        result.problems[0],
        `seeds[1]: "${shown}" holds a user name or password: credentials in seed URLs are refused (they would be stored in every record of the crawl); give the URL without them`,
      );
      assert.doesNotMatch(result.problems[0]!, /hunter2|token@/);
    }
    // An @ in the path or query is not a credential.
    assert.ok(parseCrawlConfig({ seeds: ['https://example.org/@user?mail=a@b.test'] }).ok);
  });
});
