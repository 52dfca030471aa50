import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { DEFAULT_STRIP_PARAMS } from '../../../functions/core/config.ts';
import { type CanonicalResult, UrlCanonicalizer } from '../../../functions/core/url/canonicalize.ts';

// urlcanon's test data (iipc/urlcanon testdata/, Apache-2.0), copied byte for byte; see the README there.
const SUITE = new URL('../../fixtures/suites/urlcanon', import.meta.url).pathname;

/** urlcanon's files are byte strings: read as Latin-1, so each character is one byte. */
function loadSuite<T>(name: string): T {
  return JSON.parse(readFileSync(`${SUITE}/${name}`).toString('latin1')) as T;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Our input is text: the case's bytes read as UTF-8 (a stray byte becomes U+FFFD). */
function asText(bytes: string): string {
  return utf8.decode(Buffer.from(bytes, 'latin1'));
}

/** Why we differ from urlcanon's semantic_precise on purpose (also in docs/canonicalization.md). */
const REASONS = {
  'not-a-host':
    'the host is not a valid WHATWG host (space, "%", control byte, "#", bad octal "09"): nothing can resolve it, so the URL is invalid',
  'dots-only-host':
    'a host of dots only becomes 0.0.0.0 ("this machine") in urlcanon; it names no host, so the URL is invalid',
  'repeated-decoding':
    'urlcanon decodes escapes until stable, but "%2561" names the literal text "%61" on a server: we decode once',
  'reserved-stays-encoded':
    'only unreserved characters are decoded (RFC 3986 6.2.2.2): "%3A" and ":" may differ on a server, and < > " stay escaped',
  'not-utf8-input': 'the input bytes are not UTF-8; our input is text, where a stray byte is U+FFFD',
} as const;

type Deviation = keyof typeof REASONS;

/** Every http(s) case where we knowingly differ, keyed by the case's input (Latin-1 byte string). */
const DEVIATIONS = new Map<string, Deviation>([
  ['%20leadingspace.com/', 'not-a-host'],
  ['http:%/', 'not-a-host'],
  ['http:/%/', 'not-a-host'],
  ['http:// leadingspace.com/', 'not-a-host'],
  ['http://%/', 'not-a-host'],
  ['http://%20leadingspace.com/', 'not-a-host'],
  ['http://09/', 'not-a-host'],
  ['http://\u0001\u0080.com/', 'not-a-host'],
  [
    'http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B',
    'not-a-host',
  ],
  ['http:%2e%2e%2e/a/b', 'dots-only-host'],
  ['http:%2e%2e/a/b', 'dots-only-host'],
  ['http:%2e/a/b', 'dots-only-host'],
  ['http:/%2e%2e%2e/a/b', 'dots-only-host'],
  ['http:/%2e%2e/a/b', 'dots-only-host'],
  ['http:/%2e/a/b', 'dots-only-host'],
  ['http://%2e%2e%2e/a/b', 'dots-only-host'],
  ['http://%2e%2e/a/b', 'dots-only-host'],
  ['http://%2e/a/b', 'dots-only-host'],
  ['http:///%2e%2e%2e/a/b', 'dots-only-host'],
  ['http:///%2e%2e/a/b', 'dots-only-host'],
  ['http:///%2e/a/b', 'dots-only-host'],
  ['http://host/%%%25%32%35asd%%', 'repeated-decoding'],
  ['http://host/%%300', 'repeated-decoding'],
  ['http://host/%%36%31', 'repeated-decoding'],
  ['http://host/%25%2536%2531', 'repeated-decoding'],
  ['http://host/%25%25361', 'repeated-decoding'],
  ['http://host/%25%32%35', 'repeated-decoding'],
  ['http://host/%25%32%35%25%32%35', 'repeated-decoding'],
  ['http://host/%2525252525252525', 'repeated-decoding'],
  ['http://host/%2561', 'repeated-decoding'],
  ['http://host/asdf%25%32%35asd', 'repeated-decoding'],
  ['http://host/?%%300', 'repeated-decoding'],
  ['http://host/?%%36%31', 'repeated-decoding'],
  ['http://host/?%25%2536%2531', 'repeated-decoding'],
  ['http://host/?%25%25361', 'repeated-decoding'],
  ['http://host/?%2561', 'repeated-decoding'],
  ['http://example.com/%3A%3a%3C%3c', 'reserved-stays-encoded'],
  ['http://example.com/%7Ffp3%3Eju%3Dduvgw%3Dd', 'reserved-stays-encoded'],
  ['http://example.com/(%28:%3A%29)', 'reserved-stays-encoded'],
  ['http://example.com/@asdf%40', 'reserved-stays-encoded'],
  ['http://facebook.com/?foo=%7B%22abc%22', 'reserved-stays-encoded'],
  ['http://example.com/foo\u0009\u0091%91', 'not-utf8-input'],
  ['http://www.google.com/foo?bar=baz# \u00bb', 'not-utf8-input'],
]);

/** Conformance mode: as urlcanon's semantic_precise (fragment kept, nothing stripped, query sorted). */
const conformance = new UrlCanonicalizer({ keepFragment: true, stripParams: [], sortQuery: true });
/** The crawl's defaults, for the property tests. */
const crawl = new UrlCanonicalizer({ stripParams: DEFAULT_STRIP_PARAMS, sortQuery: true });

function shown(result: CanonicalResult): string {
  return result.ok ? result.url : `<${result.reason}: ${result.message}>`;
}

function outcome(result: CanonicalResult): string {
  return result.ok ? `${result.url} ${result.host} ${result.origin}` : `<${result.reason}>`;
}

const semanticPrecise = Object.entries(loadSuite<Record<string, string>>('semantic_precise.json'));
const httpCases = semanticPrecise.filter(([, expected]) => /^https?:\/\//.test(expected));
const otherCases = semanticPrecise.filter(([, expected]) => !/^https?:\/\//.test(expected));

describe('urlcanon semantic_precise conformance', () => {
  it('has the case counts the README gives', () => {
    assert.equal(semanticPrecise.length, 280);
    assert.equal(httpCases.length, 162);
  });

  it('equals the expected output for every http(s) case not on the deviation list', () => {
    const failures: string[] = [];
    let passed = 0;
    for (const [input, expected] of httpCases) {
      if (DEVIATIONS.has(input)) continue;
      const got = shown(conformance.canonicalize(asText(input)));
      if (got === expected) passed++;
      else failures.push(`${JSON.stringify(input)}\n    got      ${got}\n    expected ${expected}`);
    }
    assert.deepEqual(failures, []);
    assert.equal(passed, httpCases.length - DEVIATIONS.size);
  });

  it('still differs on every listed deviation (so the list stays honest)', () => {
    const agreeing: string[] = [];
    for (const [input, category] of DEVIATIONS) {
      const expected = httpCases.find(([key]) => key === input)?.[1];
      assert.ok(
        expected !== undefined,
        `deviation ${JSON.stringify(input)} is not an http(s) case of the suite`,
      );
      assert.ok(category in REASONS);
      const result = conformance.canonicalize(asText(input));
      if (result.ok && result.url === expected) agreeing.push(input);
    }
    assert.deepEqual(agreeing, [], 'these now agree with urlcanon: remove them from DEVIATIONS and the docs');
  });

  it('rejects every non-http(s) case as unsupported-scheme (a crawler fetches only http and https)', () => {
    const wrong: string[] = [];
    for (const [input] of otherCases) {
      const result = conformance.canonicalize(asText(input));
      if (result.ok || result.reason !== 'unsupported-scheme')
        wrong.push(`${JSON.stringify(input)} -> ${shown(result)}`);
    }
    assert.deepEqual(wrong, []);
  });
});

/** Inputs urlcanon accepts but WHATWG rejects (upstream notes.txt): they must not crash. */
const MUST_NOT_CRASH = [
  'http://%%300/',
  'http:%%300/',
  'http:%00%01',
  'http:%2561%2562%2563/',
  'http:/%%300/',
  'http:/%00%01',
  'http:/%2561%2562%2563',
  'http://\u0001\u0080.com/',
  'http:// leadingspace.com/',
  'http://%00%01',
  'http://%20leadingspace.com/',
  'http://%2561%2562%2563/',
  'http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B',
  'http://x:3000.cu',
];

/** canon(canon(x)) === canon(x) for every accepted input, with host and origin unchanged too. */
function assertIdempotent(canonicalizer: UrlCanonicalizer, inputs: Iterable<string>): number {
  let accepted = 0;
  const problems: string[] = [];
  for (const input of inputs) {
    const once = canonicalizer.canonicalize(input);
    if (!once.ok) continue;
    accepted++;
    const twice = canonicalizer.canonicalize(once.url);
    if (!twice.ok || twice.url !== once.url || twice.host !== once.host || twice.origin !== once.origin) {
      problems.push(`${JSON.stringify(input)}: ${once.url} -> ${shown(twice)}`);
    }
  }
  assert.deepEqual(problems, []);
  return accepted;
}

describe('idempotence (property)', () => {
  const idempotence = loadSuite<string[]>('idempotence.json');
  // each case both as UTF-8 text and byte-per-character: the file spells IDN hosts both ways
  const inputs = [
    ...idempotence.map(asText),
    ...idempotence,
    ...MUST_NOT_CRASH.map(asText),
    ...semanticPrecise.map(([input]) => asText(input)),
  ];

  it('never throws, and canonicalizing twice changes nothing (conformance options)', () => {
    const accepted = assertIdempotent(conformance, inputs);
    assert.ok(accepted > 150, `only ${accepted} inputs accepted`);
  });

  it('never throws, and canonicalizing twice changes nothing (crawl defaults)', () => {
    assertIdempotent(crawl, inputs);
  });

  it('keeps a literal empty query (an idempotence.json case)', () => {
    const result = crawl.canonicalize('http://bücher.ch:8080?#foo');
    assert.ok(result.ok);
    assert.equal(result.url, 'http://xn--bcher-kva.ch:8080/?');
    assert.equal(result.origin, 'http://xn--bcher-kva.ch:8080');
  });
});

describe('path_dots (special schemes)', () => {
  const special = loadSuite<{ special: Record<string, string> }>('path_dots.json').special;

  it('resolves every path as urlcanon does, once its slashes are collapsed', () => {
    const failures: string[] = [];
    for (const [path, resolved] of Object.entries(special)) {
      // urlcanon turns '\' into '/' and collapses '//' in later steps than the one this file tests
      const expected = `http://h${resolved
        .replaceAll('\\', '/')
        .replace(/\/{2,}/g, '/')
        .replace(/%2e/gi, '.')}`;
      const got = shown(conformance.canonicalize(`http://h${path}`));
      if (got !== expected) failures.push(`${JSON.stringify(path)}: ${got} (expected ${expected})`);
    }
    assert.deepEqual(failures, []);
    assert.equal(Object.keys(special).length, 376);
  });

  it('resolves relative references against a base exactly as a full WHATWG parse would', () => {
    // the canonicalizer resolves root- and path-relative links without re-parsing the base;
    // this compares that shortcut with new URL(ref, base) on every dot-path combination
    const bases = [
      'http://h.example/a/b/c',
      'https://h.example:8443/a/',
      'http://user:pw@h.example/a/b/?q=1#f',
      'http://h.example',
      'http://h.example/a/b/c;jsessionid=1?x',
    ];
    const refs = [
      ...Object.keys(special).flatMap((path) => [path, path.slice(1), `x${path}`]),
      '',
      '?q',
      '#f',
      '.',
      '..',
      './',
      '../../../../x',
      '%2e%2e/x',
      '/\t/evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      '//evil.example/p',
      'java\tscript:alert(1)',
      ' /x',
      'x ',
      '1a:b',
      'a/b:c',
      'http:foo',
      'http:/foo',
      'https:foo',
      'http://other.example',
      'x?utm_source=a&b=1#frag',
      'y;jsessionid=ABC?z=1',
      'ü/ä',
    ];
    const failures: string[] = [];
    for (const base of bases) {
      const baseUrl = new URL(base);
      for (const ref of refs) {
        const resolved = URL.parse(ref, base);
        const viaShortcut = crawl.canonicalize(ref, base);
        const viaUrlBase = crawl.canonicalize(ref, baseUrl);
        const direct = resolved === null ? undefined : crawl.canonicalize(resolved.href);
        // compare outcomes, not messages (a message quotes the input)
        const want = direct === undefined ? '<no url>' : outcome(direct);
        const got = outcome(viaShortcut);
        if (resolved === null ? viaShortcut.ok : got !== want)
          failures.push(`${base} + ${JSON.stringify(ref)}: ${got} vs ${want}`);
        if (outcome(viaUrlBase) !== got) failures.push(`${base} (URL object) + ${JSON.stringify(ref)}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
