/**
 * The `crawlstack` command line: `crawl`, `hunt`, `canonicalize`, `rank`.
 * Exit codes: 0 done, 1 bad usage or configuration, 2 the crawl failed, 130 interrupted.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrawlStateMismatchError, EmbeddedCrawler } from '../embedded-crawler.ts';
import { progressOverlay } from '../ui/status-publisher.ts';
import { cacheStudyCommand } from './cli-cache-study.ts';
import { canonicalizeCommand } from './cli-canonicalize.ts';
import { exportCommand } from './cli-export.ts';
import { huntCommand } from './cli-hunt.ts';
import {
  buildConfig,
  checkExtractSelectors,
  configFlagsHelp,
  parseCommand,
  UsageError,
} from './cli-options.ts';
import { rankCommand } from './cli-rank.ts';
import { takeUiFlag, uiCommand, watchCrawl } from './cli-ui.ts';
import { formatSummary, ProgressReporter } from './progress.ts';

export const EXIT = { ok: 0, usage: 1, failed: 2, interrupted: 130 } as const;

const USAGE = `crawlstack — a polite, fast, trap-resistant web crawler

usage:
  crawlstack crawl <seed-url...> [--out DIR] [options]
  crawlstack hunt <start-url> <keyword> [output-dir] [options]
  crawlstack canonicalize <url...>
  crawlstack rank --out DIR [--top N] [--json]
  crawlstack cache-study --out DIR [--sizes 8-20] [--seed N] [--chart FILE] [--json]
  crawlstack ui --out DIR [--port N]
  crawlstack export --out DIR [--format jsonl|csv] [--source pages|dataset] [--fields a,b] [--output FILE] [--bom]
  crawlstack help

crawl writes to --out (default crawl-out/<first seed's host>): pages.jsonl, links.jsonl,
warc/*.warc.gz, warc/index.cdxj, url-seen.trace, dataset.jsonl (with --extract), summary.json,
state.sqlite. Run the same command again to
resume an interrupted crawl.

crawl options:
  --out DIR                 output and state folder
  --config FILE             JSON file with the same settings as the flags (flags win)
  --extract-config FILE     JSON {"fields": {"name": {"selector", "attr"?, "all"?}}}: fields for
                            pages.jsonl "extracted" and dataset.jsonl (with --extract: flags win)
  --no-warc                 do not write WARC files
  --ui [PORT]               serve a live dashboard on http://127.0.0.1:PORT/ (default 8484) while
                            the crawl runs; \`crawlstack ui --out DIR\` serves it afterwards
  --quiet                   no progress line
  --json                    print the summary as JSON
${configFlagsHelp()}

exit codes: 0 done, 1 bad usage or config, 2 crawl failed, 130 interrupted (resumable)`;

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'crawl':
        return await crawlCommand(rest);
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
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(
          `unknown command "${command}" (try: crawl, hunt, canonicalize, rank, cache-study, export, ui, help)`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof CrawlStateMismatchError) {
      console.error(`crawlstack: ${error.message}`);
      return EXIT.usage;
    }
    console.error(`crawlstack: crawl failed: ${(error as Error).stack ?? error}`);
    return EXIT.failed;
  }
}

async function crawlCommand(args: string[]): Promise<number> {
  const { argv, uiPort } = takeUiFlag(args);
  const parsed = parseCommand(argv, {
    out: { type: 'string', short: 'o' },
    'no-warc': { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (parsed.values.help) {
    console.log(USAGE);
    return EXIT.ok;
  }
  const config = buildConfig(parsed, parsed.positionals);
  await checkExtractSelectors(config);
  const outDir = typeof parsed.values.out === 'string' ? parsed.values.out : defaultOutDir(config.seeds[0]!);
  const progressStream = process.stderr;
  let reporter: ProgressReporter | undefined;
  const crawler = new EmbeddedCrawler({
    config,
    outDir,
    warc: parsed.values['no-warc'] !== true,
    log: (line) => (reporter ? reporter.log(line) : console.error(line)),
  });
  if (parsed.values.quiet !== true) {
    reporter = new ProgressReporter(progressStream, () => crawler.progress());
  }
  // status.json for `crawlstack ui`, and the dashboard with --ui (see cli-ui.ts).
  const watch = await watchCrawl({
    outDir,
    seeds: config.seeds,
    live: () => progressOverlay(crawler.progress()),
    uiPort,
  });
  if (watch.url !== undefined) console.error(`dashboard: ${watch.url}`);
  let interrupts = 0;
  const onSignal = () => {
    interrupts += 1;
    if (interrupts === 1) {
      reporter?.log(
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
    if (summary === undefined) await watch.close();
  }
  writeFileSync(join(outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  await watch.close();
  console.log(parsed.values.json ? JSON.stringify(summary, null, 2) : formatSummary(summary));
  if (summary.state === 'interrupted') {
    console.error('interrupted: run the same command again to resume');
    return EXIT.interrupted;
  }
  if (summary.pages === 0) {
    if ((summary.byReason['blocked-address'] ?? 0) > 0 && !config.allowPrivate) {
      console.error(
        'crawl failed: the SSRF guard refused to connect to the seed (a loopback, private or other ' +
          'non-public address); run with --allow-private to crawl it',
      );
    } else {
      console.error('crawl failed: no page could be fetched (reasons in pages.jsonl)');
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
