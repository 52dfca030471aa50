import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registrableDomain, type ScopeOptions, ScopeRules } from '../../../functions/core/url/scope.ts';

const defaults: ScopeOptions = {
  scope: 'domain',
  include: [],
  exclude: [],
  maxDepth: 25,
  maxUrlLength: 2048,
  maxSegmentRepeats: 2,
};

function rules(options: Partial<ScopeOptions>, seeds = ['https://www.example.co.uk/']): ScopeRules {
  return new ScopeRules({ ...defaults, ...options }, seeds);
}

describe('ScopeRules', () => {
  it("scope 'domain' allows the seeds' registrable domains, subdomains included", () => {
    const scope = rules({ scope: 'domain' });
    assert.equal(scope.check('https://docs.example.co.uk/a', 'docs.example.co.uk', 1), undefined);
    assert.equal(scope.check('https://example.co.uk/', 'example.co.uk', 1), undefined);
    assert.equal(scope.check('http://www.example.co.uk:8080/', 'www.example.co.uk', 1), undefined);
    assert.equal(scope.check('https://other.co.uk/', 'other.co.uk', 1), 'scope');
    assert.equal(scope.check('https://example.com/', 'example.com', 1), 'scope');
    // asked twice: the cached answer is the same
    assert.equal(scope.check('https://other.co.uk/b', 'other.co.uk', 1), 'scope');
    assert.equal(scope.check('https://docs.example.co.uk/b', 'docs.example.co.uk', 1), undefined);
  });

  it("scope 'domain' keeps sites under a private suffix apart (github.io)", () => {
    const scope = rules({ scope: 'domain' }, ['https://alice.github.io/']);
    assert.equal(scope.check('https://alice.github.io/x', 'alice.github.io', 1), undefined);
    assert.equal(scope.check('https://bob.github.io/x', 'bob.github.io', 1), 'scope');
  });

  it("scope 'domain' takes an IP address or a single-label host as its own domain", () => {
    const scope = rules({ scope: 'domain' }, [
      'http://127.0.0.1:8080/',
      'http://localhost/',
      'http://[::1]/',
    ]);
    assert.equal(scope.check('http://127.0.0.1:9090/x', '127.0.0.1', 1), undefined);
    assert.equal(scope.check('http://127.0.0.2/x', '127.0.0.2', 1), 'scope');
    assert.equal(scope.check('http://localhost/x', 'localhost', 1), undefined);
    assert.equal(scope.check('http://[::1]/x', '[::1]', 1), undefined);
    assert.equal(scope.check('http://otherhost/x', 'otherhost', 1), 'scope');
    assert.equal(registrableDomain('127.0.0.1'), '127.0.0.1');
    assert.equal(registrableDomain('localhost'), 'localhost');
    assert.equal(registrableDomain('a.b.example.co.uk'), 'example.co.uk');
  });

  it("scope 'host' allows the seeds' host names only", () => {
    const scope = rules({ scope: 'host' });
    assert.equal(scope.check('https://www.example.co.uk/a', 'www.example.co.uk', 1), undefined);
    assert.equal(scope.check('https://docs.example.co.uk/a', 'docs.example.co.uk', 1), 'scope');
  });

  it("scope 'any' allows every host", () => {
    const scope = rules({ scope: 'any' });
    assert.equal(scope.check('https://anything.example.org/', 'anything.example.org', 1), undefined);
  });

  it('allowHost adds a host (scope host) or its domain (scope domain), even after a "no"', () => {
    const byHost = rules({ scope: 'host' });
    assert.equal(byHost.check('https://www.example.org/', 'www.example.org', 0), 'scope');
    byHost.allowHost('WWW.example.org');
    assert.equal(byHost.check('https://www.example.org/', 'www.example.org', 0), undefined);
    assert.equal(byHost.check('https://cdn.example.org/', 'cdn.example.org', 0), 'scope');

    const byDomain = rules({ scope: 'domain' });
    assert.equal(byDomain.check('https://cdn.example.org/', 'cdn.example.org', 0), 'scope');
    byDomain.allowHost('www.example.org');
    assert.equal(byDomain.check('https://cdn.example.org/', 'cdn.example.org', 0), undefined);
  });

  it('skips URLs longer than maxUrlLength', () => {
    const scope = rules({ maxUrlLength: 40 });
    const ok = 'https://www.example.co.uk/0123456789abcd';
    assert.equal(ok.length, 40);
    assert.equal(scope.check(ok, 'www.example.co.uk', 1), undefined);
    assert.equal(scope.check(`${ok}e`, 'www.example.co.uk', 1), 'url-length');
  });

  it('skips paths where one segment occurs more than maxSegmentRepeats times', () => {
    const scope = rules({ maxSegmentRepeats: 2 });
    const check = (path: string) => scope.check(`https://www.example.co.uk${path}`, 'www.example.co.uk', 1);
    assert.equal(check('/a/a/'), undefined);
    assert.equal(check('/a/a/a/'), 'repeated-segments');
    assert.equal(check('/a/b/a/b/a/b/'), 'repeated-segments');
    assert.equal(check('/a/b/a/b/c'), undefined);
    assert.equal(check('/x/a/y/a/z/a'), 'repeated-segments');
    // segments compare case-sensitively; the query and empty segments do not count
    assert.equal(check('/a/A/a/'), undefined);
    assert.equal(check('/a?x=/a/a/a'), undefined);
    assert.equal(check('/a/#/a/a'), undefined);
    assert.equal(check('/a//a//'), undefined);
    assert.equal(check('/'), undefined);
    // long paths (counted another way)
    const distinct = Array.from({ length: 40 }, (_, i) => `s${i}`).join('/');
    assert.equal(check(`/${distinct}/`), undefined);
    assert.equal(check(`/${distinct}/s7/s7/`), 'repeated-segments');
    assert.equal(check(`/${distinct}/s7/`), undefined);
    const strict = rules({ maxSegmentRepeats: 1 });
    assert.equal(strict.check('https://www.example.co.uk/a/a', 'www.example.co.uk', 1), 'repeated-segments');
  });

  it('skips URLs matching an exclude pattern', () => {
    const scope = rules({ exclude: ['\\.pdf$', '/private/'] });
    assert.equal(scope.check('https://www.example.co.uk/a.pdf', 'www.example.co.uk', 1), 'exclude');
    assert.equal(scope.check('https://www.example.co.uk/private/x', 'www.example.co.uk', 1), 'exclude');
    assert.equal(scope.check('https://www.example.co.uk/public/x', 'www.example.co.uk', 1), undefined);
  });

  it('with include patterns, skips URLs that match none of them', () => {
    const scope = rules({ include: ['/docs/', '/blog/'] });
    assert.equal(scope.check('https://www.example.co.uk/docs/a', 'www.example.co.uk', 1), undefined);
    assert.equal(scope.check('https://www.example.co.uk/blog/b', 'www.example.co.uk', 1), undefined);
    assert.equal(scope.check('https://www.example.co.uk/shop/c', 'www.example.co.uk', 1), 'include');
  });

  it('skips URLs deeper than maxDepth', () => {
    const scope = rules({ maxDepth: 2 });
    assert.equal(scope.check('https://www.example.co.uk/a', 'www.example.co.uk', 2), undefined);
    assert.equal(scope.check('https://www.example.co.uk/a', 'www.example.co.uk', 3), 'max-depth');
  });

  it('reports the first reason in the order url-length, repeated-segments, scope, exclude, include, max-depth', () => {
    const scope = rules({ maxUrlLength: 60, include: ['/keep/'], exclude: ['/drop/'], maxDepth: 1 });
    const offsite = 'other.example';
    assert.equal(scope.check(`https://${offsite}/drop/a/a/a/${'x'.repeat(40)}`, offsite, 9), 'url-length');
    assert.equal(scope.check(`https://${offsite}/drop/a/a/a/`, offsite, 9), 'repeated-segments');
    assert.equal(scope.check(`https://${offsite}/drop/`, offsite, 9), 'scope');
    const home = 'www.example.co.uk';
    assert.equal(scope.check(`https://${home}/drop/`, home, 9), 'exclude');
    assert.equal(scope.check(`https://${home}/other/`, home, 9), 'include');
    assert.equal(scope.check(`https://${home}/keep/`, home, 9), 'max-depth');
    assert.equal(scope.check(`https://${home}/keep/`, home, 1), undefined);
  });
});
