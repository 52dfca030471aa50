import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { LocalWarcPageStore } from '../../functions/adapters/local/warc-page-store.ts';
import { buildWarcObject } from '../../functions/cloud/messages/warc-object.ts';
import { CaptureBuffer } from '../../functions/cloud/worker/capture-buffer.ts';
import type { StoredRef } from '../../functions/core/types.ts';
import { MemoryObjects } from '../unit/cloud/memory-cloud.ts';
import { type LocalBackend, openLocalBackend } from './backends.ts';
import { pageStoreContract } from './page-store.contract.ts';

describe('PageStore contract: LocalWarcPageStore', () => {
  let local: LocalBackend;
  const stores: LocalWarcPageStore[] = [];
  before(() => {
    local = openLocalBackend();
  });
  after(() => {
    for (const store of stores) store.close();
    local.close();
  });
  pageStoreContract(async () => {
    const dir = join(local.dir, `warc${stores.length}`);
    const store = LocalWarcPageStore.open(dir);
    stores.push(store);
    return {
      store,
      async readSlice(ref) {
        const fd = openSync(join(dir, ref.file), 'r');
        try {
          const buffer = Buffer.alloc(ref.length);
          readSync(fd, buffer, 0, ref.length, ref.offset);
          return buffer;
        } finally {
          closeSync(fd);
        }
      },
      readFile: async (file) => readFileSync(join(dir, file)),
    };
  });
});

describe("PageStore contract: CaptureBuffer (the cloud worker's, archived into an object store)", () => {
  pageStoreContract(async () => {
    let ids = 0;
    const buffer = new CaptureBuffer({
      newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
    });
    const objects = new MemoryObjects();
    const pending: StoredRef[] = [];
    /** Buffered ref -> the archived response record: its object and place in it. */
    const located = new Map<string, StoredRef>();
    let batches = 0;
    return {
      store: {
        async put(capture) {
          const ref = await buffer.put(capture);
          pending.push(ref);
          return ref;
        },
        // As the worker sends the records in capture messages and the archiver concatenates them
        // behind a warcinfo record into one object (archive-captures.ts).
        async flush() {
          await buffer.flush();
          const refs = pending.splice(0);
          const parts = refs.map((ref) => {
            const records = buffer.take(ref);
            if (records === undefined) throw new Error(`${ref.file} was not buffered`);
            return records;
          });
          if (parts.length === 0) return;
          batches += 1;
          const key = `warc/crawl-1/batch-${batches}.warc.gz`;
          const object = buildWarcObject({
            key,
            hash: `h${batches}`,
            date: 0,
            software: 'contract',
            fields: {},
            parts,
          });
          await objects.put(key, object.body);
          for (const [i, ref] of refs.entries()) {
            // The ref's offset is the response member's place within the capture's own members.
            const start = object.responses[i]!.offset - parts[i]!.requestLength;
            located.set(ref.file, { file: key, offset: start + ref.offset, length: ref.length });
          }
        },
      },
      locate(ref) {
        const found = located.get(ref.file);
        if (found === undefined) throw new Error(`${ref.file} was not flushed`);
        return found;
      },
      readSlice: async (ref) => (await objects.read(ref.file, ref.offset)).subarray(0, ref.length),
      readFile: (file) => objects.read(file, 0),
    };
  });
});
