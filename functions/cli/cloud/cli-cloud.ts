/**
 * `crawlstack cloud ...`: drive a deployed crawler (or `npm run cloud:local`) through its HTTP API:
 * start a crawl with the same flags and --config as `crawl` (validated here by the one schema
 * first), watch it with the same progress line and summary, list crawls and pages, cancel, and
 * download a crawl into a folder the local commands read. Loaded on demand: the AWS SDK pieces it
 * needs stay out of every other command's start.
 */
import { join } from 'node:path';
import type { CrawlProgressView } from '../../cloud/use-cases/crawl-progress.ts';
import type { RecrawlScheduleView as ScheduleView } from '../../cloud/use-cases/recrawl-schedule.ts';
import { safeJson } from '../../core/text/safe-text.ts';
import { CloudApiError, startCloudDashboard } from '../../dashboard/cloud-dashboard.ts';
import {
  checkExtractSelectors,
  commandOptions,
  configInput,
  formatRows,
  type OptionSpec,
  optionRows,
  optionsHelp,
  type ParsedCommand,
  parseCommand,
  UsageError,
  validateConfig,
} from '../cli-options.ts';
import { ROUND_OPTIONS, roundOverrides } from '../cli-recrawl.ts';
import { DEFAULT_UI_PORT, parsePort } from '../cli-ui.ts';
import { formatProgress, formatSummary, ProgressReporter, type ProgressView } from '../progress.ts';
import { print, printError, terminalSafe } from '../terminal-text.ts';
import { PageWalk } from './answer-bounds.ts';
import { apiError, CloudApi } from './cloud-api.ts';
import { CloudCliError } from './cloud-cli-error.ts';
import { downloadCrawl } from './cloud-download.ts';
import { scheduleAction } from './cloud-schedule-args.ts';
import { resolveTarget } from './cloud-target.ts';
import { PollRate, progressOfView, summaryOfView } from './cloud-views.ts';

const EXIT = { ok: 0, usage: 1, failed: 2, interrupted: 130 } as const;

/** Where the API is and how to call it: every subcommand takes these. */
const TARGET_OPTIONS = commandOptions({
  api: {
    type: 'string',
    arg: 'URL',
    help: 'the API: the ApiUrl output of npx cdk deploy (or CRAWLSTACK_API)',
  },
  stack: {
    type: 'string',
    arg: 'NAME',
    help: "read the API's URL from this stack's outputs (e.g. CrawlstackStack)",
  },
  region: {
    type: 'string',
    arg: 'REGION',
    help: "the API's region (default: from the URL, else your AWS config)",
  },
  profile: {
    type: 'string',
    arg: 'NAME',
    help: 'AWS profile to sign with (default: the default credential chain)',
  },
  token: {
    type: 'string',
    arg: 'TOKEN',
    help: 'bearer token of npm run cloud:local (default: CRAWLSTACK_TOKEN or .tmp/cloud-local.json)',
  },
});

