/**
 * Command-line flags for crawl settings: one flag per setting of the crawl config schema, parsed
 * into the same object a `--config` file or the HTTP API gives, then validated by the schema.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  type CrawlConfig,
  type CrawlConfigInput,
  describeIssue,
  extractConfigSchema,
  parseCrawlConfig,
} from '../core/config.ts';
import { extractSelectors } from '../core/dataset/extract-fields.ts';
import { NETWORK_NAMES, networkList } from '../core/net/address-policy.ts';
import { print } from './terminal-text.ts';

/** `off`: a `--no-...` flag that sets a setting whose default is true to false. */
type FlagType = 'int' | 'number' | 'string' | 'boolean' | 'off' | 'list' | 'csv' | 'pairs' | 'networks';

interface FlagSpec {
  flag: string;
  key: keyof CrawlConfigInput;
  type: FlagType;
  help: string;
}

/** Flags that set crawl config keys (`--max-pages` sets `maxPages`). */
export const CONFIG_FLAGS: readonly FlagSpec[] = [
  { flag: 'max-pages', key: 'maxPages', type: 'int', help: 'stop after this many pages (default: no limit)' },
  { flag: 'max-depth', key: 'maxDepth', type: 'int', help: 'link depth limit, seeds are 0 (default 25)' },
  {
    flag: 'scope',
    key: 'scope',
    type: 'string',
    help: "host | domain | any (default domain: the seeds' registrable domains)",
  },
  { flag: 'include', key: 'include', type: 'list', help: 'regex a URL must match (repeatable)' },
  { flag: 'exclude', key: 'exclude', type: 'list', help: 'regex of URLs to skip (repeatable)' },
  {
    flag: 'concurrency',
    key: 'concurrency',
    type: 'int',
    help: 'requests in flight across hosts, one per host (default 16)',
  },
  {
    flag: 'delay',
    key: 'delayMs',
    type: 'int',
    help: 'minimum gap between requests to one host, ms (default 1000)',
  },
  {
    flag: 'delay-factor',
    key: 'delayFactor',
    type: 'number',
    help: 'gap >= k x the last response time (default 5)',
  },
  { flag: 'user-agent', key: 'userAgent', type: 'string', help: 'User-Agent header' },
  {
    flag: 'robots-agent',
    key: 'robotsAgent',
    type: 'string',
    help: 'product token matched in robots.txt (default crawlstack)',
  },
  {
    flag: 'allow-private',
    key: 'allowPrivate',
    type: 'networks',
    help:
      'let the SSRF guard connect to these non-public networks: names (loopback, private, ' +
      'link-local, cgnat, metadata, ...) or CIDR ranges; bare: loopback,private,cgnat (never metadata)',
  },
  {
    flag: 'max-pages-per-host',
    key: 'maxPagesPerHost',
    type: 'int',
    help: 'per-host page budget (default 50000)',
  },
  { flag: 'max-url-length', key: 'maxUrlLength', type: 'int', help: 'skip longer URLs (default 2048)' },
  {
    flag: 'max-segment-repeats',
    key: 'maxSegmentRepeats',
    type: 'int',
    help: 'repeats of a path segment before a URL is a trap (default 1)',
  },
  {
    flag: 'max-body-bytes',
    key: 'maxBodyBytes',
    type: 'int',
    help: 'cap on the decoded body (default 10 MiB)',
  },
  { flag: 'max-redirects', key: 'maxRedirects', type: 'int', help: 'redirect hops followed (default 10)' },
  { flag: 'max-retries', key: 'maxRetries', type: 'int', help: 'retries after 5xx/429/timeouts (default 2)' },
  {
    flag: 'max-crawl-delay',
    key: 'maxCrawlDelayMs',
    type: 'int',
    help: 'cap on robots.txt Crawl-delay, ms (default 30000)',
  },
  {
    flag: 'max-retry-after',
    key: 'maxRetryAfterMs',
    type: 'int',
    help: 'cap on Retry-After, ms (default 600000)',
  },
  { flag: 'timeout', key: 'totalTimeoutMs', type: 'int', help: 'total time per request, ms (default 60000)' },
  { flag: 'connect-timeout', key: 'connectTimeoutMs', type: 'int', help: 'ms (default 10000)' },
  {
    flag: 'headers-timeout',
    key: 'headersTimeoutMs',
    type: 'int',
    help: 'ms until response headers (default 20000)',
  },
  {
    flag: 'idle-timeout',
    key: 'idleTimeoutMs',
    type: 'int',
    help: 'longest silence in a body, ms (default 20000)',
  },
  {
    flag: 'follow',
    key: 'follow',
    type: 'csv',
    help: 'link kinds to fetch: page,image,document,other (default page)',
  },
  {
    flag: 'strip-param',
    key: 'stripParams',
    type: 'list',
    help: 'query parameter to remove (repeatable; replaces the default list)',
  },
  {
    flag: 'seen-cache-size',
    key: 'seenCacheSize',
    type: 'int',
    help: 'URL-seen cache entries (default 262144)',
  },
  {
    flag: 'no-seen-trace',
    key: 'seenTrace',
    type: 'off',
    help: 'do not record the URL-seen trace (url-seen.trace, for cache-study)',
  },
  {
    flag: 'extract',
    key: 'extract',
    type: 'pairs',
    help: 'name=css-selector[@attr] recorded per page (repeatable)',
  },
  {
    flag: 'order',
    key: 'order',
    type: 'string',
    help: 'aopic (important pages first, default) | bfs (breadth-first)',
  },
  {
    flag: 'aopic-tax',
    key: 'aopicTax',
    type: 'number',
    help: "share of a page's cash taxed to the lambda page (default 0.1)",
  },
  {
    flag: 'redistribute-every',
    key: 'redistributeEveryMs',
    type: 'int',
    help: 'AOPIC lambda-page redistribution period, ms (default 2000)',
  },
  {
    flag: 'near-duplicate-distance',
    key: 'nearDuplicateDistance',
    type: 'int',
    help: 'SimHash bits for a near-duplicate, 0 = off (default 3)',
  },
  {
    flag: 'no-trap-detectors',
    key: 'trapDetectors',
    type: 'off',
    help: 'do not detect calendar traps and link generators',
  },
  {
    flag: 'no-soft404-probe',
    key: 'soft404Probe',
    type: 'off',
    help: 'do not probe sites for soft-404 pages',
  },
  {
    flag: 'no-duplicate-url-rules',
    key: 'duplicateUrlRules',
    type: 'off',
    help: "do not learn hosts' duplicate-URL rules (/dir/index.html = /dir/, ...) nor apply them",
  },
  {
    flag: 'no-sitemaps',
    key: 'sitemaps',
    type: 'off',
    help: "do not read sites' sitemaps (robots.txt Sitemap: lines, else /sitemap.xml)",
  },
  {
    flag: 'sitemap-host',
    key: 'sitemapHosts',
    type: 'list',
    help: 'read sitemap files on this host although the scope leaves it out (a CDN; repeatable)',
  },
  {
    flag: 'no-politeness-per-ip',
    key: 'politenessPerIp',
    type: 'off',
    help: 'politeness per host name only, not per IP address (many sites behind one CDN)',
  },
];

