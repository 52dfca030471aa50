/**
 * The `crawlstack` command line: `crawl`, `recrawl`, `hunt`, `canonicalize`, `rank`, `cloud`, `help`,
 * `--version`.
 * Exit codes: 0 done, 1 bad usage, configuration or output folder, 2 the crawl failed, 130
 * interrupted. Everything printed from pages goes through terminal-text.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import packageJson from '../../package.json' with { type: 'json' };
import { safeJson } from '../core/text/safe-text.ts';
import { CrawlFolderError, CrawlStorageError } from '../embedded/crawl-errors.ts';
import {
  type CrawlSnapshot,
  CrawlStateMismatchError,
  EmbeddedCrawler,
} from '../embedded/embedded-crawler.ts';
import { CACHE_STUDY_HELP, cacheStudyCommand } from './cli-cache-study.ts';
import { CANONICALIZE_HELP, canonicalizeCommand } from './cli-canonicalize.ts';
import { EXPORT_HELP, exportCommand } from './cli-export.ts';
import { HUNT_HELP, huntCommand } from './cli-hunt.ts';
import {
  allowPrivateHint,
  buildConfig,
  checkExtractSelectors,
  commandOptions,
  formatRows,
  optionsHelp,
  parseConfigCommand,
  UsageError,
} from './cli-options.ts';
import { RANK_HELP, rankCommand } from './cli-rank.ts';
import { RECRAWL_HELP, recrawlCommand } from './cli-recrawl.ts';
import { takeUiFlag, UI_HELP, UI_OPTION_ROW, uiCommand, watchCrawl } from './cli-ui.ts';
import { formatProgress, formatSummary, ProgressReporter } from './progress.ts';
import { print, printError, terminalSafe } from './terminal-text.ts';

export const EXIT = { ok: 0, usage: 1, failed: 2, interrupted: 130 } as const;

export const VERSION: string = packageJson.version;

const CRAWL_OPTIONS = commandOptions({
  out: { type: 'string', short: 'o', arg: 'DIR', help: 'output and state folder (default crawl-out/<host>)' },
  'no-warc': { type: 'boolean', help: 'do not write WARC files' },
  quiet: { type: 'boolean', short: 'q', help: 'no progress line' },
  json: { type: 'boolean', help: 'print the summary as JSON' },
});

const EXIT_CODES =
  'exit codes: 0 done, 1 bad usage, configuration or output folder, 2 crawl failed, 130 interrupted (resumable)';

const CRAWL_HELP = `usage: crawlstack crawl <seed-url...> [options]

Crawls from the seeds, politely, into --out: pages.jsonl, links.jsonl, sitemaps.jsonl,
warc/*.warc.gz, warc/index.cdxj, summary.json, traps.json, state.sqlite. Run the same command
again to resume an interrupted crawl.

options:
${optionsHelp(CRAWL_OPTIONS, { rows: [UI_OPTION_ROW], configFlags: true })}

${EXIT_CODES}`;

const USAGE = `crawlstack ${VERSION} — a polite, fast, trap-resistant web crawler

usage:
${formatRows([
  ['crawlstack crawl <seed-url...> [options]', 'crawl into an output folder (resumable)'],
  ['crawlstack recrawl --out DIR', 'revisit a finished crawl: conditional GETs, revisit records (resumable)'],
  ['crawlstack hunt <start-url> <keyword> [dir]', 'breadth-first search for a keyword'],
  ['crawlstack canonicalize <url...>', 'canonical form and fingerprint of URLs'],
  ['crawlstack rank --out DIR', 'crawled pages by AOPIC importance vs PageRank and HITS'],
  ['crawlstack cache-study --out DIR', 'replay the URL-seen trace through LRU, CLOCK, RANDOM, STATIC, MIN'],
  ['crawlstack ui --out DIR', 'the dashboard of a running or finished crawl'],
  ['crawlstack export --out DIR', 'pages or the dataset as JSON Lines or CSV'],
  [
    'crawlstack cloud <command>',
    'start, watch, list, download, recrawl, schedule crawls of a deployed crawler',
  ],
  ['crawlstack help [command]', 'this help, or a command’s'],
  ['crawlstack --version', 'the version'],
])}

Each command takes --help.
${EXIT_CODES}`;

const HELP: Record<string, string> = {
  crawl: CRAWL_HELP,
  recrawl: RECRAWL_HELP,
  hunt: HUNT_HELP,
  canonicalize: CANONICALIZE_HELP,
  rank: RANK_HELP,
  'cache-study': CACHE_STUDY_HELP,
  ui: UI_HELP,
  export: EXPORT_HELP,
};

/** Every command (`cloud` has its help in its own module, loaded on demand). */
const COMMANDS = [...Object.keys(HELP), 'cloud'];

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  endQuietlyWhenStdoutCloses();
  try {
    switch (command) {
      case 'crawl':
        return await crawlCommand(rest);
      case 'recrawl':
        return await recrawlCommand(rest);
      case 'hunt':
        return await huntCommand(rest);
      case 'canonicalize':
        return canonicalizeCommand(rest);
      case 'rank':
        return rankCommand(rest);
      case 'cache-study':
        return cacheStudyCommand(rest);
      case 'export':
        return await exportCommand(rest);
      case 'ui':
        return await uiCommand(rest);
      case 'cloud':
        // Loaded on demand: the AWS SDK's signer and credential chain stay out of every other start.
        return await (await import('./cloud/cli-cloud.ts')).cloudCommand(rest);
      case '--version':
      case '-V':
      case 'version':
        print(`crawlstack ${VERSION}`);
        return EXIT.ok;
      case undefined:
      case 'help':
      case '--help':
      case '-h': {
        const topic = command === 'help' ? rest[0] : undefined;
        if (topic !== undefined && HELP[topic] === undefined && topic !== 'cloud') {
          throw new UsageError(`no command "${topic}" (commands: ${COMMANDS.join(', ')})`);
        }
        if (topic === 'cloud') print((await import('./cloud/cli-cloud.ts')).CLOUD_HELP);
        else print(topic === undefined ? USAGE : (HELP[topic] as string));
        return command === undefined ? EXIT.usage : EXIT.ok;
      }
      default:
        throw new UsageError(
          `unknown command "${command}" (commands: ${COMMANDS.join(', ')}; see crawlstack --help)`,
        );
    }
  } catch (error) {
    return reportError(error, command !== undefined && COMMANDS.includes(command) ? command : undefined);
  }
}

