import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { FetchedPage } from '../core/step/crawl-page.ts';
import type { PageRecord } from '../core/types.ts';
import { type CrawlSnapshot, EmbeddedCrawler } from '../embedded/embedded-crawler.ts';
import {
  allowPrivateHint,
  buildConfig,
  commandOptions,
  optionsHelp,
  parseConfigCommand,
  UsageError,
} from './cli-options.ts';
import { formatDuration, PLAIN_EVERY_MS, ProgressReporter } from './progress.ts';
import { print, printError, terminalSafe } from './terminal-text.ts';

/** The keyword hunt gives up after this depth by default; the start URL is depth 1. */
export const HUNT_MAX_DEPTH = 5;
export const HUNT_MAX_KEYWORD = 100;

const HUNT_OPTIONS = commandOptions({
  'ignore-case': { type: 'boolean', short: 'i', help: 'match the keyword in any case' },
  quiet: { type: 'boolean', help: 'no progress line, no log lines' },
});

export const HUNT_HELP = `usage: crawlstack hunt <start-url> <keyword> [output-dir] [options]

Searches breadth-first from the start URL (depth 1) for the first page whose visible text holds the
keyword (at most ${HUNT_MAX_KEYWORD} characters), prints its URL and the line the keyword is on, and
saves every fetched page under output-dir when one is given. --max-depth N counts the start URL as
depth 1 (default ${HUNT_MAX_DEPTH}).

options:
${optionsHelp(HUNT_OPTIONS, { configFlags: true })}

While it searches, a progress line on stderr: pages searched, depth, queue (every ${PLAIN_EVERY_MS / 1000} s when
stderr is not a terminal).

exit codes: 0 searched (found or not), 1 bad usage, 2 nothing could be searched (the start URL was
refused by the SSRF guard or robots.txt, or every request failed: the reason is printed)`;

/**
 * `crawlstack hunt <start-url> <keyword> [output-dir]`: a breadth-first search for the first page
 * whose visible text contains the keyword (the KeywordHunter exercise). Prints the page URL and
 * the line the keyword is on. Exit 0 when pages were searched (found or not), 1 for bad arguments,
 * 2 when no page could be searched (the reason is printed).
 */
export async function huntCommand(argv: string[]): Promise<number> {
  const parsed = parseConfigCommand(argv, HUNT_OPTIONS, HUNT_HELP);
  if (parsed === undefined) return 0;
  const [start, keyword, outputDir, ...extra] = parsed.positionals;
  if (start === undefined || keyword === undefined) {
    throw new UsageError('usage: crawlstack hunt <start-url> <keyword> [output-dir]');
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  if (keyword.trim().length === 0) throw new UsageError('the keyword is empty');
  if (keyword.length > HUNT_MAX_KEYWORD) {
    throw new UsageError(
      `the keyword has ${keyword.length} characters; at most ${HUNT_MAX_KEYWORD} are allowed`,
    );
  }
  const maxDepth = huntDepth(parsed.values['max-depth']);
  // Internal depth counts the seed as 0; the hunt's depth counts it as 1.
  // A keyword search needs no soft-404 probe: it would add a request per site and change nothing.
  const config = buildConfig(parsed, [start], { maxDepth: maxDepth - 1, soft404Probe: false });
  const ignoreCase = parsed.values['ignore-case'] === true;
  const needle = ignoreCase ? keyword.toLowerCase() : keyword;

  const stateDir = mkdtempSync(join(tmpdir(), 'crawlstack-hunt-'));
  let found: { url: string; depth: number; lineNumber: number; line: string } | undefined;
  let searched = 0;
  let depth = 0;
  let reporter: ProgressReporter<HuntProgress> | undefined;
  const crawler = new EmbeddedCrawler({
    config,
    outDir: stateDir,
    warc: false,
    wantText: true,
    log: (line) => {
      if (parsed.values.quiet === true) return;
      const safe = terminalSafe(line);
      if (reporter) reporter.log(safe);
      else printError(safe);
    },
    onPage: (page) => {
      if (outputDir !== undefined) savePage(outputDir, page);
      if (page.text === undefined || found !== undefined) return undefined;
      searched += 1;
      depth = Math.max(depth, page.task.depth + 1);
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
  if (parsed.values.quiet !== true) {
    reporter = new ProgressReporter(
      process.stderr,
      () => {
        const snapshot = crawler.snapshot({ hosts: 0, topPages: 0, traps: false });
        return snapshot === undefined ? undefined : { ...snapshot, searched, depth, maxDepth };
      },
      formatHuntProgress,
    );
    reporter.start();
  }
  let failed: boolean;
  let why: string | undefined;
  try {
    const summary = await crawler.run();
    failed = summary.state === 'failed';
    if (failed) why = firstFailure(join(stateDir, 'pages.jsonl'), config.allowPrivate) ?? summary.stopReason;
  } finally {
    reporter?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  if (found !== undefined) {
    print(`found "${keyword}" at depth ${found.depth}: ${found.url}`);
    print(`line ${found.lineNumber}: ${found.line}`);
    return 0;
  }
  if (failed) {
    printError(`could not search: ${why ?? 'no page could be fetched'}`);
    return 2;
  }
  print(`"${keyword}" not found within depth ${maxDepth} (${searched} pages searched)`);
  return 0;
}

/** What the hunt's progress line shows: the crawl's state, the pages searched, the depth reached. */
type HuntProgress = CrawlSnapshot & { searched: number; depth: number; maxDepth: number };

/** The hunt's progress line: `hunt: 12 pages searched | depth 2 of 5 | queue 40 | ...`. */
export function formatHuntProgress(p: HuntProgress): string {
  return [
    `hunt: ${p.searched} pages searched`,
    `depth ${p.depth} of ${p.maxDepth}`,
    `queue ${p.queued}`,
    `in flight ${p.running}`,
    `errors ${p.errors}`,
    formatDuration(p.elapsedMs),
  ].join(' | ');
}

/** `--max-depth` in the hunt's terms (the start URL is depth 1). */
function huntDepth(raw: unknown): number {
  if (raw === undefined) return HUNT_MAX_DEPTH;
  const depth = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || depth < 1) {
    throw new UsageError(
      `--max-depth expects a whole number from 1 (the start URL is depth 1), got "${raw}"`,
    );
  }
  return depth;
}

/**
 * Why the start URL gave nothing to search when the SSRF guard or robots.txt refused it, from the
 * hunt's pages.jsonl (undefined otherwise).
 */
function firstFailure(pagesPath: string, allowPrivate: boolean | readonly string[]): string | undefined {
  let text: string;
  try {
    text = readFileSync(pagesPath, 'utf8');
  } catch {
    return undefined;
  }
  const first = text.split('\n').find((line) => line.length > 0);
  if (first === undefined) return undefined;
  const record = JSON.parse(first) as PageRecord;
  const detail = record.detail === undefined ? '' : ` (${record.detail})`;
  switch (record.reason) {
    case 'blocked-address':
      return `the SSRF guard refused ${record.url}: not a public address${detail}; ${allowPrivateHint(allowPrivate)}`;
    case 'robots':
      return `robots.txt does not allow crawling ${record.url}`;
    default:
      // Network failures and 5xx answers: the crawl's own line names the cause and what to do.
      return undefined;
  }
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
    printError(`hunt: could not save ${page.task.url}: ${(error as Error).message}`);
  }
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
