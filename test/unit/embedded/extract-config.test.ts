import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  buildConfig,
  checkExtractSelectors,
  parseCommand,
  UsageError,
} from '../../../functions/cli/cli-options.ts';

const dir = mkdtempSync(join(tmpdir(), 'crawlstack-extract-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

function configOf(argv: string[]) {
  const parsed = parseCommand(argv);
  return buildConfig(parsed, parsed.positionals);
}

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    return error.message;
  }
  assert.fail('expected a UsageError');
}

describe('--extract-config', () => {
  const fields = {
    fields: {
      title: { selector: 'h1' },
      links: { selector: 'a', attr: 'href', all: true },
    },
  };

  test('sets the extract fields; --config fields and --extract flags add up by name, flags winning', () => {
    const extractConfig = file('fields.json', fields);
    const config = file('crawl.json', { extract: { fromConfig: 'p', title: 'h2' } });
    const result = configOf([
      'http://a.test/',
      '--config',
      config,
      '--extract-config',
      extractConfig,
      '--extract',
      'links=nav a@href',
    ]);
    assert.deepEqual(result.extract, {
      fromConfig: 'p',
      title: { selector: 'h1', all: false },
      links: 'nav a@href',
    });
  });

  test('a bad file is a usage error naming the file and the field', () => {
    assert.match(
      usageError(() => configOf(['http://a.test/', '--extract-config', join(dir, 'none.json')])),
      /^--extract-config .*none\.json: cannot read it \(ENOENT\)/,
    );
    assert.match(
      usageError(() => configOf(['http://a.test/', '--extract-config', file('bad.json', '{ fields: ')])),
      /^--extract-config .*bad\.json: not valid JSON/,
    );
    assert.match(
      usageError(() => configOf(['http://a.test/', '--extract-config', file('list.json', [1])])),
      /^--extract-config .*list\.json: expected a JSON object of fields/,
    );
    const wrong = file('wrong.json', { fields: { links: { selector: 'a', attr: 'href list' } }, extra: 1 });
    const message = usageError(() => configOf(['http://a.test/', '--extract-config', wrong]));
    assert.match(message, /--extract-config .*wrong\.json: fields\.links\.attr: expected an attribute name/);
    assert.match(
      message,
      /--extract-config .*wrong\.json: unknown key "extra" \(the file holds \{"fields": \{\.\.\.\}\}\)/,
    );
    const url = file('url.json', { fields: { url: { selector: 'link[rel=canonical]', attr: 'href' } } });
    assert.match(
      usageError(() => configOf(['http://a.test/', '--extract-config', url])),
      /fields\.url: "url" is the page's URL in dataset\.jsonl/,
    );
  });

  test('selectors that do not compile are refused before the crawl, by field', async () => {
    const config = configOf([
      'http://a.test/',
      '--extract-config',
      file('sel.json', { fields: { a: { selector: 'h1[' }, b: { selector: 'h1' } } }),
    ]);
    await assert.rejects(checkExtractSelectors(config), {
      code: 'USAGE',
      message: 'extract.a: the CSS selector "h1[" does not compile',
    });
    await checkExtractSelectors(configOf(['http://a.test/', '--extract', 'b=h1']));
  });
});