/** A usage error: exit code 1, message printed as is. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'USAGE';
}

export interface ParsedCommand {
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
}

/** A command's own option (besides the config flags). */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** The value's name in the help (`DIR`, `N`). */
  arg?: string;
  help: string;
}

/** `--help` / `-h`, which every command takes. */
export const HELP_OPTION: OptionSpec = { type: 'boolean', short: 'h', help: 'show this help' };

/** A command's options: its own, then `--help`, in the order its help lists them. */
export function commandOptions(own: Record<string, OptionSpec>): Record<string, OptionSpec> {
  return { ...own, help: HELP_OPTION };
}

/**
 * The options of a command that reads one crawl's folder: `--out DIR` (`outHelp` says which crawl
 * it takes), the command's own, then `--help`, in the order its help lists them.
 */
export function folderOptions(
  own: Record<string, OptionSpec>,
  outHelp = "the crawl's output folder",
): Record<string, OptionSpec> {
  return commandOptions({ out: { type: 'string', short: 'o', arg: 'DIR', help: outHelp }, ...own });
}

/** What a command's help lists after its own options. */
export interface OptionsHelpExtras {
  /** Rows of options parsed elsewhere (`--ui`), after the command's own. */
  rows?: readonly HelpRow[];
  /** The config flags and `--config` last: all of them, or only these (`['config', 'strip-param']`). */
  configFlags?: boolean | readonly string[];
}

/** The help lines of a command's options: its own, then `extras`. */
export function optionsHelp(
  options: Record<string, OptionSpec>,
  { rows = [], configFlags = false }: OptionsHelpExtras = {},
): string {
  const flags =
    configFlags === false
      ? []
      : configFlagRows().filter(
          ([flag]) => configFlags === true || configFlags.includes(flag.slice(2).split(' ')[0]!),
        );
  return formatRows([...optionRows(options), ...rows, ...flags]);
}

