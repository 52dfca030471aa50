// Runs the test tiers with Node's own test runner and tsx.
//   npm test                 all tiers that run on this machine
//   npm test -- unit e2e     only these tiers (folders under test/)
//   npm test -- test/unit/url/canonicalize.test.ts   only these files
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const TIERS = ['unit', 'contract', 'e2e', 'hostile', 'cdk', 'emulator'];
const args = process.argv.slice(2);
const options = args.filter((a) => a.startsWith('--'));
const selectors = args.filter((a) => !a.startsWith('--'));

function testFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const files = [];
for (const selector of selectors.length > 0 ? selectors : TIERS) {
  if (TIERS.includes(selector)) {
    try {
      files.push(...testFiles(join('test', selector)));
    } catch {
      // a tier with no folder yet has no tests
    }
  } else if (statSync(selector, { throwIfNoEntry: false })?.isDirectory()) {
    files.push(...testFiles(selector));
  } else {
    files.push(selector);
  }
}
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--disable-warning=ExperimentalWarning',
    '--test',
    '--test-concurrency=2',
    '--test-timeout=600000',
    ...options,
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, CRAWLSTACK_TEST: '1' } },
);
process.exit(result.status ?? 1);
