/**
 * The core stays pure (STYLE.md): no AWS SDK, no `process`, no `Date.now`, no `Math.random`, no
 * import of an outer folder (test/unit/layering.test.ts checks every folder's imports). Biome's override on
 * functions/core/** catches the imports and `process` while editing; it has no rule for a banned
 * property such as `Date.now`, so this test reads every core file (comments stripped by esbuild).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { transformSync } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '../..');
const CORE = join(ROOT, 'functions/core');
const BANNED_PACKAGES =
  /^(@aws-sdk\/|@aws-lambda-powertools\/|@smithy\/|undici$|node:(fs|net|http|https|dns|sqlite|child_process|worker_threads)(\/|$))/;
const BANNED_CALLS: [RegExp, string][] = [
  [/\bDate\.now\b/, 'Date.now (time comes through the Clock port)'],
  [/\bMath\.random\b/, 'Math.random (randomness comes in through deps)'],
  [/(?<![.\w$])process\b/, 'process (configuration is read by the entry or the CLI)'],
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Every module specifier of the file's static and dynamic imports and re-exports. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)) {
    found.push(match[1]!);
  }
  return found;
}

/** Problems of one core file, empty when it is pure. */
function impurities(path: string, source: string): string[] {
  const problems: string[] = [];
  for (const spec of specifiers(source)) {
    if (BANNED_PACKAGES.test(spec)) problems.push(`imports ${spec}`);
    if (spec.startsWith('.')) {
      const target = resolve(dirname(path), spec);
      if (!target.startsWith(`${CORE}/`)) {
        problems.push(`imports ${spec} (outside functions/core)`);
      }
    }
  }
  const code = transformSync(source, { loader: 'ts', legalComments: 'none' }).code;
  for (const [pattern, what] of BANNED_CALLS) if (pattern.test(code)) problems.push(`uses ${what}`);
  return problems;
}

describe('the core is pure', () => {
  it('no core file imports an SDK or an outer folder, or uses process, Date.now or Math.random', () => {
    const files = sourceFiles(CORE);
    assert.ok(files.length > 40, `found ${files.length} core files`);
    const problems = files.flatMap((path) =>
      impurities(path, readFileSync(path, 'utf8')).map((p) => `${relative(ROOT, path)}: ${p}`),
    );
    assert.deepEqual(problems, []);
  });

  it('the check catches each kind of impurity (and not a mention in a comment)', () => {
    const path = join(CORE, 'probe.ts');
    const dirty = [
      "import { SQSClient } from '@aws-sdk/client-sqs';",
      "import { UndiciFetcher } from '../adapters/http/undici-fetcher.ts';",
      "import type { EmbeddedCrawlerOptions } from '../embedded/embedded-crawler.ts';",
      "export const later = () => import('../cloud/start-crawl.ts');",
      'export const a = [SQSClient, UndiciFetcher, process.env.X, Date.now(), Math.random()];',
    ].join('\n');
    assert.deepEqual(impurities(path, dirty), [
      'imports @aws-sdk/client-sqs',
      'imports ../adapters/http/undici-fetcher.ts (outside functions/core)',
      'imports ../embedded/embedded-crawler.ts (outside functions/core)',
      'imports ../cloud/start-crawl.ts (outside functions/core)',
      'uses Date.now (time comes through the Clock port)',
      'uses Math.random (randomness comes in through deps)',
      'uses process (configuration is read by the entry or the CLI)',
    ]);
    const clean = [
      "import type { Clock } from './ports.ts';",
      "import { fingerprint } from './url/fingerprint.ts';",
      '/** Never Date.now() or Math.random() here; process.env is read by the entry. */',
      'export const f = (clock: Clock) => [clock.now(), fingerprint, subprocess.x];',
      'declare const subprocess: { x: number };',
    ].join('\n');
    assert.deepEqual(impurities(path, clean), []);
  });
});
