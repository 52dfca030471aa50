/**
 * The served fixture web: one real server per host on 127.0.1.x, answering as `respond` says and
 * logging every request with its host and label.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateWeb } from '../../fixtures/web/generate-web.ts';
import { type ServedWeb, serveWeb } from '../../fixtures/web/serve-web.ts';

describe('serveWeb', () => {
  const web = generateWeb({ seed: 4, hosts: 5, goodPages: 120 });
  let served: ServedWeb;
  before(async () => {
    served = await serveWeb(web);
  });
  after(async () => {
    await served?.close();
  });

  test('one server per host on its own address; seeds are home pages', () => {
    assert.deepEqual(
      served.hosts.map((h) => h.address),
      ['127.0.1.1', '127.0.1.2', '127.0.1.3', '127.0.1.4', '127.0.1.5'],
    );
    assert.equal(served.seeds.length, 3);
    for (const seed of served.seeds) {
      assert.match(seed, /^http:\/\/127\.0\.1\.\d:\d+\/$/);
      assert.equal(served.classify(seed)?.kind, 'good');
    }
    assert.equal(served.classify('http://127.0.0.1:1/'), undefined);
  });

  test('answers pages, robots.txt, redirects and misses, and logs each request with its label', async () => {
    served.clearLog();
    const soft = web.hosts.find((h) => h.soft404)!.index;
    const hard = web.hosts.find((h) => !h.soft404)!.index;
    const home = await fetch(served.seeds[0]!);
    assert.equal(home.status, 200);
    assert.match(home.headers.get('content-type')!, /^text\/html/);
    assert.match(await home.text(), /<title>/);
    const robots = await fetch(`${served.origins[0]}/robots.txt`);
    assert.match(await robots.text(), /^User-agent: \*/);
    const moved = await fetch(`${served.origins[0]}/old/3`, { redirect: 'manual' });
    await moved.arrayBuffer();
    assert.equal(moved.status, 301);
    assert.equal(moved.headers.get('location'), served.urlOf(web.hosts[0]!.firstPage + 3));
    const softMiss = await fetch(`${served.origins[soft]}/nothing/here`);
    await softMiss.arrayBuffer();
    assert.equal(softMiss.status, 200);
    const hardMiss = await fetch(`${served.origins[hard]}/nothing/here`);
    await hardMiss.arrayBuffer();
    assert.equal(hardMiss.status, 404);

    const log = served.requests();
    assert.deepEqual(
      log.map((r) => [r.host, r.path, r.class.kind]),
      [
        [web.pageHost[web.seedPages[0]!], '/', 'good'],
        [0, '/robots.txt', 'robots'],
        [0, '/old/3', 'redirect'],
        [soft, '/nothing/here', 'soft-404'],
        [hard, '/nothing/here', 'not-found'],
      ],
    );
    assert.equal(log[2]!.url, `${served.origins[0]}/old/3`);
    for (let i = 1; i < log.length; i++) assert.ok(log[i]!.start >= log[i - 1]!.start);
  });
});
