/**
 * Memory and time of reading the largest sitemap the protocol allows: 50,000 entries in about
 * 49 MiB (each `<url>` padded with image and hreflang extensions, as big sites write them).
 * The body is written to a temporary file and read back by a fresh process, so that its peak RSS
 * growth while reading is the reader's alone (the body is in memory before the measurement).
 *
 *   npx tsx test/unit/sitemap/measure-sitemap.ts
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSitemap } from '../../../functions/core/sitemap/sitemap-reader.ts';

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

if (process.argv[2] === undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'crawlstack-sitemap-'));
  const file = join(dir, 'sitemap.xml');
  try {
    writeFileSync(file, bigSitemap());
    const run = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, file], {
      stdio: 'inherit',
    });
    process.exitCode = run.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const body = readFileSync(process.argv[2]);
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const read = readSitemap(body, {
    url: 'https://www.example.com/sitemap.xml',
    scope: 'https://www.example.com/',
  });
  const ms = performance.now() - started;
  const peak = process.resourceUsage().maxRSS * 1024;
  if (read.kind !== 'urlset') throw new Error(`read ${read.kind}`);
  const kept = read.entries.reduce((sum, e) => sum + e.url.length + (e.lastmod?.length ?? 0), 0);
  console.log(
    `body ${mb(body.length)}: ${read.entries.length} entries kept (${mb(kept)} of text), truncated: ${read.stats.truncated ?? 'no'}`,
  );
  console.log(
    `RSS with the body loaded ${mb(rssBefore)}, peak while reading ${mb(peak)} (+${mb(peak - rssBefore)}, ` +
      `${((peak - rssBefore) / body.length).toFixed(2)}x the body); ${ms.toFixed(0)} ms, ${((body.length / 1024 / 1024 / ms) * 1000).toFixed(0)} MiB/s`,
  );
}

function bigSitemap(): string {
  const NS =
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml"';
  const parts: string[] = [`<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${NS}>\n`];
  for (let i = 0; i < 50_000; i++) {
    const loc = `https://www.example.com/catalog/section-${i % 97}/product-${i}-a-fairly-long-slug-for-the-item.html`;
    const images = [0, 1, 2]
      .map(
        (k) =>
          `<image:image><image:loc>https://img.example.com/p/${i}/${k}-large-photograph.jpg</image:loc><image:caption>Photograph ${k} of product ${i}, shown from the side</image:caption></image:image>`,
      )
      .join('');
    const langs = ['de', 'fr', 'es']
      .map(
        (l) =>
          `<xhtml:link rel="alternate" hreflang="${l}" href="https://www.example.com/${l}/product-${i}"/>`,
      )
      .join('');
    parts.push(
      `<url><loc>${loc}</loc><lastmod>2024-05-${String((i % 28) + 1).padStart(2, '0')}</lastmod><changefreq>weekly</changefreq><priority>0.${i % 10}</priority>${images}${langs}</url>\n`,
    );
  }
  parts.push('</urlset>\n');
  return parts.join('');
}
