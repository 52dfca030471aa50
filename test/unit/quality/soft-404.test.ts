import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hammingDistance, simhash } from '../../../functions/core/quality/simhash.ts';
import { Soft404Detector, soft404ProbePath } from '../../../functions/core/quality/soft-404.ts';
import { randomProse, seeded } from './simhash-reference.ts';

const random = seeded(404);
/** A small site frame: title, a few menu words and a footer. */
const HEAD = 'Example Store Home Products About Contact';
const FOOT = 'Copyright 2025 Example Store Privacy Terms';
/** The store's error page: it quotes the path asked for, like most. */
const notFound = (path: string) =>
  `${HEAD}\nPage not found\nSorry, we could not find ${path} on this server.\n${FOOT}`;
const article = () => `${HEAD}\n${randomProse(random, 300)}\n${FOOT}`;

const origin = 'https://soft.test';
const probePath = soft404ProbePath(seeded(1));
const probeUrl = `${origin}${probePath}`;

describe('soft404ProbePath', () => {
  it('makes a path no site has, without common words, from the random source given', () => {
    assert.match(probePath, /^\/crawlstack-probe-[a-z0-9]{12}\.html$/);
    assert.equal(soft404ProbePath(seeded(1)), probePath);
    assert.notEqual(soft404ProbePath(seeded(2)), probePath);
    assert.equal(
      soft404ProbePath(() => 0.999999999),
      '/crawlstack-probe-999999999999.html',
    );
    assert.equal(
      soft404ProbePath(() => 0),
      '/crawlstack-probe-aaaaaaaaaaaa.html',
    );
  });
});

describe('Soft404Detector', () => {
  const path = '/products/blue-widget-2000.html';

  it('finds an error page served with 200 even though it quotes another path', () => {
    // the quoted paths alone put the two error pages far apart ...
    const apart = hammingDistance(simhash(notFound(probePath)), simhash(notFound(path)));
    assert.ok(apart > 6, `only ${apart} bits apart: the test would not show the need to drop the path`);
    // ... the detector compares them without their paths
    const detector = new Soft404Detector();
    assert.equal(detector.needsProbe(origin), true);
    assert.equal(detector.needsText(`${origin}${path}`), false);
    assert.equal(detector.isSoft404(`${origin}${path}`, { status: 200, text: notFound(path) }), false);
    detector.recordProbe(probeUrl, { status: 200, text: notFound(probePath) });
    assert.equal(detector.needsProbe(origin), false);
    assert.equal(detector.needsText(`${origin}${path}`), true);
    assert.equal(detector.isSoft404(`${origin}${path}`, { status: 200, text: notFound(path) }), true);
    // the path quoted percent-decoded, with a query
    const query = '/search/caf%C3%A9?q=red+shoes';
    assert.equal(
      detector.isSoft404(`${origin}${query}`, { status: 200, text: notFound('/search/café?q=red shoes') }),
      true,
    );
  });

  it('leaves real pages, other statuses, other sites and the root alone', () => {
    const detector = new Soft404Detector();
    detector.recordProbe(probeUrl, { status: 200, text: notFound(probePath) });
    for (let i = 0; i < 20; i++) {
      assert.equal(detector.isSoft404(`${origin}/blog/post-${i}`, { status: 200, text: article() }), false);
    }
    assert.equal(detector.isSoft404(`${origin}/x`, { status: 404, text: notFound('/x') }), false);
    assert.equal(detector.isSoft404(`${origin}/x`, { status: 200 }), false);
    assert.equal(detector.isSoft404('https://other.test/x', { status: 200, text: notFound('/x') }), false);
    assert.equal(detector.needsText('https://other.test/x'), false);
    // a site that serves its home page for every unknown URL: the home page itself is real
    assert.equal(detector.isSoft404(`${origin}/`, { status: 200, text: notFound('/') }), false);
    assert.equal(detector.isSoft404(`${origin}/?lang=en`, { status: 200, text: notFound('/') }), false);
  });

  it('honours maxDistance', () => {
    const detector = new Soft404Detector({ maxDistance: 0 });
    detector.recordProbe(probeUrl, { status: 200, text: notFound(probePath) });
    assert.equal(detector.isSoft404(`${origin}${path}`, { status: 200, text: notFound(path) }), true);
    const changed = `${notFound(path)} Try the search box.`;
    assert.equal(detector.isSoft404(`${origin}${path}`, { status: 200, text: changed }), false);
    assert.equal(
      new Soft404Detector({ maxDistance: 64 }).isSoft404(`${origin}${path}`, { status: 200 }),
      false,
    );
  });

  it('finds redirects to where the probe was sent', () => {
    const detector = new Soft404Detector();
    detector.recordProbe(probeUrl, { status: 302, location: `${origin}/` });
    assert.equal(detector.needsText(`${origin}/old`), false);
    assert.equal(detector.isSoft404(`${origin}/old`, { status: 301, location: `${origin}/` }), true);
    assert.equal(detector.isSoft404(`${origin}/old`, { status: 301, location: `${origin}/new` }), false);
    assert.equal(detector.isSoft404(`${origin}/old`, { status: 200, text: notFound('/old') }), false);
  });

  it('trusts a site whose probe got a real 404, or no answer', () => {
    const detector = new Soft404Detector();
    detector.recordProbe(probeUrl, { status: 404, text: notFound(probePath) });
    detector.recordProbe(`https://down.test${probePath}`, { status: 0 });
    assert.equal(detector.isSoft404(`${origin}${path}`, { status: 200, text: notFound(path) }), false);
    assert.equal(
      detector.isSoft404(`https://down.test${path}`, { status: 200, text: notFound(path) }),
      false,
    );
    assert.equal(detector.needsProbe('https://down.test'), false);
    assert.deepEqual(detector.probeOf(origin), { status: 404 });
  });

  it('reports per site and resumes from a JSON snapshot', () => {
    const detector = new Soft404Detector();
    detector.recordProbe(probeUrl, { status: 200, text: notFound(probePath) });
    for (const p of ['/a', '/b', '/c'])
      detector.isSoft404(`${origin}${p}`, { status: 200, text: notFound(p) });
    assert.deepEqual(detector.report(), [
      {
        reason: 'soft-404',
        pattern: 'soft.test',
        count: 3,
        examples: ['/a', '/b', '/c'].map((p) => origin + p),
      },
    ]);
    const resumed = new Soft404Detector({}, JSON.parse(JSON.stringify(detector.snapshot())));
    assert.deepEqual(resumed.probeOf(origin), detector.probeOf(origin));
    assert.match(resumed.probeOf(origin)?.simhash ?? '', /^[0-9a-f]{16}$/);
    assert.equal(resumed.isSoft404(`${origin}/d`, { status: 200, text: notFound('/d') }), true);
    assert.equal(resumed.report()[0]?.count, 4);
  });

  it('remembers at most maxSites probes', () => {
    const detector = new Soft404Detector({ maxSites: 2 });
    for (const site of ['https://a.test', 'https://b.test', 'https://c.test']) {
      detector.recordProbe(`${site}${probePath}`, { status: 200, text: 'x' });
    }
    assert.equal(detector.needsProbe('https://a.test'), true);
    assert.equal(detector.needsProbe('https://c.test'), false);
  });
});
