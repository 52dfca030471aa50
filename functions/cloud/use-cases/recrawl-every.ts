/**
 * How often a crawl's recurring recrawl runs (`POST /crawls/{id}/schedule`, `every`), as the
 * EventBridge Scheduler expression the schedule is created with. Accepted:
 *
 * - `"<n> <unit>"`: minute(s), hour(s), day(s), week(s) (`"7 days"`, `"1 week"`, `"12 hours"`);
 * - `"rate(<n> <unit>)"`: Scheduler's own rate expression (minute(s), hour(s), day(s));
 * - `"cron(<min> <hour> <day-of-month> <month> <day-of-week> <year>)"`: Scheduler's six fields,
 *   at most one run an hour (the minute field one number), at most one a day when the minimum
 *   interval is over an hour (the hour field one number too).
 *
 * A rate shorter than the minimum interval (a setting of the stack, 1 hour by default) is refused,
 * so a schedule cannot start a round every minute. Pure: no clock, no I/O.
 */

import { DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES } from '../env.ts';

/** A valid `every`: Scheduler's expression, and its period when it is a rate. */
export type RecrawlEvery =
  | { ok: true; expression: string; intervalMs?: number }
  | { ok: false; problem: string };

const MINUTE_MS = 60_000;
const UNIT_MS: Record<string, number> = {
  minute: MINUTE_MS,
  hour: 60 * MINUTE_MS,
  day: 24 * 60 * MINUTE_MS,
  week: 7 * 24 * 60 * MINUTE_MS,
};

export { DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES };

/** The longest rate taken: a round a year apart is a cron(...) schedule's job. */
const MAX_INTERVAL_MS = 366 * UNIT_MS.day!;

function spelled(ms: number): string {
  for (const unit of ['week', 'day', 'hour', 'minute'] as const) {
    const size = UNIT_MS[unit]!;
    if (ms % size === 0) {
      const n = ms / size;
      return `${n} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}

/** Scheduler's rate expression for `ms` (whole minutes): the largest unit that divides it. */
function rateOf(ms: number): string {
  for (const unit of ['day', 'hour', 'minute'] as const) {
    const size = UNIT_MS[unit]!;
    if (ms % size === 0) {
      const n = ms / size;
      return `rate(${n} ${unit}${n === 1 ? '' : 's'})`;
    }
  }
  return `rate(${Math.round(ms / MINUTE_MS)} minutes)`;
}

function rate(value: string, unitText: string, written: string, minMs: number): RecrawlEvery {
  const unit = unitText.toLowerCase().replace(/s$/, '');
  const size = UNIT_MS[unit];
  if (!/^\d+$/.test(value) || size === undefined)
    return { ok: false, problem: `every: ${JSON.stringify(written)} is not "<n> <unit>"` };
  const n = Number(value);
  if (n < 1)
    return { ok: false, problem: `every: ${JSON.stringify(written)}: the number must be at least 1` };
  const ms = n * size;
  if (ms < minMs)
    return {
      ok: false,
      problem: `every: ${JSON.stringify(written)} is shorter than this stack's minimum interval of ${spelled(minMs)}`,
    };
  if (ms > MAX_INTERVAL_MS)
    return { ok: false, problem: `every: ${JSON.stringify(written)} is longer than a year; use cron(...)` };
  return { ok: true, expression: rateOf(ms), intervalMs: ms };
}

const CRON_FIELDS = ['minutes', 'hours', 'day-of-month', 'month', 'day-of-week', 'year'];
// Each field: digits, names (JAN, MON), and the characters Scheduler's cron allows (, - * ? / L W #).
const CRON_FIELD = /^[0-9A-Za-z,\-*?/LW#]+$/;

function cron(body: string, written: string, minMs: number): RecrawlEvery {
  const fields = body.trim().split(/\s+/);
  if (fields.length !== 6 || fields.some((f) => !CRON_FIELD.test(f)))
    return {
      ok: false,
      problem: `every: ${JSON.stringify(written)}: cron(...) takes six fields (${CRON_FIELDS.join(' ')}), e.g. cron(0 3 ? * MON *)`,
    };
  const [minutes, hours, dayOfMonth, , dayOfWeek] = fields as [string, string, string, string, string];
  if (dayOfMonth !== '?' && dayOfWeek !== '?')
    return {
      ok: false,
      problem: `every: ${JSON.stringify(written)}: one of day-of-month and day-of-week must be "?"`,
    };
  const single = (field: string, max: number) => /^\d+$/.test(field) && Number(field) <= max;
  if (!single(minutes, 59))
    return {
      ok: false,
      problem: `every: ${JSON.stringify(written)}: the minutes field must be one minute (0-59), so that rounds are at least an hour apart`,
    };
  if (minMs > UNIT_MS.hour! && !single(hours, 23))
    return {
      ok: false,
      problem: `every: ${JSON.stringify(written)}: the hours field must be one hour (0-23): this stack's minimum interval is ${spelled(minMs)}`,
    };
  return { ok: true, expression: `cron(${fields.join(' ')})` };
}

/** Parses `every` (see the module comment); `minIntervalMinutes` is the stack's minimum. */
export function parseRecrawlEvery(
  every: unknown,
  minIntervalMinutes = DEFAULT_MIN_RECRAWL_INTERVAL_MINUTES,
): RecrawlEvery {
  if (typeof every !== 'string' || every.trim() === '')
    return {
      ok: false,
      problem: `every: expected "<n> <unit>" (e.g. "7 days"), rate(...) or cron(...), got ${JSON.stringify(every ?? null)}`,
    };
  const text = every.trim();
  const minMs = minIntervalMinutes * MINUTE_MS;
  const plain = /^(\S+)\s+([A-Za-z]+)$/.exec(text);
  if (plain !== null) return rate(plain[1]!, plain[2]!, text, minMs);
  const rated = /^rate\(\s*(\S+)\s+([A-Za-z]+)\s*\)$/.exec(text);
  if (rated !== null) {
    if (/^weeks?$/i.test(rated[2]!))
      return { ok: false, problem: `every: ${JSON.stringify(text)}: rate(...) takes minutes, hours or days` };
    return rate(rated[1]!, rated[2]!, text, minMs);
  }
  const crond = /^cron\((.*)\)$/.exec(text);
  if (crond !== null) return cron(crond[1]!, text, minMs);
  if (/^at\(/.test(text))
    return {
      ok: false,
      problem: `every: ${JSON.stringify(text)}: a one-time at(...) is not recurring; use POST /crawls/{id}/recrawl`,
    };
  return {
    ok: false,
    problem: `every: ${JSON.stringify(text)} is not "<n> <unit>" (e.g. "7 days"), rate(...) or cron(...)`,
  };
}
