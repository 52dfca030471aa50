/**
 * The PageStore contract (functions/core/ports.ts): after `flush`, the StoredRef's slice of the file or
 * object is one gzip member that inflates to the capture's WARC response record, and the whole
 * file or object is a WARC that warcio reads, opening with a warcinfo record.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { PageStore } from '../../functions/core/ports.ts';
import type { StoredRef } from '../../functions/core/types.ts';
import { makeCapture, parseWarc } from '../unit/warc/warc-test-kit.ts';

/** A store plus a way to read back what it wrote. */
export interface PageStoreHarness {
  store: PageStore;
  /** The bytes of the ref's file/object from `offset`, `length` long (a ranged read). */
  readSlice(ref: StoredRef): Promise<Uint8Array>;
  /** The whole file/object a ref points into. */
  readFile(file: string): Promise<Uint8Array>;
  /**
   * Where a ref `put` returned ends up once flushed, for a store whose refs are relative to a
   * container written later (the worker's capture buffer: the archiver adds the object's offset).
   * Absent: the ref is final.
   */
  locate?(ref: StoredRef): StoredRef;
}

/** `put` on a store that keeps captures: it always says where the capture went. */
async function putKept(store: PageStore, capture: ReturnType<typeof makeCapture>): Promise<StoredRef> {
  const ref = await store.put(capture);
  assert.ok(ref !== undefined, 'a store that keeps captures returns their place');
  return ref;
}

/** Registers the contract's tests. */
export function pageStoreContract(open: () => Promise<PageStoreHarness>): void {
  it('put + flush: each ref slice inflates to its response record, readable by warcio', async () => {
    const { store, readSlice, readFile, locate = (ref) => ref } = await open();
    const captures = [1, 2, 3, 4, 5].map((i) => makeCapture(i));
    const put: StoredRef[] = [];
    for (const capture of captures) put.push(await putKept(store, capture));
    await store.flush();
    const refs = put.map(locate);
    for (const [i, ref] of refs.entries()) {
      const slice = await readSlice(ref);
      assert.equal(slice.length, ref.length);
      const record = gunzipSync(slice).toString('latin1');
      assert.match(record, /^WARC\/1\.1\r\n/);
      assert.match(record, /\r\nWARC-Type: response\r\n/);
      assert.ok(record.includes(`\r\nWARC-Target-URI: ${captures[i]!.url}\r\n`));
      const [parsed] = await parseWarc(slice);
      assert.equal(parsed?.record.warcType, 'response');
      assert.equal(parsed?.record.warcTargetURI, captures[i]!.url);
      assert.deepEqual(Buffer.from(parsed!.payload), Buffer.from(captures[i]!.response.body));
    }
    const files = [...new Set(refs.map((r) => r.file))];
    for (const file of files) {
      const records = await parseWarc(await readFile(file));
      assert.equal(records[0]?.record.warcType, 'warcinfo');
      const responses = records.filter((r) => r.record.warcType === 'response');
      const requests = records.filter((r) => r.record.warcType === 'request');
      assert.equal(responses.length, requests.length);
      for (const ref of refs.filter((r) => r.file === file)) {
        assert.ok(
          responses.some((r) => r.offset === ref.offset && r.length === ref.length),
          'ref matches a record',
        );
      }
    }
  });

  it('keeps storing after a flush, and refs from before stay valid', async () => {
    const { store, readSlice, locate = (ref) => ref } = await open();
    const first = await putKept(store, makeCapture(7));
    await store.flush();
    const second = await putKept(store, makeCapture(8));
    await store.flush();
    assert.notDeepEqual(locate(first), locate(second));
    const [one] = await parseWarc(await readSlice(locate(first)));
    const [two] = await parseWarc(await readSlice(locate(second)));
    assert.equal(one?.record.warcTargetURI, makeCapture(7).url);
    assert.equal(two?.record.warcTargetURI, makeCapture(8).url);
  });
}
