import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LinkGeneratorDetector } from '../../../functions/core/quality/link-generator.ts';

/** Feeds `pages` fetched pages of https://shop.test/search?q=..&page=N, the first `dups` near-duplicates. */
function feed(
  detector: LinkGeneratorDetector,
  pages: number,
  dups: number,
  parent?: string,
  path = '/search',
): void {
  for (let i = 0; i < pages; i++) {
    const page = { url: `https://shop.test${path}?q=x${i}&page=${i}`, nearDuplicate: i < dups };
    detector.observe(parent === undefined ? page : { ...page, parent });
  }
}

describe('LinkGeneratorDetector: template rule', () => {
  it('rejects a template once 10 fetched pages are at least 80% near-duplicates', () => {
    const detector = new LinkGeneratorDetector();
    feed(detector, 9, 9);
    assert.equal(detector.check('https://shop.test/search?q=new&page=99'), undefined); // 9 pages: too few
    feed(detector, 1, 0);
    // 10 pages, 9 near-duplicates: 90%
    assert.equal(detector.check('https://shop.test/search?page=100&q=other'), 'link-generator');
    // other templates, other hosts and other query keys are not touched
    assert.equal(detector.check('https://shop.test/item/5'), undefined);
    assert.equal(detector.check('https://other.test/search?q=a&page=1'), undefined);
    assert.equal(detector.check('https://shop.test/search?q=a'), undefined);
  });

  it('does not reject a template whose pages differ', () => {
    const detector = new LinkGeneratorDetector();
    feed(detector, 10, 7); // 70%
    assert.equal(detector.check('https://shop.test/search?q=z&page=1'), undefined);
    feed(detector, 100, 0);
    assert.equal(detector.check('https://shop.test/search?q=z&page=1'), undefined);
  });

  it('honours minPages and nearDuplicateShare', () => {
    const detector = new LinkGeneratorDetector({ minPages: 3, nearDuplicateShare: 0.5 });
    feed(detector, 4, 2);
    assert.equal(detector.check('https://shop.test/search?q=z&page=1'), 'link-generator');
  });
});

describe('LinkGeneratorDetector: family rule (one parent fanning out)', () => {
  it('rejects further children of a parent whose 5 fetched children of one template were near-duplicates', () => {
    const detector = new LinkGeneratorDetector();
    // the template as a whole is healthy: many parents, distinct pages
    for (let p = 0; p < 20; p++) feed(detector, 1, 0, `parent${p}`, '/item');
    feed(detector, 5, 5, 'generator', '/item');
    // 25 pages, 5 near-duplicates: the template rule does not fire ...
    assert.equal(detector.check('https://shop.test/item?q=a&page=1'), undefined);
    assert.equal(detector.check('https://shop.test/item?q=a&page=1', 'parent3'), undefined);
    // ... but the generator's own children are stopped
    assert.equal(detector.check('https://shop.test/item?q=a&page=1', 'generator'), 'link-generator');
    const [finding] = detector.report();
    assert.equal(finding?.pattern, 'shop.test/item?page=&q= (children of generator)');
  });

  it('needs minSiblings fetched siblings', () => {
    const detector = new LinkGeneratorDetector();
    feed(detector, 4, 4, 'p');
    assert.equal(detector.check('https://shop.test/search?q=a&page=1', 'p'), undefined);
  });
});

describe('LinkGeneratorDetector: report, memory and resume', () => {
  it('reports the template, count and examples', () => {
    const detector = new LinkGeneratorDetector();
    feed(detector, 10, 10);
    for (let i = 0; i < 7; i++) detector.check(`https://shop.test/search?q=more&page=${i}`);
    assert.deepEqual(detector.report(), [
      {
        reason: 'link-generator',
        pattern: 'shop.test/search?page=&q=',
        count: 7,
        examples: [0, 1, 2, 3, 4].map((i) => `https://shop.test/search?q=more&page=${i}`),
      },
    ]);
  });

  it('forgets the least recently used templates beyond maxTemplates, flags included', () => {
    const detector = new LinkGeneratorDetector({ maxTemplates: 2, minPages: 1 });
    detector.observe({ url: 'https://a.test/x/1', nearDuplicate: true });
    assert.equal(detector.check('https://a.test/x/2'), 'link-generator');
    detector.observe({ url: 'https://a.test/y/1', nearDuplicate: false });
    detector.observe({ url: 'https://b.test/z/1', nearDuplicate: false }); // pushes out a.test/x/{n}
    assert.equal(detector.check('https://a.test/x/2'), undefined);
    assert.equal(detector.snapshot().templates.length, 2);
  });

  it('resumes from a JSON snapshot with the same answers', () => {
    const detector = new LinkGeneratorDetector();
    feed(detector, 10, 10);
    feed(detector, 5, 5, 'gen', '/item');
    detector.check('https://shop.test/search?q=a&page=1');
    const snapshot = JSON.parse(JSON.stringify(detector.snapshot()));
    const resumed = new LinkGeneratorDetector({}, snapshot);
    assert.equal(resumed.check('https://shop.test/search?q=b&page=2'), 'link-generator');
    assert.equal(resumed.check('https://shop.test/item?q=b&page=2', 'gen'), 'link-generator');
    assert.equal(resumed.check('https://shop.test/other'), undefined);
    assert.equal(resumed.report()[0]?.count, 2);
  });
});