interface Subcommand {
  usage: string;
  summary: string;
  options: Record<string, OptionSpec>;
  configFlags?: boolean;
  run: (parsed: ParsedCommand, api: () => Promise<CloudApi>) => Promise<number>;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  start: {
    usage: 'start <seed-url...> [crawl options]',
    summary: 'start a crawl (same flags and --config as crawl); prints its id',
    options: {},
    configFlags: true,
    run: startCommand,
  },
  status: {
    usage: 'status <id> [--json]',
    summary: "a crawl's status and counters, as a summary",
    options: { json: { type: 'boolean', help: "print the API's JSON" } },
    run: statusCommand,
  },
  watch: {
    usage: 'watch <id> [--quiet] [--json]',
    summary: 'the live progress line until the crawl ends, then its summary',
    options: {
      quiet: { type: 'boolean', short: 'q', help: 'no progress line' },
      json: { type: 'boolean', help: 'print the summary as JSON' },
      interval: { type: 'string', arg: 'S', help: 'seconds between status polls (default 2)' },
    },
    run: watchCommand,
  },
  list: {
    usage: 'list [--limit N] [--json]',
    summary: 'crawls, newest first',
    options: {
      limit: { type: 'string', arg: 'N', help: 'at most N crawls (default 20)' },
      json: { type: 'boolean', help: 'JSON Lines' },
    },
    run: listCommand,
  },
  pages: {
    usage: 'pages <id>',
    summary: "the crawl's page records as JSON Lines (all of them, through the API's cursor)",
    options: {},
    run: pagesCommand,
  },
  recrawl: {
    usage: 'recrawl <id> [--schedule S] [--budget N] [--watch]',
    summary: "start the next recrawl round of a finished crawl's archive (a crawl of its own); prints its id",
    options: {
      ...ROUND_OPTIONS,
      watch: { type: 'boolean', help: 'then watch the round as crawlstack cloud watch does' },
      quiet: { type: 'boolean', short: 'q', help: 'with --watch: no progress line' },
      json: { type: 'boolean', help: 'with --watch: print the summary as JSON' },
    },
    run: recrawlCommand,
  },
  schedule: {
    usage: 'schedule <id> --every "7 days" [--schedule S] [--budget N] | --show | --remove',
    summary:
      "a recurring recrawl of the crawl's archive (EventBridge Scheduler): create or replace, show, remove",
    options: {
      every: {
        type: 'string',
        arg: 'WHEN',
        help: '"<n> minutes|hours|days|weeks", rate(...) or cron(min hour day month weekday year), UTC; at least the stack\'s minimum interval (default 1 hour)',
      },
      ...ROUND_OPTIONS,
      show: { type: 'boolean', help: 'show the schedule, its next run and what its runs did' },
      remove: { type: 'boolean', help: 'remove the schedule (rounds already started keep running)' },
      json: { type: 'boolean', help: "print the API's JSON" },
    },
    run: scheduleCommand,
  },
  cancel: {
    usage: 'cancel <id>',
    summary: 'cancel a running crawl (queued URLs are dropped without a fetch)',
    options: {},
    run: cancelCommand,
  },
  ui: {
    usage: 'ui [<id>] [--port N]',
    summary: 'the crawl dashboard for cloud crawls on 127.0.0.1 (its calls to the API signed here)',
    options: {
      port: { type: 'string', arg: 'N', help: `port (default ${DEFAULT_UI_PORT}; 0: any free port)` },
    },
    run: uiCommand,
  },
  download: {
    usage: 'download <id> --out DIR',
    summary: "the crawl's WARC files, pages, links (and dataset, trace) as a local crawl folder",
    options: {
      out: { type: 'string', short: 'o', arg: 'DIR', help: 'the folder (resumable: run again to finish)' },
    },
    run: downloadCommand,
  },
};

const EXIT_CODES =
  'exit codes: 0 done, 1 bad usage, configuration, credentials or permissions, 2 failed (the crawl, or the API), 130 interrupted';

/** `crawlstack cloud --help`. */
export const CLOUD_HELP = `usage: crawlstack cloud <command> [options]

Drives a deployed crawler through its HTTP API (a Lambda function URL, AWS_IAM: requests are
signed with SigV4 from your AWS credentials: profiles, SSO, environment, roles), or the local
stack of npm run cloud:local (its bearer token is picked up from .tmp/cloud-local.json).

commands:
${formatRows(Object.values(SUBCOMMANDS).map((s) => [`crawlstack cloud ${s.usage}`, s.summary]))}

where the API is (every command):
${optionsHelp(TARGET_OPTIONS)}

Each command takes --help.
${EXIT_CODES}`;

function helpOf(name: string, sub: Subcommand): string {
  return `usage: crawlstack cloud ${sub.usage}

${sub.summary[0]!.toUpperCase()}${sub.summary.slice(1)}.

options:
${optionsHelp(sub.options, { rows: optionRows(TARGET_OPTIONS), configFlags: sub.configFlags === true })}

${name === 'watch' ? 'Ctrl-C stops watching; the crawl keeps running in the cloud.\n' : ''}${EXIT_CODES}`;
}

