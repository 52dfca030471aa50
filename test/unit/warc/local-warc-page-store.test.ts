import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CDXIndexer } from 'warcio';
import {
  LocalWarcPageStore,
  type LocalWarcPageStoreOptions,
  WARC_INDEX_FILE,
  WarcStoreError,
} from '../../../functions/adapters/local/warc-page-store.ts';
import type { Capture } from '../../../functions/core/ports.ts';
import type { StoredRef } from '../../../functions/core/types.ts';
import {
  inflateSlice,
  makeCapture,
  parseWarc,
  parseWarcFile,
  sequentialIds,
  sha1b32,
  splitRecord,
  tempDir,
} from './warc-test-kit.ts';

function open(dir: string, options: LocalWarcPageStoreOptions = {}): LocalWarcPageStore {
  return LocalWarcPageStore.open(dir, { newId: sequentialIds(), ...options });
}

function warcFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.warc.gz'))
    .sort();
}

function indexLines(dir: string): string[] {
  return readFileSync(join(dir, WARC_INDEX_FILE), 'utf8').split('\n').filter(Boolean);
}

async function putAll(store: LocalWarcPageStore, captures: Capture[]): Promise<StoredRef[]> {
  const refs: StoredRef[] = [];
  for (const capture of captures) refs.push(await store.put(capture));
  return refs;
}

/** The CDXJ lines warcio itself derives from the files, to compare with ours. */
async function warcioIndex(dir: string, files: string[]): Promise<string[]> {
  const indexer = new CDXIndexer({ format: 'cdxj' });
  const lines: string[] = [];
  for (const filename of files) {
    const reader = (async function* () {
      yield readFileSync(join(dir, filename));
    })();
    for await (const result of indexer.iterIndex([{ filename, reader }])) {
      lines.push(indexer.serializeCDXJ(result).trimEnd());
    }
  }
  return lines;
}

/** Checks that a StoredRef slice inflates to exactly one response record for `capture`. */
function checkRef(dir: string, ref: StoredRef, capture: Capture): void {
  const raw = splitRecord(inflateSlice(readFileSync(join(dir, ref.file)), ref.offset, ref.length));
  assert.equal(raw.version, 'WARC/1.1');
  assert.equal(raw.trailer.toString('latin1'), '\r\n\r\n', 'the slice holds one record and nothing more');
  assert.equal(raw.headers.get('warc-type'), 'response');
  assert.equal(raw.headers.get('warc-target-uri'), capture.url);
  assert.equal(raw.headers.get('warc-block-digest'), sha1b32(raw.block));
  const payload = raw.block.subarray(raw.block.indexOf('\r\n\r\n') + 4);
  assert.deepEqual(payload, Buffer.from(capture.response.body));
  assert.equal(raw.headers.get('warc-payload-digest'), sha1b32(payload));
}

