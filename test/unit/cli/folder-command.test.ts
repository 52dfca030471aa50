/**
 * The options and parsing shared by the commands that read one crawl's folder (cache-study,
 * export, rank, recrawl, ui): `--out DIR` first and `--help` last in the help, the same refusals.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { folderOptions, optionsHelp, parseFolderCommand } from '../../../functions/cli/cli-options.ts';

const OPTIONS = folderOptions({ top: { type: 'string', arg: 'N', help: 'pages listed' } });

describe('folder commands', () => {
  test('options: --out DIR first, the command own options, --help last', () => {
    assert.deepEqual(Object.keys(OPTIONS), ['out', 'top', 'help']);
    const help = optionsHelp(OPTIONS).split('\n');
    assert.match(help[0]!, /^ {2}-o, --out DIR +the crawl's output folder$/);
    assert.match(help[2]!, /^ {2}-h, --help +show this help$/);
    assert.match(optionsHelp(folderOptions({}, 'a finished crawl')), /--out DIR +a finished crawl/);
  });

  test('parses --out and the own options', () => {
    const parsed = parseFolderCommand(['-o', 'x', '--top', '3'], 'rank', OPTIONS, 'HELP');
    assert.equal(parsed?.out, 'x');
    assert.deepEqual({ ...parsed?.values }, { out: 'x', top: '3' });
  });

  test('--help wins over anything else: nothing to run', () => {
    assert.equal(parseFolderCommand(['--help', 'extra'], 'rank', OPTIONS, ''), undefined);
  });

  test('refuses a positional argument, a missing --out and an unknown option, saying which', () => {
    assert.throws(() => parseFolderCommand(['-o', 'x', 'extra'], 'rank', OPTIONS, ''), {
      code: 'USAGE',
      message: 'unexpected argument "extra"',
    });
    assert.throws(() => parseFolderCommand([], 'export', OPTIONS, ''), {
      message: '--out is required (see crawlstack export --help)',
    });
    assert.throws(() => parseFolderCommand([], 'recrawl', OPTIONS, '', '--out DIR is required'), {
      message: '--out DIR is required',
    });
    assert.throws(() => parseFolderCommand(['-o', 'x', '--max-pages', '3'], 'rank', OPTIONS, ''), {
      code: 'USAGE',
      message: /max-pages/,
    });
  });
});