/** Runs `crawlstack cloud <argv>`; returns the exit code. */
export async function cloudCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    print(CLOUD_HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const sub = SUBCOMMANDS[name];
  if (sub === undefined) {
    throw new UsageError(`no cloud command "${name}" (commands: ${Object.keys(SUBCOMMANDS).join(', ')})`);
  }
  const parsed = parseCommand(
    rest,
    { ...TARGET_OPTIONS, ...sub.options },
    { configFlags: sub.configFlags === true },
  );
  if (parsed.values.help) {
    print(helpOf(name, sub));
    return EXIT.ok;
  }
  let api: CloudApi | undefined;
  const connect = async () => {
    api ??= new CloudApi(
      await resolveTarget(
        {
          api: stringOf(parsed, 'api'),
          stack: stringOf(parsed, 'stack'),
          region: stringOf(parsed, 'region'),
          profile: stringOf(parsed, 'profile'),
          token: stringOf(parsed, 'token'),
        },
        process.env,
        process.cwd(),
        (line) => printError(`crawlstack cloud: ${line}`),
      ),
    );
    return api;
  };
  try {
    return await sub.run(parsed, connect);
  } catch (error) {
    if (!(error instanceof CloudCliError)) throw error;
    printError(`crawlstack cloud ${name}: ${error.message}`);
    if (process.env.CRAWLSTACK_DEBUG && error.cause instanceof Error) printError(error.cause.stack ?? '');
    return error.exitCode;
  }
}

function stringOf(parsed: ParsedCommand, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** The one crawl id argument. */
function crawlIdOf(parsed: ParsedCommand, usage: string): string {
  const [id, extra] = parsed.positionals;
  if (id === undefined) throw new UsageError(`a crawl id is needed: crawlstack cloud ${usage}`);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  return id;
}

function noArguments(parsed: ParsedCommand): void {
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
}

async function startCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  // The one schema, here first: a typo is named with its flag before anything is sent.
  const input = configInput(parsed, parsed.positionals);
  await checkExtractSelectors(validateConfig(input));
  const api = await connect();
  const { id } = await api.post<{ id: string }>('/crawls', input);
  print(id);
  printError(`crawl ${id} started on ${api.target.api}; watch it with: crawlstack cloud watch ${id}`);
  return EXIT.ok;
}

async function statusCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const id = crawlIdOf(parsed, 'status <id>');
  const view = await (await connect()).get<CrawlProgressView>(`/crawls/${id}`, { crawlId: id });
  print(
    parsed.values.json ? safeJson(view, 2) : formatSummary(summaryOfView(view, Date.now(), downloadHint(id))),
  );
  return EXIT.ok;
}

function downloadHint(id: string): string {
  return `in the cloud: crawlstack cloud download ${id} --out DIR`;
}

async function watchCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const id = crawlIdOf(parsed, 'watch <id>');
  const intervalText = stringOf(parsed, 'interval') ?? '2';
  const interval = Number(intervalText) * 1000;
  if (!Number.isFinite(interval) || interval < 100 || interval > 3_600_000) {
    throw new UsageError(`--interval: expected seconds from 0.1 to 3600, got "${intervalText}"`);
  }
  const api = await connect();
  const rate = new PollRate();
  let latest: ProgressView | undefined;
  const reporter =
    parsed.values.quiet === true
      ? undefined
      : new ProgressReporter(process.stderr, () => latest, formatProgress);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  printError(`watching crawl ${id} on ${api.target.api} (Ctrl-C stops watching; the crawl keeps running)`);
  let view: CrawlProgressView | undefined;
  let failures = 0;
  reporter?.start();
  try {
    while (!stop.signal.aborted) {
      try {
        view = await api.get<CrawlProgressView>(`/crawls/${id}`, { crawlId: id });
        failures = 0;
      } catch (error) {
        // A dropped connection or a failed invocation is not the end of a long watch.
        const transient =
          error instanceof CloudCliError && (error.code === 'UNREACHABLE' || error.code === 'SERVER');
        if (!transient || ++failures >= 5) throw error;
        const line = `status poll failed (${failures} of 5 in a row), trying again: ${error.message}`;
        if (reporter) reporter.log(terminalSafe(line));
        else printError(line);
      }
      if (view !== undefined) {
        const now = Date.now();
        latest = progressOfView(view, now, rate.add(now, view.counters.fetched));
        if (view.status !== 'running') break;
      }
      await sleep(interval, stop.signal);
    }
  } finally {
    reporter?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (stop.signal.aborted || view === undefined) {
    printError(
      `stopped watching; crawl ${id} keeps running in the cloud (crawlstack cloud watch ${id} to watch again, crawlstack cloud cancel ${id} to stop it)`,
    );
    return EXIT.interrupted;
  }
  const summary = summaryOfView(view, Date.now(), downloadHint(id));
  print(parsed.values.json ? safeJson(summary, 2) : formatSummary(summary));
  if (view.status === 'failed') {
    printError(`crawl failed: no URL got an HTTP response (reasons: crawlstack cloud pages ${id})`);
    return EXIT.failed;
  }
  if (view.status === 'cancelled') printError(`crawl ${id} was cancelled`);
  return EXIT.ok;
}

