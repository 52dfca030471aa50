/**
 * The options, help and parsing shared by the commands that take the crawl config flags (crawl,
 * hunt, canonicalize, cloud start): `--help` last among their own options, the config flags
 * (all, or the few a command names) after them, `--help` answered before anything runs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  commandOptions,
  configFlagsHelp,
  optionsHelp,
  parseConfigCommand,
} from '../../../functions/cli/cli-options.ts';

const OPTIONS = commandOptions({ quiet: { type: 'boolean', short: 'q', help: 'no progress line' } });

describe('config commands', () => {
  test('options: the command own options, then --help', () => {
    assert.deepEqual(Object.keys(OPTIONS), ['quiet', 'help']);
  });

  test('help: own options, extra rows, then the config flags, in one aligned column', () => {
    const lines = optionsHelp(OPTIONS, { rows: [['--ui[=PORT]', 'the dashboard']], configFlags: true }).split(
      '\n',
    );
    assert.match(lines[0]!, /^ {2}-q, --quiet +no progress line$/);
    assert.match(lines[1]!, /^ {2}-h, --help +show this help$/);
    assert.match(lines[2]!, /^ {2}--ui\[=PORT\] +the dashboard$/);
    assert.match(lines[3]!, /^ {2}--config FILE +JSON file/);
    const flags = configFlagsHelp().split('\n');
    assert.equal(lines.length, 3 + flags.length);
    const column = lines[0]!.indexOf('no progress line');
    assert.ok(lines.every((line) => line.length > column && line[column - 1] === ' '));
  });

  test('help: only the config flags named', () => {
    const lines = optionsHelp(OPTIONS, { configFlags: ['config', 'strip-param'] }).split('\n');
    assert.equal(lines.length, 4);
    assert.match(lines[2]!, /^ {2}--config FILE +/);
    assert.match(lines[3]!, /^ {2}--strip-param NAME +query parameter to remove/);
  });

  test('help: no config flags unless asked', () => {
    assert.equal(optionsHelp(OPTIONS).split('\n').length, 2);
  });

  test('parses the config flags and the own options', () => {
    const parsed = parseConfigCommand(['-q', '--max-pages', '3', 'http://a.test/'], OPTIONS, 'HELP');
    assert.deepEqual(parsed?.positionals, ['http://a.test/']);
    assert.equal(parsed?.values.quiet, true);
    assert.equal(parsed?.values['max-pages'], '3');
  });

  test('--help wins over anything else: nothing to run', () => {
    assert.equal(parseConfigCommand(['--help', '--max-pages', '3'], OPTIONS, ''), undefined);
  });

  test('refuses an unknown option, naming it', () => {
    assert.throws(() => parseConfigCommand(['--mxa-pages', '3'], OPTIONS, ''), {
      code: 'USAGE',
      message: 'unknown option --mxa-pages (did you mean --max-pages?)',
    });
  });
});
