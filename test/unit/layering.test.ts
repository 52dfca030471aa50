/**
 * The layers of the product (README, "Where the code lives"), checked over the import graph as the
 * core's purity is: each folder imports only the folders below it, and no file takes part in an
 * import circle. A new arrow up a floor fails here with the file and the import that drew it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Each part, most specific path first, with the parts it may import. The cloud's Lambdas (entry,
 * handler and wiring of each function) compose the cloud runtime with the AWS adapters; the AWS
 * adapters implement the cloud's ports and read its messages, so they sit above the cloud's
 * domain and below its Lambdas.
 */
const PARTS: { name: string; path: string; may: string[] }[] = [
  { name: 'core', path: 'functions/core', may: [] },
  { name: 'cache-study', path: 'functions/cache-study', may: ['core'] },
  { name: 'cloud lambdas', path: 'functions/cloud/lambdas', may: ['core', 'cloud', 'adapters'] },
  { name: 'cloud', path: 'functions/cloud', may: ['core'] },
  { name: 'adapters', path: 'functions/adapters', may: ['core', 'cloud'] },
  { name: 'embedded', path: 'functions/embedded', may: ['core', 'adapters'] },
  { name: 'dashboard', path: 'functions/dashboard', may: ['core'] },
  {
    name: 'cli',
    path: 'functions/cli',
    may: ['core', 'cache-study', 'cloud', 'adapters', 'embedded', 'dashboard'],
  },
  // The CDK app knows the functions by their environment and settings only.
  { name: 'lib', path: 'lib', may: ['cloud settings'] },
];
/** Files of the cloud that the CDK app may read: variable names, constants and metric names shared with the code. */
const CLOUD_SETTINGS = [
  'functions/cloud/env.ts',
  'functions/cloud/lambda-settings.ts',
  'functions/cloud/metrics.ts',
];

function partOf(file: string): string | undefined {
  const rel = relative(ROOT, file);
  if (CLOUD_SETTINGS.includes(rel)) return 'cloud settings';
  return PARTS.find((p) => rel === p.path || rel.startsWith(`${p.path}/`))?.name;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'static') out.push(...sourceFiles(path));
    } else if (/\.(ts|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The files a file imports (static, dynamic, re-exports), relative ones only. */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of source.matchAll(
    /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm,
  )) {
    found.push(resolve(dirname(file), m[1]!));
  }
  return found;
}

const FILES = [...sourceFiles(join(ROOT, 'functions')), ...sourceFiles(join(ROOT, 'lib'))];
const GRAPH = new Map(FILES.map((f) => [f, importsOf(f)]));

/** Arrows that leave a part for one it may not import. */
export function upwardArrows(graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    const part = partOf(from);
    if (part === undefined) continue;
    const rule = PARTS.find((p) => p.name === part);
    for (const to of targets) {
      const target = partOf(to);
      if (target === undefined || target === part) continue;
      // cloud settings belong to the cloud for everyone but the CDK app
      const effective: string = target === 'cloud settings' && part !== 'lib' ? 'cloud' : target;
      if (effective === part) continue;
      if (part === 'cloud lambdas' && effective === 'cloud') continue;
      if (!rule?.may.includes(effective)) {
        wrong.push(`${relative(ROOT, from)} (${part}) imports ${relative(ROOT, to)} (${effective})`);
      }
    }
  }
  return wrong;
}

/** Every import circle among files (Tarjan's strongly connected components of two files or more). */
export function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        component.push(relative(ROOT, w));
        if (w === v) break;
      }
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return found;
}

describe('layers of the product', () => {
  it('every source file belongs to a part', () => {
    const orphans = FILES.filter((f) => partOf(f) === undefined).map((f) => relative(ROOT, f));
    assert.deepEqual(orphans, []);
  });

  it('no part imports a part above it', () => {
    assert.deepEqual(upwardArrows(GRAPH), []);
  });

  it('no import circle', () => {
    assert.deepEqual(circles(GRAPH), []);
  });

  it('the checks see an arrow up and a circle when there is one', () => {
    const core = join(ROOT, 'functions/core/a.ts');
    const cli = join(ROOT, 'functions/cli/b.ts');
    const embedded = join(ROOT, 'functions/embedded/c.ts');
    const made = new Map([
      [core, [cli]],
      [cli, [embedded]],
      [embedded, [core]],
    ]);
    assert.deepEqual(upwardArrows(made), ['functions/core/a.ts (core) imports functions/cli/b.ts (cli)']);
    assert.deepEqual(circles(made), [
      ['functions/cli/b.ts', 'functions/core/a.ts', 'functions/embedded/c.ts'],
    ]);
  });
});