async function recrawlCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const id = crawlIdOf(parsed, 'recrawl <id>');
  if (parsed.values.watch !== true && (parsed.values.quiet === true || parsed.values.json === true))
    throw new UsageError('--quiet and --json go with --watch');
  const body = roundOverrides(parsed);
  const api = await connect();
  const started = await api.post<{
    id: string;
    recrawl: { archive: string; round: number; planned: number; known: number };
  }>(`/crawls/${id}/recrawl`, body, { crawlId: id });
  const { recrawl } = started;
  print(started.id);
  printError(
    `recrawl round ${recrawl.round} of archive ${recrawl.archive} started as crawl ${started.id} on ${api.target.api}: ` +
      `${recrawl.planned} of ${recrawl.known} known pages planned` +
      (parsed.values.watch === true ? '' : `; watch it with: crawlstack cloud watch ${started.id}`),
  );
  if (parsed.values.watch !== true) return EXIT.ok;
  return watchCommand({ positionals: [started.id], values: { ...parsed.values } }, async () => api);
}

async function scheduleCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const action = scheduleAction(parsed);
  const id = action.crawlId;
  const api = await connect();
  const path = `/crawls/${id}/schedule`;
  let view: ScheduleView;
  if (action.kind === 'create') {
    view = await api.post<ScheduleView>(path, action.body, { crawlId: id });
  } else {
    const method = action.kind === 'show' ? 'GET' : 'DELETE';
    const answer = await api.call(method, path);
    const error = (answer.json as { error?: string } | undefined)?.error;
    if (answer.status === 404 && error !== undefined && error !== 'no such crawl') {
      // The crawl is there; its archive has no schedule.
      printError(`crawl ${id}: ${error}`);
      return action.kind === 'remove' ? EXIT.ok : EXIT.failed;
    }
    if (answer.status < 200 || answer.status >= 300)
      throw apiError(answer, { request: `${method} ${path}`, target: api.target, crawlId: id });
    if (action.kind === 'remove') {
      print(`recrawl schedule of crawl ${id}'s archive removed (rounds already started keep running)`);
      return EXIT.ok;
    }
    view = answer.json as ScheduleView;
  }
  print(parsed.values.json === true ? safeJson(view, 2) : formatSchedule(view));
  return EXIT.ok;
}

/** The schedule in a few lines. */
export function formatSchedule(view: ScheduleView): string {
  const settings = Object.entries(view.settings)
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join(' ');
  const last = view.last;
  return [
    `recrawl schedule of archive ${view.archive}: ${view.expression} (UTC), ${view.state.toLowerCase()}`,
    `  next run     ${view.nextRun ?? '(as the cron expression says)'}`,
    `  rounds       ${view.rounds.started} started, ${view.rounds.skipped} skipped (the last still running), ${view.rounds.failed} failed`,
    `  settings     ${settings === '' ? "the crawl's own" : settings}`,
    ...(last === undefined
      ? []
      : [
          `  last run     ${new Date(last.at).toISOString()} ${last.kind}${
            last.kind === 'started' ? `: round ${last.round} as crawl ${last.crawlId}` : `: ${last.reason}`
          }`,
        ]),
  ].join('\n');
}

async function listCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  noArguments(parsed);
  const limitText = stringOf(parsed, 'limit') ?? '20';
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`--limit: expected a positive whole number, got "${limitText}"`);
  const api = await connect();
  type Listed = { id: string; status: string; createdAt: string; finishedAt?: string; seeds: string[] };
  const walk = new PageWalk('listing the crawls');
  let cursor: string | undefined;
  let shown = 0;
  do {
    const page = await api.get<{ crawls: Listed[]; cursor?: string }>(
      `/crawls?limit=${Math.min(100, limit - shown)}${cursor === undefined ? '' : `&cursor=${cursor}`}`,
    );
    for (const crawl of page.crawls) {
      print(
        parsed.values.json
          ? safeJson(crawl)
          : `${crawl.id}  ${crawl.status.padEnd(9)}  ${crawl.createdAt}  ${crawl.seeds.join(' ')}`,
      );
      shown += 1;
    }
    cursor = walk.next(page.cursor);
  } while (cursor !== undefined && shown < limit);
  if (shown === 0 && !parsed.values.json) printError(`no crawls at ${api.target.api}`);
  return EXIT.ok;
}

