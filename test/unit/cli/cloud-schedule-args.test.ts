/**
 * `crawlstack cloud recrawl` and `cloud schedule` arguments: the round's flags become the API's
 * settings (as `crawlstack recrawl` reads them), and `schedule` takes exactly one of --every,
 * --show, --remove, with round flags only beside --every.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCommand, UsageError } from '../../../functions/cli/cli-options.ts';
import { ROUND_OPTIONS, roundOverrides } from '../../../functions/cli/cli-recrawl.ts';
import { CLOUD_HELP, cloudCommand } from '../../../functions/cli/cloud/cli-cloud.ts';
import { scheduleAction } from '../../../functions/cli/cloud/cloud-schedule-args.ts';

const OPTIONS = {
  ...ROUND_OPTIONS,
  every: { type: 'string' as const, arg: 'WHEN', help: '' },
  show: { type: 'boolean' as const, help: '' },
  remove: { type: 'boolean' as const, help: '' },
};
const parse = (args: string[]) => parseCommand(args, OPTIONS, { configFlags: false });
const usage = (args: string[], pattern: RegExp) =>
  assert.throws(
    () => scheduleAction(parse(args)),
    (error: unknown) => error instanceof UsageError && pattern.test(error.message),
    args.join(' '),
  );

describe('cloud recrawl and cloud schedule arguments', () => {
  it('reads the round flags into the settings the API takes', () => {
    assert.deepEqual(
      roundOverrides(
        parse([
          '--schedule',
          'uniform',
          '--budget',
          '50',
          '--min-interval-ms',
          '0',
          '--max-interval-ms',
          '9',
        ]),
      ),
      { recrawlSchedule: 'uniform', recrawlBudget: 50, recrawlMinIntervalMs: 0, recrawlMaxIntervalMs: 9 },
    );
    assert.deepEqual(roundOverrides(parse([])), {});
    assert.throws(
      () => roundOverrides(parse(['--budget', 'ten'])),
      /--budget expects a whole number \(got "ten"\)/,
    );
  });

  it('creates with --every and the round flags, shows, removes', () => {
    assert.deepEqual(
      scheduleAction(parse(['c1', '--every', '7 days', '--schedule', 'full', '--budget', '100'])),
      {
        kind: 'create',
        crawlId: 'c1',
        body: { every: '7 days', recrawlSchedule: 'full', recrawlBudget: 100 },
      },
    );
    assert.deepEqual(scheduleAction(parse(['c1', '--show'])), { kind: 'show', crawlId: 'c1' });
    assert.deepEqual(scheduleAction(parse(['--remove', 'c1'])), { kind: 'remove', crawlId: 'c1' });
  });

  it('says what is wrong with the arguments', () => {
    usage(['--every', '7 days'], /a crawl id is needed/);
    usage(['c1', 'c2', '--show'], /unexpected argument "c2"/);
    usage(['c1'], /say what to do: --every "7 days" \(create or replace\), --show or --remove/);
    usage(['c1', '--show', '--remove'], /--show and --remove cannot go together/);
    usage(['c1', '--every', '1 day', '--show'], /--every and --show cannot go together/);
    usage(['c1', '--show', '--budget', '5'], /--budget sets the rounds of a schedule: only with --every/);
    usage(['c1', '--every', ' '], /--every needs an interval/);
  });

  it('lists both commands in the help, and refuses --json without --watch for recrawl', async () => {
    assert.match(CLOUD_HELP, /crawlstack cloud recrawl <id> \[--schedule S\] \[--budget N\] \[--watch\]/);
    assert.match(CLOUD_HELP, /crawlstack cloud schedule <id> --every "7 days"/);
    await assert.rejects(cloudCommand(['recrawl', 'c1', '--json']), /--quiet and --json go with --watch/);
  });
});
