import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HandlerLoadError } from '../../../localstack/lambda-container.ts';
import {
  type InvokeOutcome,
  LocalLambda,
  type LocalLambdaOptions,
} from '../../../localstack/local-lambda.ts';
import { eventually } from '../../fixtures/site-server.ts';
import { delay, FIXTURES } from './helpers.ts';

const ASSET = join(FIXTURES, 'asset.containers');

interface Answer {
  invocations: number;
  born: number;
  shared?: string;
  key?: string;
  hasParentVar: boolean;
}

const lambdas: LocalLambda[] = [];
after(() => Promise.all(lambdas.map((l) => l.stop())));

function containerLambda(
  env: Record<string, string> = {},
  options: Partial<LocalLambdaOptions> = {},
): { lambda: LocalLambda; logs: string[] } {
  const logs: string[] = [];
  const lambda = new LocalLambda({
    name: 'containers',
    code: {
      assetDir: ASSET,
      handler: 'index.handler',
      env: { AWS_LAMBDA_FUNCTION_NAME: 'containers', ...env },
    },
    timeoutSeconds: 5,
    log: (line) => logs.push(line),
    ...options,
  });
  lambdas.push(lambda);
  return { lambda, logs };
}

function answer(outcome: InvokeOutcome): Answer {
  assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
  return (outcome as { result: Answer }).result;
}

