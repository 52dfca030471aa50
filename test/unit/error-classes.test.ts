/**
 * Every error class of the product (functions/, lib/) follows one convention (README, "Errors"):
 * its `name` is the class name (stack traces and logs say which error it is, not "Error"), and it
 * carries a stable `code` in SCREAMING_SNAKE_CASE, as Node's own codes (`ERR_INVALID_ARG_TYPE`,
 * `ENOENT`) are written. Outcomes and reasons (`robots`, `max-pages`, `gave-up`) are values, in
 * kebab-case, and never error codes. The test finds the classes by reading the sources, so a new
 * class cannot slip past it: an exported one must have an example below, which is checked as an
 * instance; one kept inside its module must at least set its name and code in its body.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { judgeError } from '../../functions/core/step/error-policy.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** Entry files wire AWS clients from the environment when imported; lib/app.ts synthesizes. */
const NOT_IMPORTED = [join(ROOT, 'functions/cloud/lambdas'), join(ROOT, 'lib/app.ts')];
const CODE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

/** One instance of each exported error class, built as the code that throws it does. */
const EXAMPLES: Record<string, (Class: new (...args: never[]) => Error) => Error> = {
  DashboardListenError: (C) => new (C as unknown as new (m: string) => Error)('port taken'),
  CrawlFolderError: (C) =>
    new (C as unknown as new (c: string, m: string) => Error)('CRAWL_FOLDER_BUSY', 'busy'),
  CrawlStorageError: (C) =>
    new (C as unknown as new (c: string, m: string) => Error)('CRAWL_STORAGE_FULL', 'disk full'),
  CrawlStateMismatchError: (C) => new (C as unknown as new (m: string) => Error)('other seeds'),
  UsageError: (C) => new (C as unknown as new (m: string) => Error)('--out is required'),
  MissingEnvError: (C) => new (C as unknown as new (n: string[]) => Error)(['URL_TABLE']),
  RecrawlConfigError: (C) => new (C as unknown as new (m: string) => Error)('no crawl in this folder'),
  InvalidEnvError: (C) =>
    new (C as unknown as new (n: string, v: string, e: string) => Error)(
      'WORKER_HOSTS_PER_INVOCATION',
      'x',
      'an integer',
    ),
  InvalidCursorError: (C) => new (C as unknown as new (w: string) => Error)('not ours'),
  InjectedCrashError: (C) => new (C as unknown as new (s: string, n: number) => Error)('after-claims', 1),
  InjectedFailureError: (C) => new (C as unknown as new (u: string) => Error)('http://a.test/poison'),
  SimhashFormatError: (C) => new (C as unknown as new (v: string) => Error)('xyz'),
  DuplicateUrlRuleError: (C) => new (C as unknown as new (m: string) => Error)('not a rule'),
  PermanentError: (C) =>
    new (C as unknown as new (c: string, m: string) => Error)('SOME_CODE', 'cannot be helped'),
  WarcFormatError: (C) =>
    new (C as unknown as new (c: string, m: string) => Error)('INVALID_DATE', 'not a date'),
  TraceFormatError: (C) => new (C as unknown as new (m: string) => Error)('odd length'),
  FingerprintFormatError: (C) => new (C as unknown as new (v: string) => Error)('zz'),
  RobotsUrlError: (C) => new (C as unknown as new (u: string) => Error)('::'),
  DynamoBatchIncompleteError: (C) =>
    new (C as unknown as new (o: string, n: number) => Error)('BatchGetItem', 3),
  SqsSendError: (C) =>
    new (C as unknown as new (o: string, f: { Id: string; Code: string }[]) => Error)('SendMessageBatch', [
      { Id: '0', Code: 'InternalError' },
    ]),
  GzipFormatError: (C) => new (C as unknown as new (m: string) => Error)('bad header'),
  BodyBudgetError: (C) =>
    new (C as unknown as new (m: string) => Error)(
      'costPerByte must be a finite number of at least 1, got 0',
    ),
  BlockedAddressError: (C) =>
    new (C as unknown as new (a: string, c: string) => Error)('10.0.0.1', 'private'),
  CrawlDbVersionError: (C) => new (C as unknown as new (m: string) => Error)('older crawlstack'),
  NearDuplicateLayoutError: (C) => new (C as unknown as new (m: string) => Error)('k changed'),
  WarcStoreError: (C) => new (C as unknown as new (c: string, m: string) => Error)('STORE_CLOSED', 'closed'),
  CloudCliError: (C) =>
    new (C as unknown as new (c: string, m: string) => Error)('UNREACHABLE', 'cannot reach the API'),
  CloudApiError: (C) => new (C as unknown as new (m: string, s: number) => Error)('GET crawls: 500', 500),
  ContextValueError: (C) =>
    new (C as unknown as new (k: string, v: unknown, e: string) => Error)('crawlstack:x', 'y', 'a number'),
};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const DECLARATION = /^(export )?class (\w+) extends (\w*Error)\b[^{]*\{/gm;

/** Error classes declared in the product's sources: file, name, whether exported, body. */
function declaredErrorClasses(): { file: string; name: string; exported: boolean; body: string }[] {
  const found: { file: string; name: string; exported: boolean; body: string }[] = [];
  for (const file of [...sources(join(ROOT, 'functions')), ...sources(join(ROOT, 'lib'))]) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(DECLARATION)) {
      const start = (match.index ?? 0) + match[0].length;
      const end = text.indexOf('\n}\n', start);
      found.push({ file, name: match[2]!, exported: match[1] !== undefined, body: text.slice(start, end) });
    }
  }
  return found;
}

describe('error classes', () => {
  const declared = declaredErrorClasses();

  it('are found in the sources (the walk works)', () => {
    assert.ok(declared.length >= Object.keys(EXAMPLES).length, `${declared.length} found`);
  });

  it('each exported one has its class name as name, a SCREAMING_SNAKE_CASE code, and keeps both through the error policy', async () => {
    for (const { file, name, exported } of declared) {
      if (!exported || NOT_IMPORTED.some((p) => file.startsWith(p))) continue;
      const where = relative(ROOT, file);
      const example = EXAMPLES[name];
      assert.ok(example !== undefined, `${where}: ${name} has no example in this test; add one`);
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const Class = module[name] as new (...args: never[]) => Error;
      assert.equal(typeof Class, 'function', `${where} exports ${name}`);
      const error = example(Class);
      assert.ok(error instanceof Class && error instanceof Error, name);
      assert.equal(error.name, name, `${where}: ${name}.name`);
      assert.match(String(error.stack), new RegExp(`^${name}\\b`), `${where}: the stack names ${name}`);
      const code = (error as { code?: unknown }).code;
      assert.equal(typeof code, 'string', `${where}: ${name} has a code`);
      assert.match(code as string, CODE, `${where}: ${name}.code ${String(code)}`);
      assert.equal(judgeError(error).code, code, `${name}: the error policy reports its code`);
    }
  });

  it('each one kept inside its module sets its name and a SCREAMING_SNAKE_CASE code', () => {
    for (const { file, name, exported, body } of declared) {
      if (exported) continue;
      const where = relative(ROOT, file);
      assert.match(body, new RegExp(`name = '${name}'`), `${where}: ${name} sets its name`);
      const code = /code = '([^']+)'/.exec(body)?.[1];
      assert.ok(code !== undefined && CODE.test(code), `${where}: ${name}.code ${code}`);
    }
  });
});