describe('LocalWarcPageStore', () => {
  test('writes warcinfo, request, response records that warcio reads back, with a matching index', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir, { warcinfo: { seeds: 'http://127.0.0.1:8080/' } });
      const captures = [makeCapture(1), makeCapture(2), makeCapture(3)];
      const refs = await putAll(store, captures);
      await store.flush();
      store.close();

      const files = warcFiles(dir);
      assert.deepEqual(files, ['crawlstack-20261122100001-00000.warc.gz']);
      const parsed = await parseWarcFile(join(dir, files[0]!));
      assert.deepEqual(
        parsed.map((p) => p.record.warcType),
        ['warcinfo', 'request', 'response', 'request', 'response', 'request', 'response'],
      );
      const warcinfo = parsed[0]!.record;
      assert.equal(warcinfo.warcHeader('WARC-Filename'), files[0]);
      assert.match(Buffer.from(parsed[0]!.payload).toString(), /^software: crawlstack\/\d+\.\d+\.\d+\r\n/);
      assert.match(Buffer.from(parsed[0]!.payload).toString(), /\r\nseeds: http:\/\/127\.0\.0\.1:8080\/\r\n/);
      const warcinfoId = warcinfo.warcHeader('WARC-Record-ID');

      for (let i = 0; i < captures.length; i++) {
        const capture = captures[i]!;
        const request = parsed[1 + 2 * i]!;
        const response = parsed[2 + 2 * i]!;
        for (const { record } of [request, response]) {
          assert.equal(record.warcTargetURI, capture.url);
          assert.equal(record.warcHeader('WARC-Warcinfo-ID'), warcinfoId);
          assert.equal(record.warcHeader('WARC-IP-Address'), '127.0.0.1');
          assert.equal(record.warcDate, `2026-11-22T10:00:0${i + 1}Z`);
        }
        assert.equal(
          request.record.warcHeader('WARC-Concurrent-To'),
          response.record.warcHeader('WARC-Record-ID'),
        );
        assert.equal(request.record.httpHeaders?.headers.get('host'), '127.0.0.1:8080');
        assert.equal(response.record.httpHeaders?.statusCode, 200);
        assert.equal(response.record.httpHeaders?.statusText, 'OK');
        assert.equal(response.record.httpHeaders?.headers.get('content-type'), 'text/html; charset=utf-8');
        assert.equal(response.record.httpHeaders?.headers.get('set-cookie'), 'a=1, b=2');
        assert.deepEqual(Buffer.from(response.payload), Buffer.from(capture.response.body));
        assert.equal(response.record.warcPayloadDigest, sha1b32(capture.response.body));
        // warcio's own offsets agree with the refs the store returned
        assert.deepEqual(refs[i], { file: files[0], offset: response.offset, length: response.length });
        checkRef(dir, refs[i]!, capture);
      }

      const ours = indexLines(dir);
      assert.equal(ours.length, 3);
      assert.deepEqual(ours, await warcioIndex(dir, files));
      assert.match(ours[0]!, /^1,0,0,127:8080\)\/page\/1\?a=1&b=2 20261122100001 \{"url":/);
    } finally {
      remove();
    }
  });

  test('stored response headers have no Content-Encoding and a correct Content-Length', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir);
      const capture = makeCapture(7);
      capture.response.headers.push(['content-length', '99']);
      const ref = await store.put(capture);
      store.close();
      const [parsed] = await parseWarc(
        readFileSync(join(dir, ref.file)).subarray(ref.offset, ref.offset + ref.length),
      );
      const headers = parsed!.record.httpHeaders!.headers;
      assert.equal(headers.get('content-encoding'), null);
      assert.equal(headers.get('transfer-encoding'), null);
      assert.equal(headers.get('content-length'), String(capture.response.body.length));
      assert.equal(headers.get('x-crawlstack-original-content-encoding'), 'gzip');
      assert.equal(headers.get('x-crawlstack-original-transfer-encoding'), 'chunked');
      assert.equal(headers.get('x-crawlstack-original-content-length'), '99');
      // warcio decodes content by these headers: the decoded content must be the body itself
      assert.deepEqual(Buffer.from(await parsed!.record.readFully(true)), Buffer.from(capture.response.body));
    } finally {
      remove();
    }
  });

  test('rotates files by size, each opening with its own warcinfo record', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir, { maxFileBytes: 3000, clock: { now: () => Date.UTC(2026, 10, 22, 9, 8, 7) } });
      const captures = Array.from({ length: 8 }, (_, i) => makeCapture(i));
      const refs = await putAll(store, captures);
      store.close();

      const files = warcFiles(dir);
      assert.ok(files.length >= 3, `expected several files, got ${files.join(', ')}`);
      assert.deepEqual(
        files,
        files.map((_, i) => `crawlstack-20261122090807-${String(i).padStart(5, '0')}.warc.gz`),
      );
      let captured = 0;
      for (const file of files) {
        const parsed = await parseWarcFile(join(dir, file));
        const types = parsed.map((p) => p.record.warcType);
        assert.equal(types[0], 'warcinfo');
        assert.equal(parsed[0]!.record.warcHeader('WARC-Filename'), file);
        assert.equal(types.filter((t) => t === 'warcinfo').length, 1);
        const id = parsed[0]!.record.warcHeader('WARC-Record-ID');
        for (const p of parsed.slice(1)) assert.equal(p.record.warcHeader('WARC-Warcinfo-ID'), id);
        const pairs = (types.length - 1) / 2;
        assert.ok(pairs >= 1);
        // a file only outgrows the limit when a single record pair does not fit in an empty one
        if (pairs > 1) assert.ok(statSync(join(dir, file)).size <= 3000, `${file} is over the limit`);
        captured += pairs;
      }
      assert.equal(captured, captures.length);
      for (const [i, ref] of refs.entries()) checkRef(dir, ref, captures[i]!);
      assert.deepEqual(indexLines(dir), await warcioIndex(dir, files));
    } finally {
      remove();
    }
  });

  test('truncated captures get WARC-Truncated', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir);
      const refs = await putAll(store, [
        makeCapture(1, { truncated: 'length' }),
        makeCapture(2, { truncated: 'time' }),
      ]);
      const plain = await store.put(makeCapture(3));
      store.close();
      const file = readFileSync(join(dir, refs[0]!.file));
      const truncation = [...refs, plain].map((ref) =>
        splitRecord(inflateSlice(file, ref.offset, ref.length)).headers.get('warc-truncated'),
      );
      assert.deepEqual(truncation, ['length', 'time', undefined]);
    } finally {
      remove();
    }
  });

  test('stores a binary body with every byte value exactly', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir);
      const body = Uint8Array.from({ length: 1024 }, (_, i) => i % 256);
      const capture = makeCapture(1, {
        headers: [['content-type', 'application/octet-stream']],
        body,
      });
      const ref = await store.put(capture);
      store.close();
      checkRef(dir, ref, capture);
      const parsed = await parseWarcFile(join(dir, ref.file));
      assert.deepEqual(Buffer.from(parsed[2]!.payload), Buffer.from(body));
      assert.match(indexLines(dir)[0]!, /"mime":"application\/octet-stream"/);
    } finally {
      remove();
    }
  });

  test('keeps a non-ASCII URL intact in WARC-Target-URI and the index', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir);
      const capture = makeCapture(1);
      capture.url = 'http://bücher.example/straße?q=ü';
      capture.request.target = '/stra%C3%9Fe?q=%C3%BC';
      capture.request.headers = [['user-agent', 'x']];
      const ref = await store.put(capture);
      store.close();
      checkRef(dir, ref, capture);
      const parsed = await parseWarcFile(join(dir, ref.file));
      assert.equal(parsed[1]!.record.warcTargetURI, capture.url);
      assert.equal(parsed[1]!.record.httpHeaders?.headers.get('host'), 'xn--bcher-kva.example');
      assert.equal(parsed[2]!.record.warcTargetURI, capture.url);
      const [line] = indexLines(dir);
      assert.ok(line!.startsWith('example,xn--bcher-kva)/stra%c3%9fe?q=%c3%bc 20261122100001 '), line);
      assert.equal(JSON.parse(line!.slice(line!.indexOf('{'))).url, capture.url);
    } finally {
      remove();
    }
  });

  test('resumes at a checkpoint: later records and index lines are cut away, then writing appends', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir, { maxFileBytes: 1 << 20 });
      const first = await putAll(
        store,
        [1, 2, 3].map((i) => makeCapture(i)),
      );
      const checkpoint = store.position();
      assert.equal(checkpoint.file, first[0]!.file);
      assert.equal(checkpoint.size, statSync(join(dir, checkpoint.file)).size);
      assert.equal(checkpoint.indexSize, statSync(join(dir, WARC_INDEX_FILE)).size);
      await putAll(
        store,
        [4, 5].map((i) => makeCapture(i)),
      );
      store.close(); // an interrupted crawl: records 4 and 5 were never checkpointed

      const resumed = open(dir, { resumeAt: checkpoint });
      assert.deepEqual(resumed.position(), checkpoint);
      const file = join(dir, checkpoint.file);
      let parsed = await parseWarcFile(file);
      assert.equal(parsed.filter((p) => p.record.warcType === 'response').length, 3);
      assert.equal(indexLines(dir).length, 3);

      const later = await putAll(
        resumed,
        [6, 7].map((i) => makeCapture(i)),
      );
      resumed.close();
      assert.deepEqual(warcFiles(dir), [checkpoint.file]);
      parsed = await parseWarcFile(file);
      assert.deepEqual(
        parsed.filter((p) => p.record.warcType === 'response').map((p) => p.record.warcTargetURI),
        [1, 2, 3, 6, 7].map((i) => makeCapture(i).url),
      );
      const warcinfoId = parsed[0]!.record.warcHeader('WARC-Record-ID');
      for (const p of parsed.slice(1)) assert.equal(p.record.warcHeader('WARC-Warcinfo-ID'), warcinfoId);
      const appended = parsed.find((p) => p.offset === checkpoint.size);
      assert.equal(appended?.record.warcType, 'request', 'writing continued exactly at the checkpoint');
      assert.equal(appended?.record.warcTargetURI, makeCapture(6).url);
      for (const [i, ref] of [...first, ...later].entries())
        checkRef(dir, ref, makeCapture([1, 2, 3, 6, 7][i]!));
      assert.deepEqual(indexLines(dir), await warcioIndex(dir, [checkpoint.file]));
    } finally {
      remove();
    }
  });

  test('resuming deletes files started after the checkpoint', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir, { maxFileBytes: 3000 });
      await putAll(
        store,
        [0, 1, 2].map((i) => makeCapture(i)),
      );
      const checkpoint = store.position();
      const before = warcFiles(dir);
      await putAll(
        store,
        [3, 4, 5, 6].map((i) => makeCapture(i)),
      );
      store.close();
      assert.ok(warcFiles(dir).length > before.length);

      const resumed = open(dir, { maxFileBytes: 3000, resumeAt: checkpoint });
      assert.deepEqual(warcFiles(dir), before);
      assert.equal(indexLines(dir).length, 3);
      await putAll(
        resumed,
        [7, 8, 9].map((i) => makeCapture(i)),
      );
      resumed.close();
      const files = warcFiles(dir);
      const urls: string[] = [];
      for (const file of files) {
        for (const p of await parseWarcFile(join(dir, file))) {
          if (p.record.warcType === 'response') urls.push(p.record.warcTargetURI!);
        }
      }
      assert.deepEqual(
        urls,
        [0, 1, 2, 7, 8, 9].map((i) => makeCapture(i).url),
      );
      assert.deepEqual(indexLines(dir), await warcioIndex(dir, files));
    } finally {
      remove();
    }
  });

  test('resuming at the empty position removes everything written; a fresh open continues the sequence', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir);
      const empty = store.position();
      assert.deepEqual(empty, { file: '', size: 0, indexSize: 0 });
      await store.put(makeCapture(1));
      store.close();

      const fresh = open(dir);
      await fresh.put(makeCapture(2));
      fresh.close();
      assert.deepEqual(warcFiles(dir), [
        'crawlstack-20261122100001-00000.warc.gz',
        'crawlstack-20261122100002-00001.warc.gz',
      ]);
      assert.equal(indexLines(dir).length, 2);

      open(dir, { resumeAt: empty }).close();
      assert.deepEqual(warcFiles(dir), []);
      assert.equal(indexLines(dir).length, 0);
    } finally {
      remove();
    }
  });

  test('refuses to resume when the files are shorter than the checkpoint, and changes nothing', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir);
      await putAll(
        store,
        [1, 2].map((i) => makeCapture(i)),
      );
      const checkpoint = store.position();
      store.close();
      const path = join(dir, checkpoint.file);
      truncateSync(path, checkpoint.size - 10);
      const indexBefore = readFileSync(join(dir, WARC_INDEX_FILE));
      assert.throws(
        () => open(dir, { resumeAt: checkpoint }),
        (error: unknown) => error instanceof WarcStoreError && error.code === 'RESUME_MISMATCH',
      );
      assert.equal(statSync(path).size, checkpoint.size - 10);
      assert.deepEqual(readFileSync(join(dir, WARC_INDEX_FILE)), indexBefore);
      assert.throws(
        () => open(dir, { resumeAt: { ...checkpoint, file: 'crawlstack-20991231000000-00042.warc.gz' } }),
        (error: unknown) => error instanceof WarcStoreError && error.code === 'RESUME_MISMATCH',
      );
    } finally {
      remove();
    }
  });

  test('rejects puts after close and bad options', async () => {
    const { dir, remove } = tempDir();
    try {
      const store = open(dir, { fsync: true });
      await store.put(makeCapture(1));
      await store.flush();
      store.close();
      store.close();
      await assert.rejects(
        store.put(makeCapture(2)),
        (error: unknown) => error instanceof WarcStoreError && error.code === 'STORE_CLOSED',
      );
      assert.throws(
        () => open(dir, { prefix: '../evil' }),
        (error: unknown) => error instanceof WarcStoreError && error.code === 'INVALID_OPTION',
      );
      assert.throws(
        () => open(dir, { gzipLevel: 12 }),
        (error: unknown) => error instanceof WarcStoreError && error.code === 'INVALID_OPTION',
      );
      assert.equal(existsSync(join(dir, WARC_INDEX_FILE)), true);
    } finally {
      remove();
    }
  });
});
