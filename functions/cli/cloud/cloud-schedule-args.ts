/**
 * `crawlstack cloud schedule <id> --every "7 days" [round flags] | --show | --remove`: which of the
 * three the arguments ask for, and the API body of `--every`. The API checks the expression and
 * the settings (one schema, one minimum interval: the stack's); here only the shape of the call.
 */
import type { ParsedCommand } from '../cli-options.ts';
import { UsageError } from '../cli-options.ts';
import { ROUND_OPTIONS, roundOverrides } from '../cli-recrawl.ts';

/** What `cloud schedule` does. */
export type ScheduleAction =
  | { kind: 'create'; crawlId: string; body: Record<string, unknown> }
  | { kind: 'show' | 'remove'; crawlId: string };

/** Reads the action from parsed arguments (positionals: the crawl id). */
export function scheduleAction(parsed: ParsedCommand): ScheduleAction {
  const [crawlId, extra] = parsed.positionals;
  if (crawlId === undefined)
    throw new UsageError(
      'a crawl id is needed: crawlstack cloud schedule <id> --every "7 days" | --show | --remove',
    );
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  const every = parsed.values.every;
  const chosen = [
    typeof every === 'string' ? '--every' : undefined,
    parsed.values.show === true ? '--show' : undefined,
    parsed.values.remove === true ? '--remove' : undefined,
  ].filter((flag) => flag !== undefined);
  if (chosen.length !== 1)
    throw new UsageError(
      chosen.length === 0
        ? 'say what to do: --every "7 days" (create or replace), --show or --remove'
        : `${chosen.join(' and ')} cannot go together: one of --every, --show, --remove`,
    );
  const roundFlags = Object.keys(ROUND_OPTIONS).filter((flag) => parsed.values[flag] !== undefined);
  if (typeof every !== 'string') {
    if (roundFlags.length > 0)
      throw new UsageError(`--${roundFlags[0]} sets the rounds of a schedule: only with --every`);
    return { kind: parsed.values.show === true ? 'show' : 'remove', crawlId };
  }
  if (every.trim() === '') throw new UsageError('--every needs an interval, e.g. --every "7 days"');
  return { kind: 'create', crawlId, body: { every, ...roundOverrides(parsed) } };
}