async function pagesCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const id = crawlIdOf(parsed, 'pages <id>');
  const api = await connect();
  const walk = new PageWalk(`listing the pages of crawl ${id}`);
  let cursor: string | undefined;
  do {
    const page = await api.get<{ pages: unknown[]; cursor?: string }>(
      `/crawls/${id}/pages?limit=1000${cursor === undefined ? '' : `&cursor=${cursor}`}`,
      { crawlId: id },
    );
    // JSON.stringify escapes C0 only: safeJson escapes C1, DEL and bidi controls too.
    const text = page.pages.map((p) => `${safeJson(p)}\n`).join('');
    if (text !== '' && !(await writeStdout(text))) return EXIT.ok; // the reader went away (| head)
    cursor = walk.next(page.cursor);
  } while (cursor !== undefined);
  return EXIT.ok;
}

async function cancelCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const id = crawlIdOf(parsed, 'cancel <id>');
  const answer = await (await connect()).delete(`/crawls/${id}`, { crawlId: id });
  const status = (answer.json as { status?: string } | undefined)?.status ?? 'cancelled';
  if (answer.status === 409) {
    printError(`crawl ${id} already ended (${status}): nothing to cancel`);
    return EXIT.ok;
  }
  print(`crawl ${id} cancelled: queued URLs are dropped without a fetch (the pages fetched stay)`);
  return EXIT.ok;
}

async function downloadCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const id = crawlIdOf(parsed, 'download <id> --out DIR');
  const out = stringOf(parsed, 'out');
  if (out === undefined) throw new UsageError('--out DIR is required: the folder to download the crawl into');
  const report = await downloadCrawl({
    api: await connect(),
    crawlId: id,
    outDir: out,
    log: (line) => printError(line),
  });
  for (const note of report.notes) printError(`note: ${note}`);
  const warc = report.objects.warc;
  print(
    [
      `downloaded crawl ${id} (${report.status}) into ${out}`,
      `  pages        ${report.pages} in pages.jsonl${report.repeatedPages > 0 ? ` (${report.repeatedPages} repeated index lines dropped)` : ''}`,
      `  links        ${report.links} pages in links.jsonl`,
      `  WARC         ${warc.listed} files in ${join(out, 'warc')} (${warc.fetched} fetched now, ${warc.present} already here), index.cdxj`,
      `  trace        ${report.trace ? 'url-seen.trace' : '-'}`,
      `  dataset      ${report.dataset === 'written' ? 'dataset.jsonl' : '-'}`,
      `  rules        ${report.rules === undefined ? '-' : `${report.rules} duplicate-URL rules in rules.json`}`,
      `next: crawlstack rank --out ${out}`,
    ].join('\n'),
  );
  return EXIT.ok;
}

async function uiCommand(parsed: ParsedCommand, connect: () => Promise<CloudApi>): Promise<number> {
  const [crawl, extra] = parsed.positionals;
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  const port = parsePort(stringOf(parsed, 'port'), '--port') ?? DEFAULT_UI_PORT;
  const api = await connect();
  // The page talks to this local server only; it calls the API with this user's auth.
  const dashboard = await startCloudDashboard({
    api: api.target.api,
    auth: (request) => api.authenticate(request),
    port,
    ...(crawl === undefined ? {} : { crawl }),
  }).catch((error: unknown) => {
    if (error instanceof CloudApiError) throw new UsageError(error.message);
    throw error;
  });
  print(`dashboard of the crawls at ${api.target.api}: ${dashboard.url} (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
  return EXIT.ok;
}

/** Writes to stdout; false once the reader has gone (EPIPE), which ends the command quietly. */
function writeStdout(text: string): Promise<boolean> {
  // A closed stdout also ends the process quietly (the CLI's handler in cli.ts).
  return new Promise((resolve) => {
    process.stdout.write(text, (error) => resolve(error === undefined || error === null));
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
