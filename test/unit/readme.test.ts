/**
 * The README's configuration table is the user's manual for the one config schema: every setting
 * and every flag must be in it, so adding a setting without documenting it fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONFIG_FLAGS } from '../../functions/cli/cli-options.ts';
import { crawlConfigSchema } from '../../functions/core/config.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## How it behaves'));

describe('README configuration table', () => {
  it('lists every setting of the schema', () => {
    const missing = Object.keys(crawlConfigSchema.shape).filter((key) => !table.includes(`| \`${key}\` |`));
    assert.deepEqual(missing, []);
  });

  it('lists every config flag next to its setting', () => {
    const missing = CONFIG_FLAGS.filter((spec) => !table.includes(`| \`${spec.key}\` | \`--${spec.flag}`));
    assert.deepEqual(
      missing.map((s) => s.flag),
      [],
    );
  });

  it('has no unfilled placeholders', () => {
    assert.doesNotMatch(readme, /\b(BENCH_TABLE|BENCH_FRONTIER|CLOUD_SECTION|TEST_TIME)\b/);
  });
});
