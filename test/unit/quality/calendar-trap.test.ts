import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CalendarTrapDetector } from '../../../functions/core/quality/calendar-trap.ts';

const NOW = Date.UTC(2025, 0, 15); // 2025-01-15

/** The month `offset` months after January 2025, as "YYYY/MM". */
function month(offset: number): string {
  const y = 2025 + Math.floor(offset / 12);
  const m = (((offset % 12) + 12) % 12) + 1;
  return `${y}/${String(m).padStart(2, '0')}`;
}

describe('CalendarTrapDetector: future dates', () => {
  it('rejects dates more than 2 years after now, in every date form', () => {
    const calendar = new CalendarTrapDetector();
    const rejected = [
      'https://a.test/cal/2027/01/16',
      'https://a.test/cal/2030/01',
      'https://a.test/calendar/2031',
      'https://a.test/events?year=2031&month=1',
      'https://a.test/cal.php?date=2099-12-31',
      'https://a.test/day/21000101',
    ];
    for (const url of rejected) assert.equal(calendar.check(url, NOW), 'calendar', url);
    const accepted = [
      'https://a.test/cal/2027/01/15',
      'https://a.test/cal/2026/12',
      'https://a.test/calendar/2027', // the year starts within the window
      'https://a.test/events?year=2025&month=6',
    ];
    for (const url of accepted) assert.equal(calendar.check(url, NOW), undefined, url);
  });

  it('leaves dateless URLs and numbers that are no dates alone', () => {
    const calendar = new CalendarTrapDetector();
    for (const url of [
      'https://a.test/',
      'https://a.test/item/12345',
      'https://a.test/items/2999', // a lone 4-digit number without a time word is an id
      'https://a.test/id/29991231x',
    ]) {
      assert.equal(calendar.check(url, NOW), undefined, url);
    }
  });

  it('honours maxFutureYears', () => {
    const calendar = new CalendarTrapDetector({ maxFutureYears: 0 });
    assert.equal(calendar.check('https://a.test/cal/2025/01/16', NOW), 'calendar');
    assert.equal(calendar.check('https://a.test/cal/2025/01/15', NOW), undefined);
  });
});

describe('CalendarTrapDetector: past dates', () => {
  it('stops a calendar walking backwards after 50 distinct dates of its template', () => {
    const calendar = new CalendarTrapDetector();
    const answers: (string | undefined)[] = [];
    for (let offset = 0; offset > -200; offset--) {
      answers.push(calendar.check(`https://a.test/cal/${month(offset)}`, NOW));
    }
    // 50 distinct months let through (the 24 within 2 years count too), then the old ones stop
    assert.equal(answers.filter((a) => a === undefined).length, 50);
    assert.deepEqual(answers.slice(0, 50), new Array(50).fill(undefined));
    assert.deepEqual(new Set(answers.slice(50)), new Set(['calendar']));
    // a month the template already produced is still fine (the same URL linked from elsewhere)
    assert.equal(calendar.check(`https://a.test/cal/${month(-40)}`, NOW), undefined);
    // months within 2 years stay fine even now (this one was never produced)
    assert.equal(calendar.check(`https://a.test/cal/${month(20)}`, NOW), undefined);
    assert.equal(calendar.check(`https://a.test/cal/${month(-60)}`, NOW), 'calendar');
  });

  it('never stops dated articles: each title is its own template', () => {
    const calendar = new CalendarTrapDetector();
    // slugs of letters only ("aa", "ab", ...): real titles are words
    const slug = (i: number) => String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26));
    for (let i = 0; i < 500; i++) {
      const y = 1998 + (i % 20);
      const url = `https://news.test/${y}/0${1 + (i % 9)}/1${i % 10}/story-${slug(i)}`;
      assert.equal(calendar.check(url, NOW), undefined, url);
    }
  });

  it('counts per host: another site has its own budget', () => {
    const calendar = new CalendarTrapDetector({ maxDatesPerTemplate: 3 });
    for (const y of [2001, 2002, 2003])
      assert.equal(calendar.check(`https://a.test/cal/${y}/01`, NOW), undefined);
    assert.equal(calendar.check('https://a.test/cal/2004/01', NOW), 'calendar');
    assert.equal(calendar.check('https://b.test/cal/2004/01', NOW), undefined);
  });
});

describe('CalendarTrapDetector: report, memory and resume', () => {
  it('reports the pattern, count and a few examples', () => {
    const calendar = new CalendarTrapDetector();
    for (let y = 2030; y < 2040; y++) calendar.check(`https://a.test/cal/${y}/01/01?view=day`, NOW);
    const [finding, ...rest] = calendar.report();
    assert.equal(rest.length, 0);
    assert.equal(finding?.reason, 'calendar');
    assert.equal(finding?.pattern, 'a.test/cal/{date}?view=');
    assert.equal(finding?.count, 10);
    assert.deepEqual(
      finding?.examples,
      [2030, 2031, 2032, 2033, 2034].map((y) => `https://a.test/cal/${y}/01/01?view=day`),
    );
  });

  it('remembers at most maxTemplates templates, least recently used forgotten first', () => {
    const calendar = new CalendarTrapDetector({ maxDatesPerTemplate: 1, maxTemplates: 2 });
    assert.equal(calendar.check('https://a.test/a/2001/01', NOW), undefined);
    assert.equal(calendar.check('https://a.test/a/2002/01', NOW), 'calendar');
    calendar.check('https://a.test/b/2001/01', NOW);
    calendar.check('https://a.test/c/2001/01', NOW); // pushes out /a/
    assert.equal(calendar.check('https://a.test/a/2002/01', NOW), undefined);
    assert.equal(calendar.snapshot().templates.length, 2);
  });

  it('resumes from a JSON snapshot with the same answers', () => {
    const calendar = new CalendarTrapDetector({ maxDatesPerTemplate: 3 });
    for (const y of [2001, 2002, 2003, 2004]) calendar.check(`https://a.test/cal/${y}/01`, NOW);
    const snapshot = JSON.parse(JSON.stringify(calendar.snapshot()));
    const resumed = new CalendarTrapDetector({ maxDatesPerTemplate: 3 }, snapshot);
    assert.equal(resumed.check('https://a.test/cal/2005/01', NOW), 'calendar');
    assert.equal(resumed.check('https://a.test/cal/2002/01', NOW), undefined);
    assert.equal(resumed.report()[0]?.count, 2);
  });
});