/** A write to stdout failed because its reader went away (`crawlstack export | head`). */
function isClosedStdout(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
}

/**
 * `crawlstack ... | head`: once the reader has what it wants, the rest of the output has nowhere
 * to go, which is not a failure (as with `cat`, `grep`): end at once, exit 0, nothing on stderr.
 * Without this an EPIPE is an unhandled 'error' event, or a "failed: write EPIPE" message.
 */
function endQuietlyWhenStdoutCloses(): void {
  if (process.stdout.listenerCount('error') > 0) return;
  process.stdout.on('error', (error) => {
    if (isClosedStdout(error)) process.exit(EXIT.ok);
    throw error;
  });
}

/** One message per failure, no stack (set CRAWLSTACK_DEBUG=1 for one); returns the exit code. */
function reportError(error: unknown, command: string | undefined): number {
  const where = command === undefined ? 'crawlstack' : `crawlstack ${command}`;
  if (isClosedStdout(error)) return EXIT.ok;
  if (error instanceof UsageError) {
    printError(`${where}: ${error.message}${command === undefined ? '' : ` (see ${where} --help)`}`);
    return EXIT.usage;
  }
  if (error instanceof CrawlStateMismatchError || error instanceof CrawlFolderError) {
    printError(`${where}: ${error.message}`);
    return EXIT.usage;
  }
  if (error instanceof CrawlStorageError) {
    printError(`${where}: ${error.message}`);
    return EXIT.failed;
  }
  const message = error instanceof Error ? error.message : String(error);
  printError(`${where}: failed: ${message}`);
  if (process.env.CRAWLSTACK_DEBUG && error instanceof Error && error.stack) printError(error.stack);
  else printError('(set CRAWLSTACK_DEBUG=1 to see where it failed)');
  return EXIT.failed;
}

async function crawlCommand(args: string[]): Promise<number> {
  const { argv, uiPort } = takeUiFlag(args);
  const parsed = parseConfigCommand(argv, CRAWL_OPTIONS, CRAWL_HELP);
  if (parsed === undefined) return EXIT.ok;
  const config = buildConfig(parsed, parsed.positionals);
  await checkExtractSelectors(config);
  const outDir = typeof parsed.values.out === 'string' ? parsed.values.out : defaultOutDir(config.seeds[0]!);
  const progressStream = process.stderr;
  let reporter: ProgressReporter<CrawlSnapshot> | undefined;
  const log = (line: string) => {
    const safe = terminalSafe(line);
    if (reporter) reporter.log(safe);
    else process.stderr.write(`${safe}\n`);
  };
  const crawler = new EmbeddedCrawler({ config, outDir, warc: parsed.values['no-warc'] !== true, log });
  if (parsed.values.quiet !== true) {
    reporter = new ProgressReporter(
      progressStream,
      () => crawler.snapshot({ hosts: 0, topPages: 0, traps: false }),
      formatProgress,
    );
  }
  // status.json for `crawlstack ui`, and the dashboard with --ui (see cli-ui.ts).
  const watch = await watchCrawl({
    outDir,
    seeds: config.seeds,
    live: () => crawler.snapshot() ?? {},
    uiPort,
  });
  if (watch.url !== undefined) printError(`dashboard: ${watch.url}`);
  let interrupts = 0;
  const onSignal = () => {
    interrupts += 1;
    if (interrupts === 1) {
      log(
        'stopping: finishing requests in flight (Ctrl-C again to quit at once; the crawl resumes either way)',
      );
      crawler.stop('interrupted');
    } else {
      process.exit(EXIT.interrupted);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  reporter?.start();
  let summary: Awaited<ReturnType<EmbeddedCrawler['run']>> | undefined;
  try {
    summary = await crawler.run();
  } finally {
    reporter?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (summary === undefined) await watch.close('failed');
  }
  writeFileSync(
    join(outDir, 'summary.json'),
    `${safeJson(summary, 2)}
`,
  );
  await watch.close(summary.state);
  print(parsed.values.json ? safeJson(summary, 2) : formatSummary(summary));
  if (summary.state === 'interrupted') {
    printError('interrupted: run the same command again to resume');
    return EXIT.interrupted;
  }
  if (summary.state === 'failed') {
    if ((summary.byReason['blocked-address'] ?? 0) > 0 && summary.requests === 0) {
      printError(
        'crawl failed: the SSRF guard refused to connect to the seed (a loopback, private or other ' +
          `non-public address); ${allowPrivateHint(config.allowPrivate)}`,
      );
    } else {
      printError(
        `crawl failed: ${summary.stopReason ?? 'no page could be fetched'} (reasons in pages.jsonl)`,
      );
    }
    return EXIT.failed;
  }
  return EXIT.ok;
}

function defaultOutDir(seed: string): string {
  let host = 'crawl';
  try {
    host = new URL(seed).host.replace(/[^A-Za-z0-9.-]/g, '_');
  } catch {
    // the config check reports bad seeds
  }
  return join('crawl-out', host);
}
