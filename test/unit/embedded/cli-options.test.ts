import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  buildConfig,
  CONFIG_FLAGS,
  configFlagsHelp,
  parseCommand,
  UsageError,
} from '../../../functions/cli/cli-options.ts';
import { crawlConfigSchema } from '../../../functions/core/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'crawlstack-cli-options-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** parseCommand + buildConfig as `crawl` runs them. */
function configOf(argv: string[]) {
  const parsed = parseCommand(argv);
  return buildConfig(parsed, parsed.positionals);
}

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.equal(error.code, 'USAGE');
    return error.message;
  }
  assert.fail('expected a UsageError');
}

describe('CONFIG_FLAGS', () => {
  test('every flag sets a key of the config schema, and no key has two flags', () => {
    const keys = Object.keys(crawlConfigSchema.shape);
    for (const spec of CONFIG_FLAGS)
      assert.ok(keys.includes(spec.key), `--${spec.flag} sets unknown key ${spec.key}`);
    assert.equal(new Set(CONFIG_FLAGS.map((s) => s.key)).size, CONFIG_FLAGS.length);
    assert.equal(new Set(CONFIG_FLAGS.map((s) => s.flag)).size, CONFIG_FLAGS.length);
  });

  test('the help names every flag', () => {
    const help = configFlagsHelp();
    for (const spec of CONFIG_FLAGS) assert.match(help, new RegExp(`--${spec.flag} `));
  });
});

