/**
 * The embedded crawler's lessons (step-quality.ts): what a step taught the duplicate-URL rules is
 * written with the step and replayed after a restart, declared canonical URLs included.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { CrawlQuality } from '../../../functions/core/quality/crawl-quality.ts';
import { DuplicateUrlRules } from '../../../functions/core/quality/duplicate-url-rules.ts';
import { type Lesson, replayLessons, StepUrlRules } from '../../../functions/embedded/step-quality.ts';

const H = 'h.example';
const O = `http://${H}`;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

test('lessons replayed after a restart teach the rules what the steps taught them, declarations included', async () => {
  const live = new DuplicateUrlRules({ minSupport: 2, auditShare: 0 });
  const steps: Lesson[][] = [];
  for (const [n, page] of [
    [1, '/a.html'],
    [2, '/b.html'],
  ] as const) {
    const lessons: Lesson[] = [];
    const step = new StepUrlRules(live, lessons);
    step.observePage({
      url: `${O}/node/${n}`,
      contentHash: sha(`page ${n}`),
      canonical: `${O}${page}`,
    });
    step.observeDeclared(`${O}/node/${n}`, `${O}${page}`);
    steps.push(lessons);
  }
  assert.ok(live.aliasNamespace(`${O}/node/7`), 'learned live');
  assert.deepEqual(
    steps.map((lessons) => lessons.map((lesson) => Object.keys(lesson)[0])),
    [
      ['o', 'k'],
      ['o', 'k'],
    ],
  );

  const parsed = parseCrawlConfig({ seeds: [`${O}/`] });
  assert.ok(parsed.ok);
  const resumed = new DuplicateUrlRules({ minSupport: 2, auditShare: 0 });
  const quality = new CrawlQuality(parsed.config, { random: () => 0.5 });
  assert.equal(await replayLessons(quality, JSON.parse(JSON.stringify(steps)), resumed), 4);
  assert.ok(resumed.aliasNamespace(`${O}/node/7`), 'learned again from the lessons');
});

test('what a step merged is noted as a lesson: after a restart, a block still gives it back', async () => {
  const live = new DuplicateUrlRules({ minSupport: 2, auditShare: 0.02, auditFirst: 1 });
  const steps: Lesson[][] = [];
  const step = (run: (rules: StepUrlRules) => void) => {
    const lessons: Lesson[] = [];
    run(new StepUrlRules(live, lessons));
    steps.push(lessons);
  };
  for (const n of [1, 2, 3])
    step((rules) => rules.observePage({ url: `${O}/item?id=${n}`, contentHash: sha('bait') }));
  step((rules) => {
    assert.equal(rules.rewrite(`${O}/item?id=4`), undefined, 'the audit');
    assert.equal(rules.rewrite(`${O}/item?id=5`)?.url, `${O}/item`);
    assert.equal(rules.rewrite(`${O}/item?id=6`, { queued: true })?.url, `${O}/item`);
    assert.equal(rules.rewrite(`${O}/other`), undefined, 'no rule: no lesson');
  });
  assert.deepEqual(steps[3], [
    { m: [`${O}/item?id=4`, 'r', false] },
    { m: [`${O}/item?id=5`, 'r', false] },
    { m: [`${O}/item?id=6`, 'r', true] },
  ]);
  const parsed = parseCrawlConfig({ seeds: [`${O}/`] });
  assert.ok(parsed.ok);
  const resumed = new DuplicateUrlRules({ minSupport: 2, auditShare: 0.02, auditFirst: 1 });
  const quality = new CrawlQuality(parsed.config, { random: () => 0.5 });
  await replayLessons(quality, JSON.parse(JSON.stringify(steps)), resumed);
  assert.equal(resumed.rewrite(`${O}/item?id=4`), undefined, 'still the audit');
  const [blocked] = resumed.observePage({ url: `${O}/item?id=4`, contentHash: sha('item 4') });
  assert.deepEqual(blocked?.readmit, [`${O}/item?id=5`]);
  assert.deepEqual(blocked?.requeue, [`${O}/item?id=6`]);
});
