/**
 * A byte buffer that is appended to in pieces of any size and keeps its own copies, in a few
 * blocks. An HTTP parser reports a body in whatever pieces arrived: one per TCP read, one per
 * chunk of chunked transfer coding. Kept as they come, a body sent one byte per chunk costs a
 * Buffer (about 100 bytes of object and allocator overhead) per byte: an 11 MiB body took 1.5 GB.
 * Copied into blocks, it costs its length plus at most one block.
 */
import { Buffer } from 'node:buffer';

/** The first block: most HTML pages fit in it. */
const FIRST_BLOCK = 16 * 1024;
/** Blocks grow with the content up to this size, so the unused tail stays small. */
const LARGEST_BLOCK = 1024 * 1024;

/** Bytes appended by copy, read back once as one buffer. */
export class ByteBlocks {
  readonly #blocks: Buffer[] = [];
  #used = 0;
  #length = 0;

  /** Bytes appended so far. */
  get length(): number {
    return this.#length;
  }

  /** Copies `bytes` in; the caller may reuse or drop its buffer afterwards. */
  append(bytes: Uint8Array): void {
    let offset = 0;
    while (offset < bytes.length) {
      let block = this.#blocks[this.#blocks.length - 1];
      if (block === undefined || this.#used === block.length) {
        // Each new block is as large as everything before it (doubling), within the bounds.
        block = Buffer.allocUnsafeSlow(Math.min(LARGEST_BLOCK, Math.max(FIRST_BLOCK, this.#length)));
        this.#blocks.push(block);
        this.#used = 0;
      }
      const n = Math.min(bytes.length - offset, block.length - this.#used);
      block.set(bytes.subarray(offset, offset + n), this.#used);
      this.#used += n;
      offset += n;
      this.#length += n;
    }
  }

  /**
   * Everything appended, as one buffer (a view of the only block, or one copy of them all). The
   * copy then replaces the blocks, so they are garbage at once and a second call copies nothing.
   */
  toBuffer(): Buffer {
    const last = this.#blocks.length - 1;
    if (last < 0) return Buffer.alloc(0);
    if (last === 0) return this.#blocks[0]!.subarray(0, this.#used);
    const parts = this.#blocks.map((block, i) => (i === last ? block.subarray(0, this.#used) : block));
    const whole = Buffer.concat(parts, this.#length);
    this.#blocks.length = 0;
    this.#blocks.push(whole);
    this.#used = whole.length;
    return whole;
  }
}