/** What a command that reads one crawl's folder was given: the folder and its own options. */
export interface FolderCommand {
  out: string;
  values: ParsedCommand['values'];
}

/**
 * Parses a command that reads one crawl's folder (`--out DIR` and its own `options`; no config
 * flags, no positional argument). With `--help` it prints `help` and returns undefined. Throws
 * UsageError for an argument it does not take, or without `--out` (`missing`; by default a pointer
 * to the command's help).
 */
export function parseFolderCommand(
  argv: string[],
  command: string,
  options: Record<string, OptionSpec>,
  help: string,
  missing = `--out is required (see crawlstack ${command} --help)`,
): FolderCommand | undefined {
  const { values, positionals } = parseCommand(argv, options, { configFlags: false });
  if (values.help) {
    print(help);
    return undefined;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (typeof values.out !== 'string') throw new UsageError(missing);
  return { out: values.out, values };
}

/**
 * Parses a command that takes the config flags, `--config` and its own `options`. With `--help`
 * it prints `help` and returns undefined. Throws UsageError as {@link parseCommand} does.
 */
export function parseConfigCommand(
  argv: string[],
  options: Record<string, OptionSpec>,
  help: string,
): ParsedCommand | undefined {
  const parsed = parseCommand(argv, options);
  if (parsed.values.help) {
    print(help);
    return undefined;
  }
  return parsed;
}

const CONFIG_OPTION: OptionSpec = {
  type: 'string',
  arg: 'FILE',
  help: 'JSON file with the same settings as the flags (flags win)',
};
const EXTRACT_CONFIG_OPTION: OptionSpec = {
  type: 'string',
  arg: 'FILE',
  help: 'JSON file of named extract fields, {"fields": {...}} (docs/datasets.md)',
};

/**
 * Parses argv with `extra` command-specific options, plus the config flags and `--config` unless
 * `configFlags` is false. Every problem is a UsageError that names the option (no parser text).
 */
export function parseCommand(
  argv: string[],
  extra: Record<string, OptionSpec> = {},
  { configFlags = true }: { configFlags?: boolean } = {},
): ParsedCommand {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  const add = (name: string, spec: Pick<OptionSpec, 'type' | 'multiple' | 'short'>) => {
    options[name] = {
      type: spec.type,
      ...(spec.multiple ? { multiple: true } : {}),
      ...(spec.short === undefined ? {} : { short: spec.short }),
    };
  };
  add('help', HELP_OPTION);
  if (configFlags) {
    add('config', CONFIG_OPTION);
    add('extract-config', EXTRACT_CONFIG_OPTION);
  }
  for (const [name, spec] of Object.entries(extra)) add(name, spec);
  if (configFlags) {
    for (const spec of CONFIG_FLAGS) {
      add(spec.flag, {
        type: spec.type === 'boolean' || spec.type === 'off' ? 'boolean' : 'string',
        multiple: spec.type === 'list' || spec.type === 'pairs',
      });
    }
  }
  // parseArgs rejects `--max-pages -3` as ambiguous; take the negative number as the value, so the
  // schema can say what is wrong with it ("maxPages (--max-pages): ... got -3").
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg === '--') {
      args.push(...argv.slice(i));
      break;
    }
    const networksFlag =
      configFlags && CONFIG_FLAGS.some((f) => f.type === 'networks' && `--${f.flag}` === arg);
    if (networksFlag) {
      // A value is optional: `--allow-private` alone, or followed by networks (`loopback,10.0.0.0/8`).
      const takesNext = next !== undefined && looksLikeNetworks(next);
      args.push(`${arg}=${takesNext ? next : ''}`);
      if (takesNext) i++;
    } else if (
      arg.startsWith('--') &&
      options[arg.slice(2)]?.type === 'string' &&
      next !== undefined &&
      /^-\.?\d/.test(next)
    ) {
      args.push(`${arg}=${next}`);
      i++;
    } else {
      args.push(arg);
    }
  }
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as ParsedCommand['values'], positionals };
  } catch (error) {
    throw new UsageError(describeParseError(error, Object.keys(options)));
  }
}

/**
 * The argument after `--allow-private` is its value when every comma-separated item is a network
 * name or looks like an address or range (a seed URL, a hunt keyword or a flag is not); the schema
 * then says what is wrong with a bad one.
 */
