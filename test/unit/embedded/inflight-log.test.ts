import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { InflightLog } from '../../../functions/embedded/inflight-log.ts';
import { tempDir } from '../../e2e/helpers.ts';

describe('InflightLog', () => {
  test('the next run learns which steps were in flight when a run died', () => {
    const path = join(tempDir(), 'inflight.log');
    const first = InflightLog.open(path);
    assert.deepEqual([...first.previous], []);
    first.log.started('aa');
    first.log.started('bb');
    first.log.finished('aa');
    first.log.started('cc');
    // the process dies here: no close
    const second = InflightLog.open(path);
    assert.deepEqual([...second.previous].sort(), ['bb', 'cc']);
    second.log.close();
    assert.deepEqual([...InflightLog.open(path).previous], [], 'an orderly end leaves nothing');
  });

  test('stays small however long the crawl: rewritten with the running steps', () => {
    const path = join(tempDir(), 'inflight.log');
    const { log } = InflightLog.open(path);
    log.started('keep');
    for (let i = 0; i < 20_000; i++) {
      log.started(`fp${i}`);
      log.finished(`fp${i}`);
    }
    assert.ok(statSync(path).size < 70 * 1024, `${statSync(path).size} bytes`);
    assert.deepEqual([...InflightLog.open(path).previous], ['keep']);
    assert.match(readFileSync(path, 'latin1'), /^$/, 'reopening starts a new log');
  });
});