describe('Lambda containers (worker threads)', () => {
  it('reuses a warm container and starts a cold one for a concurrent invocation', async () => {
    const { lambda } = containerLambda();
    const first = answer(await lambda.invoke({}));
    const second = answer(await lambda.invoke({}));
    assert.equal(first.invocations, 1);
    assert.equal(second.invocations, 2, 'the warm container kept its module state');
    assert.equal(second.born, first.born);

    const dir = mkdtempSync(join(tmpdir(), 'crawlstack-containers-'));
    try {
      // The warm container is busy until `go` exists: the second invocation needs its own.
      const go = join(dir, 'go');
      const blocked = lambda.invoke({ action: 'block', file: go });
      const concurrent = answer(await lambda.invoke({}));
      assert.equal(concurrent.invocations, 1, 'a new container, with fresh module state');
      assert.notEqual(concurrent.born, first.born);
      writeFileSync(go, '');
      assert.equal(answer(await blocked).invocations, 3, 'the warm one ran its third');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const stats = lambda.stats();
    assert.equal(stats.coldStarts, 2);
    assert.equal(stats.containers, 2);
    assert.equal(stats.peakContainers, 2);
    assert.equal(stats.perInvocation.filter((r) => r.coldStart).length, 2);
    assert.ok(stats.initMs > 0);
  });

  it("gives each function its own process.env, not this process's", async () => {
    process.env.PARENT_ONLY = 'visible to the parent only';
    try {
      const one = containerLambda({ SHARED: 'one', AWS_ACCESS_KEY_ID: 'ASIAONE' }).lambda;
      const two = containerLambda({ SHARED: 'two', AWS_ACCESS_KEY_ID: 'ASIATWO' }).lambda;
      const [a, b] = await Promise.all([one.invoke({}), two.invoke({})]);
      // The same variable with two values at once: impossible with one shared process.env.
      assert.equal(answer(a).shared, 'one');
      assert.equal(answer(b).shared, 'two');
      assert.equal(answer(a).key, 'ASIAONE');
      assert.equal(answer(b).key, 'ASIATWO');
      assert.equal(answer(a).hasParentVar, false);
    } finally {
      delete process.env.PARENT_ONLY;
    }
  });

  it('throttles beyond the reserved concurrency, one container per concurrent invocation', async () => {
    const { lambda } = containerLambda({}, { reservedConcurrency: 2 });
    const outcomes = await Promise.all([1, 2, 3].map(() => lambda.invoke({ action: 'sleep', ms: 300 })));
    assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['ok', 'ok', 'throttled']);
    assert.equal(lambda.stats().peakContainers, 2);
    assert.equal(lambda.stats().throttles, 1);
  });

  it('kills the container of an invocation that times out; the next one starts cold', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlstack-containers-'));
    try {
      const { lambda, logs } = containerLambda({}, { timeoutSeconds: 1 });
      const warm = answer(await lambda.invoke({}));
      const file = join(dir, 'late');
      const timedOut = await lambda.invoke({ action: 'linger', ms: 1300, file });
      assert.equal(timedOut.kind, 'timeout');
      assert.equal(timedOut.kind === 'timeout' && timedOut.billedMs, 1000);
      assert.equal(lambda.stats().containers, 0);
      assert.equal(lambda.stats().killedContainers, 1);
      assert.match(logs.join('\n'), /timed out after 1000 ms; its container was killed/);
      const next = answer(await lambda.invoke({}));
      assert.equal(next.invocations, 1, 'a new container, fresh module state');
      assert.notEqual(next.born, warm.born);
      await delay(600);
      assert.equal(existsSync(file), false, 'the timed-out invocation did not run on');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('chaos kills containers at random points of invocations, seeded, and nothing after the kill runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlstack-containers-'));
    try {
      const run = async (seed: number) => {
        const { lambda } = containerLambda({}, { chaos: { killProbability: 0.5, seed, withinMs: 300 } });
        const kinds: string[] = [];
        for (let i = 0; i < 12; i++) {
          // Each invocation lingers 400 ms: a kill drawn inside [0, 300) ms always lands.
          const outcome = await lambda.invoke({ action: 'linger', ms: 200, file: join(dir, `${seed}-${i}`) });
          kinds.push(outcome.kind);
          if (outcome.kind === 'error')
            assert.match(String(outcome.error), /chaos: the execution environment was killed/);
        }
        return { kinds, stats: lambda.stats() };
      };
      const first = await run(42);
      const again = await run(42);
      assert.deepEqual(again.kinds, first.kinds, 'a seed repeats which invocations are killed');
      const killed = first.kinds.filter((k) => k === 'error').length;
      assert.ok(killed >= 1 && killed < 12, `${killed} of 12 killed`);
      assert.equal(first.stats.chaosKills.length, killed);
      assert.equal(first.stats.killedContainers, killed);
      assert.equal(first.stats.errors, killed);
      for (const kill of first.stats.chaosKills) {
        assert.ok(
          kill.killedAt - kill.startedAt < 300 + 250,
          'within the drawn window, plus the end of its thread',
        );
      }
      await delay(600);
      // A killed invocation's timer (200 ms in) never fired when the kill came first.
      const written = first.kinds.filter((_, i) => existsSync(join(dir, `42-${i}`))).length;
      const early = first.stats.chaosKills.filter((k) => k.killedAt - k.startedAt < 190).length;
      assert.ok(written <= 12 - early, `${written} files written, ${early} kills before the write`);
      assert.notDeepEqual((await run(7)).kinds, first.kinds, 'another seed, other draws');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reclaims idle containers', async () => {
    const { lambda } = containerLambda({}, { idleMs: 100 });
    answer(await lambda.invoke({}));
    await eventually(() => (lambda.stats().containers === 0 ? true : undefined), 5_000, 'reclaim');
    assert.equal(answer(await lambda.invoke({})).invocations, 1);
    assert.equal(lambda.stats().coldStarts, 2);
  });

  it('records wall and CPU time per invocation', async () => {
    const { lambda } = containerLambda();
    await lambda.invoke({}); // the cold start, out of the way
    await lambda.invoke({ action: 'spin', ms: 150 });
    await lambda.invoke({ action: 'sleep', ms: 150 });
    const [, spin, sleep] = lambda.stats().perInvocation;
    assert.ok(spin && sleep);
    assert.ok((spin.cpuMs ?? 0) >= 150, `a busy handler uses CPU: ${spin.cpuMs}`);
    assert.ok(spin.durationMs >= (spin.cpuMs ?? 0) - 1, 'one thread uses no more CPU than wall time');
    assert.equal(spin.billedMs, Math.ceil(spin.durationMs));
    assert.ok(sleep.durationMs >= 150);
    assert.ok((sleep.cpuMs ?? Number.POSITIVE_INFINITY) < 50, `a sleeping one hardly any: ${sleep.cpuMs}`);
    const stats = lambda.stats();
    assert.equal(
      stats.billedMs,
      stats.perInvocation.reduce((n, r) => n + r.billedMs, 0),
    );
    assert.ok(Math.abs(stats.cpuMs - stats.perInvocation.reduce((n, r) => n + (r.cpuMs ?? 0), 0)) < 1e-6);
  });

  it('passes console output to the log, reports errors, and replaces a crashed container', async () => {
    const { lambda, logs } = containerLambda();
    answer(await lambda.invoke({ action: 'print' }));
    await eventually(
      () => (logs.some((l) => l === '[containers] a line on stderr') ? true : undefined),
      5_000,
      'stderr line',
    );
    assert.ok(logs.includes('[containers] hello from containers'));

    const thrown = await lambda.invoke({ action: 'throw' });
    assert.equal(thrown.kind, 'error');
    assert.equal((thrown as { error: Error }).error.name, 'TypeError');
    assert.equal(lambda.stats().containers, 1, 'a function error keeps the container');

    const crashed = await lambda.invoke({ action: 'crash' });
    assert.equal(crashed.kind, 'error');
    assert.match(String((crashed as { error: Error }).error.message), /uncaught in a timer/);
    assert.equal(lambda.stats().containers, 0, 'an uncaught exception ends the container');
    assert.equal(answer(await lambda.invoke({})).invocations, 1);
  });

  it("names each output line's container, as CloudWatch names its log stream", async () => {
    const lines: { line: string; container: number | undefined }[] = [];
    const { lambda } = containerLambda({}, { log: (line, container) => lines.push({ line, container }) });
    answer(await lambda.invoke({ action: 'print' }));
    // The warm container is busy sleeping: the second print runs in a new one.
    const [slept, printed] = await Promise.all([
      lambda.invoke({ action: 'sleep', ms: 500 }),
      lambda.invoke({ action: 'print' }),
    ]);
    answer(slept);
    answer(printed);
    const hellos = await eventually(
      () => {
        const found = lines.filter((l) => l.line === '[containers] hello from containers');
        return found.length === 2 ? found : undefined;
      },
      5_000,
      'two hello lines',
    );
    assert.ok(hellos.every((h) => typeof h.container === 'number'));
    assert.notEqual(hellos[0]!.container, hellos[1]!.container);
  });

  it("refuses a response over Lambda's 6 MB payload limit", async () => {
    const { lambda } = containerLambda();
    const fits = await lambda.invoke({ action: 'huge', bytes: 6 * 1024 * 1024 - 100 });
    assert.equal(fits.kind, 'ok');
    const big = await lambda.invoke({ action: 'huge', bytes: 6 * 1024 * 1024 });
    assert.equal(big.kind, 'error');
    assert.equal((big as { error: Error }).error.name, 'Function.ResponseSizeTooLarge');
  });

  it('fails fast on a missing bundle and reports a missing handler export as an init error', async () => {
    assert.throws(
      () => new LocalLambda({ name: 'x', code: { assetDir: FIXTURES, handler: 'nothing.handler', env: {} } }),
      HandlerLoadError,
    );
    const { lambda } = containerLambda({}, {});
    const missing = new LocalLambda({
      name: 'missing-export',
      code: { assetDir: ASSET, handler: 'index.nope', env: {} },
      log: () => {},
    });
    lambdas.push(missing);
    const outcome = await missing.invoke({});
    assert.equal(outcome.kind, 'error');
    assert.equal((outcome as { error: Error }).error.name, 'Runtime.HandlerNotFound');
    assert.equal(answer(await lambda.invoke({})).invocations, 1);
  });
});
