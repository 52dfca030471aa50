import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostOf, mayNameDate, urlShape, urlTemplate } from '../../../functions/core/quality/url-template.ts';

describe('urlTemplate', () => {
  it('turns the calendar example into /cal/{date}?view=', () => {
    assert.equal(urlTemplate('/cal/2024/05/17?view=day'), '/cal/{date}?view=');
    assert.equal(urlTemplate('https://example.com/cal/2024/05/17?view=day'), '/cal/{date}?view=');
  });

  it('replaces numbers, ids and dates, and keeps words', () => {
    const cases: [string, string][] = [
      ['https://a.test/', '/'],
      ['https://a.test', '/'],
      ['https://a.test/docs/intro.html', '/docs/intro.html'],
      ['https://a.test/item/123', '/item/{n}'],
      ['https://a.test/page2.html', '/page{n}.html'],
      ['https://a.test/v1.2.3/api', '/v{n}.{n}.{n}/api'],
      ['https://a.test/u/550e8400-e29b-41d4-a716-446655440000/edit', '/u/{id}/edit'],
      ['https://a.test/commit/3f2a9c1b7d', '/commit/{id}'],
      ['https://a.test/s/AbCdEfGh12345678XyZ', '/s/{id}'],
      ['https://a.test/deadbeefcafe', '/deadbeefcafe'], // hex letters but no digit: a word
      ['https://a.test/posts/2015/03/12/my-first-post', '/posts/{date}/my-first-post'],
      ['https://a.test/2015/03/', '/{date}/'],
      ['https://a.test/archive/2019', '/archive/{date}'],
      ['https://a.test/items/2019', '/items/{n}'], // a lone 4-digit number is a year only after a time word
      ['https://a.test/events-2024-05-17.html', '/events-{date}.html'],
      ['https://a.test/log_2024_05', '/log_{date}'],
      ['https://a.test/day/20240517', '/day/{date}'],
      ['https://a.test/id/12345678', '/id/{n}'], // 8 digits outside 1900-2199: not a date
      ['https://a.test/2024/13/01', '/{n}/{n}/{n}'],
      ['https://a.test/v/2024-13-45', '/v/{n}-{n}-{n}'],
      ['https://a.test/caf%C3%A9/1', '/caf%C3%A9/{n}'],
      ['https://a.test/list?b=2&a=1&b=3', '/list?a=&b='],
      ['https://a.test/print?print', '/print?print='],
      ['https://a.test/x?', '/x'],
      ['https://a.test/x#section-2', '/x'],
    ];
    for (const [url, template] of cases) assert.equal(urlTemplate(url), template, url);
  });

  it('gives every page of a generated series one template', () => {
    const urls = [
      'https://shop.test/search?q=red&page=1&sort=price',
      'https://shop.test/search?page=2&q=blue&sort=name',
      'https://shop.test/search?sort=price&q=shoes&page=3',
    ];
    assert.equal(new Set(urls.map(urlTemplate)).size, 1);
    const days = ['2024/05/17', '2024/05/18', '2031/12/31', '1999/01/01'].map(
      (d) => `https://a.test/cal/${d}`,
    );
    assert.deepEqual(new Set(days.map(urlTemplate)), new Set(['/cal/{date}']));
  });
});

describe('urlShape', () => {
  it('returns the host (with its port) and the first date of the path, else of the query', () => {
    assert.deepEqual(urlShape('https://Example.COM:8080/cal/2024/05/17?view=day'), {
      host: 'example.com:8080',
      template: '/cal/{date}?view=',
      date: { year: 2024, month: 5, day: 17 },
    });
    assert.deepEqual(urlShape('https://a.test/2015/03/'), {
      host: 'a.test',
      template: '/{date}/',
      date: { year: 2015, month: 3 },
    });
    assert.deepEqual(urlShape('https://a.test/calendar/2031').date, { year: 2031 });
    assert.deepEqual(urlShape('https://a.test/docs/intro').date, undefined);
    assert.deepEqual(urlShape('/relative/2024-02-03').date, { year: 2024, month: 2, day: 3 });
    assert.equal(urlShape('/relative/2024-02-03').host, '');
  });

  it('reads dates from query values and year/month/day keys', () => {
    const cases: [string, object | undefined][] = [
      ['https://a.test/events?year=2031&month=1', { year: 2031, month: 1 }],
      ['https://a.test/events?month=1&year=2031&day=20', { year: 2031, month: 1, day: 20 }],
      ['https://a.test/events?year=2031', { year: 2031 }],
      ['https://a.test/events?month=5', undefined], // no year: no date
      ['https://a.test/cal.php?date=2024-05-17', { year: 2024, month: 5, day: 17 }],
      ['https://a.test/cal.php?d=2024%2F05%2F17', { year: 2024, month: 5, day: 17 }],
      ['https://a.test/cal.php?from=20240517&view=week', { year: 2024, month: 5, day: 17 }],
      ['https://a.test/2015/03/12/post?date=2099-01-01', { year: 2015, month: 3, day: 12 }],
      ['https://a.test/p?id=12345&year=abcd', undefined],
    ];
    for (const [url, date] of cases) assert.deepEqual(urlShape(url).date, date, url);
  });
});

describe('hostOf and mayNameDate', () => {
  it('hostOf reads the lowercase host without parsing the URL', () => {
    assert.equal(hostOf('https://WWW.Example.com:8443/a?b'), 'www.example.com:8443');
    assert.equal(hostOf('http://a.test?x=1'), 'a.test');
    assert.equal(hostOf('/just/a/path'), '');
  });

  it('mayNameDate is false only when no 4 digits are in a row', () => {
    assert.equal(mayNameDate('https://a.test/docs/intro'), false);
    assert.equal(mayNameDate('https://a.test/v/123/45'), false);
    assert.equal(mayNameDate('https://a.test/item/12345'), true);
  });
});
