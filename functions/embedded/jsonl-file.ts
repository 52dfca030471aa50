import { AppendOnlyFile } from './append-only-file.ts';

/**
 * An append-only JSON Lines file whose committed size is checkpointed with the crawl state: on
 * resume it is cut back to that size, so lines written by a step that never committed disappear.
 */
export class JsonlFile extends AppendOnlyFile {
  append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    this.appendBytes(Buffer.from(`${lines.join('\n')}\n`));
  }
}