function looksLikeNetworks(arg: string): boolean {
  if (arg.startsWith('-') || arg.includes('://')) return false;
  return networkList(arg).every(
    (item) => NETWORK_NAMES[item] !== undefined || /^[0-9A-Fa-f.:]*[.:][0-9A-Fa-f.:]*(\/\d+)?$/.test(item),
  );
}

/**
 * What to tell a user whose seed the SSRF guard refused: how to allow it, given what
 * `allowPrivate` allows already.
 */
export function allowPrivateHint(allowPrivate: boolean | readonly string[]): string {
  return allowPrivate === false
    ? 'run the same command with --allow-private to allow loopback and private networks'
    : 'name its network in --allow-private (e.g. --allow-private loopback,link-local or a range such as 10.1.0.0/16)';
}

/** node:util's parser messages, said plainly: "unknown option --mxa-pages (did you mean --max-pages?)". */
function describeParseError(error: unknown, known: readonly string[]): string {
  const { code, message } = error as { code?: string; message: string };
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? '';
  // "-o, --out <value>" -> "--out"
  const flag = quoted.split(' ').find((part) => part.startsWith('--')) ?? quoted.split(/[ ,]/)[0] ?? quoted;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const name = quoted.split('=')[0] ?? quoted;
      const guess = closest(name.replace(/^-+/, ''), known);
      return `unknown option ${name}${guess === undefined ? '' : ` (did you mean --${guess}?)`}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (message.includes('argument missing')) return `${flag} needs a value`;
      if (message.includes('does not take an argument')) return `${flag} takes no value`;
      return `${flag}: invalid value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${quoted}"`;
    default:
      return message.split('. ')[0] ?? message;
  }
}

