/**
 * The fault-injection seam (functions/cloud/fault-hook.ts): a step's n-th reach crashes once
 * across every container that shares a counter folder (each Lambda container builds its own
 * hook), and once per hook without one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import {
  type FaultHook,
  faultHookFromSpec,
  InjectedCrashError,
} from '../../../functions/cloud/fault-hook.ts';

const folders: string[] = [];
function counterFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-faults-'));
  folders.push(dir);
  return dir;
}
after(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

/** Reaches `step` with each hook in turn, `rounds` times; resolves which reaches crashed. */
function reach(hooks: FaultHook[], step: 'after-claims', rounds: number): string[] {
  const crashed: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    hooks.forEach((hook, i) => {
      try {
        hook(step);
      } catch (error) {
        assert.ok(error instanceof InjectedCrashError);
        crashed.push(`container ${i} round ${round}`);
      }
    });
  }
  return crashed;
}

describe('fault hook', () => {
  it('crashes once across containers that share a counter folder: at the n-th reach of all', () => {
    const dir = counterFolder();
    const containers = [0, 1, 2, 3].map(() => faultHookFromSpec('after-claims:6', dir));
    // Reaches 1-4 in round 1, 5-8 in round 2: the 6th is container 1's second.
    assert.deepEqual(reach(containers, 'after-claims', 5), ['container 1 round 2']);
  });

  it('without a folder, each container counts for itself (the old behaviour, one crash each)', () => {
    const containers = [0, 1, 2].map(() => faultHookFromSpec('after-claims:2'));
    assert.equal(reach(containers, 'after-claims', 4).length, 3);
  });

  it('counts across threads, as containers are threads on the stand-in', async () => {
    const dir = counterFolder();
    const hookUrl = new URL('../../../functions/cloud/fault-hook.ts', import.meta.url).href;
    // Each thread reaches the step 50 times; exactly one reach of the 200 is the 137th.
    const source = `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.hookUrl).then(({ faultHookFromSpec }) => {
        const hook = faultHookFromSpec('after-captures:137', workerData.dir);
        let crashes = 0;
        for (let i = 0; i < 50; i++) { try { hook('after-captures'); } catch { crashes++; } }
        parentPort.postMessage(crashes);
      });`;
    const crashes = await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise<number>((resolve, reject) => {
            const worker = new Worker(source, { eval: true, workerData: { hookUrl, dir } });
            worker.once('message', resolve);
            worker.once('error', reject);
          }),
      ),
    );
    assert.equal(
      crashes.reduce((a, b) => a + b, 0),
      1,
    );
  });

  it('refuses a spec it cannot read', () => {
    assert.throws(() => faultHookFromSpec('after-claims:0'), /cannot read "after-claims:0"/);
    assert.throws(() => faultHookFromSpec('somewhere:1'), /cannot read/);
  });
});
