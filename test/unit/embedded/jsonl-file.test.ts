import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { JsonlFile } from '../../../functions/embedded/jsonl-file.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function filePath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-jsonl-'));
  dirs.push(dir);
  return join(dir, 'pages.jsonl');
}

describe('JsonlFile', () => {
  test('appends whole lines and counts committed bytes (UTF-8, not characters)', () => {
    const path = filePath();
    const file = new JsonlFile(path);
    assert.equal(file.size, 0);
    file.append(['{"a":1}', '{"title":"日本"}']);
    file.append([]);
    const expected = '{"a":1}\n{"title":"日本"}\n';
    assert.equal(file.size, Buffer.byteLength(expected));
    file.close();
    assert.equal(readFileSync(path, 'utf8'), expected);
  });

  test('on resume, lines past the checkpointed size are cut off', () => {
    const path = filePath();
    const first = new JsonlFile(path);
    first.append(['{"n":1}']);
    const committed = first.size;
    first.append(['{"n":2}']); // written, but its step never committed
    first.close();
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"n":3, "half": tr`); // a line cut by kill -9

    const resumed = new JsonlFile(path, committed);
    assert.equal(resumed.size, committed);
    resumed.append(['{"n":2,"again":true}']);
    resumed.close();
    assert.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":2,"again":true}\n');
  });

  test('a resume size at or past the end leaves the file alone; no resume size keeps everything', () => {
    const path = filePath();
    writeFileSync(path, '{"n":1}\n');
    const same = new JsonlFile(path, 8);
    assert.equal(same.size, 8);
    same.close();
    const beyond = new JsonlFile(path, 100);
    assert.equal(beyond.size, 8);
    beyond.close();
    const plain = new JsonlFile(path);
    assert.equal(plain.size, 8);
    plain.append(['{"n":2}']);
    plain.close();
    assert.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":2}\n');
  });

  test('a resume size of 0 empties the file; a missing file is created', () => {
    const path = filePath();
    writeFileSync(path, '{"uncommitted":true}\n');
    const file = new JsonlFile(path, 0);
    assert.equal(file.size, 0);
    file.close();
    assert.equal(readFileSync(path, 'utf8'), '');
    const fresh = new JsonlFile(`${path}.new`, 0);
    fresh.close();
    assert.equal(readFileSync(`${path}.new`, 'utf8'), '');
  });
});