/** The known name within edit distance 2 of `name`, if exactly one is nearest. */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Builds and validates the crawl config: the `--config` file (JSON, same keys as the schema),
 * then flags on top, then `seeds` (positional URLs replace the file's seeds when given).
 */
export function buildConfig(
  parsed: ParsedCommand,
  seeds: string[],
  overrides: CrawlConfigInput | object = {},
): CrawlConfig {
  return validateConfig(configInput(parsed, seeds, overrides));
}

/** Validates a config input with the one schema; the problems name the flags too. */
export function validateConfig(input: Record<string, unknown>): CrawlConfig {
  const result = parseCrawlConfig(input);
  if (!result.ok) throw new UsageError(result.problems.map(withFlagName).join('\n'));
  return result.config;
}

/**
 * The config as the user gave it (file, flags, seeds), before the schema fills in defaults: what
 * `crawlstack cloud start` sends, so the deployment's own defaults apply to the rest.
 */
export function configInput(
  parsed: ParsedCommand,
  seeds: string[],
  overrides: CrawlConfigInput | object = {},
): Record<string, unknown> {
  let input: Record<string, unknown> = {};
  const configPath = parsed.values.config;
  if (typeof configPath === 'string') {
    input = readJsonObject('--config', configPath, 'settings');
  }
  // Fields add up by name: --config's, then --extract-config's, then each --extract flag.
  const addFields = (fields: Record<string, unknown>) => {
    const current = input.extract;
    if (current === undefined || isObject(current)) input.extract = { ...current, ...fields };
  };
  const extractConfigPath = parsed.values['extract-config'];
  if (typeof extractConfigPath === 'string') {
    const file = extractConfigSchema.safeParse(
      readJsonObject('--extract-config', extractConfigPath, 'fields'),
      {
        reportInput: true,
      },
    );
    if (!file.success) {
      throw new UsageError(
        file.error.issues
          .map((issue) =>
            issue.code === 'unrecognized_keys' && issue.path.length === 0
              ? `--extract-config ${extractConfigPath}: unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')} (the file holds {"fields": {...}})`
              : `--extract-config ${extractConfigPath}: ${describeIssue(issue)}`,
          )
          .join('\n'),
      );
    }
    addFields(file.data.fields);
  }
  const problems: string[] = [];
  for (const spec of CONFIG_FLAGS) {
    const raw = parsed.values[spec.flag];
    if (raw === undefined) continue;
    const value = convert(spec, raw, problems);
    if (value === undefined) continue;
    if (spec.type === 'pairs') addFields(value as Record<string, string>);
    else input[spec.key] = value;
  }
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  if (seeds.length > 0) input.seeds = seeds;
  Object.assign(input, overrides);
  if (input.seeds === undefined) {
    throw new UsageError(
      'seeds: no seed URL given (write the URLs to crawl after the command, or "seeds" in --config)',
    );
  }
  return input;
}

/**
 * Checks that every `extract` selector compiles (the schema checks their shape; this needs a
 * DOM, loaded only when there are fields), naming the field and its selector.
 */
export async function checkExtractSelectors(config: CrawlConfig): Promise<void> {
  if (Object.keys(config.extract).length === 0) return;
  const { invalidSelectors } = await import('../core/html/select.ts');
  const selectors = extractSelectors(config.extract);
  const invalid = invalidSelectors(selectors);
  if (invalid.length > 0) {
    throw new UsageError(
      invalid
        .map((name) => `extract.${name}: the CSS selector "${selectors[name]}" does not compile`)
        .join('\n'),
    );
  }
}

function readJsonObject(flag: string, path: string, what: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `${flag} ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? error})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new UsageError(`${flag} ${path}: expected a JSON object of ${what}`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function convert(spec: FlagSpec, raw: string | boolean | string[], problems: string[]): unknown {
  const name = `--${spec.flag}`;
  switch (spec.type) {
    case 'boolean':
      return raw === true;
    case 'networks':
      // Bare: `true` (the default private networks); else the list, which the schema checks.
      return raw === '' ? true : String(raw);
    case 'off':
      return raw === true ? false : undefined;
    case 'int':
    case 'number': {
      const text = String(raw);
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || (spec.type === 'int' && !Number.isInteger(n))) {
        problems.push(
          `${name}: expected ${spec.type === 'int' ? 'a whole number' : 'a number'}, got "${text}"`,
        );
        return undefined;
      }
      return n;
    }
    case 'string':
      return String(raw);
    case 'list':
      return raw as string[];
    case 'csv':
      return String(raw)
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
    case 'pairs': {
      const out: Record<string, string> = {};
      for (const pair of raw as string[]) {
        const eq = pair.indexOf('=');
        if (eq <= 0) {
          problems.push(`${name}: expected name=selector, got "${pair}"`);
          continue;
        }
        out[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      return out;
    }
  }
}

/**
 * "maxPages: ..." -> "maxPages (--max-pages): ..." and "include[1]: ..." -> "include[1] (--include): ..."
 * so a CLI user sees the flag they typed.
 */
function withFlagName(problem: string): string {
  const key = problem.split(/[.:[]/, 1)[0];
  const spec = CONFIG_FLAGS.find((s) => s.key === key);
  const colon = problem.indexOf(':');
  if (spec === undefined || colon < 0) return problem;
  return `${problem.slice(0, colon)} (--${spec.flag})${problem.slice(colon)}`;
}

/** One row of a command's option list: the flag as typed (with its value) and what it does. */
export type HelpRow = [flag: string, help: string];

/** Rows for a command's own options. */
export function optionRows(options: Record<string, OptionSpec>): HelpRow[] {
  return Object.entries(options).map(([name, spec]) => [
    `${spec.short === undefined ? '' : `-${spec.short}, `}--${name}${spec.arg === undefined ? '' : ` ${spec.arg}`}`,
    spec.help,
  ]);
}

/** Rows for the config flags and `--config`. */
function configFlagRows(): HelpRow[] {
  return [
    ['--config FILE', CONFIG_OPTION.help],
    ['--extract-config FILE', EXTRACT_CONFIG_OPTION.help],
    ...CONFIG_FLAGS.map((s): HelpRow => [`--${s.flag}${flagArg(s)}`, s.help]),
  ];
}

function flagArg(spec: FlagSpec): string {
  switch (spec.type) {
    case 'int':
    case 'number':
      return ' N';
    case 'boolean':
    case 'off':
      return '';
    case 'pairs':
      return ' NAME=SEL';
    case 'csv':
      return ' KINDS';
    case 'networks':
      return ' [NETS]';
    case 'list':
      return spec.flag === 'strip-param' ? ' NAME' : ' REGEX';
    default:
      return spec.flag === 'user-agent'
        ? ' TEXT'
        : spec.flag === 'order' || spec.flag === 'scope'
          ? ' MODE'
          : ' NAME';
  }
}

/** Option rows as aligned text: one column for the flags, wide enough for the longest. */
export function formatRows(rows: readonly HelpRow[], indent = '  '): string {
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  return rows.map(([flag, help]) => `${indent}${flag.padEnd(width)}${help}`).join('\n');
}

/** Help lines for the config flags. */
export function configFlagsHelp(): string {
  return formatRows(configFlagRows());
}
