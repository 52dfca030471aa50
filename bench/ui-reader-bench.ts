/**
 * `npm run bench:ui-reader`: the dashboard's reader of a crawl folder (`crawlstack ui --out DIR`)
 * on a big pages.jsonl, to show that its memory does not grow with the file. Writes ~600 MB of
 * page records (~1.1 M lines, 1,000 hosts, three hours of fetches) into a temporary folder, reads
 * it with CrawlFolderReader, prints the time and the process's peak RSS before and after the read,
 * and deletes the folder.
 *
 *   npm run bench:ui-reader                          1,100,000 records ≈ 600 MB
 *   npm run bench:ui-reader -- --records 200000 --keep
 */
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { PageRecord } from '../functions/core/types.ts';
import { CrawlFolderReader } from '../functions/dashboard/crawl-folder-reader.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '1100000' },
    keep: { type: 'boolean', default: false },
  },
});
const records = Number(values.records);
const MiB = 1024 * 1024;
const peakRss = () => process.resourceUsage().maxRSS * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

const dir = mkdtempSync(join(tmpdir(), 'crawlstack-ui-bench-'));
const path = join(dir, 'pages.jsonl');
try {
  const start = Date.UTC(2026, 10, 26);
  const fd = openSync(path, 'w');
  const wrote = performance.now();
  for (let from = 0; from < records; from += 10_000) {
    const lines: string[] = [];
    for (let i = from; i < Math.min(records, from + 10_000); i++) {
      const url = `https://host${i % 1000}.example.org/section/${i % 37}/article-${i}.html`;
      const record: PageRecord = {
        url,
        finalUrl: url,
        status: i % 40 === 0 ? 404 : 200,
        contentType: 'text/html; charset=utf-8',
        kind: 'page',
        depth: 1 + (i % 6),
        bytes: 20_000 + (i % 50_000),
        fetchedAt: new Date(start + i * 10).toISOString(),
        durationMs: 40 + (i % 300),
        title: `Article ${i} of section ${i % 37}: a title of ordinary length for a news page, with its site's name after it | Example News Org`,
        contentHash: `sha256:${(i * 2654435761).toString(16).padStart(16, '0')}`,
        outLinks: 40 + (i % 80),
        importance: 1 / (1 + i),
        cash: 0.5 / (1 + i),
      };
      lines.push(`${JSON.stringify(record)}\n`);
    }
    writeSync(fd, lines.join(''));
  }
  closeSync(fd);
  const size = statSync(path).size;
  console.log(
    `wrote ${records.toLocaleString('en-US')} records, ${mb(size)} in ${((performance.now() - wrote) / 1000).toFixed(1)} s`,
  );

  const rssBefore = process.memoryUsage().rss;
  const before = peakRss();
  const reader = new CrawlFolderReader(dir);
  const t0 = performance.now();
  const { snapshot } = reader.read();
  const seconds = (performance.now() - t0) / 1000;
  const after = peakRss();
  console.log(
    `read: ${snapshot.pages.toLocaleString('en-US')} pages, ${snapshot.hosts} hosts, ` +
      `${snapshot.rate.length} rate points in ${seconds.toFixed(1)} s (${mib(size / seconds)}/s)`,
  );
  console.log(
    `RSS ${mib(rssBefore)} before the read; peak RSS ${mib(before)} before it (node, tsx, the writer), ` +
      `${mib(after)} after it; ` +
      `the reader held at most ${mib(reader.peakHeldBytes)} of the file`,
  );
  const again = performance.now();
  reader.read();
  console.log(`a second read (nothing appended): ${(performance.now() - again).toFixed(1)} ms`);
  if (snapshot.pages !== records) throw new Error(`read ${snapshot.pages} pages of ${records}`);
} finally {
  if (values.keep) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
