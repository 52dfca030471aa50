/**
 * The page bucket's contract as the archiver writes it and the API reads it (ObjectStore and
 * ObjectReader, functions/cloud/ports/cloud-ports.ts): an object reads back as written, from any
 * offset (empty at or past its end), a second write replaces it, and keys list in key order under a
 * prefix, strictly after `startAfter`, at most `max`. Copies in and out, as across a network.
 * Written once, run against the unit tests' fake and the S3 adapter.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ObjectReader, ObjectStore } from '../../functions/cloud/ports/cloud-ports.ts';

let prefixes = 0;
/** A new key prefix for each test, so that one bucket serves them all. */
const newPrefix = () => `contract/${process.pid}-${++prefixes}/`;
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (body: Uint8Array) => new TextDecoder().decode(body);

/** Registers the contract's tests; `open` gives the bucket (one per suite is enough). */
export function objectStoreContract(open: () => Promise<ObjectStore & ObjectReader>): void {
  it('reads an object back as written, from the start or from an offset; empty at or past its end', async () => {
    const objects = await open();
    const key = `${newPrefix()}a.warc.gz`;
    await objects.put(key, bytes('0123456789'), 'application/warc');
    assert.equal(text(await objects.read(key, 0)), '0123456789');
    assert.equal(text(await objects.read(key, 4)), '456789');
    assert.equal((await objects.read(key, 10)).length, 0);
  });

  it('a second write replaces the object', async () => {
    const objects = await open();
    const key = `${newPrefix()}index.jsonl`;
    await objects.put(key, bytes('first version, longer'), 'application/x-ndjson');
    await objects.put(key, bytes('second'), 'application/x-ndjson');
    assert.equal(text(await objects.read(key, 0)), 'second');
  });

  it('copies in and out: changing the bytes written or read does not change the object', async () => {
    const objects = await open();
    const key = `${newPrefix()}a`;
    const body = bytes('abc');
    await objects.put(key, body, 'text/plain');
    body[0] = 0x7a;
    const read = await objects.read(key, 0);
    assert.equal(text(read), 'abc');
    read[1] = 0x7a;
    assert.equal(text(await objects.read(key, 0)), 'abc');
    const tail = await objects.read(key, 1);
    tail[0] = 0x7a;
    assert.equal(text(await objects.read(key, 0)), 'abc');
  });

  it('reading a key never written rejects with NoSuchKey', async () => {
    const objects = await open();
    await assert.rejects(objects.read(`${newPrefix()}missing`, 0), { name: 'NoSuchKey' });
  });

  it('lists keys under a prefix in key order, strictly after startAfter, at most max', async () => {
    const objects = await open();
    const prefix = newPrefix();
    const names = ['b', 'a', 'c/1', 'c/0', 'd'];
    for (const name of names) await objects.put(`${prefix}${name}`, bytes(name), 'text/plain');
    await objects.put(`${prefix.slice(0, -1)}-sibling`, bytes('x'), 'text/plain');
    const all = [...names].sort().map((n) => `${prefix}${n}`);
    assert.deepEqual(await objects.keys(prefix, undefined, 100), all);
    assert.deepEqual(await objects.keys(prefix, undefined, 2), all.slice(0, 2));
    assert.deepEqual(await objects.keys(prefix, `${prefix}b`, 100), all.slice(2));
    assert.deepEqual(await objects.keys(prefix, `${prefix}bb`, 2), all.slice(2, 4));
    assert.deepEqual(await objects.keys(`${prefix}c/`, undefined, 100), [`${prefix}c/0`, `${prefix}c/1`]);
    assert.deepEqual(await objects.keys(newPrefix(), undefined, 100), []);
  });
}
