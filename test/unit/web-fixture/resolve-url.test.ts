/**
 * Labels and responses of the fixture web: every link on every good page leads to a URL with the
 * label its kind promises, responses agree with labels, and every trap goes on forever.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type ExtraLinkKind,
  type FixtureWeb,
  generateWeb,
  TRAP_KINDS,
  type TrapKind,
  trapEntrance,
} from '../../fixtures/web/generate-web.ts';
import { classify, QUIRK_VARIANT, respond, type UrlClass } from '../../fixtures/web/resolve-url.ts';

const web = generateWeb({ seed: 3, hosts: 8, goodPages: 600 });
const origins = web.hosts.map((h) => `http://${h.address}:8080`);
const hostOf = new Map(origins.map((o, i) => [new URL(o).host, i]));

/** Host index and request target of an href on a page, as a browser would resolve it. */
function resolveHref(href: string, host: number, target: string): { host: number; target: string } {
  const url = new URL(href, origins[host] + target);
  const to = hostOf.get(url.host);
  assert.ok(to !== undefined, `link ${href} leaves the web`);
  return { host: to, target: url.pathname + url.search };
}

function hrefs(body: string | Uint8Array): string[] {
  return [...text(body).matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
}

function text(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : new TextDecoder().decode(body);
}

/** Variants that quirky servers' own templates link (a link to the page itself, in another spelling). */
const QUIRK_VARIANTS = new Set<string>(Object.values(QUIRK_VARIANT));

function expectedKind(kind: ExtraLinkKind, soft404: boolean): Partial<UrlClass> {
  switch (kind) {
    case 'print':
      return { kind: 'near-duplicate', variant: 'print' };
    case 'session':
    case 'tracking':
    case 'alias':
      return { kind: 'duplicate', variant: kind };
    case 'moved':
      return { kind: 'redirect', variant: 'moved' };
    case 'cross-host-redirect':
      return { kind: 'redirect', variant: 'cross-host' };
    case 'redirect-chain':
      return { kind: 'redirect', variant: 'chain' };
    case 'redirect-loop':
      return { kind: 'redirect', variant: 'loop' };
    case 'dead':
      return { kind: soft404 ? 'soft-404' : 'not-found' };
    case 'disallowed':
      return { kind: 'disallowed' };
    default:
      return { kind: 'trap', trap: kind };
  }
}

/** Follows a trap from its entrance, always to a link of the same trap not seen before. */
function walkTrap(w: FixtureWeb, trap: TrapKind, steps: number): string[] {
  const host = w.hosts.find((h) => h.traps.includes(trap))!.index;
  const seen = new Set<string>();
  let target = trapEntrance(trap, host);
  const walked: string[] = [];
  for (let i = 0; i < steps; i++) {
    assert.deepEqual(classify(w, host, target), { kind: 'trap', trap }, target);
    const response = respond(w, origins, host, target);
    assert.equal(response.status, 200);
    seen.add(target);
    walked.push(target);
    const next = hrefs(response.body)
      .map((href) => resolveHref(href, host, target))
      .find(
        (link) =>
          link.host === host && !seen.has(link.target) && classify(w, host, link.target).kind === 'trap',
      );
    assert.ok(next !== undefined, `${trap} ends after ${i + 1} pages at ${target}`);
    target = next.target;
  }
  return walked;
}

describe('classify and respond', () => {
  test('every link of every good page leads where its kind says', () => {
    const seenKinds = new Set<string>();
    for (let page = 0; page < web.pageCount; page++) {
      const host = web.pageHost[page]!;
      const response = respond(web, origins, host, web.paths[page]!);
      assert.equal(response.status, 200);
      const goodTargets = new Set<number>();
      const others: { host: number; target: string; cls: UrlClass }[] = [];
      for (const href of hrefs(response.body)) {
        const link = resolveHref(href, host, web.paths[page]!);
        const cls = classify(web, link.host, link.target);
        if (cls.kind === 'good') {
          if (cls.page !== page) goodTargets.add(cls.page);
        } else if (cls.kind === 'duplicate' && QUIRK_VARIANTS.has(cls.variant)) {
          // a quirky host's template spelling of a link in the graph
          assert.ok(web.hosts[link.host]!.quirks.length > 0, `${cls.variant} link on an ordinary host`);
          if (cls.of !== page) goodTargets.add(cls.of);
        } else {
          others.push({ ...link, cls });
        }
      }
      const graph = new Set(web.linkTargets.subarray(web.linkStart[page]!, web.linkStart[page + 1]!));
      assert.deepEqual(goodTargets, graph, `good links of page ${page}`);
      const extras = web.extras.get(page) ?? [];
      assert.equal(others.length, extras.length, `special links of page ${page}`);
      for (const extra of extras) {
        const found = others.find((o) => o.host === extra.host && o.target === extra.target);
        assert.ok(found !== undefined, `${extra.kind} link ${extra.target} on page ${page}`);
        const want = expectedKind(extra.kind, web.hosts[extra.host]!.soft404);
        for (const [key, value] of Object.entries(want)) {
          assert.equal((found.cls as Record<string, unknown>)[key], value, `${extra.kind} ${extra.target}`);
        }
        seenKinds.add(extra.kind);
      }
    }
    assert.ok(seenKinds.size >= 16, `kinds met: ${[...seenKinds].join(', ')}`);
  });

  test('duplicates are the same bytes, near-duplicates almost the same text', () => {
    const host = web.hosts.find((h) => h.quirks.length === 0 && !h.soft404)!;
    const page = host.firstPage + 5;
    const path = web.paths[page]!;
    const good = respond(web, origins, host.index, path).body;
    for (const spelling of [
      '/node/5',
      `${path}?sid=0123456789abcdef`,
      `${path};jsessionid=ABCDEF0123`,
      `${path}?PHPSESSID=abc`,
      `${path}?utm_source=x&utm_medium=y`,
      `${path}?fbclid=abc`,
      `${path}?gclid=abc`,
    ]) {
      const cls = classify(web, host.index, spelling);
      assert.equal(cls.kind, 'duplicate', spelling);
      assert.equal(cls.kind === 'duplicate' && cls.of, page);
      assert.equal(respond(web, origins, host.index, spelling).body, good, spelling);
    }
    assert.deepEqual(classify(web, host.index, '/index.html'), {
      kind: 'duplicate',
      of: host.firstPage,
      variant: 'alias',
    });
    const print = text(respond(web, origins, host.index, `${path}?print=1`).body);
    assert.deepEqual(classify(web, host.index, `${path}?print=1`), {
      kind: 'near-duplicate',
      of: page,
      variant: 'print',
    });
    assert.notEqual(print, good);
    // the article text is the same: every paragraph of the print version is in the page
    const paragraphs = print.split('\n').filter((line) => line.startsWith('<p>') && line.length > 200);
    assert.ok(paragraphs.length > 0);
    for (const p of paragraphs) assert.ok(text(good).includes(p));
    assert.deepEqual(classify(web, host.index, `${path}?q=1`), { kind: 'not-found' });
  });

  test('redirects: moved, cross-host, a chain that ends on a good page, a loop that does not', () => {
    const follow = (host: number, target: string, hops: number) => {
      const trail: string[] = [];
      let at = { host, target };
      for (let i = 0; i < hops; i++) {
        const response = respond(web, origins, at.host, at.target);
        if (response.status !== 301 && response.status !== 302) break;
        trail.push(`${classify(web, at.host, at.target).kind} ${response.status}`);
        at = resolveHref(response.headers.location!, at.host, at.target);
      }
      return { trail, end: classify(web, at.host, at.target), at };
    };
    const moved = follow(1, '/old/7', 5);
    assert.deepEqual(moved.trail, ['redirect 301']);
    assert.deepEqual(moved.end, {
      kind: 'good',
      page: web.hosts[1]!.firstPage + 7,
      rank: web.pageRank[web.hosts[1]!.firstPage + 7],
    });
    const cross = follow(0, `/go/${web.hosts[2]!.firstPage + 3}`, 5);
    assert.deepEqual(cross.trail, ['redirect 302']);
    assert.equal(cross.at.host, 2);
    assert.equal(cross.end.kind, 'good');
    const chain = follow(0, '/r/1/4', 10);
    assert.deepEqual(chain.trail, ['redirect 302', 'redirect 301', 'redirect 301']);
    assert.equal(chain.end.kind === 'good' && chain.end.page, web.hosts[0]!.firstPage + 4);
    const loop = follow(0, '/loop/a', 10);
    assert.equal(loop.trail.length, 10);
    assert.deepEqual(loop.end, { kind: 'redirect', variant: 'loop' });
  });

  test('soft-404 host: any unknown path is 200 with one and the same page; elsewhere a 404', () => {
    const soft = web.hosts.find((h) => h.soft404)!.index;
    const other = web.hosts.find((h) => !h.soft404)!.index;
    const a = respond(web, origins, soft, '/no/such/page');
    const b = respond(web, origins, soft, '/missing/12345?x=1');
    assert.equal(a.status, 200);
    assert.equal(a.body, b.body);
    assert.deepEqual(classify(web, soft, '/no/such/page'), { kind: 'soft-404' });
    assert.equal(respond(web, origins, other, '/no/such/page').status, 404);
    assert.deepEqual(classify(web, other, '/no/such/page'), { kind: 'not-found' });
    // a trap path on a host without that trap is just unknown
    const noCalendar = web.hosts.find((h) => !h.traps.includes('calendar') && !h.soft404)!.index;
    assert.deepEqual(classify(web, noCalendar, '/calendar/2026/11'), { kind: 'not-found' });
  });

  test('robots.txt allows all but on the Disallow host, whose private pages are labelled', () => {
    for (const host of web.hosts) {
      const robots = respond(web, origins, host.index, '/robots.txt');
      assert.equal(robots.status, 200);
      assert.match(robots.headers['content-type']!, /^text\/plain/);
      assert.ok(
        text(robots.body).startsWith(
          `User-agent: *\n${host.disallow === null ? 'Allow: /' : 'Disallow: /private/'}\n`,
        ),
      );
      assert.deepEqual(classify(web, host.index, '/robots.txt'), { kind: 'robots' });
    }
    const disallow = web.hosts.find((h) => h.disallow !== null)!.index;
    assert.deepEqual(classify(web, disallow, '/private/12.html'), { kind: 'disallowed' });
  });

  for (const trap of TRAP_KINDS) {
    test(`the ${trap} trap never ends`, () => {
      const walked = walkTrap(web, trap, 300);
      assert.equal(new Set(walked).size, 300);
      if (trap === 'long-url') assert.ok(walked.at(-1)!.length > 40_000);
      if (trap === 'repeated-segments')
        assert.ok(walked.some((t) => t.includes('/a/a/a/') || t.includes('/b/b/b/')));
    });
  }

  test('trap pages of one kind are near-duplicates: same boilerplate, different headline', () => {
    const host = web.hosts.find((h) => h.traps.includes('calendar'))!.index;
    const a = text(respond(web, origins, host, '/calendar/2026/11').body);
    const b = text(respond(web, origins, host, '/calendar/1999/02').body);
    assert.notEqual(a, b);
    const shared = a.split('\n').filter((line) => line.length > 200 && b.includes(line));
    assert.ok(shared.length >= 1);
  });
});
