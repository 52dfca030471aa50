import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_STRIP_PARAMS } from '../../../functions/core/config.ts';
import {
  type CanonicalResult,
  isRootUrl,
  UrlCanonicalizer,
} from '../../../functions/core/url/canonicalize.ts';

const crawl = new UrlCanonicalizer({ stripParams: DEFAULT_STRIP_PARAMS, sortQuery: true });

function url(result: CanonicalResult): string {
  assert.ok(result.ok, `expected a URL, got ${result.ok ? '' : `${result.reason}: ${result.message}`}`);
  return result.url;
}

function canon(href: string, base?: string): string {
  return url(crawl.canonicalize(href, base));
}

describe('UrlCanonicalizer', () => {
  it('returns the politeness key (host) and the robots.txt key (origin)', () => {
    assert.deepEqual(crawl.canonicalize('HTTPS://User:Pw@WWW.Example.COM:8443/a?b#c'), {
      ok: true,
      url: 'https://www.example.com:8443/a?b',
      host: 'www.example.com',
      origin: 'https://www.example.com:8443',
    });
    assert.deepEqual(crawl.canonicalize('http://[::1]:8080/'), {
      ok: true,
      url: 'http://[::1]:8080/',
      host: '[::1]',
      origin: 'http://[::1]:8080',
    });
  });

  it('removes tracking parameters, utm_* by prefix and in any case', () => {
    assert.equal(
      canon('https://example.com/p?utm_source=x&id=7&UTM_Medium=y&Utm_campaign=z&fbclid=1&GCLID=2'),
      'https://example.com/p?id=7',
    );
    assert.equal(canon('https://example.com/p?utm%5Fsource=x&id=7'), 'https://example.com/p?id=7');
    // only whole names or declared prefixes: `sidebar` is not `sid`
    assert.equal(canon('https://example.com/?sidebar=1&sid=abc'), 'https://example.com/?sidebar=1');
    assert.equal(canon('https://example.com/?aspsessionidQQ=1&x'), 'https://example.com/?x');
  });

  it('drops the `?` when stripping leaves no parameter, with the empty parts around them', () => {
    assert.equal(canon('https://example.com/p?utm_source=x&utm_medium=y'), 'https://example.com/p');
    assert.equal(canon('https://example.com/p?utm_source=x&&a=1&'), 'https://example.com/p?a=1');
    assert.equal(canon('https://example.com/p?gclid'), 'https://example.com/p');
  });

  it('keeps a literal empty query and empty parts when nothing was stripped', () => {
    assert.equal(canon('https://example.com/p?'), 'https://example.com/p?');
    assert.equal(canon('https://example.com/p?b&&a'), 'https://example.com/p?&a&b');
  });

  it('removes session ids in the query and as ;jsessionid= path parameters', () => {
    assert.equal(canon('http://shop.example/cart?PHPSESSID=abc&item=2'), 'http://shop.example/cart?item=2');
    assert.equal(
      canon('http://shop.example/cart.do;jsessionid=0A1B2C?item=2'),
      'http://shop.example/cart.do?item=2',
    );
    assert.equal(canon('http://shop.example/a;JSESSIONID=0A1B2C/b.jsp'), 'http://shop.example/a/b.jsp');
    assert.equal(canon('http://shop.example/a;v=2;jsessionid=1'), 'http://shop.example/a;v=2');
    // other path parameters, and an escaped ';', are content
    assert.equal(canon('http://shop.example/a;v=2'), 'http://shop.example/a;v=2');
    assert.equal(canon('http://shop.example/a%3Bjsessionid=1'), 'http://shop.example/a%3Bjsessionid=1');
  });

  it('sorts query parameters stably and bytewise on the raw parts, when asked', () => {
    assert.equal(canon('http://example.com/?c=3&a=2&b=1&a=1'), 'http://example.com/?a=1&a=2&b=1&c=3');
    assert.equal(canon('http://example.com/?b=1&B=2&_=3'), 'http://example.com/?B=2&_=3&b=1');
    const unsorted = new UrlCanonicalizer({ stripParams: ['utm_*'], sortQuery: false });
    assert.equal(
      url(unsorted.canonicalize('http://example.com/?c=3&utm_x=1&a=2')),
      'http://example.com/?c=3&a=2',
    );
  });

  it('drops the fragment unless keepFragment', () => {
    assert.equal(canon('http://example.com/a#top'), 'http://example.com/a');
    assert.equal(canon('http://example.com/a#'), 'http://example.com/a');
    const keep = new UrlCanonicalizer({ stripParams: [], sortQuery: false, keepFragment: true });
    assert.equal(url(keep.canonicalize('http://example.com/a#b#%7e%zz')), 'http://example.com/a#b%23~%25zz');
  });

  it('turns IDN hosts into punycode and lowercases scheme and host', () => {
    assert.equal(canon('http://bücher.example/'), 'http://xn--bcher-kva.example/');
    assert.equal(canon('HTTP://BÜCHER.Example/Path'), 'http://xn--bcher-kva.example/Path');
    const result = crawl.canonicalize('http://bücher.example/');
    assert.ok(result.ok);
    assert.equal(result.host, 'xn--bcher-kva.example');
  });

  it('removes default ports and keeps the others', () => {
    assert.equal(canon('http://example.com:80/'), 'http://example.com/');
    assert.equal(canon('https://example.com:443/'), 'https://example.com/');
    assert.equal(canon('https://example.com:80/'), 'https://example.com:80/');
    assert.equal(canon('http://example.com:8080'), 'http://example.com:8080/');
  });

  it('normalizes percent-encoding: decodes unreserved, upper-cases the rest, escapes stray %', () => {
    assert.equal(canon('http://example.com/%7euser/%41%2f%3a'), 'http://example.com/~user/A%2F%3A');
    assert.equal(canon('http://example.com/?q=%7e%2b%e2%98%83'), 'http://example.com/?q=~%2B%E2%98%83');
    assert.equal(canon('http://example.com/100%/%zz%4'), 'http://example.com/100%25/%25zz%254');
    assert.equal(canon('http://example.com/a b/ü'), 'http://example.com/a%20b/%C3%BC');
    // decoded once: %2561 is the literal text %61
    assert.equal(canon('http://example.com/%2561'), 'http://example.com/%2561');
  });

  it('resolves dot segments, also spelled %2e, and collapses repeated slashes', () => {
    assert.equal(canon('http://example.com/a/./b/../c'), 'http://example.com/a/c');
    assert.equal(canon('http://example.com/a/%2e%2E/b/%2e/c'), 'http://example.com/b/c');
    assert.equal(canon('http://example.com//a///b//'), 'http://example.com/a/b/');
    assert.equal(canon('http://example.com\\a\\b'), 'http://example.com/a/b');
    assert.equal(canon('http://example.com/?u=http://x//y'), 'http://example.com/?u=http://x//y');
  });

  it('cleans host dots and drops userinfo', () => {
    assert.equal(canon('http://www.example.com./'), 'http://www.example.com/');
    assert.equal(canon('http://www..example...com../x'), 'http://www.example.com/x');
    assert.equal(canon('http://user:secret@example.com/'), 'http://example.com/');
    assert.equal(canon('http://3232235777/'), 'http://192.168.1.1/');
  });

  it('gives an empty path as /', () => {
    assert.equal(canon('http://example.com'), 'http://example.com/');
    assert.equal(canon('http://example.com?x'), 'http://example.com/?x');
  });

  it('resolves relative hrefs against a base (string or URL)', () => {
    const base = 'https://www.example.com/blog/2024/post.html?page=2#c';
    assert.equal(canon('other.html', base), 'https://www.example.com/blog/2024/other.html');
    assert.equal(canon('../archive/', base), 'https://www.example.com/blog/archive/');
    assert.equal(canon('/about', base), 'https://www.example.com/about');
    assert.equal(canon('//cdn.example.net/x.js', base), 'https://cdn.example.net/x.js');
    assert.equal(canon('?page=3', base), 'https://www.example.com/blog/2024/post.html?page=3');
    assert.equal(canon('#comments', base), 'https://www.example.com/blog/2024/post.html?page=2');
    assert.equal(canon('', base), 'https://www.example.com/blog/2024/post.html?page=2');
    assert.equal(canon('http://other.example/', base), 'http://other.example/');
    assert.equal(url(crawl.canonicalize('x', new URL(base))), 'https://www.example.com/blog/2024/x');
    // the cached base is replaced when the base changes
    assert.equal(canon('x', 'http://a.example/1/'), 'http://a.example/1/x');
    assert.equal(canon('x', 'http://b.example/2/'), 'http://b.example/2/x');
  });

  it('gives a relative link the same answer from every page, however often it recurs', () => {
    const fresh = new UrlCanonicalizer({ stripParams: DEFAULT_STRIP_PARAMS, sortQuery: true });
    const pages = ['http://h.test/doc/a.html', 'http://h.test/doc/b.html?x=1', 'http://h.test/other/c.html'];
    for (let round = 0; round < 3; round++) {
      for (const page of pages) {
        for (const href of [
          'index.html',
          'index.html#a',
          'index.html#b?c',
          'p.html?utm_source=x&b=2&a=1',
          '/root.html#x',
          'bad%zz.html',
          '..',
        ]) {
          assert.deepEqual(
            fresh.canonicalize(href, page),
            crawl.canonicalize(href, new URL(page)),
            `${href} on ${page}`,
          );
        }
      }
    }
    assert.equal(url(fresh.canonicalize('index.html', pages[2])), 'http://h.test/other/index.html');
    assert.equal(
      url(fresh.canonicalize('p.html?utm_source=x&b=2&a=1', pages[0])),
      'http://h.test/doc/p.html?a=1&b=2',
    );
    const keep = new UrlCanonicalizer({ stripParams: [], sortQuery: false, keepFragment: true });
    assert.equal(url(keep.canonicalize('index.html#a', pages[0])), 'http://h.test/doc/index.html#a');
    assert.equal(url(keep.canonicalize('index.html#b', pages[0])), 'http://h.test/doc/index.html#b');
    // more distinct links than the cache holds
    for (let i = 0; i < 5000; i++)
      assert.equal(url(fresh.canonicalize(`p${i}.html`, pages[0])), `http://h.test/doc/p${i}.html`);
  });

  it('reads a scheme-less string without a base as http (address-bar style)', () => {
    assert.equal(canon('www.example.com/a'), 'http://www.example.com/a');
    assert.equal(canon('  www.example.com'), 'http://www.example.com/');
  });

  it('rejects javascript:, mailto:, data: and other schemes as unsupported-scheme', () => {
    for (const href of [
      'javascript:void(0)',
      'mailto:a@example.com',
      'data:text/html,hi',
      'ftp://example.com/',
      'tel:+1',
    ]) {
      const result = crawl.canonicalize(href, 'http://example.com/');
      assert.equal(result.ok, false, href);
      assert.equal(result.ok ? '' : result.reason, 'unsupported-scheme', href);
    }
    // WHATWG removes tabs and newlines before it reads the scheme
    const sneaky = crawl.canonicalize('java\tscript:alert(1)', 'http://example.com/');
    assert.equal(sneaky.ok ? '' : sneaky.reason, 'unsupported-scheme');
    const relativeBase = crawl.canonicalize('x', 'file:///tmp/');
    assert.equal(relativeBase.ok ? '' : relativeBase.reason, 'unsupported-scheme');
  });

  it('rejects garbage as invalid, without throwing', () => {
    for (const href of [
      'http://',
      'http://[::1',
      'http://exa mple.com/',
      'http://../',
      'https://%2e/x',
      '',
      ' ',
    ]) {
      const result = crawl.canonicalize(href);
      assert.equal(result.ok, false, href);
      assert.equal(result.ok ? '' : result.reason, 'invalid', href);
      assert.ok(!result.ok && result.message.length > 0);
    }
    const badBase = crawl.canonicalize('x', 'not a base');
    assert.equal(badBase.ok ? '' : badBase.reason, 'invalid');
    assert.equal(canon('http://example.com/x', 'not a base'), 'http://example.com/x');
  });

  it('returns the WHATWG href itself when it is already canonical', () => {
    const href = 'https://example.com/a/b?x=1';
    const result = crawl.canonicalize(href);
    assert.ok(result.ok);
    assert.equal(result.url, href);
    assert.equal(result.origin, 'https://example.com');
  });
});

describe('isRootUrl', () => {
  it("is true for a host's root page in canonical form only: no path, no query", () => {
    for (const href of ['http://a.example', 'https://A.example:8443/#top', 'http://a.example/?utm_source=x'])
      assert.equal(isRootUrl(canon(href)), true, href);
    for (const href of ['http://a.example/?page=2', 'http://a.example/a', 'http://a.example/index.html'])
      assert.equal(isRootUrl(canon(href)), false, href);
  });
});