describe('flags to config', () => {
  test('each flag type converts: int, number, string, boolean, list, csv, pairs', () => {
    const config = configOf([
      'http://a.test/',
      'http://b.test/',
      '--max-pages',
      '10',
      '--delay-factor',
      '2.5',
      '--scope',
      'any',
      '--allow-private',
      '--include',
      '/docs/',
      '--include',
      '/blog/',
      '--follow',
      'page, image,,document',
      '--extract',
      'h1=h1',
      '--extract',
      'img=img@src',
    ]);
    assert.deepEqual(config.seeds, ['http://a.test/', 'http://b.test/']);
    assert.equal(config.maxPages, 10);
    assert.equal(config.delayFactor, 2.5);
    assert.equal(config.scope, 'any');
    assert.equal(config.allowPrivate, true);
    assert.deepEqual(config.include, ['/docs/', '/blog/']);
    assert.deepEqual(config.follow, ['page', 'image', 'document']);
    assert.deepEqual(config.extract, { h1: 'h1', img: 'img@src' });
    assert.equal(config.delayMs, 1000, 'defaults fill the rest');
  });

  test('number problems name the flag and the value', () => {
    assert.equal(
      usageError(() => configOf(['http://a.test/', '--delay', '1.5'])),
      '--delay: expected a whole number, got "1.5"',
    );
    assert.equal(
      usageError(() => configOf(['http://a.test/', '--delay', 'soon'])),
      '--delay: expected a whole number, got "soon"',
    );
    assert.equal(
      usageError(() => configOf(['http://a.test/', '--delay-factor', ''])),
      '--delay-factor: expected a number, got ""',
    );
  });

  test('a negative number after a flag is its value, and the schema says what is wrong', () => {
    assert.match(
      usageError(() => configOf(['http://a.test/', '--max-pages', '-3'])),
      /^maxPages \(--max-pages\): .*-3/,
    );
    assert.match(
      usageError(() => configOf(['http://a.test/', '--delay-factor', '-.5'])),
      /^delayFactor \(--delay-factor\): /,
    );
    // after `--`, everything is positional
    assert.deepEqual(parseCommand(['--', '--max-pages', '-3']).positionals, ['--max-pages', '-3']);
  });

  test('schema problems carry the flag name, also for list items', () => {
    assert.match(
      usageError(() => configOf(['http://a.test/', '--scope', 'world'])),
      /^scope \(--scope\): .*"world"/,
    );
    assert.match(
      usageError(() => configOf(['http://a.test/', '--include', 'ok', '--include', '('])),
      /^include\[1\] \(--include\): not a valid regular expression/,
    );
    assert.match(
      usageError(() => configOf(['http://a.test/', '--follow', 'page,movies'])),
      /^follow\.1 \(--follow\): /,
    );
  });

  test('bad pairs, unknown flags and missing values are usage errors', () => {
    assert.equal(
      usageError(() => configOf(['http://a.test/', '--extract', 'novalue'])),
      '--extract: expected name=selector, got "novalue"',
    );
    assert.match(
      usageError(() => parseCommand(['--frobnicate'])),
      /--frobnicate/,
    );
    assert.match(
      usageError(() => parseCommand(['--max-pages'])),
      /--max-pages/,
    );
  });

  test('--allow-private takes networks, or none (the default private networks)', () => {
    assert.equal(configOf(['http://a.test/', '--allow-private']).allowPrivate, true);
    assert.equal(configOf(['--allow-private', 'http://a.test/']).allowPrivate, true);
    const listed = configOf(['--allow-private', '127.0.0.0/8,10.1.0.0/16', 'http://a.test/']);
    assert.deepEqual(listed.allowPrivate, ['127.0.0.0/8', '10.1.0.0/16']);
    assert.deepEqual(listed.seeds, ['http://a.test/']);
    assert.deepEqual(configOf(['http://a.test/', '--allow-private=loopback, metadata']).allowPrivate, [
      'loopback',
      'metadata',
    ]);
    assert.match(
      usageError(() => configOf(['http://a.test/', '--allow-private', '10.0.0.0/33'])),
      /^allowPrivate \(--allow-private\): "10\.0\.0\.0\/33" is neither a network name \(loopback, private, /,
    );
    assert.match(
      usageError(() => configOf(['http://a.test/', '--allow-private=intranet'])),
      /"intranet" is neither a network name/,
    );
    // The same setting in a config file or the HTTP API: a list, a comma-separated string, a boolean.
    const schema = (allowPrivate: unknown) =>
      crawlConfigSchema.safeParse({ seeds: ['http://a.test/'], allowPrivate });
    assert.deepEqual(schema(['link-local', 'fd00::/8']).data?.allowPrivate, ['link-local', 'fd00::/8']);
    assert.deepEqual(schema('private,metadata').data?.allowPrivate, ['private', 'metadata']);
    assert.equal(schema(false).data?.allowPrivate, false);
    assert.equal(schema([]).success, false, 'an empty list allows nothing: say so rather than guess');
  });

  test('no seed anywhere is a usage error that names seeds', () => {
    assert.match(
      usageError(() => configOf([])),
      /^seeds: no seed URL given/,
    );
    assert.match(
      usageError(() => configOf(['ftp://a.test/'])),
      /^seeds\[0\]: "ftp:\/\/a.test\/" uses ftp:/,
    );
  });
});

describe('--config files', () => {
  test('file values are used, flags win, positional seeds replace the file seeds', () => {
    const path = configFile(
      'ok.json',
      JSON.stringify({ seeds: ['http://file.test/'], maxPages: 5, delayMs: 0, exclude: ['/x'] }),
    );
    const fromFile = configOf(['--config', path]);
    assert.deepEqual(fromFile.seeds, ['http://file.test/']);
    assert.equal(fromFile.maxPages, 5);
    assert.deepEqual(fromFile.exclude, ['/x']);
    const overridden = configOf(['http://flag.test/', '--config', path, '--max-pages', '7']);
    assert.deepEqual(overridden.seeds, ['http://flag.test/']);
    assert.equal(overridden.maxPages, 7);
    assert.equal(overridden.delayMs, 0);
  });

  test('overrides from the command win over everything (hunt fixes its depth)', () => {
    const parsed = parseCommand(['--max-depth', '20']);
    assert.equal(buildConfig(parsed, ['http://a.test/'], { maxDepth: 4 }).maxDepth, 4);
  });

  test('unreadable, non-JSON, non-object and unknown keys are usage errors naming the file or key', () => {
    assert.match(
      usageError(() => configOf(['--config', join(dir, 'missing.json')])),
      /^--config .*missing\.json: cannot read it \(ENOENT\)/,
    );
    assert.match(
      usageError(() => configOf(['--config', configFile('bad.json', '{ seeds: ')])),
      /not valid JSON/,
    );
    assert.match(
      usageError(() => configOf(['--config', configFile('array.json', '["http://a.test/"]')])),
      /expected a JSON object/,
    );
    assert.match(
      usageError(() => configOf(['--config', configFile('null.json', 'null')])),
      /expected a JSON object/,
    );
    assert.match(
      usageError(() =>
        configOf(['--config', configFile('unknown.json', '{"seeds":["http://a.test/"],"maxPagez":1}')]),
      ),
      /unknown setting "maxPagez"/,
    );
  });
});
