/**
 * The checkable statements of RFC 9309 about parsing, matching and fetch outcomes
 * (test/fixtures/suites/robots/rfc9309-notes.md), and the BOM and line-counting tables of Google's
 * suite, which go through `stats`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RobotsEntry } from '../../../functions/core/ports.ts';
import { decodeRobotsBody, limitRobotsBody } from '../../../functions/core/robots/body.ts';
import { parseRobots } from '../../../functions/core/robots/parse.ts';
import {
  MAX_ROBOTS_TTL_MS,
  RobotsUrlError,
  robotsEntryFromResponse,
  robotsUrlFor,
  rulesFromEntry,
} from '../../../functions/core/robots/policy.ts';

const utf8 = new TextEncoder();

describe('R-2.2.2-a: /robots.txt is always allowed', () => {
  const robots = parseRobots('User-agent: *\nDisallow: /\n', 'FooBot');
  it('allows /robots.txt under Disallow: /', () => {
    assert.equal(robots.isAllowed('https://www.example.com/robots.txt'), true);
    assert.equal(robots.isAllowed('/robots.txt'), true);
    assert.equal(robots.isAllowed('/robots.txt?x=1'), true);
  });
  it('allows nothing else', () => {
    assert.equal(robots.isAllowed('https://www.example.com/'), false);
    assert.equal(robots.isAllowed('/robots.txt.bak'), false);
    assert.equal(robots.isAllowed('/robots.txt/x'), false);
  });
});

describe('R-2.2.2-b: no matching rule, or no rules, allows', () => {
  it('allows a URL no rule matches', () => {
    const robots = parseRobots('User-agent: FooBot\nDisallow: /private\n', 'FooBot');
    assert.equal(robots.isAllowed('/public'), true);
    assert.equal(robots.decidingRule('/public'), undefined);
    assert.deepEqual(robots.decidingRule('/private/x'), { allow: false, pattern: '/private', line: 2 });
  });
  it('allows everything for a group with no rules, and for an empty Disallow', () => {
    assert.equal(
      parseRobots('User-agent: *\nDisallow: /\nUser-agent: FooBot\n', 'FooBot').isAllowed('/x'),
      true,
    );
    assert.equal(parseRobots('User-agent: FooBot\nDisallow:\n', 'FooBot').isAllowed('/x'), true);
    assert.equal(parseRobots('User-agent: FooBot\nDisallow:\n', 'FooBot').group, 'agent');
  });
  it('allows everything for an empty file and for a file with no groups', () => {
    assert.equal(parseRobots('', 'FooBot').isAllowed('/x'), true);
    const noGroup = parseRobots('Disallow: /\n', 'FooBot');
    assert.equal(noGroup.isAllowed('/x'), true, 'rules before any User-agent are ignored');
    assert.equal(noGroup.group, 'none');
  });
});

describe('R-2.2.1: groups naming the agent are merged; matching is case-insensitive', () => {
  const body = [
    'User-agent: FooBot',
    'Disallow: /a',
    '',
    'User-agent: *',
    'Disallow: /',
    '',
    'User-agent: foobot',
    'Disallow: /b',
    '',
    'User-agent: BarBot/2.1',
    'User-agent: BazBot extra words',
    'Disallow: /c',
  ].join('\n');

  it('applies the rules of every group naming the agent, in any case', () => {
    for (const agent of ['FooBot', 'FOOBOT', 'foobot']) {
      const robots = parseRobots(body, agent);
      assert.equal(robots.group, 'agent');
      assert.equal(robots.isAllowed('/a'), false);
      assert.equal(robots.isAllowed('/b'), false);
      assert.equal(robots.isAllowed('/c'), true, 'the * group does not apply');
    }
  });
  it('compares a User-agent value up to its first character outside a-z A-Z _ -', () => {
    assert.equal(parseRobots(body, 'BarBot').isAllowed('/c'), false);
    assert.equal(parseRobots(body, 'BazBot').isAllowed('/c'), false);
    assert.equal(parseRobots(body, 'BarBot').isAllowed('/x'), true);
  });
  it('uses * only when no group names the agent', () => {
    const robots = parseRobots(body, 'QuxBot');
    assert.equal(robots.group, 'star');
    assert.equal(robots.isAllowed('/x'), false);
  });
  it('applies no rules when neither the agent nor * has a group', () => {
    const robots = parseRobots('User-agent: FooBot\nDisallow: /\n', 'QuxBot');
    assert.equal(robots.group, 'none');
    assert.equal(robots.isAllowed('/x'), true);
  });
  it('never matches a token that is not a valid product token', () => {
    assert.equal(parseRobots('User-agent: Foo Bar\nDisallow: /\n', 'Foo Bar').isAllowed('/x'), true);
    assert.equal(parseRobots('User-agent:\nDisallow: /\n', '').isAllowed('/x'), true);
  });
});

describe('R-2.2.4 and R-2.3.1.5: other records do not end a group; bad lines are skipped', () => {
  it('keeps a group open across Sitemap, Crawl-delay and unknown lines', () => {
    const body =
      'User-agent: FooBot\nSitemap: https://a/s.xml\nCrawl-delay: 3\nFoo: bar\nUser-agent: BarBot\nDisallow: /\n';
    assert.equal(parseRobots(body, 'FooBot').isAllowed('/x'), false);
    assert.equal(parseRobots(body, 'BarBot').isAllowed('/x'), false);
    assert.equal(parseRobots(body, 'FooBot').crawlDelayMs, 3000);
  });
  it('uses the lines it can parse around ones it cannot', () => {
    const body =
      'User-agent: FooBot\n:::\nthis line is junk\nDisallow /a\nDisalow: /b\n\u0000\nDisallow: /c\n';
    const robots = parseRobots(body, 'FooBot');
    for (const path of ['/a', '/b', '/c']) assert.equal(robots.isAllowed(path), false, path);
    assert.equal(robots.isAllowed('/d'), true);
  });
});

describe('R-5.1: the example of RFC 9309 §5.1', () => {
  const body = [
    'User-Agent: *',
    'Disallow: *.gif$',
    'Disallow: /example/',
    'Allow: /publications/',
    '',
    'User-Agent: foobot',
    'Disallow:/',
    'Allow:/example/page.html',
    'Allow:/example/allowed.gif',
    '',
    'User-Agent: barbot',
    'User-Agent: bazbot',
    'Disallow: /example/page.html',
    '',
    'User-Agent: quxbot',
    '',
  ].join('\n');

  it('foobot may fetch only /example/page.html and /example/allowed.gif', () => {
    const robots = parseRobots(body, 'foobot');
    assert.equal(robots.isAllowed('https://example.com/example/page.html'), true);
    assert.equal(robots.isAllowed('https://example.com/example/page.html?x'), true);
    assert.equal(robots.isAllowed('https://example.com/example/allowed.gif'), true);
    assert.equal(robots.isAllowed('https://example.com/example/other.html'), false);
    assert.equal(robots.isAllowed('https://example.com/publications/'), false);
    assert.equal(robots.isAllowed('https://example.com/'), false);
  });
  for (const agent of ['barbot', 'bazbot']) {
    it(`${agent} may fetch everything but /example/page.html`, () => {
      const robots = parseRobots(body, agent);
      assert.equal(robots.isAllowed('https://example.com/example/page.html'), false);
      assert.equal(robots.isAllowed('https://example.com/example/page.html5'), false);
      assert.equal(robots.isAllowed('https://example.com/example/other.html'), true);
      assert.equal(robots.isAllowed('https://example.com/image.gif'), true);
    });
  }
  it('quxbot (an empty final group) may fetch everything', () => {
    const robots = parseRobots(body, 'quxbot');
    assert.equal(robots.group, 'agent');
    assert.equal(robots.isAllowed('https://example.com/example/page.html'), true);
    assert.equal(robots.isAllowed('https://example.com/a.gif'), true);
  });
  it('any other agent gets the * group', () => {
    const robots = parseRobots(body, 'otherbot');
    assert.equal(robots.isAllowed('https://example.com/publications/x'), true);
    assert.equal(robots.isAllowed('https://example.com/example/x'), false);
    assert.equal(robots.isAllowed('https://example.com/a/b.gif'), false);
    assert.equal(
      robots.isAllowed('https://example.com/a/b.gif?x'),
      true,
      '$ anchors at the end of path and query',
    );
    assert.equal(robots.isAllowed('https://example.com/other'), true);
  });
});

describe('R-5.2: the longest match decides; Allow wins a tie', () => {
  it('lets the longer Disallow govern', () => {
    const robots = parseRobots(
      'User-agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n',
      'foobot',
    );
    assert.equal(robots.isAllowed('/example/page/disallowed.gif'), false);
    assert.equal(robots.isAllowed('/example/page/disallow.gif'), true);
    assert.equal(robots.decidingRule('/example/page/disallowed.gif')?.line, 3);
  });
  it('counts * and $ in the length, and lets Allow win a tie', () => {
    const robots = parseRobots('User-agent: a\nDisallow: /*.html\nAllow: /page.h\n', 'a');
    assert.equal(robots.isAllowed('/page.html'), true, 'equal length 7: allow');
    assert.equal(robots.isAllowed('/x.html'), false);
  });
});

describe('R-2.5-b: at least 500 KiB are parsed, content past the limit is ignored', () => {
  // 600 KB: a rule ends just inside byte 512,000, another starts past 524,288.
  const head = 'User-agent: *\n';
  const inside = 'Disallow: /inside\n';
  const filler = (bytes: number) => `#${'x'.repeat(bytes - 2)}\n`;
  const beforeInside = 512_000 - head.length - inside.length;
  const body = `${head}${filler(beforeInside)}${inside}${filler(30_000)}Disallow: /outside\n${filler(60_000)}`;

  it('builds the file as described', () => {
    assert.equal(utf8.encode(body.slice(0, body.indexOf(inside) + inside.length)).length, 512_000);
    assert.ok(body.indexOf('/outside') > 524_288);
    assert.ok(body.length > 600_000);
  });
  it('honours a rule entirely within the first 512,000 bytes and ignores one past the limit', () => {
    const robots = parseRobots(body, 'FooBot');
    assert.equal(robots.isAllowed('/inside'), false);
    assert.equal(robots.isAllowed('/outside'), true);
    assert.equal(robots.stats.truncated, true);
  });
  it('raises a limit below 512,000 to 512,000, and honours a larger one', () => {
    assert.equal(parseRobots(body, 'FooBot', { maxBytes: 1000 }).isAllowed('/inside'), false);
    assert.equal(parseRobots(body, 'FooBot', { maxBytes: 700_000 }).isAllowed('/outside'), false);
  });
  it('counts UTF-8 bytes, not characters', () => {
    // 300,000 two-byte characters are 600,000 bytes: the rule after them is past the limit.
    const wide = `User-agent: *\n#${'é'.repeat(300_000)}\nDisallow: /late\n`;
    assert.equal(parseRobots(wide, 'FooBot').isAllowed('/late'), true);
    assert.equal(parseRobots(wide, 'FooBot', { maxBytes: 700_000 }).isAllowed('/late'), false);
  });
  it('drops a line the limit cuts in two rather than honour half a rule', () => {
    const cutLine = 'Allow: /abcdef\n';
    const lead = `User-agent: *\nDisallow: /\n${filler(524_288 - 27 - 5)}`;
    const text = `${lead}${cutLine}`;
    assert.ok(utf8.encode(lead).length < 524_288 && utf8.encode(text).length > 524_288);
    const robots = parseRobots(text, 'FooBot');
    assert.equal(robots.isAllowed('/a'), false, 'no half rule "Allow: /a"');
    assert.equal(robots.isAllowed('/abcdef'), false, 'and not the whole rule either');
    assert.equal(limitRobotsBody(text).text, lead);
  });
});

describe('UTF-8 BOM table (ID_UTF8ByteOrderMarkIsSkipped)', () => {
  const rest = utf8.encode('User-Agent: foo\nAllow: /AnyValue\n');
  const cases: [string, number[], number, number][] = [
    ['full BOM', [0xef, 0xbb, 0xbf], 2, 0],
    ['partial BOM EF BB', [0xef, 0xbb], 2, 0],
    ['partial BOM EF', [0xef], 2, 0],
    ['broken BOM EF 11 BF', [0xef, 0x11, 0xbf], 1, 1],
  ];
  for (const [name, prefix, valid, unknown] of cases) {
    const bytes = new Uint8Array([...prefix, ...rest]);
    it(`${name}: ${valid} valid, ${unknown} unknown (decodeRobotsBody)`, () => {
      const { stats } = parseRobots(decodeRobotsBody(bytes), 'foo');
      assert.deepEqual([stats.validDirectives, stats.unknownDirectives], [valid, unknown]);
    });
    it(`${name}: ${valid} valid, ${unknown} unknown (a plain TextDecoder)`, () => {
      const { stats } = parseRobots(new TextDecoder().decode(bytes), 'foo');
      assert.deepEqual([stats.validDirectives, stats.unknownDirectives], [valid, unknown]);
      const { stats: kept } = parseRobots(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes), 'foo');
      assert.deepEqual([kept.validDirectives, kept.unknownDirectives], [valid, unknown]);
    });
  }
  it('BOM after the first line: 1 valid, 1 unknown', () => {
    const bytes = new Uint8Array([
      ...utf8.encode('User-Agent: foo\n'),
      0xef,
      0xbb,
      0xbf,
      ...utf8.encode('Allow: /AnyValue\n'),
    ]);
    for (const text of [decodeRobotsBody(bytes), new TextDecoder().decode(bytes)]) {
      const { stats } = parseRobots(text, 'foo');
      assert.deepEqual([stats.validDirectives, stats.unknownDirectives], [1, 1]);
    }
  });
  it('skips the BOM so the first line still names the group', () => {
    const robots = parseRobots('\uFEFFUser-agent: foo\nDisallow: /\n', 'foo');
    assert.equal(robots.isAllowed('/x'), false);
  });
});

describe('line counting table (ID_LinesNumbersAreCountedCorrectly)', () => {
  const lines = ['User-Agent: foo', 'Allow: /some/path', 'User-Agent: bar', '', '', 'Disallow: /'];
  const mixed = ['\n', '\r\n', '\n', '\r\n', '\n'];
  const cases: [string, string, number][] = [
    ['LF', `${lines.join('\n')}\n`, 6],
    ['CRLF', `${lines.join('\r\n')}\r\n`, 6],
    ['CR', `${lines.join('\r')}\r`, 6],
    ['LF, no final newline', lines.join('\n'), 6],
    [
      'mixed, no final newline',
      lines.reduce((acc, line, i) => acc + (i > 0 ? mixed[i - 1] : '') + line, ''),
      6,
    ],
  ];
  for (const [name, body, lineCount] of cases) {
    it(`${name}: 4 directives, the last on line 6`, () => {
      const { stats } = parseRobots(body, 'foo');
      assert.equal(stats.validDirectives, 4);
      assert.equal(stats.lastDirectiveLine, 6);
      assert.equal(stats.lines, lineCount);
    });
  }
  it('counts CR LF as one line end but LF CR as two', () => {
    assert.equal(parseRobots('a: b\r\nc: d', 'x').stats.lastDirectiveLine, 2);
    assert.equal(parseRobots('a: b\n\rc: d', 'x').stats.lastDirectiveLine, 3);
  });
});

describe('Sitemap (ID_NonStandardLineExample_Sitemap)', () => {
  const sitemap = 'Sitemap: http://foo.bar/sitemap.xml';
  const groups = 'User-agent: FooBot\nAllow: /some/path\nUser-agent: BarBot\n\n\nDisallow: /\n';
  it('is reported after the groups', () => {
    assert.deepEqual(parseRobots(`${groups}${sitemap}\n`, 'FooBot').sitemaps, ['http://foo.bar/sitemap.xml']);
  });
  it('is reported before the groups', () => {
    assert.deepEqual(parseRobots(`${sitemap}\n${groups}`, 'FooBot').sitemaps, ['http://foo.bar/sitemap.xml']);
  });
  it('collects every Sitemap line once, whatever group it stands in', () => {
    const body =
      'Sitemap: https://a/1.xml\nUser-agent: other\nSitemap: https://a/2.xml\nsite-map: https://a/1.xml\n';
    assert.deepEqual(parseRobots(body, 'FooBot').sitemaps, ['https://a/1.xml', 'https://a/2.xml']);
  });
});

describe('Crawl-delay', () => {
  const body = [
    'User-agent: *',
    'Crawl-delay: 10',
    '',
    'User-agent: FastBot',
    'Crawl-delay: 0.5',
    'Disallow: /x',
    '',
    'User-agent: NoDelayBot',
    'Disallow: /y',
    '',
    'User-agent: BadBot',
    'Crawl-delay: -1',
    'Crawl-delay: soon',
    'Crawl-delay: 10s',
    'Crawl-delay:',
    'Crawl-delay: 1e3',
    'Disallow: /z',
    '',
    'User-agent: TwiceBot',
    'Crawl-delay: 2.25',
    'Crawl-delay: 1',
  ].join('\n');
  it('reads whole seconds', () => assert.equal(parseRobots(body, 'OtherBot').crawlDelayMs, 10_000));
  it('reads fractional seconds', () => assert.equal(parseRobots(body, 'FastBot').crawlDelayMs, 500));
  it('belongs to its group: a group without one has none, even if * has one', () => {
    assert.equal(parseRobots(body, 'NoDelayBot').crawlDelayMs, undefined);
  });
  it('ignores values that are not a non-negative decimal number', () => {
    assert.equal(parseRobots(body, 'BadBot').crawlDelayMs, undefined);
  });
  it('takes the largest of several', () => assert.equal(parseRobots(body, 'TwiceBot').crawlDelayMs, 2250));
  it('holds for the agents named above it, not for those named after it in the same group', () => {
    // * and FastBot share one group for the rules (no rule ends the * part), yet each has its delay.
    assert.equal(parseRobots(body, 'OtherBot').isAllowed('/x'), false);
    assert.equal(parseRobots(body, 'OtherBot').crawlDelayMs, 10_000);
    assert.equal(parseRobots(body, 'FastBot').crawlDelayMs, 500);
    const reversed = 'User-agent: FastBot\nCrawl-delay: 0.5\n\nUser-agent: *\nCrawl-delay: 10\n';
    assert.equal(parseRobots(reversed, 'FastBot').crawlDelayMs, 10_000, 'still in its group: the larger');
    assert.equal(parseRobots(reversed, 'OtherBot').crawlDelayMs, 10_000);
  });
  it('is absent from a file without one', () => {
    assert.equal(parseRobots('User-agent: *\nDisallow: /\n', 'a').crawlDelayMs, undefined);
  });
  it('accepts a few spellings of the key', () => {
    assert.equal(parseRobots('User-agent: *\ncrawldelay: 4\n', 'a').crawlDelayMs, 4000);
    assert.equal(parseRobots('User-agent: *\nCRAWL-DELAY 0\n', 'a').crawlDelayMs, 0);
  });
});

describe('fetch outcome policy (R-2.3.1, R-2.4)', () => {
  const now = 1_700_000_000_000;
  const ttl = { robotsTtlMs: 86_400_000, robotsErrorTtlMs: 300_000 };
  const day = now + 86_400_000;
  const retry = now + 300_000;
  const table: [string, Parameters<typeof robotsEntryFromResponse>[0], RobotsEntry['status'], number][] = [
    ['200', { status: 200, body: 'User-agent: *\nDisallow: /p\n' }, 'rules', day],
    ['404', { status: 404, body: 'not found' }, 'allow-all', day],
    ['403', { status: 403, body: '' }, 'allow-all', day],
    ['410', { status: 410, body: '' }, 'allow-all', day],
    ['429', { status: 429, body: '' }, 'disallow-all', retry],
    ['500', { status: 500, body: '' }, 'disallow-all', retry],
    ['503', { status: 503, body: '' }, 'disallow-all', retry],
    ['timeout', { error: 'timeout-headers' }, 'disallow-all', retry],
    ['connect error', { error: 'connect' }, 'disallow-all', retry],
    ['DNS failure', { error: 'dns' }, 'disallow-all', retry],
    ['too many redirects', { error: 'too-many-redirects' }, 'allow-all', day],
    ['a redirect left unfollowed', { status: 301, body: '' }, 'allow-all', day],
    [
      'body cut by the total timeout',
      { status: 200, body: 'User-agent: *\n', truncated: 'time' },
      'disallow-all',
      retry,
    ],
  ];
  for (const [name, outcome, status, expiresAt] of table) {
    it(`${name} -> ${status}, expires after ${(expiresAt - now) / 1000} s`, () => {
      const entry = robotsEntryFromResponse(outcome, now, ttl);
      assert.equal(entry.status, status);
      assert.equal(entry.fetchedAt, now);
      assert.equal(entry.expiresAt, expiresAt);
      assert.equal(entry.body !== undefined, status === 'rules');
      assert.equal(entry.detail, 'error' in outcome ? outcome.error : entry.detail);
    });
  }

  it('applies each entry as its status says', () => {
    const url = 'https://example.com/p/q';
    const rules = robotsEntryFromResponse({ status: 200, body: 'User-agent: *\nDisallow: /p\n' }, now, ttl);
    assert.equal(rulesFromEntry(rules, 'FooBot').isAllowed(url), false);
    assert.equal(rulesFromEntry(rules, 'FooBot').isAllowed('https://example.com/x'), true);
    const allowAll = robotsEntryFromResponse({ status: 404, body: '' }, now, ttl);
    assert.equal(rulesFromEntry(allowAll, 'FooBot').isAllowed(url), true);
    const disallowAll = robotsEntryFromResponse({ status: 503, body: '' }, now, ttl);
    assert.equal(rulesFromEntry(disallowAll, 'FooBot').isAllowed(url), false);
    assert.equal(rulesFromEntry(disallowAll, 'FooBot').isAllowed('https://example.com/robots.txt'), true);
  });

  it('parses an entry once per agent', () => {
    const entry = robotsEntryFromResponse({ status: 200, body: 'User-agent: a\nDisallow: /\n' }, now, ttl);
    const first = rulesFromEntry(entry, 'a');
    assert.equal(rulesFromEntry(entry, 'a'), first);
    const other = rulesFromEntry(entry, 'b');
    assert.notEqual(other, first);
    assert.equal(other.isAllowed('/x'), true);
  });

  it('never keeps an entry more than 24 hours', () => {
    const long = { robotsTtlMs: 7 * 86_400_000, robotsErrorTtlMs: 3 * 86_400_000 };
    assert.equal(
      robotsEntryFromResponse({ status: 200, body: '' }, now, long).expiresAt,
      now + MAX_ROBOTS_TTL_MS,
    );
    assert.equal(
      robotsEntryFromResponse({ status: 500, body: '' }, now, long).expiresAt,
      now + MAX_ROBOTS_TTL_MS,
    );
  });

  it('drops the cut-off last line of a body the fetcher truncated at its byte cap', () => {
    const entry = robotsEntryFromResponse(
      { status: 200, body: 'User-agent: *\nDisallow: /\nAllow: /pri', truncated: 'length' },
      now,
      ttl,
    );
    assert.equal(entry.body, 'User-agent: *\nDisallow: /\n');
    assert.equal(rulesFromEntry(entry, 'FooBot').isAllowed('/private'), false);
  });
});

describe('R-2.3-a: robotsUrlFor', () => {
  it('keeps the port', () => {
    assert.equal(
      robotsUrlFor('https://www.example.com:8443/a/b?c'),
      'https://www.example.com:8443/robots.txt',
    );
  });
  it('drops the default port, user info, query and fragment', () => {
    assert.equal(robotsUrlFor('https://user:pw@Example.COM:443/a?b#c'), 'https://example.com/robots.txt');
    assert.equal(robotsUrlFor('http://127.0.0.1:8080'), 'http://127.0.0.1:8080/robots.txt');
    assert.equal(robotsUrlFor('http://[::1]:81/x'), 'http://[::1]:81/robots.txt');
  });
  it('rejects what has no authority', () => {
    assert.throws(() => robotsUrlFor('/just/a/path'), RobotsUrlError);
    assert.throws(
      () => robotsUrlFor('mailto:someone@example.com'),
      (e: unknown) => {
        return e instanceof RobotsUrlError && e.code === 'INVALID_URL';
      },
    );
  });
});
