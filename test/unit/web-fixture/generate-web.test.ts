/**
 * The fixture web's generator: deterministic from its seed, power-law host sizes and in-degrees,
 * every host reachable from the seeds, special links placed where they should be.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateWeb, navParent, TRAP_KINDS } from '../../fixtures/web/generate-web.ts';
import { respond } from '../../fixtures/web/resolve-url.ts';

const web = generateWeb({ seed: 1 });
const origins = web.hosts.map((h) => `http://${h.address}:8080`);

function inDegrees(): Int32Array {
  const degree = new Int32Array(web.pageCount);
  for (const target of web.linkTargets) degree[target]! += 1;
  return degree;
}

describe('generateWeb', () => {
  test('the same seed gives the same web, bodies included; another seed another web', () => {
    const again = generateWeb({ seed: 1 });
    assert.deepEqual(again.hosts, web.hosts);
    assert.deepEqual(again.paths, web.paths);
    assert.deepEqual(again.linkStart, web.linkStart);
    assert.deepEqual(again.linkTargets, web.linkTargets);
    assert.deepEqual(again.pageRank, web.pageRank);
    assert.deepEqual(again.extras, web.extras);
    for (const page of [0, 17, 1234, 3999]) {
      const host = web.pageHost[page]!;
      assert.equal(
        respond(again, origins, host, web.paths[page]!).body,
        respond(web, origins, host, web.paths[page]!).body,
      );
    }
    const other = generateWeb({ seed: 2 });
    assert.notDeepEqual(other.linkTargets, web.linkTargets);
    assert.notEqual(respond(other, origins, 0, '/').body, respond(web, origins, 0, '/').body);
  });

  test('20 hosts on 127.0.1.1-20 with power-law sizes adding up to 4,000 good pages', () => {
    assert.equal(web.hosts.length, 20);
    assert.equal(web.pageCount, 4000);
    assert.equal(
      web.hosts.reduce((sum, h) => sum + h.pageCount, 0),
      4000,
    );
    assert.deepEqual(
      web.hosts.map((h) => h.address),
      Array.from({ length: 20 }, (_, i) => `127.0.1.${i + 1}`),
    );
    const sizes = web.hosts.map((h) => h.pageCount);
    assert.deepEqual(
      sizes,
      [...sizes].sort((a, b) => b - a),
    );
    assert.ok(sizes[0]! > 10 * sizes[19]!, `largest ${sizes[0]} vs smallest ${sizes[19]}`);
    for (const host of web.hosts) {
      assert.equal(web.paths[host.firstPage], '/');
      assert.equal(web.pathIndex[host.index]!.size, host.pageCount);
    }
  });

  test('in-degree follows a power law: the top 1% of pages hold a large share of the links', () => {
    const degree = [...inDegrees()].sort((a, b) => b - a);
    const total = web.linkTargets.length;
    const top = degree.slice(0, web.pageCount / 100).reduce((a, b) => a + b, 0);
    assert.ok(top / total > 0.2, `top 1% hold ${((top / total) * 100).toFixed(1)}% of in-links`);
    const median = degree[web.pageCount / 2]!;
    assert.ok(median <= 3, `median in-degree ${median}`);
    // popular content, not just home pages: preferential attachment at work
    const homes = new Set(web.hosts.map((h) => h.firstPage));
    const byPage = inDegrees();
    const popularContent = [...byPage.keys()].filter((p) => !homes.has(p) && byPage[p]! >= 50);
    assert.ok(popularContent.length >= 10, `${popularContent.length} non-home pages with >= 50 in-links`);
  });

  test('PageRank sums to 1 and favours the pages with the most in-links', () => {
    const sum = web.pageRank.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-9, `sum ${sum}`);
    const degree = inDegrees();
    const byRank = [...web.pageRank.keys()].sort((a, b) => web.pageRank[b]! - web.pageRank[a]!);
    const topDegree = byRank.slice(0, 40).reduce((a, p) => a + degree[p]!, 0) / 40;
    const meanDegree = web.linkTargets.length / web.pageCount;
    assert.ok(topDegree > 10 * meanDegree, `top-40 mean in-degree ${topDegree} vs ${meanDegree}`);
  });

  test('every good page is reachable from the seeds, all hosts included, within a few hops', () => {
    assert.equal(web.seedPages.length, 3);
    const depth = new Int32Array(web.pageCount).fill(-1);
    const queue = [...web.seedPages];
    for (const s of queue) depth[s] = 0;
    for (let i = 0; i < queue.length; i++) {
      const page = queue[i]!;
      for (let k = web.linkStart[page]!; k < web.linkStart[page + 1]!; k++) {
        const target = web.linkTargets[k]!;
        if (depth[target] === -1) {
          depth[target] = depth[page]! + 1;
          queue.push(target);
        }
      }
    }
    assert.equal(queue.length, web.pageCount);
    assert.ok(Math.max(...depth) <= 10, `deepest good page at depth ${Math.max(...depth)}`);
  });

  test('links are distinct per page, never to the page itself, and follow the navigation tree', () => {
    for (let page = 0; page < web.pageCount; page++) {
      const targets = web.linkTargets.subarray(web.linkStart[page]!, web.linkStart[page + 1]!);
      assert.equal(new Set(targets).size, targets.length);
      assert.ok(!targets.includes(page));
      const host = web.hosts[web.pageHost[page]!]!;
      const parent = navParent(page - host.firstPage, web.options.navBranching);
      if (parent >= 0) {
        assert.ok(targets.includes(host.firstPage + parent), `page ${page} links its parent`);
        assert.ok(targets.includes(host.firstPage), `page ${page} links its home page`);
      }
    }
  });

  test('special hosts and links: one soft-404 host, one Disallow, every trap on some host', () => {
    assert.equal(web.hosts.filter((h) => h.soft404).length, 1);
    assert.deepEqual(
      web.hosts.filter((h) => h.disallow !== null).map((h) => h.disallow),
      ['/private/'],
    );
    for (const trap of TRAP_KINDS) {
      const hosts = web.hosts.filter((h) => h.traps.includes(trap));
      assert.ok(hosts.length >= 2, `${trap} on ${hosts.length} hosts`);
      for (const host of hosts) {
        const fromHome = web.extras.get(host.firstPage) ?? [];
        assert.ok(
          fromHome.some((e) => e.kind === trap),
          `${trap} entered from the home page of ${host.name}`,
        );
      }
    }
    const kinds = new Map<string, number>();
    for (const list of web.extras.values())
      for (const e of list) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
    for (const kind of [
      'print',
      'session',
      'tracking',
      'alias',
      'moved',
      'cross-host-redirect',
      'dead',
      'disallowed',
    ]) {
      assert.ok((kinds.get(kind) ?? 0) >= 3, `${kind}: ${kinds.get(kind)}`);
    }
    assert.equal(kinds.get('redirect-chain'), 1);
    assert.equal(kinds.get('redirect-loop'), 1);
  });

  test('small webs work too (fewer hosts than traps, tiny hosts)', () => {
    const tiny = generateWeb({ seed: 9, hosts: 3, goodPages: 30 });
    assert.equal(tiny.pageCount, 30);
    assert.equal(tiny.hosts.length, 3);
    assert.equal(tiny.seedPages.length, 3);
    for (const trap of TRAP_KINDS)
      assert.ok(
        tiny.hosts.some((h) => h.traps.includes(trap)),
        trap,
      );
    assert.ok(Math.abs(tiny.pageRank.reduce((a, b) => a + b, 0) - 1) < 1e-9);
    assert.throws(() => generateWeb({ seed: 1, hosts: 5, goodPages: 4 }), RangeError);
  });
});
