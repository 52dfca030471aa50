import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LruMap } from '../../../functions/core/quality/lru-map.ts';
import { OTHER_PATTERN, TrapFindings } from '../../../functions/core/quality/trap-findings.ts';

describe('LruMap', () => {
  it('forgets the least recently used entry beyond its capacity, telling onEvict', () => {
    const evicted: string[] = [];
    const map = new LruMap<string, number>(2, (key) => evicted.push(key));
    map.set('a', 1);
    map.set('b', 2);
    assert.equal(map.get('a'), 1); // a is now the most recent
    map.set('c', 3);
    assert.deepEqual(evicted, ['b']);
    assert.deepEqual(
      [...map.entries()],
      [
        ['a', 1],
        ['c', 3],
      ],
    );
    assert.equal(map.peek('a'), 1); // peek does not refresh
    map.set('d', 4);
    assert.deepEqual(evicted, ['b', 'a']);
    assert.equal(map.size, 2);
    assert.equal(map.delete('c'), true);
    assert.deepEqual(evicted, ['b', 'a']);
    assert.throws(() => new LruMap(0), RangeError);
  });
});

describe('TrapFindings', () => {
  it('counts per reason and pattern, keeps a few distinct examples, lists the biggest first', () => {
    const findings = new TrapFindings(10, 2);
    findings.record('calendar', 'a.test/cal/{date}', 'u1');
    findings.record('calendar', 'a.test/cal/{date}', 'u1');
    findings.record('calendar', 'a.test/cal/{date}', 'u2');
    findings.record('calendar', 'a.test/cal/{date}', 'u3');
    findings.record('soft-404', 'a.test', 'u4');
    assert.deepEqual(findings.list(), [
      { reason: 'calendar', pattern: 'a.test/cal/{date}', count: 4, examples: ['u1', 'u2'] },
      { reason: 'soft-404', pattern: 'a.test', count: 1, examples: ['u4'] },
    ]);
  });

  it('counts patterns beyond its cap under (other)', () => {
    const findings = new TrapFindings(2, 1);
    for (const pattern of ['p1', 'p2', 'p3', 'p4'])
      findings.record('link-generator', pattern, `${pattern}-url`);
    const list = findings.list();
    assert.deepEqual(
      list.map((f) => [f.pattern, f.count]),
      [
        [OTHER_PATTERN, 2],
        ['p1', 1],
        ['p2', 1],
      ],
    );
  });
});
