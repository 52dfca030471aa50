/**
 * `crawlstack recrawl --out DIR`: one round of revisits of a finished crawl (docs/recrawl.md),
 * resumable as a crawl is.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CrawlConfigInput } from '../core/config.ts';
import type { EmbeddedCrawler } from '../embedded/embedded-crawler.ts';
import { RecrawlConfigError, type RecrawlSummary, recrawl } from '../embedded/recrawl.ts';
import {
  folderOptions,
  type OptionSpec,
  optionsHelp,
  type ParsedCommand,
  parseFolderCommand,
  UsageError,
} from './cli-options.ts';
import { print, printError, terminalSafe } from './terminal-text.ts';

/**
 * The settings of one round, as flags: `crawlstack recrawl`, and `crawlstack cloud recrawl` and
 * `cloud schedule` (which send them as the API's body).
 */
export const ROUND_OPTIONS: Record<string, OptionSpec> = {
  schedule: {
    type: 'string',
    arg: 'S',
    help: 'adaptive (default): pages due by their change rate, likeliest changed first; uniform: least recently visited first; full: every page',
  },
  budget: { type: 'string', arg: 'N', help: 'pages the round fetches at most (revisits and new pages)' },
  'min-interval-ms': {
    type: 'string',
    arg: 'MS',
    help: 'shortest revisit interval of a page (default 3600000)',
  },
  'max-interval-ms': {
    type: 'string',
    arg: 'MS',
    help: 'longest revisit interval of a page (default 30 days)',
  },
};

const RECRAWL_OPTIONS = folderOptions(
  {
    ...ROUND_OPTIONS,
    'no-warc': { type: 'boolean', help: 'do not write WARC files' },
    json: { type: 'boolean', help: 'print the summary as JSON' },
  },
  'the --out folder of a finished crawl',
);

export const RECRAWL_HELP = `usage: crawlstack recrawl --out DIR [options]

Revisits the pages of the finished crawl in DIR with conditional GETs (If-None-Match,
If-Modified-Since) and stores what changed: a 304 or an unchanged body becomes a WARC revisit
record, links of unchanged pages are followed again, new pages are crawled, 404/410 pages are
recorded as gone. Each run is one round, in DIR/recrawls/round-NNNN/ (pages.jsonl, links.jsonl,
warc/, recrawl-summary.json); an interrupted round resumes when the same command runs again.
The crawl's own settings apply (seeds, scope, politeness); the options below change this round.

options:
${optionsHelp(RECRAWL_OPTIONS)}

exit codes: 0 done, 1 bad usage or folder, 2 failed, 130 interrupted (resumable)`;

/** The settings the {@link ROUND_OPTIONS} flags give (the schema checks their values). */
export function roundOverrides(parsed: { values: ParsedCommand['values'] }): Partial<CrawlConfigInput> {
  const overrides: Partial<CrawlConfigInput> = {};
  const schedule = parsed.values.schedule;
  if (typeof schedule === 'string')
    overrides.recrawlSchedule = schedule as CrawlConfigInput['recrawlSchedule'];
  const number = (flag: string): number | undefined => {
    const value = parsed.values[flag];
    if (typeof value !== 'string') return undefined;
    if (!/^\d+$/.test(value))
      throw new UsageError(`--${flag} expects a whole number (got ${JSON.stringify(value)})`);
    return Number(value);
  };
  const budget = number('budget');
  if (budget !== undefined) overrides.recrawlBudget = budget;
  const min = number('min-interval-ms');
  if (min !== undefined) overrides.recrawlMinIntervalMs = min;
  const max = number('max-interval-ms');
  if (max !== undefined) overrides.recrawlMaxIntervalMs = max;
  return overrides;
}

/** Runs `crawlstack recrawl`; returns the exit code. */
export async function recrawlCommand(args: string[]): Promise<number> {
  const parsed = parseFolderCommand(
    args,
    'recrawl',
    RECRAWL_OPTIONS,
    RECRAWL_HELP,
    '--out DIR is required: the folder of a finished crawl',
  );
  if (parsed === undefined) return 0;
  const outDir = parsed.out;
  const overrides = roundOverrides(parsed);
  const log = (line: string) => process.stderr.write(`${terminalSafe(line)}\n`);
  let crawler: EmbeddedCrawler | undefined;
  let interrupts = 0;
  const onSignal = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130);
    log(
      'stopping: finishing requests in flight (Ctrl-C again to quit at once; the round resumes either way)',
    );
    crawler?.stop('interrupted');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let summary: RecrawlSummary;
  try {
    summary = await recrawl({
      outDir,
      overrides,
      log,
      warc: parsed.values['no-warc'] !== true,
      onCrawler: (created) => {
        crawler = created;
      },
    });
  } catch (error) {
    if (error instanceof RecrawlConfigError) throw new UsageError(error.message);
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  writeFileSync(join(summary.roundDir, 'recrawl-summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  print(parsed.values.json ? JSON.stringify(summary, null, 2) : formatRecrawlSummary(summary));
  if (summary.crawl.state === 'interrupted') {
    printError('interrupted: run the same command again to resume the round');
    return 130;
  }
  return 0;
}

/** The summary in a few lines: what changed, what did not, what is gone, what is new. */
export function formatRecrawlSummary(summary: RecrawlSummary): string {
  const c = summary.crawl;
  const lines = [
    `recrawl round ${summary.round} (${summary.schedule}${summary.budget === undefined ? '' : `, budget ${summary.budget}`}): ${summary.planned} of ${summary.known} known pages revisited`,
    `  changed ${summary.changed}, not modified (304) ${summary.notModified}, unchanged (same payload) ${summary.unchanged}, gone ${summary.gone}, new ${summary.new}`,
    `  ${c.requests} requests, ${c.bytes} bytes, ${(c.durationMs / 1000).toFixed(1)} s -> ${summary.roundDir}`,
  ];
  for (const [label, urls] of [
    ['changed', summary.changedUrls],
    ['gone', summary.goneUrls],
    ['new', summary.newUrls],
  ] as const) {
    for (const url of urls.slice(0, 10)) lines.push(`  ${label}: ${terminalSafe(url)}`);
  }
  return lines.join('\n');
}
