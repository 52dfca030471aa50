import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { LocalWarcPageStore } from '../../functions/adapters/local/warc-page-store.ts';
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
