import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { FetchedPage } from '../../core/crawl-page.ts';
import { EmbeddedCrawler } from '../embedded-crawler.ts';
import { buildConfig, parseCommand, UsageError } from './cli-options.ts';

/** The keyword hunt gives up after this depth; the start URL is depth 1. */
export const HUNT_MAX_DEPTH = 5;
export const HUNT_MAX_KEYWORD = 100;

/**
 * `crawlstack hunt <start-url> <keyword> [output-dir]`: a breadth-first search for the first page
 * whose visible text contains the keyword (the KeywordHunter exercise). Prints the page URL and
 * the line the keyword is on. Exit 0 whether found or not, 1 for bad arguments.
 */
export async function huntCommand(argv: string[]): Promise<number> {
  const parsed = parseCommand(argv, {
    'ignore-case': { type: 'boolean', short: 'i' },
    quiet: { type: 'boolean' },
  });
  const [start, keyword, outputDir, ...extra] = parsed.positionals;
  if (start === undefined || keyword === undefined) {
    throw new UsageError('hunt: usage: crawlstack hunt <start-url> <keyword> [output-dir]');
  }
  if (extra.length > 0) throw new UsageError(`hunt: unexpected argument "${extra[0]}"`);
  if (keyword.trim().length === 0) throw new UsageError('hunt: the keyword is empty');
  if (keyword.length > HUNT_MAX_KEYWORD) {
    throw new UsageError(
      `hunt: the keyword has ${keyword.length} characters; at most ${HUNT_MAX_KEYWORD} are allowed`,
    );
  }
  // Internal depth counts the seed as 0; the hunt's depth counts it as 1.
  // A keyword search needs no soft-404 probe: it would add a request per site and change nothing.
  const config = buildConfig(parsed, [start], { maxDepth: HUNT_MAX_DEPTH - 1, soft404Probe: false });
  const ignoreCase = parsed.values['ignore-case'] === true;
  const needle = ignoreCase ? keyword.toLowerCase() : keyword;

  const stateDir = mkdtempSync(join(tmpdir(), 'crawlstack-hunt-'));
  let found: { url: string; depth: number; lineNumber: number; line: string } | undefined;
  let searched = 0;
  const crawler = new EmbeddedCrawler({
    config,
    outDir: stateDir,
    warc: false,
    wantText: true,
    log: (line) => console.error(line),
    onPage: (page) => {
      if (outputDir !== undefined) savePage(outputDir, page);
      if (page.text === undefined || found !== undefined) return undefined;
      searched += 1;
      const lines = page.text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if ((ignoreCase ? line.toLowerCase() : line).includes(needle)) {
          found = { url: page.task.url, depth: page.task.depth + 1, lineNumber: i + 1, line: line.trim() };
          return true;
        }
      }
      return undefined;
    },
  });
  try {
    await crawler.run();
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
  if (found !== undefined) {
    console.log(`found "${keyword}" at depth ${found.depth}: ${found.url}`);
    console.log(`line ${found.lineNumber}: ${found.line}`);
  } else {
    console.log(`"${keyword}" not found within depth ${HUNT_MAX_DEPTH} (${searched} pages searched)`);
  }
  return 0;
}

/** Saves a fetched body under dir/<host>/<path>, never outside dir. */
function savePage(dir: string, page: FetchedPage): void {
  const url = new URL(page.task.url);
  let path = safeDecode(url.pathname).replace(/[^\p{L}\p{N}._/-]/gu, '_');
  // `/a` and `/a/b` can both exist: an extension-less last segment is saved as a folder index.
  if (path.endsWith('/')) path += 'index.html';
  else if (!/\.[^/]*$/.test(path)) path += '/index.html';
  if (url.search.length > 1) path += `_${url.search.slice(1).replace(/[^\p{L}\p{N}._-]/gu, '_')}`;
  const root = resolve(dir);
  const target = resolve(root, url.host.replace(/[^A-Za-z0-9.-]/g, '_'), `.${path}`);
  if (!target.startsWith(root + sep)) return;
  try {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, page.body);
  } catch (error) {
    console.error(`hunt: could not save ${page.task.url}: ${(error as Error).message}`);
  }
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
